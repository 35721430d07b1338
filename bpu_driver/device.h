// SPDX-License-Identifier: Apache-2.0
// The BPU device interface: what the runtime needs from an accelerator.
// Backends: `sim` (the in-process simulator, bpu_sim) and, on boards, a
// kernel driver. The runtime never touches registers or kernels directly.
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
  std::string backend;  // "sim"
  const isa::MarchInfo* march = nullptr;
  int cores = 1;
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

// ---- Test and tooling hooks ------------------------------------------------

// What the device reports to a trace hook. The hook runs with the
// scheduler's lock held (keep it short; never call the device from it), so
// events arrive in the order the scheduler records them (an fc when it
// ends); timestamps are steady-clock ns taken under that lock.
struct TraceEvent {
  enum class Kind { kSubmit, kFc, kDone };
  Kind kind = Kind::kSubmit;
  JobId job = 0;
  int core = -1;       // kSubmit: home core (-1 for a gang job); kFc/kDone: core that ran it
  int cores = 1;       // 2 for a gang job (its fcs also hold the other core)
  int priority = 0;
  int64_t custom_id = 0;
  size_t fc = 0;       // kFc: index of the fc; kDone: fcs run
  size_t fc_count = 0;
  uint64_t t0_ns = 0;  // kFc: start; kSubmit/kDone: the event time
  uint64_t t1_ns = 0;  // kFc: end
  Status status = Status::kOk;  // kFc: the fc's outcome; kDone: the job's
};
using TraceHook = std::function<void(const TraceEvent&)>;

// Fault injection: consulted before every fc; kFail makes the fc fail at
// once (kFault), kHang makes it never finish, so that the watchdog (the
// job's fc timeout, else SimOptions::watchdog_us) or a cancel ends it.
// Either way the job ends with an error and the core is reset.
enum class Fault { kNone, kFail, kHang };
struct FcInfo {
  JobId job = 0;
  const Program* program = nullptr;
  size_t fc = 0;
  int core = 0;
  int priority = 0;
};
using FaultHook = std::function<Fault(const FcInfo&)>;

struct DeviceStats {
  uint64_t jobs_submitted = 0;
  uint64_t jobs_completed = 0;  // every status, including cancelled
  uint64_t jobs_failed = 0;     // kFault or kTimeout
  uint64_t jobs_cancelled = 0;
  uint64_t fcs_run = 0;
  uint64_t preemptions = 0;
  uint64_t core_resets = 0;
  uint64_t steals = 0;  // jobs an idle core took from another core's queue
};

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

  // Hooks (set them before submitting jobs; a backend may ignore them).
  virtual void set_trace_hook(TraceHook hook) { (void)hook; }
  virtual void set_fault_hook(FaultHook hook) { (void)hook; }
  virtual DeviceStats stats() const { return {}; }
  // The scheduler's state in words (diagnostics of failing tests).
  virtual std::string describe() const { return {}; }

  // Deterministic mode (SimOptions::stepped): the cores run only when
  // stepped. step() takes one scheduling decision on `core` and runs at most
  // one fc on the calling thread, waiting up to timeout_ms for work. Returns
  // true and describes the fc in *ran when one ran; false on timeout, when
  // the core is waiting for a gang partner, or when not in stepped mode.
  virtual bool step(int core, int timeout_ms, TraceEvent* ran) {
    (void)core, (void)timeout_ms, (void)ran;
    return false;
  }
  // Waits up to timeout_ms until at least `jobs` jobs are unfinished on the
  // device (lets a stepping test know that asynchronous submissions arrived).
  virtual bool wait_jobs(size_t jobs, int timeout_ms) {
    (void)jobs, (void)timeout_ms;
    return false;
  }
};

struct SimOptions {
  // false: run as fast as possible (default). true: each fc takes at least its
  // estimated board time times pace_scale (paced mode, so that preemption
  // behaves like a board; pace_scale > 1 slows the board down uniformly so
  // that the host's own execution time stays below the paced time).
  bool paced = false;
  double pace_scale = 1.0;
  // Deterministic mode: no core threads; fcs run only inside step().
  bool stepped = false;
  // How long a hung fc of a job without fc_timeout_us runs before the
  // watchdog resets its core.
  uint64_t watchdog_us = 2'000'000;
};

// The in-process simulator backend for a march (one worker thread per core,
// started with the first job).
std::unique_ptr<Device> create_sim_device(const isa::MarchInfo& march, const SimOptions& options);

}  // namespace openbpu::drv

#endif  // OPENBPU_BPU_DRIVER_DEVICE_H_
