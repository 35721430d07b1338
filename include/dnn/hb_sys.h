/* SPDX-License-Identifier: Apache-2.0
 * OpenBPU libdnn: system memory API, source-compatible with Horizon libdnn 1.x
 * <dnn/hb_sys.h>. Names, types, field order and values follow the vendor header.
 *
 * Memory returned by hbSysAlloc*Mem is device-visible (on the simulator: page
 * aligned host memory); phyAddr is linear with virAddr inside one buffer.
 * All functions return 0 on success or a negative HB_SYS_* code; they are
 * thread-safe on distinct buffers and never block on the device.
 */
#ifndef DNN_HB_SYS_H_
#define DNN_HB_SYS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

typedef enum {
  HB_BPU_CORE_ANY = 0,
  HB_BPU_CORE_0 = (1 << 0),
  HB_BPU_CORE_1 = (1 << 1)
} hbBPUCore;

typedef enum {
  HB_DSP_CORE_ANY = 0,
  HB_DSP_CORE_0 = (1 << 0),
  HB_DSP_CORE_1 = (1 << 1)
} hbDSPCore;

typedef struct {
  uint64_t phyAddr;
  void *virAddr;
  uint32_t memSize;
} hbSysMem;

typedef enum {
  HB_SYS_MEM_CACHE_INVALIDATE = 1,
  HB_SYS_MEM_CACHE_CLEAN = 2
} hbSysMemFlushFlag;

typedef enum {
  HB_SYS_SUCCESS = 0,
  HB_SYS_INVALID_ARGUMENT = -6000129,
  HB_SYS_OUT_OF_MEMORY = -6000130,
  HB_SYS_REGISTER_MEM_FAILED = -6000131
} hbSysStatus;

/* Allocates `size` bytes of uncached device memory into *mem.
 * Errors: HB_SYS_INVALID_ARGUMENT (mem NULL, size 0), HB_SYS_OUT_OF_MEMORY. */
int32_t hbSysAllocMem(hbSysMem *mem, uint32_t size);

/* Allocates `size` bytes of cached device memory; flush with hbSysFlushMem
 * (CLEAN after CPU writes, INVALIDATE before CPU reads). Errors as above. */
int32_t hbSysAllocCachedMem(hbSysMem *mem, uint32_t size);

/* Cache maintenance over the whole buffer; flag is a hbSysMemFlushFlag.
 * Errors: HB_SYS_INVALID_ARGUMENT (NULL, unknown buffer or flag). */
int32_t hbSysFlushMem(hbSysMem *mem, int32_t flag);

/* Copies `size` bytes from src to the start of dest (device-visible after the
 * call). Errors: HB_SYS_INVALID_ARGUMENT (NULL, size > dest->memSize). */
int32_t hbSysWriteMem(hbSysMem *dest, char *src, uint32_t size);

/* Copies `size` bytes from the start of src to dest (after invalidating).
 * Errors: HB_SYS_INVALID_ARGUMENT (NULL, size > src->memSize). */
int32_t hbSysReadMem(char *dest, hbSysMem *src, uint32_t size);

/* Frees memory from hbSysAllocMem / hbSysAllocCachedMem.
 * Errors: HB_SYS_INVALID_ARGUMENT (NULL or not an allocation of this library;
 * also, logged "used by a task", while a task that has not finished uses the
 * memory as an input or output: wait for the task or release it first). */
int32_t hbSysFreeMem(hbSysMem *mem);

/* Deprecated, kept for compatibility: registers external memory whose physical
 * address is known. The simulator has no physical memory to register:
 * returns HB_SYS_REGISTER_MEM_FAILED (HB_SYS_INVALID_ARGUMENT for NULL). */
int32_t hbSysRegisterMem(hbSysMem *mem);

/* Deprecated: undoes hbSysRegisterMem. Returns HB_SYS_INVALID_ARGUMENT for
 * memory that was not registered. */
int32_t hbSysUnregisterMem(hbSysMem *mem);

#ifdef __cplusplus
}
#endif  // __cplusplus

#endif  // DNN_HB_SYS_H_
