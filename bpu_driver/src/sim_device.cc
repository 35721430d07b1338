// SPDX-License-Identifier: Apache-2.0
// The simulator backend: the fc scheduler of device.h over simulated cores.
// All scheduling state (ready queues, what each core holds, job states) lives
// under one mutex; one worker thread per core (none in stepped mode) takes a
// scheduling decision at every fc boundary and runs the fc on the host
// through bpu_sim's kernels with the lock released. Nothing polls: an idle
// core sleeps on its condition variable until a submission, a cancellation or
// its gang partner wakes it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "bpu_driver/device.h"
#include "bpu_sim/executor.h"
#include "bpu_sim/isa/codec.h"
#include "bpu_sim/validate.h"

namespace openbpu::drv {

namespace {

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

std::chrono::steady_clock::time_point to_time_point(uint64_t ns) {
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::nanoseconds(ns)));
}

class SimProgram final : public Program {
 public:
  ~SimProgram() override {
    if (pinned != nullptr) sim::unpin_constants(pinned);
  }
  std::vector<isa::Instruction> instructions;
  std::vector<FunctionCall> fcs;
  // The constant blob, pinned for the packed-weight cache while the program
  // lives (the loader keeps it mapped and unchanged).
  const uint8_t* pinned = nullptr;
  size_t fc_count() const override { return fcs.size(); }
  uint64_t fc_cycles(size_t fc) const override { return fc < fcs.size() ? fcs[fc].est_cycles : 0; }
  size_t instruction_count() const override { return instructions.size(); }
};

// One submitted job. Guarded by the device mutex, except `job` and `program`
// (immutable after submission) and the fc's memory, which only the core
// running the job's fc touches.
struct JobState {
  JobId id = 0;
  Job job;
  const SimProgram* program = nullptr;
  bool gang = false;        // occupies both cores for every fc
  int home = -1;            // core whose ready queue holds it (single-core jobs)
  size_t next_fc = 0;
  bool running = false;     // one of its fcs is executing
  bool cancel = false;      // stop at the end of the executing fc (a hung one at once)
  bool finished = false;    // detached from the scheduler; completion is being reported
  int last_core = -1;
  uint32_t preemptions = 0;
  uint64_t start_ns = 0, run_ns = 0;
  uint64_t remaining_cycles = 0;  // estimate of the fcs not run yet
};
using JobPtr = std::shared_ptr<JobState>;

// Memory the simulated device may hand out in one buffer: the host's physical
// memory, or the process's cgroup (v2) limit when lower. Buffers are touched
// at allocation (zero-filled), so a model declaring more must get an error,
// not the OOM killer.
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

// Cycle sums saturate: estimates come from model files.
uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// Ready-queue order: priority desc, custom_id asc, submission order (ids grow).
bool before(const JobState& a, const JobState& b) {
  if (a.job.priority != b.job.priority) return a.job.priority > b.job.priority;
  if (a.job.custom_id != b.job.custom_id) return a.job.custom_id < b.job.custom_id;
  return a.id < b.id;
}

class SimDevice final : public Device {
 public:
  SimDevice(const isa::MarchInfo& march, const SimOptions& options) : options_(options) {
    info_.backend = "sim";
    info_.march = &march;
    info_.cores = march.cores;
    info_.max_alloc = host_memory_bytes();
    kernels_ = &sim::best_kernels();
    for (int c = 0; c < march.cores; ++c) {
      cores_.push_back(std::make_unique<Core>());
      cores_.back()->index = c;
    }
    if (!(options_.pace_scale > 0.0)) options_.pace_scale = 1.0;
  }

