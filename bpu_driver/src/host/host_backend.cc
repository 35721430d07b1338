// SPDX-License-Identifier: Apache-2.0
#include "bpu_driver/src/host/host_backend.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "bpu_sim/executor.h"
#include "bpu_sim/isa/codec.h"
#include "bpu_sim/validate.h"

namespace openbpu::drv {

namespace {

// Memory an in-process device may hand out in one buffer: the host's
// physical memory, or the process's cgroup (v2) limit when lower. Buffers
// are touched at allocation (zero-filled), so a model declaring more must get
// an error, not the OOM killer.
uint64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  uint64_t bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : UINT64_MAX;
  if (FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long limit = 0;  // "max" (no limit) does not parse
    if (std::fscanf(f, "%llu", &limit) == 1 && limit > 0 && limit < bytes) bytes = limit;
    std::fclose(f);
  }
  return bytes;
}

}  // namespace

HostProgram::~HostProgram() {
  if (pinned != nullptr) sim::unpin_constants(pinned);
}

HostBackend::HostBackend(const char* name, const isa::MarchInfo& march, bool computes) {
  info_.backend = name;
  info_.march = &march;
  info_.cores = march.cores;
  info_.computes = computes;
  info_.max_alloc = host_memory_bytes();
}

Status HostBackend::alloc(uint64_t size, bool cached, DmaBuffer* out) {
  if (size == 0) return Status::kInvalidArgument;
  const uint64_t rounded = (size + 4095) / 4096 * 4096;
  void* p = nullptr;
  if (rounded < size || rounded > info_.max_alloc || ::posix_memalign(&p, 4096, rounded) != 0 || p == nullptr)
    return Status::kOutOfMemory;
  std::memset(p, 0, rounded);
  out->vir = static_cast<uint8_t*>(p);
  out->phy = reinterpret_cast<uintptr_t>(p);  // linear with vir, unique
  out->size = size;
  out->cached = cached;
  return Status::kOk;
}

void HostBackend::free(const DmaBuffer& buffer) { std::free(buffer.vir); }

Status HostBackend::flush(const DmaBuffer& buffer, bool clean) {
  (void)clean;  // both directions are the same fence on coherent memory
  if (buffer.vir == nullptr) return Status::kInvalidArgument;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status::kOk;
}

Status HostBackend::decode(const uint8_t* code, uint64_t code_size, const ProgramLayout& layout,
                           std::unique_ptr<HostProgram>* out, std::string* error) const {
  auto prog = std::make_unique<HostProgram>();
  if (!isa::decode_program(code, code_size, &prog->instructions, error)) return Status::kInvalidProgram;
  sim::RegionLayout regions;
  regions.inputs = layout.input_sizes;
  regions.outputs = layout.output_sizes;
  regions.constants = layout.constants;
  regions.constants_size = layout.constants_size;
  regions.scratch_size = layout.scratch_size;
  regions.march = info_.march;  // its operator limits
  if (!sim::validate_program(prog->instructions, regions, error)) return Status::kInvalidProgram;
  *out = std::move(prog);
  return Status::kOk;
}

}  // namespace openbpu::drv
