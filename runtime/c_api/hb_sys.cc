// SPDX-License-Identifier: Apache-2.0
// dnn/hb_sys.h: device memory. Allocations are tracked so that flush and free
// validate their argument; a hbSysMem describing a slice of an allocation
// (apps offset virAddr/phyAddr) is accepted by flush.
#include "dnn/hb_sys.h"

#include <cstring>
#include <string>

#include "runtime/c_api/api.h"
#include "runtime/device/memory.h"

namespace {

using openbpu::rt::capi::fail;

int32_t alloc(hbSysMem* mem, uint32_t size, bool cached) {
  if (mem == nullptr || size == 0) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysAllocMem: NULL mem or size 0");
  openbpu::drv::DmaBuffer b;
  const openbpu::rt::Status st = openbpu::rt::memory::allocate(size, cached, &b);
  // No device: the environment selects an unusable one (the log says which
  // variable and what it accepts).
  if (st.code() == openbpu::rt::kInvalidArgument) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysAllocMem: " + st.message());
  if (!st.ok()) return fail(HB_SYS_OUT_OF_MEMORY, "hbSysAllocMem: " + st.message());
  mem->phyAddr = b.phy;
  mem->virAddr = b.vir;
  mem->memSize = size;
  return HB_SYS_SUCCESS;
}

}  // namespace

OBPU_API int32_t hbSysAllocMem(hbSysMem* mem, uint32_t size) { return alloc(mem, size, false); }

OBPU_API int32_t hbSysAllocCachedMem(hbSysMem* mem, uint32_t size) { return alloc(mem, size, true); }

OBPU_API int32_t hbSysFlushMem(hbSysMem* mem, int32_t flag) {
  if (mem == nullptr || mem->virAddr == nullptr)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFlushMem: NULL memory");
  if (flag != HB_SYS_MEM_CACHE_INVALIDATE && flag != HB_SYS_MEM_CACHE_CLEAN)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFlushMem: unknown flag " + std::to_string(flag));
  const openbpu::rt::Status st =
      openbpu::rt::memory::flush(mem->virAddr, mem->memSize, flag == HB_SYS_MEM_CACHE_CLEAN);
  if (!st.ok()) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFlushMem: " + st.message());
  return HB_SYS_SUCCESS;
}

OBPU_API int32_t hbSysWriteMem(hbSysMem* dest, char* src, uint32_t size) {
  if (dest == nullptr || src == nullptr || dest->virAddr == nullptr)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysWriteMem: NULL argument");
  if (size > dest->memSize)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysWriteMem: size " + std::to_string(size) + " exceeds memSize " +
                                             std::to_string(dest->memSize));
  std::memmove(dest->virAddr, src, size);
  hbSysFlushMem(dest, HB_SYS_MEM_CACHE_CLEAN);
  return HB_SYS_SUCCESS;
}

OBPU_API int32_t hbSysReadMem(char* dest, hbSysMem* src, uint32_t size) {
  if (dest == nullptr || src == nullptr || src->virAddr == nullptr)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysReadMem: NULL argument");
  if (size > src->memSize)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysReadMem: size " + std::to_string(size) + " exceeds memSize " +
                                             std::to_string(src->memSize));
  std::memmove(dest, src->virAddr, size);
  return HB_SYS_SUCCESS;
}

OBPU_API int32_t hbSysFreeMem(hbSysMem* mem) {
  if (mem == nullptr || mem->virAddr == nullptr) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFreeMem: NULL memory");
  const openbpu::rt::Status st = openbpu::rt::memory::release(mem->virAddr);
  if (!st.ok()) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFreeMem: " + st.message());
  mem->virAddr = nullptr;
  mem->phyAddr = 0;
  mem->memSize = 0;
  return HB_SYS_SUCCESS;
}

OBPU_API int32_t hbSysRegisterMem(hbSysMem* mem) {
  if (mem == nullptr || mem->virAddr == nullptr || mem->memSize == 0)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysRegisterMem: NULL or empty memory");
  return fail(HB_SYS_REGISTER_MEM_FAILED,
              "hbSysRegisterMem: the simulated BPU has no physical memory to register; allocate with "
              "hbSysAllocCachedMem instead");
}

OBPU_API int32_t hbSysUnregisterMem(hbSysMem* mem) {
  if (mem == nullptr) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysUnregisterMem: NULL memory");
  return fail(HB_SYS_INVALID_ARGUMENT, "hbSysUnregisterMem: memory was not registered");
}