  ~SimDevice() override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
      for (auto& core : cores_) core->cv.notify_all();
    }
    for (auto& core : cores_)
      if (core->thread.joinable()) core->thread.join();
    // Everything still queued completes as cancelled.
    std::vector<JobPtr> left;
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (auto& [id, js] : jobs_) left.push_back(js);
      for (auto& js : left) detach_locked(js, Status::kCancelled);
    }
    for (auto& js : left) complete(js, Status::kCancelled, "device shut down");
  }

  const DeviceInfo& info() const override { return info_; }

  Status alloc(uint64_t size, bool cached, DmaBuffer* out) override {
    if (size == 0) return Status::kInvalidArgument;
    const uint64_t rounded = (size + 4095) / 4096 * 4096;
    void* p = nullptr;
    if (rounded < size || rounded > info_.max_alloc || ::posix_memalign(&p, 4096, rounded) != 0 ||
        p == nullptr)
      return Status::kOutOfMemory;
    std::memset(p, 0, rounded);
    out->vir = static_cast<uint8_t*>(p);
    out->phy = reinterpret_cast<uintptr_t>(p);  // linear with vir, unique
    out->size = size;
    out->cached = cached;
    return Status::kOk;
  }

  void free(const DmaBuffer& buffer) override { std::free(buffer.vir); }

  Status flush(const DmaBuffer& buffer, bool clean) override {
    (void)clean;
    if (buffer.vir == nullptr) return Status::kInvalidArgument;
    // Host memory is coherent; a fence orders the CPU's writes before the
    // simulated device reads them.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return Status::kOk;
  }

  Status load_program(const uint8_t* code, uint64_t code_size, const std::vector<FunctionCall>& fcs,
                      const ProgramLayout& layout, std::unique_ptr<Program>* out,
                      std::string* error) override {
    auto prog = std::make_unique<SimProgram>();
    if (!isa::decode_program(code, code_size, &prog->instructions, error))
      return Status::kInvalidProgram;
    if (prog->instructions.empty()) {
      *error = "program has no instruction";
      return Status::kInvalidProgram;
    }
    sim::RegionLayout regions;
    regions.inputs = layout.input_sizes;
    regions.outputs = layout.output_sizes;
    regions.constants = layout.constants;
    regions.constants_size = layout.constants_size;
    regions.scratch_size = layout.scratch_size;
    regions.march = info_.march;
    if (!sim::validate_program(prog->instructions, regions, error)) return Status::kInvalidProgram;
    uint64_t next = 0;
    for (size_t i = 0; i < fcs.size(); ++i) {
      if (fcs[i].first != next || fcs[i].count == 0 ||
          fcs[i].count > prog->instructions.size() - next) {
        *error = "function call " + std::to_string(i) + " does not continue the program in order";
        return Status::kInvalidProgram;
      }
      next += fcs[i].count;
    }
    if (next != prog->instructions.size()) {
      *error = "function calls cover " + std::to_string(next) + " of " +
               std::to_string(prog->instructions.size()) + " instructions";
      return Status::kInvalidProgram;
    }
    prog->fcs = fcs;
    if (layout.constants != nullptr && layout.constants_size > 0) {
      sim::pin_constants(layout.constants, layout.constants_size);
      prog->pinned = layout.constants;
    }
    *out = std::move(prog);
    return Status::kOk;
  }

  JobId submit(Job job) override {
    if (job.program == nullptr || job.priority < 0 || job.priority > kPreemptPriority) return 0;
    const uint32_t all = (1u << cores_.size()) - 1u;
    if ((job.core_mask & ~all) != 0) return 0;
    if (job.cores != 1 && job.cores != 2) return 0;
    const bool gang = job.cores == 2;
    // A gang job needs exactly two cores and may not be pinned to one of them.
    if (gang && (cores_.size() != 2 || (job.core_mask != 0 && job.core_mask != all))) return 0;
    auto js = std::make_shared<JobState>();
    js->program = static_cast<const SimProgram*>(job.program);
    if (js->program->fcs.empty()) return 0;
    for (const auto& fc : js->program->fcs)
      js->remaining_cycles = sat_add(js->remaining_cycles, fc.est_cycles);
    js->job = std::move(job);
    js->gang = gang;
    if (!options_.stepped) {
      // Core threads start with the first job (a device used only for
      // memory never runs any).
      std::call_once(started_, [this] {
        for (auto& core : cores_) {
          Core* c = core.get();
          c->thread = std::thread([this, c] { worker(*c); });
        }
      });
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (stop_) return 0;
    js->id = ++next_id_;
    if (gang) {
      for (auto& core : cores_) {
        core->ready.push_back(js);
        core->queued_cycles = sat_add(core->queued_cycles, js->remaining_cycles);
        core->cv.notify_one();
      }
    } else {
      Core& core = *cores_[pick_core_locked(js->job.core_mask)];
      js->home = core.index;
      core.ready.push_back(js);
      core.queued_cycles = sat_add(core.queued_cycles, js->remaining_cycles);
      core.cv.notify_one();
    }
    jobs_[js->id] = js;
    ++stats_.jobs_submitted;
    jobs_cv_.notify_all();
    if (trace_) {
      TraceEvent ev = event_locked(*js, TraceEvent::Kind::kSubmit);
      ev.core = js->home;
      (*trace_)(ev);
    }
    return js->id;
  }

  bool cancel(JobId id) override {
    JobPtr js;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = jobs_.find(id);
      if (it == jobs_.end() || it->second->finished) return false;
      js = it->second;
      if (js->running) {
        // The executing core stops the job after this fc; a hung fc waits on
        // its core's condition variable and ends at once.
        js->cancel = true;
        for (auto& core : cores_) core->cv.notify_all();
        return true;
      }
      detach_locked(js, Status::kCancelled);
    }
    complete(js, Status::kCancelled, "cancelled");
    return true;
  }

  double queued_us(uint32_t core_mask) const override {
    std::lock_guard<std::mutex> lk(mu_);
    double best = -1.0;
    for (const auto& core : cores_) {
      if (core_mask != 0 && !(core_mask & (1u << core->index))) continue;
      const double us = static_cast<double>(core->queued_cycles) / info_.march->clock_mhz;
      if (best < 0 || us < best) best = us;
    }
    return best < 0 ? 0.0 : std::min(best, 2147483647.0);  // callers convert to int32
  }

  void set_trace_hook(TraceHook hook) override {
    std::lock_guard<std::mutex> lk(mu_);
    trace_ = hook ? std::make_shared<const TraceHook>(std::move(hook)) : nullptr;
  }

  void set_fault_hook(FaultHook hook) override {
    std::lock_guard<std::mutex> lk(mu_);
    fault_ = hook ? std::make_shared<const FaultHook>(std::move(hook)) : nullptr;
  }

  DeviceStats stats() const override {
    std::lock_guard<std::mutex> lk(mu_);
    return stats_;
  }

  std::string describe() const override {
    std::lock_guard<std::mutex> lk(mu_);
    auto job = [](const JobState& j) {
      return "#" + std::to_string(j.id) + "(p" + std::to_string(j.job.priority) + (j.gang ? " gang" : "") +
             " fc " + std::to_string(j.next_fc) + "/" + std::to_string(j.program->fcs.size()) +
             (j.running ? " running" : "") + (j.cancel ? " cancel" : "") + ")";
    };
    std::string s = std::to_string(jobs_.size()) + " unfinished job(s)";
    for (const auto& core : cores_) {
      s += "; core " + std::to_string(core->index) + (core->busy ? " busy" : "") + ": holds " +
           (core->current ? job(*core->current) : "-") + ", ready";
      for (const auto& j : core->ready) s += " " + job(*j);
    }
    return s;
  }

  bool step(int core_index, int timeout_ms, TraceEvent* ran) override {
    if (!options_.stepped || core_index < 0 || core_index >= static_cast<int>(cores_.size()))
      return false;
    Core& core = *cores_[core_index];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      if (stop_) return false;
      if (!core.busy) {
        const Action a = decide_locked(core);
        if (a.kind == Action::kRun) {
          execute(core, a, lk, ran);
          return true;
        }
        if (a.kind == Action::kPark) return false;  // the partner core must be stepped
      }
      if (core.cv.wait_until(lk, deadline) == std::cv_status::timeout) return false;
    }
  }

  bool wait_jobs(size_t jobs, int timeout_ms) override {
    std::unique_lock<std::mutex> lk(mu_);
    return jobs_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms),
                             [&] { return jobs_.size() >= jobs; });
  }

 private:
  struct Core {
    int index = 0;
    std::condition_variable cv;  // work arrived, partner finished, cancel of a hung fc, stop
    std::vector<JobPtr> ready;   // jobs waiting for this core (gang jobs wait on both)
    JobPtr current;              // job holding the core between its fcs (or parked for a gang)
    bool busy = false;           // an fc runs on this core (its own or its gang partner's)
    uint64_t queued_cycles = 0;  // estimated work of the jobs in `ready` and `current`
    std::thread thread;
  };

  struct Action {
    enum Kind { kIdle, kPark, kRun } kind = kIdle;
    JobPtr job;
    Core* partner = nullptr;  // gang jobs: the other core, held for the fc
  };

  Core& other(const Core& c) { return *cores_[c.index == 0 ? 1 : 0]; }

  TraceEvent event_locked(const JobState& js, TraceEvent::Kind kind) const {
    TraceEvent ev;
    ev.kind = kind;
    ev.job = js.id;
    ev.priority = js.job.priority;
    ev.custom_id = js.job.custom_id;
    ev.cores = js.gang ? 2 : 1;
    ev.fc_count = js.program->fcs.size();
    ev.t0_ns = now_ns();
    return ev;
  }

  // Least estimated queued work among eligible cores; ties go to the core
  // with fewer jobs, then the lower index.
  int pick_core_locked(uint32_t mask) const {
    int best = -1;
    uint64_t best_load = 0;
    size_t best_jobs = 0;
    for (const auto& core : cores_) {
      if (mask != 0 && !(mask & (1u << core->index))) continue;
      const size_t jobs = core->ready.size() + (core->current ? 1 : 0);
      if (best < 0 || core->queued_cycles < best_load ||
          (core->queued_cycles == best_load && jobs < best_jobs)) {
        best = core->index;
        best_load = core->queued_cycles;
        best_jobs = jobs;
      }
    }
    return best < 0 ? 0 : best;
  }

  static JobPtr best_ready(const Core& c) {
    JobPtr best;
    for (const auto& j : c.ready)
      if (!best || before(*j, *best)) best = j;
    return best;
  }

  static void erase_ready(Core& c, const JobPtr& js) {
    auto it = std::find(c.ready.begin(), c.ready.end(), js);
    if (it != c.ready.end()) c.ready.erase(it);
  }

  // An idle core takes the best not yet started single-core job of another
  // core that may run on it (work conservation for "any" jobs).
  JobPtr steal_locked(Core& c) {
    JobPtr best;
    for (auto& other_core : cores_) {
      if (other_core.get() == &c) continue;
      for (const auto& j : other_core->ready) {
        if (j->gang || j->next_fc != 0) continue;
        if (j->job.core_mask != 0 && !(j->job.core_mask & (1u << c.index))) continue;
        if (!best || before(*j, *best)) best = j;
      }
    }
    if (!best) return nullptr;
    Core& from = *cores_[best->home];
    erase_ready(from, best);
    from.queued_cycles = sat_sub(from.queued_cycles, best->remaining_cycles);
    best->home = c.index;
    c.ready.push_back(best);
    c.queued_cycles = sat_add(c.queued_cycles, best->remaining_cycles);
    ++stats_.steals;
    return best;
  }

  // True when `held` (started) gives its core up for `other` at an fc
  // boundary: only the preemptive level preempts, and not itself.
  static bool preempts(const JobState& other, const JobState& held) {
    return other.job.priority == kPreemptPriority && held.job.priority != kPreemptPriority;
  }

  // The scheduling decision of a core at an fc boundary (core not busy).
  //   * A started job held by the core continues unless preempted.
  //   * A started gang job held by the partner core binds this core too (it
  //     was preempted here, or never left): it resumes before anything but the
  //     preemptive level. Both cores thus agree on a started gang job, and on
  //     unstarted ones through the common ready order, so they never park
  //     for two different gang jobs.
  //   * Otherwise the best ready job (an unstarted held gang job is not
  //     committed and yields to a better one); an idle core steals.
  Action decide_locked(Core& c) {
    Core* p = cores_.size() == 2 ? &other(c) : nullptr;
    JobPtr bound;
    if (p != nullptr && p->current && p->current->gang && p->current->next_fc > 0 &&
        p->current != c.current &&
        std::find(c.ready.begin(), c.ready.end(), p->current) != c.ready.end())
      bound = p->current;
    JobPtr cur = c.current;
    if (cur) {
      const JobPtr best = best_ready(c);
      bool yield;
      if (cur->next_fc > 0) {
        yield = best && preempts(*best, *cur);
        if (yield) {
          ++cur->preemptions;
          ++stats_.preemptions;
        }
      } else if (bound) {
        yield = !preempts(*cur, *bound);
      } else {
        yield = best && before(*best, *cur);
      }
      if (yield) {
        c.ready.push_back(cur);
        c.current.reset();
        cur.reset();
      }
    }
    if (!cur) {
      JobPtr pick = best_ready(c);
      if (bound && !(pick && preempts(*pick, *bound))) pick = bound;
      if (!pick) pick = steal_locked(c);
      if (!pick) return {};
      erase_ready(c, pick);
      c.current = pick;
      cur = pick;
      // The partner may be parked for another gang job: let it re-decide.
      if (cur->gang && p != nullptr) p->cv.notify_all();
    }
    Action a;
    a.job = cur;
    if (!cur->gang) {
      a.kind = Action::kRun;
    } else if (p->current == cur && !p->busy) {
      a.kind = Action::kRun;
      a.partner = p;
    } else {
      a.kind = Action::kPark;
    }
    return a;
  }

  // Removes a job from the scheduler (lock held); the caller then reports
  // its completion with complete() outside the lock.
  void detach_locked(const JobPtr& js, Status st) {
    js->finished = true;
    for (auto& core : cores_) {
      if (!js->gang && core->index != js->home) continue;
      erase_ready(*core, js);
      if (core->current == js) core->current.reset();
      core->queued_cycles = sat_sub(core->queued_cycles, js->remaining_cycles);
      core->cv.notify_all();
    }
    js->remaining_cycles = 0;
    jobs_.erase(js->id);
    ++stats_.jobs_completed;
    if (st == Status::kCancelled) ++stats_.jobs_cancelled;
    if (st == Status::kFault || st == Status::kTimeout) ++stats_.jobs_failed;
    if (trace_) {
      TraceEvent ev = event_locked(*js, TraceEvent::Kind::kDone);
      ev.core = js->last_core;
      ev.fc = js->next_fc;
      ev.status = st;
      (*trace_)(ev);
    }
  }

  // Runs the next fc of a.job on core c (lock held on entry and exit;
  // released while the fc executes).
  void execute(Core& c, const Action& a, std::unique_lock<std::mutex>& lk, TraceEvent* ran) {
    const JobPtr js = a.job;
    Core* p = a.partner;
    const size_t fc = js->next_fc;
    js->running = true;
    c.busy = true;
    if (p != nullptr) p->busy = true;
    const uint64_t t0 = now_ns();
    if (js->start_ns == 0) js->start_ns = t0;
    const std::shared_ptr<const FaultHook> fault_hook = fault_;
    lk.unlock();

    Fault fault = Fault::kNone;
    if (fault_hook) fault = (*fault_hook)(FcInfo{js->id, js->program, fc, c.index, js->job.priority});
    if (fault == Fault::kNone) run_fc(*js, fc, t0);

    lk.lock();
    bool aborted = false;
    if (fault == Fault::kHang) {
      // The fc never signals completion: the watchdog (or a cancel) ends it.
      const uint64_t limit_us = js->job.fc_timeout_us != 0 ? js->job.fc_timeout_us : options_.watchdog_us;
      aborted = c.cv.wait_until(lk, to_time_point(t0 + limit_us * 1000),
                                [&] { return js->cancel || stop_; });
    }
    const uint64_t t1 = now_ns();
    js->running = false;
    c.busy = false;
    if (p != nullptr) {
      p->busy = false;
      p->cv.notify_all();
    }
    js->run_ns += t1 - t0;
    js->last_core = c.index;
    const uint64_t cyc = js->program->fcs[fc].est_cycles;
    js->remaining_cycles = sat_sub(js->remaining_cycles, cyc);
    c.queued_cycles = sat_sub(c.queued_cycles, cyc);
    if (p != nullptr) p->queued_cycles = sat_sub(p->queued_cycles, cyc);
    js->next_fc++;
    ++stats_.fcs_run;

    Status st = Status::kOk;
    std::string msg;
    auto where = [&] {
      return "function call " + std::to_string(fc) + " on BPU core " + std::to_string(c.index) +
             (p != nullptr ? " (+ its gang partner)" : "");
    };
    if (fault == Fault::kFail) {
      st = Status::kFault;
      msg = where() + " failed; the core was reset";
    } else if (fault == Fault::kHang && aborted) {
      st = Status::kCancelled;
      msg = where() + " hung and was stopped (" + (stop_ ? "device shut down" : "cancelled") +
            "); the core was reset";
    } else if (fault == Fault::kHang) {
      st = Status::kTimeout;
      msg = where() + " did not finish within " +
            std::to_string(js->job.fc_timeout_us != 0 ? js->job.fc_timeout_us : options_.watchdog_us) +
            " us (hung); the core was reset";
    } else if (js->job.fc_timeout_us != 0 && (t1 - t0) / 1000 > js->job.fc_timeout_us) {
      st = Status::kTimeout;
      msg = where() + " took " + std::to_string((t1 - t0) / 1000) + " us, over its timeout of " +
            std::to_string(js->job.fc_timeout_us) + " us; the core was reset";
    } else if (js->cancel) {
      st = Status::kCancelled;
      msg = "cancelled";
    }
    // A core reset aborts only the failing job: the others' state is in their
    // own memory, so queued and preempted jobs run later as if nothing happened.
    if (st == Status::kFault || st == Status::kTimeout || fault == Fault::kHang)
      stats_.core_resets += p != nullptr ? 2 : 1;

    if (trace_ || ran != nullptr) {
      TraceEvent ev = event_locked(*js, TraceEvent::Kind::kFc);
      ev.core = c.index;
      ev.fc = fc;
      ev.t0_ns = t0;
      ev.t1_ns = t1;
      ev.status = st;
      if (trace_) (*trace_)(ev);
      if (ran != nullptr) *ran = ev;
    }

    if (st != Status::kOk || js->next_fc >= js->program->fcs.size()) {
      detach_locked(js, st);
      lk.unlock();
      complete(js, st, msg);
      lk.lock();
    }
  }

  void worker(Core& c) {
#ifdef __linux__
    // Paced fcs end on a timer: keep its slack small (default 50 us).
    if (options_.paced) prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
      if (!c.busy) {
        const Action a = decide_locked(c);
        if (a.kind == Action::kRun) {
          execute(c, a, lk, nullptr);
          continue;
        }
      }
      c.cv.wait(lk);
    }
  }

  void run_fc(const JobState& js, size_t fc, uint64_t t0) {
    const auto& call = js.program->fcs[fc];
    sim::Memory mem;
    const Bindings& b = js.job.bindings;
    mem.inputs.reserve(b.inputs.size());
    for (const auto& v : b.inputs) mem.inputs.push_back({v.vir, v.size});
    mem.outputs.reserve(b.outputs.size());
    for (const auto& v : b.outputs) mem.outputs.push_back({v.vir, v.size});
    mem.constants = {b.constants.vir, b.constants.size};
    mem.scratch = {b.scratch.vir, b.scratch.size};
    sim::execute_range(js.program->instructions, call.first, call.count, mem, *kernels_);
    if (options_.paced) {
      // A gang fc is split over both cores: half the single-core estimate.
      double ns = static_cast<double>(call.est_cycles) * 1000.0 / info_.march->clock_mhz *
                  options_.pace_scale;
      if (js.gang) ns /= 2.0;
      // At most an hour per fc (absurd estimates must not overflow the clock).
      ns = std::min(ns, 3600e9);
      std::this_thread::sleep_until(to_time_point(t0 + static_cast<uint64_t>(ns)));
    }
  }

  void complete(const JobPtr& js, Status st, const std::string& msg) {
    JobResult r;
    r.status = st;
    r.message = msg;
    r.core = js->last_core;
    r.start_ns = js->start_ns;
    r.end_ns = now_ns();
    r.run_ns = js->run_ns;
    r.preemptions = js->preemptions;
    if (js->job.on_done) js->job.on_done(r);
  }

  DeviceInfo info_;
  SimOptions options_;
  const sim::KernelTable* kernels_;
  std::vector<std::unique_ptr<Core>> cores_;
  std::once_flag started_;

  mutable std::mutex mu_;
  std::condition_variable jobs_cv_;  // a job was submitted (wait_jobs)
  bool stop_ = false;
  JobId next_id_ = 0;
  std::unordered_map<JobId, JobPtr> jobs_;  // unfinished jobs
  DeviceStats stats_;
  std::shared_ptr<const TraceHook> trace_;
  std::shared_ptr<const FaultHook> fault_;
};

}  // namespace

std::unique_ptr<Device> create_sim_device(const isa::MarchInfo& march, const SimOptions& options) {
  return std::make_unique<SimDevice>(march, options);
}

}  // namespace openbpu::drv
