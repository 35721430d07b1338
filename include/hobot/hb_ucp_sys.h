/* SPDX-License-Identifier: Apache-2.0
 * OpenBPU UCP memory API, source-compatible with the vendor's
 * <hobot/hb_ucp_sys.h>. Buffers are device-accessible; on the simulator
 * phyAddr is the device address the simulated BPU uses (equal to virAddr).
 */
#ifndef HB_UCP_SYS_H_
#define HB_UCP_SYS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

typedef struct hbUCPSysMem {
  uint64_t phyAddr;
  void *virAddr;
  uint64_t memSize;
} hbUCPSysMem;

typedef enum {
  HB_SYS_MEM_CACHE_INVALIDATE = 1, /* after the device wrote, before the CPU reads */
  HB_SYS_MEM_CACHE_CLEAN = 2       /* after the CPU wrote, before the device reads */
} hbUCPSysMemFlushFlag;

/* Allocates size bytes (size > 0), 64-byte aligned, zero-filled; deviceId must
 * be 0. Malloc gives non-cacheable, MallocCached cacheable memory (which needs
 * hbUCPMemFlush); on the simulator both are ordinary memory. On failure
 * *mem is zeroed and HB_UCP_MEM_ALLOC_FAIL (or HB_UCP_INVALID_ARGUMENT) is
 * returned. */
int32_t hbUCPMalloc(hbUCPSysMem *mem, uint64_t size, int32_t deviceId);
int32_t hbUCPMallocCached(hbUCPSysMem *mem, uint64_t size, int32_t deviceId);

/* Flushes [virAddr, virAddr + memSize); mem may describe a sub-range of an
 * allocation (both addresses offset alike). flag is one of
 * hbUCPSysMemFlushFlag. */
int32_t hbUCPMemFlush(hbUCPSysMem const *mem, int32_t flag);

/* Frees memory from hbUCPMalloc/hbUCPMallocCached and zeroes *mem;
 * HB_UCP_MEM_FREE_FAIL for memory the library did not allocate, and while a
 * task that has not finished uses it. */
int32_t hbUCPFree(hbUCPSysMem *mem);

#ifdef __cplusplus
}
#endif  // __cplusplus

#endif  // HB_UCP_SYS_H_
