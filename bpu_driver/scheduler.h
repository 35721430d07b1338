// SPDX-License-Identifier: Apache-2.0
// The function-call scheduler: the Device (device.h) the runtime uses, over
// any backend (backend.h). Backend-independent: ready queues per core,
// priorities and preemption at fc boundaries by the preemptive priority 255,
// gang jobs for core_num 2 programs, work stealing, fc timeouts and the
// watchdog, pacing to the board time estimates, statistics, and the test and
// tooling hooks (trace, fault injection, deterministic stepping).
// docs/scheduling.md describes the policy.
//
// Threads: one worker thread per core (started with the first job; none in
// stepped mode) takes a scheduling decision at every fc boundary and runs the
// fc through Backend::run_fc with the scheduler's lock released.
#ifndef OPENBPU_BPU_DRIVER_SCHEDULER_H_
#define OPENBPU_BPU_DRIVER_SCHEDULER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "bpu_driver/backend.h"
#include "bpu_driver/device.h"

namespace openbpu::drv {

// ---- Test and tooling hooks ------------------------------------------------

// What the scheduler reports to a trace hook. The hook runs with the
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
// once (kFault) without reaching the backend, kHang makes it never finish,
// so that the job's fc timeout (else SchedulerOptions::watchdog_us) or a
// cancel ends it. Either way the job ends with an error and the core is reset.
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

struct SchedulerOptions {
  // false: an fc takes what the backend needs (default). true: each fc takes
  // at least its estimated board time times pace_scale (paced mode, so that
  // preemption behaves like a board; pace_scale > 1 slows the board down
  // uniformly so that the host's own execution time stays below the paced
  // time). A timing-only backend (DeviceInfo::computes false) is always paced.
  bool paced = false;
  double pace_scale = 1.0;
  // Deterministic mode: no core threads; fcs run only inside step().
  bool stepped = false;
  // How long a hung fc of a job without fc_timeout_us runs before the
  // watchdog resets its core.
  uint64_t watchdog_us = 2'000'000;
  // How long an idle core thread polls for work before it sleeps
  // (bpu_driver/spin.h; 0 = sleep at once).
  uint64_t spin_ns = 0;
};

struct DeviceOptions {
  std::string backend = "sim";  // a name of backends()
  BackendOptions backend_options;
  SchedulerOptions scheduler;
};

class Scheduler final : public Device {
 public:
  explicit Scheduler(std::unique_ptr<Backend> backend, const SchedulerOptions& options);
  ~Scheduler() override;  // every unfinished job completes as cancelled
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  const DeviceInfo& info() const override;
  Status alloc(uint64_t size, bool cached, DmaBuffer* out) override;
  void free(const DmaBuffer& buffer) override;
  Status flush(const DmaBuffer& buffer, bool clean) override;
  Status load_program(const uint8_t* code, uint64_t code_size, const std::vector<FunctionCall>& fcs,
                      const ProgramLayout& layout, std::unique_ptr<Program>* out, std::string* error) override;
  JobId submit(Job job) override;
  bool cancel(JobId id) override;
  double queued_us(uint32_t core_mask) const override;

  // Hooks (set them before submitting jobs).
  void set_trace_hook(TraceHook hook);
  void set_fault_hook(FaultHook hook);
  DeviceStats stats() const;
  // The scheduler's state in words (diagnostics of failing tests).
  std::string describe() const;

  // Deterministic mode (SchedulerOptions::stepped): step() takes one
  // scheduling decision on `core` and runs at most one fc on the calling
  // thread, waiting up to timeout_ms for work. Returns true and describes the
  // fc in *ran when one ran; false on timeout, when the core is waiting for a
  // gang partner, or when not in stepped mode.
  bool step(int core, int timeout_ms, TraceEvent* ran);
  // Waits up to timeout_ms until at least `jobs` jobs are unfinished (lets a
  // stepping test know that asynchronous submissions arrived).
  bool wait_jobs(size_t jobs, int timeout_ms);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The device: the named backend (DeviceOptions::backend) under the
// scheduler. nullptr with *error naming the problem for an unknown backend
// or options the backend rejects.
std::unique_ptr<Scheduler> create_device(const isa::MarchInfo& march, const DeviceOptions& options,
                                         std::string* error);

}  // namespace openbpu::drv

#endif  // OPENBPU_BPU_DRIVER_SCHEDULER_H_
