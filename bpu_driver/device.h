// SPDX-License-Identifier: Apache-2.0
// The BPU device interface: what the runtime needs from an accelerator.
// Backends: `sim` (the in-process simulator, bpu_sim) and, on boards, a
// kernel driver. The runtime never touches registers or kernels directly.
//
// Model: a device has N cores. The runtime loads each BPU program once
// (load_program validates it) and submits jobs: one run of a program with its
// memory bindings, a priority and a core choice. A job is a list of function
// calls (fc); a core runs one fc at a time without interruption and picks the
// next fc at every fc boundary: the current job continues unless a ready job
// of the preemptive priority (255) outranks it; otherwise jobs start in order
// of (priority desc, custom_id asc, submission order). Completion is reported
// once per job through its callback, on a device thread.
#ifndef OPENBPU_BPU_DRIVER_DEVICE_H_
#define OPENBPU_BPU_DRIVER_DEVICE_H_

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
  kFault,      // an fc failed on the device
  kTimeout,    // an fc exceeded its timeout; the core was reset
  kCancelled,  // cancelled before completion
};
const char* status_name(Status s);

inline constexpr int kPreemptPriority = 255;

struct DeviceInfo {
  std::string backend;  // "sim"
  const isa::MarchInfo* march = nullptr;
  int cores = 1;
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
  int core = -1;
  uint64_t start_ns = 0;  // CLOCK_MONOTONIC when the first fc started (0 if never)
  uint64_t end_ns = 0;
};

struct Job {
  const Program* program = nullptr;
  Bindings bindings;
  int priority = 0;          // 0..255; 255 preempts at fc boundaries
  int64_t custom_id = 0;     // secondary order, smaller first
  uint32_t core_mask = 0;    // 0 = any core; bit k = core k
  uint64_t fc_timeout_us = 0;  // 0 = no timeout
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
  // priority); otherwise its id. on_done runs exactly once.
  virtual JobId submit(Job job) = 0;

  // Cancels a queued job (it completes with kCancelled at once) or stops a
  // running one at its next fc boundary. False when the job is unknown or done.
  virtual bool cancel(JobId id) = 0;

  // Estimated microseconds of work queued on the least loaded eligible core.
  virtual double queued_us(uint32_t core_mask) const = 0;
};

struct SimOptions {
  // 1 = run as fast as possible (default); otherwise each fc takes at least its
  // estimated board time (paced mode, so preemption behaves like a board).
  bool paced = false;
};

// The in-process simulator backend for a march (one worker thread per core).
std::unique_ptr<Device> create_sim_device(const isa::MarchInfo& march, const SimOptions& options);

}  // namespace openbpu::drv

#endif  // OPENBPU_BPU_DRIVER_DEVICE_H_
