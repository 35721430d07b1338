// SPDX-License-Identifier: Apache-2.0
#include "runtime/device/memory.h"

#include <map>
#include <mutex>
#include <string>

#include "runtime/device/device_manager.h"

namespace openbpu::rt::memory {

namespace {

struct Alloc {
  drv::DmaBuffer buffer;
  drv::Device* device = nullptr;
  int pins = 0;  // tasks using it
};

std::mutex g_mu;
std::map<uintptr_t, Alloc>& allocs() {
  static auto* m = new std::map<uintptr_t, Alloc>();  // outlives static destructors
  return *m;
}

// The allocation containing [p, p + size), or nullptr (g_mu held).
Alloc* find_containing(const void* p, uint64_t size) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto& m = allocs();
  auto it = m.upper_bound(a);
  if (it == m.begin()) return nullptr;
  --it;
  Alloc& al = it->second;
  const uintptr_t base = reinterpret_cast<uintptr_t>(al.buffer.vir);
  if (a < base || a - base > al.buffer.size || size > al.buffer.size - (a - base)) return nullptr;
  return &al;
}

}  // namespace

Status allocate(uint64_t size, bool cached, drv::DmaBuffer* out) {
  if (size == 0) return Status(kInvalidArgument, "cannot allocate 0 bytes");
  drv::Device* dev = memory_device();
  // No device: the environment selects an unusable one (logged by the device
  // manager, naming the variable and what it accepts).
  if (dev == nullptr) return Status(kInvalidArgument, "no BPU device (see the error above)");
  drv::DmaBuffer b;
  if (dev->alloc(size, cached, &b) != drv::Status::kOk)
    return Status(kOutOfMemory, "cannot allocate " + std::to_string(size) + " bytes of device memory");
  {
    std::lock_guard<std::mutex> lk(g_mu);
    allocs()[reinterpret_cast<uintptr_t>(b.vir)] = Alloc{b, dev};
  }
  *out = b;
  return Status::Ok();
}

Status flush(const void* p, uint64_t size, bool clean) {
  Alloc al;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    const Alloc* a = find_containing(p, size);
    if (a == nullptr) return Status(kInvalidArgument, "the memory to flush was not allocated by this library");
    al = *a;
  }
  al.device->flush(al.buffer, clean);
  return Status::Ok();
}

Status release(const void* p) {
  Alloc al;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto it = allocs().find(reinterpret_cast<uintptr_t>(p));
    if (it == allocs().end())
      return Status(kInvalidArgument, "the memory to free was not allocated by this library (or is freed already)");
    if (it->second.pins > 0)
      return Status(kApiUseError, "the memory is used by a task that has not finished (" +
                                      std::to_string(it->second.pins) +
                                      " use(s)); wait for the task or release it first");
    al = it->second;
    allocs().erase(it);
  }
  al.device->free(al.buffer);
  return Status::Ok();
}

uintptr_t pin(const void* p) {
  std::lock_guard<std::mutex> lk(g_mu);
  Alloc* a = find_containing(p, 1);
  if (a == nullptr) return 0;
  ++a->pins;
  return reinterpret_cast<uintptr_t>(a->buffer.vir);
}

void unpin(uintptr_t base) {
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = allocs().find(base);
  if (it != allocs().end() && it->second.pins > 0) --it->second.pins;
}

}  // namespace openbpu::rt::memory
