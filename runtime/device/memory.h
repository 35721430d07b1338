// SPDX-License-Identifier: Apache-2.0
// Device memory handed to applications (hbSysAlloc*Mem, hbUCPMalloc*):
// allocations are tracked so that flush and free validate their argument,
// and a slice of an allocation (apps offset virAddr/phyAddr alike) is
// accepted by flush. Both C APIs map the statuses to their own codes.
#ifndef OPENBPU_RUNTIME_DEVICE_MEMORY_H_
#define OPENBPU_RUNTIME_DEVICE_MEMORY_H_

#include <cstdint>

#include "bpu_driver/device.h"
#include "runtime/core/status.h"

namespace openbpu::rt::memory {

// Allocates `size` (> 0) bytes on the process's device (or the memory-only
// device before any model is loaded). kOutOfMemory on failure.
Status allocate(uint64_t size, bool cached, drv::DmaBuffer* out);

// Flushes the allocation holding [p, p + size): clean (CPU wrote, device
// reads) or invalidate. kInvalidArgument when no allocation holds the range.
Status flush(const void* p, uint64_t size, bool clean);

// Frees the allocation starting at p. kInvalidArgument when p does not start
// one (never allocated, or freed already); kApiUseError when a task that has
// not stopped uses it (pinned).
Status release(const void* p);

// A task binds a buffer: pins the allocation holding p (release() refuses
// it until unpinned) and returns its base, or 0 when no allocation of this
// module holds p (user memory of another origin is the caller's to keep).
uintptr_t pin(const void* p);
void unpin(uintptr_t base);

}  // namespace openbpu::rt::memory

#endif  // OPENBPU_RUNTIME_DEVICE_MEMORY_H_
