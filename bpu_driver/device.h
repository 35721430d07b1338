// SPDX-License-Identifier: Apache-2.0
// The BPU device interface: what the runtime needs from an accelerator.
// The runtime never touches registers or kernels directly. The one
// implementation is the function-call scheduler (scheduler.h, src/core/),
// which drives a backend (backend.h: `sim` runs the fcs on bpu_sim, `null`
// only takes their estimated board time; a board's kernel driver would be
// a third) through a narrow interface.
//
// Model: a device has N cores. The runtime loads each BPU program once
// (load_program validates it) and submits jobs: one run of a program with its
// memory bindings, a priority and a core choice. A job is a list of function
// calls (fc); a core runs one fc at a time without interruption and decides
// at every fc boundary what runs next (docs/scheduling.md):
//   * each core keeps a ready queue ordered by (priority desc, custom_id asc,
//     submission order);
//   * a job that has started keeps its core until it ends, unless a ready job
//     of the preemptive priority 255 outranks it: the 255 job takes the core at
//     the next fc boundary and the preempted job resumes later from its next
//     fc (its state lives in its own memory, so results are bit-identical);
//   * a job for "any" core is bound at submission to the least loaded eligible
//     core (estimated queued cycles); a core that would otherwise idle takes
//     a not yet started job of another core that may also run on it;
//   * a job with cores == 2 (a program compiled with core_num 2) occupies both
//     cores of a 2-core device for each of its fcs (gang execution).
// Completion is reported once per job through its callback, on a device
// thread (or on the thread calling cancel() / step()).
#ifndef OPENBPU_BPU_DRIVER_DEVICE_H_
#define OPENBPU_BPU_DRIVER_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bpu_sim/isa/march.h"

namespace openbpu::drv {

enum class Status {
  kOk = 0,
  kInvalidArgument,
  kOutOfMemory,
  kInvalidProgram,
  kFault,      // an fc failed on the device; the core was reset
  kTimeout,    // an fc exceeded its timeout (or hung); the core was reset
  kCancelled,  // cancelled before completion
};
const char* status_name(Status s);

inline constexpr int kPreemptPriority = 255;

struct DeviceInfo {
  std::string backend;  // registry name: "sim", "null"
  const isa::MarchInfo* march = nullptr;
  int cores = 1;
  // false for a timing-only backend: fcs take their estimated board time but
  // compute nothing (BPU outputs keep whatever the buffers held).
  bool computes = true;
  // Largest buffer alloc() may return (the simulator: the host's physical
  // memory or the process's cgroup limit); larger requests are kOutOfMemory.
  uint64_t max_alloc = UINT64_MAX;
};

struct DmaBuffer {
  uint8_t* vir = nullptr;
  uint64_t phy = 0;
  uint64_t size = 0;
  bool cached = false;
};

// A view of device memory bound to one program region.
struct DmaView {
  uint8_t* vir = nullptr;
  uint64_t phy = 0;
  uint64_t size = 0;
};

struct Bindings {
  std::vector<DmaView> inputs;
  std::vector<DmaView> outputs;
  DmaView constants;
  DmaView scratch;
};

// Size and contents the device checks a program against at load time.
struct ProgramLayout {
  std::vector<uint64_t> input_sizes;
  std::vector<uint64_t> output_sizes;
  const uint8_t* constants = nullptr;
  uint64_t constants_size = 0;
  uint64_t scratch_size = 0;
};

struct FunctionCall {
  uint32_t first = 0;
  uint32_t count = 0;
  uint64_t est_cycles = 0;
};

// A loaded program (opaque to the runtime). Immutable; shared by all jobs.
class Program {
 public:
  virtual ~Program() = default;
  virtual size_t fc_count() const = 0;
  virtual uint64_t fc_cycles(size_t fc) const = 0;
  virtual size_t instruction_count() const = 0;
};

struct JobResult {
  Status status = Status::kOk;
  std::string message;
  int core = -1;          // core of the last fc run (-1 if none ran)
  uint64_t start_ns = 0;  // steady clock when the first fc started (0 if never)
  uint64_t end_ns = 0;
  uint64_t run_ns = 0;    // time the job's fcs held a core (excludes waiting)
  uint32_t preemptions = 0;
};

struct Job {
  const Program* program = nullptr;
  Bindings bindings;
  int priority = 0;          // 0..255; 255 preempts at fc boundaries
  int64_t custom_id = 0;     // secondary order, smaller first
  uint32_t core_mask = 0;    // 0 = any core; bit k = core k
  int cores = 1;             // cores the job occupies at once: 1, or 2 (gang, needs core_mask 0
                             // or both cores)
  uint64_t fc_timeout_us = 0;  // 0 = none (a hung fc is still caught by the device watchdog)
  std::function<void(const JobResult&)> on_done;
};

using JobId = uint64_t;

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  virtual Status alloc(uint64_t size, bool cached, DmaBuffer* out) = 0;
  virtual void free(const DmaBuffer& buffer) = 0;
  // Cache maintenance (clean = CPU -> device, invalidate = device -> CPU).
  virtual Status flush(const DmaBuffer& buffer, bool clean) = 0;

  // Decodes and validates a program (code in the ISA encoding) for the given
  // layout; fcs must tile the program in order.
  virtual Status load_program(const uint8_t* code, uint64_t code_size,
                              const std::vector<FunctionCall>& fcs, const ProgramLayout& layout,
                              std::unique_ptr<Program>* out, std::string* error) = 0;

  // Queues a job. Returns 0 when the job is rejected (no such core, bad
  // priority or core count, device shutting down); otherwise its id.
  // on_done runs exactly once for an accepted job.
  virtual JobId submit(Job job) = 0;

  // Cancels a job that is not executing an fc (it completes with kCancelled
  // before cancel returns, on this thread) or stops an executing one at the
  // end of its fc (a hung fc at once). False when the job is unknown or done.
  virtual bool cancel(JobId id) = 0;

  // Estimated microseconds of work queued on the least loaded eligible core.
  virtual double queued_us(uint32_t core_mask) const = 0;
};

}  // namespace openbpu::drv

#endif  // OPENBPU_BPU_DRIVER_DEVICE_H_
