// SPDX-License-Identifier: Apache-2.0
// dnn/hb_sys.h: device memory. Allocations are tracked so that flush and free
// validate their argument; a hbSysMem describing a slice of an allocation
// (apps offset virAddr/phyAddr) is accepted by flush.
#include "dnn/hb_sys.h"

#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "runtime/c_api/api.h"
#include "runtime/engine/device_manager.h"

namespace {

struct Alloc {
  openbpu::drv::DmaBuffer buffer;
  openbpu::drv::Device* device;
};

std::mutex g_mu;
std::map<uintptr_t, Alloc>& allocs() {
  static auto* m = new std::map<uintptr_t, Alloc>();  // outlives static destructors
  return *m;
}

// The allocation containing [p, p + size), or nullptr.
const Alloc* find_containing(const void* p, uint64_t size) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto& m = allocs();
  auto it = m.upper_bound(a);
  if (it == m.begin()) return nullptr;
  --it;
  const Alloc& al = it->second;
  const uintptr_t base = reinterpret_cast<uintptr_t>(al.buffer.vir);
  if (a < base || a - base > al.buffer.size || size > al.buffer.size - (a - base)) return nullptr;
  return &al;
}

int32_t alloc(hbSysMem* mem, uint32_t size, bool cached) {
  using openbpu::rt::capi::fail;
  if (mem == nullptr || size == 0) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysAllocMem: NULL mem or size 0");
  openbpu::drv::Device* dev = openbpu::rt::memory_device();
  openbpu::drv::DmaBuffer b;
  if (dev->alloc(size, cached, &b) != openbpu::drv::Status::kOk)
    return fail(HB_SYS_OUT_OF_MEMORY, "hbSysAllocMem: cannot allocate " + std::to_string(size) + " bytes");
  {
    std::lock_guard<std::mutex> lk(g_mu);
    allocs()[reinterpret_cast<uintptr_t>(b.vir)] = Alloc{b, dev};
  }
  mem->phyAddr = b.phy;
  mem->virAddr = b.vir;
  mem->memSize = size;
  return HB_SYS_SUCCESS;
}

}  // namespace

OBPU_API int32_t hbSysAllocMem(hbSysMem* mem, uint32_t size) { return alloc(mem, size, false); }

OBPU_API int32_t hbSysAllocCachedMem(hbSysMem* mem, uint32_t size) { return alloc(mem, size, true); }

OBPU_API int32_t hbSysFlushMem(hbSysMem* mem, int32_t flag) {
  using openbpu::rt::capi::fail;
  if (mem == nullptr || mem->virAddr == nullptr)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFlushMem: NULL memory");
  if (flag != HB_SYS_MEM_CACHE_INVALIDATE && flag != HB_SYS_MEM_CACHE_CLEAN)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFlushMem: unknown flag " + std::to_string(flag));
  Alloc al;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    const Alloc* a = find_containing(mem->virAddr, mem->memSize);
    if (a == nullptr)
      return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFlushMem: memory was not allocated by hbSysAlloc*Mem");
    al = *a;
  }
  al.device->flush(al.buffer, flag == HB_SYS_MEM_CACHE_CLEAN);
  return HB_SYS_SUCCESS;
}

OBPU_API int32_t hbSysWriteMem(hbSysMem* dest, char* src, uint32_t size) {
  using openbpu::rt::capi::fail;
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
  using openbpu::rt::capi::fail;
  if (dest == nullptr || src == nullptr || src->virAddr == nullptr)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysReadMem: NULL argument");
  if (size > src->memSize)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysReadMem: size " + std::to_string(size) + " exceeds memSize " +
                                             std::to_string(src->memSize));
  std::memmove(dest, src->virAddr, size);
  return HB_SYS_SUCCESS;
}

OBPU_API int32_t hbSysFreeMem(hbSysMem* mem) {
  using openbpu::rt::capi::fail;
  if (mem == nullptr || mem->virAddr == nullptr) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFreeMem: NULL memory");
  Alloc al;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto it = allocs().find(reinterpret_cast<uintptr_t>(mem->virAddr));
    if (it == allocs().end())
      return fail(HB_SYS_INVALID_ARGUMENT, "hbSysFreeMem: memory was not allocated by hbSysAlloc*Mem (or freed twice)");
    al = it->second;
    allocs().erase(it);
  }
  al.device->free(al.buffer);
  mem->virAddr = nullptr;
  mem->phyAddr = 0;
  mem->memSize = 0;
  return HB_SYS_SUCCESS;
}

OBPU_API int32_t hbSysRegisterMem(hbSysMem* mem) {
  using openbpu::rt::capi::fail;
  if (mem == nullptr || mem->virAddr == nullptr || mem->memSize == 0)
    return fail(HB_SYS_INVALID_ARGUMENT, "hbSysRegisterMem: NULL or empty memory");
  return fail(HB_SYS_REGISTER_MEM_FAILED,
              "hbSysRegisterMem: the simulated BPU has no physical memory to register; allocate with "
              "hbSysAllocCachedMem instead");
}

OBPU_API int32_t hbSysUnregisterMem(hbSysMem* mem) {
  using openbpu::rt::capi::fail;
  if (mem == nullptr) return fail(HB_SYS_INVALID_ARGUMENT, "hbSysUnregisterMem: NULL memory");
  return fail(HB_SYS_INVALID_ARGUMENT, "hbSysUnregisterMem: memory was not registered");
}
