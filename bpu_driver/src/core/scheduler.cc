// SPDX-License-Identifier: Apache-2.0
// The fc scheduler of scheduler.h. All scheduling state (ready queues, what
// each core holds, job states) lives under one mutex; one worker thread per
// core (none in stepped mode) takes a scheduling decision at every fc
// boundary and runs the fc through the backend with the lock released.
// An idle core polls for up to SchedulerOptions::spin_ns (spin.h), then
// sleeps on its condition variable until a submission, a cancellation or
// its gang partner wakes it.
#include "bpu_driver/scheduler.h"
#include "bpu_driver/spin.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#ifdef __linux__
#include <sys/prctl.h>
#endif

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

// A loaded program: the backend's form and the fc list the scheduler runs.
class SchedProgram final : public Program {
 public:
  std::unique_ptr<BackendProgram> impl;
  std::vector<FunctionCall> fcs;
  size_t fc_count() const override { return fcs.size(); }
  uint64_t fc_cycles(size_t fc) const override { return fc < fcs.size() ? fcs[fc].est_cycles : 0; }
  size_t instruction_count() const override { return impl->instruction_count(); }
};

// One submitted job. Guarded by the device mutex, except `job` and `program`
// (immutable after submission) and the fc's memory, which only the core
// running the job's fc touches.
struct JobState {
  JobId id = 0;
  Job job;
  const SchedProgram* program = nullptr;
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

// Cycle sums saturate: estimates come from model files.
uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// Ready-queue order: priority desc, custom_id asc, submission order (ids grow).
bool before(const JobState& a, const JobState& b) {
  if (a.job.priority != b.job.priority) return a.job.priority > b.job.priority;
  if (a.job.custom_id != b.job.custom_id) return a.job.custom_id < b.job.custom_id;
  return a.id < b.id;
}

}  // namespace

class Scheduler::Impl {
 public:
  Impl(std::unique_ptr<Backend> backend, const SchedulerOptions& options)
      : backend_(std::move(backend)), options_(options) {
    const DeviceInfo& info = backend_->info();
    for (int c = 0; c < info.cores; ++c) {
      cores_.push_back(std::make_unique<Core>());
      cores_.back()->index = c;
    }
    if (!(options_.pace_scale > 0.0)) options_.pace_scale = 1.0;
    // A timing-only backend executes nothing: its fcs last their board time.
    if (!info.computes) options_.paced = true;
    ns_per_cycle_ = 1000.0 / info.march->clock_mhz * options_.pace_scale;
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
      for (auto& core : cores_) core->wake.notify_all();
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

  Backend& backend() { return *backend_; }

  Status load_program(const uint8_t* code, uint64_t code_size, const std::vector<FunctionCall>& fcs,
                      const ProgramLayout& layout, std::unique_ptr<Program>* out, std::string* error) {
    auto prog = std::make_unique<SchedProgram>();
    const Status st = backend_->load_program(code, code_size, layout, &prog->impl, error);
    if (st != Status::kOk) return st;
    const size_t instructions = prog->impl->instruction_count();
    if (instructions == 0) {
      *error = "program has no instruction";
      return Status::kInvalidProgram;
    }
    uint64_t next = 0;
    for (size_t i = 0; i < fcs.size(); ++i) {
      if (fcs[i].first != next || fcs[i].count == 0 || fcs[i].count > instructions - next) {
        *error = "function call " + std::to_string(i) + " does not continue the program in order";
        return Status::kInvalidProgram;
      }
      next += fcs[i].count;
    }
    if (next != instructions) {
      *error = "function calls cover " + std::to_string(next) + " of " + std::to_string(instructions) +
               " instructions";
      return Status::kInvalidProgram;
    }
    prog->fcs = fcs;
    *out = std::move(prog);
    return Status::kOk;
  }

  JobId submit(Job job) {
    if (job.program == nullptr || job.priority < 0 || job.priority > kPreemptPriority) return 0;
    const uint32_t all = (1u << cores_.size()) - 1u;
    if ((job.core_mask & ~all) != 0) return 0;
    if (job.cores != 1 && job.cores != 2) return 0;
    const bool gang = job.cores == 2;
    // A gang job needs exactly two cores and may not be pinned to one of them.
    if (gang && (cores_.size() != 2 || (job.core_mask != 0 && job.core_mask != all))) return 0;
    auto js = std::make_shared<JobState>();
    js->program = static_cast<const SchedProgram*>(job.program);
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
        core->wake.notify_all();
      }
    } else {
      Core& core = *cores_[pick_core_locked(js->job.core_mask)];
      js->home = core.index;
      core.ready.push_back(js);
      core.queued_cycles = sat_add(core.queued_cycles, js->remaining_cycles);
      core.wake.notify_all();
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

  bool cancel(JobId id) {
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
        for (auto& core : cores_) core->wake.notify_all();
        return true;
      }
      detach_locked(js, Status::kCancelled);
    }
    complete(js, Status::kCancelled, "cancelled");
    return true;
  }

  double queued_us(uint32_t core_mask) const {
    std::lock_guard<std::mutex> lk(mu_);
    double best = -1.0;
    for (const auto& core : cores_) {
      if (core_mask != 0 && !(core_mask & (1u << core->index))) continue;
      const double us = static_cast<double>(core->queued_cycles) / backend_->info().march->clock_mhz;
      if (best < 0 || us < best) best = us;
    }
    return best < 0 ? 0.0 : std::min(best, 2147483647.0);  // callers convert to int32
  }

  void set_trace_hook(TraceHook hook) {
    std::lock_guard<std::mutex> lk(mu_);
    trace_ = hook ? std::make_shared<const TraceHook>(std::move(hook)) : nullptr;
  }

  void set_fault_hook(FaultHook hook) {
    std::lock_guard<std::mutex> lk(mu_);
    fault_ = hook ? std::make_shared<const FaultHook>(std::move(hook)) : nullptr;
  }

  DeviceStats stats() const {
    std::lock_guard<std::mutex> lk(mu_);
    return stats_;
  }

  std::string describe() const {
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

  bool step(int core_index, int timeout_ms, TraceEvent* ran) {
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
      if (core.wake.cv().wait_until(lk, deadline) == std::cv_status::timeout) return false;
    }
  }

  bool wait_jobs(size_t jobs, int timeout_ms) {
    std::unique_lock<std::mutex> lk(mu_);
    return jobs_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms),
                             [&] { return jobs_.size() >= jobs; });
  }

 private:
  struct Core {
    int index = 0;
    PollingCondition wake;       // work arrived, partner finished, cancel of a hung fc, stop
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
      if (cur->gang && p != nullptr) p->wake.notify_all();
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
      core->wake.notify_all();
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

  // What ended an fc, before the scheduler turns it into a job status.
  struct FcEnd {
    Fault fault = Fault::kNone;
    bool aborted = false;        // a hung fc stopped by cancel or shutdown
    Status backend = Status::kOk;
    std::string error;           // the backend's message
  };

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
    const uint64_t limit_us = js->job.fc_timeout_us != 0 ? js->job.fc_timeout_us : options_.watchdog_us;
    lk.unlock();

    FcEnd end;
    if (fault_hook) end.fault = (*fault_hook)(FcInfo{js->id, js->program, fc, c.index, js->job.priority});
    if (end.fault == Fault::kNone) end.backend = run_fc(*js, c.index, fc, t0, t0 + limit_us * 1000, &end.error);

    lk.lock();
    if (end.fault == Fault::kHang) {
      // The fc never signals completion: the watchdog (or a cancel) ends it.
      end.aborted =
          c.wake.cv().wait_until(lk, to_time_point(t0 + limit_us * 1000), [&] { return js->cancel || stop_; });
    }
    const uint64_t t1 = now_ns();
    std::string msg;
    const Status st = outcome(*js, end, t1 - t0, limit_us, &msg);
    if (st == Status::kFault || st == Status::kTimeout || end.fault == Fault::kHang) {
      // A core reset aborts only the failing job: the others' state is in
      // their own memory, so queued and preempted jobs run later as if
      // nothing happened. The cores stay busy while the backend resets them.
      lk.unlock();
      backend_->reset_core(c.index);
      if (p != nullptr) backend_->reset_core(p->index);
      lk.lock();
      stats_.core_resets += p != nullptr ? 2 : 1;
      msg = "function call " + std::to_string(fc) + " on BPU core " + std::to_string(c.index) +
            (p != nullptr ? " (+ its gang partner) " : " ") + msg + "; the core was reset";
    }
    finish_fc(c, p, js, fc, t0, t1);

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

  // The job status an fc ends with, and what to say about a failure.
  Status outcome(const JobState& js, const FcEnd& end, uint64_t took_ns, uint64_t limit_us,
                 std::string* msg) const {
    if (end.fault == Fault::kFail) {
      *msg = "failed (injected fault)";
      return Status::kFault;
    }
    if (end.fault == Fault::kHang && end.aborted) {
      *msg = std::string("hung and was stopped (") + (stop_ ? "device shut down" : "cancelled") + ")";
      return Status::kCancelled;
    }
    if (end.fault == Fault::kHang) {
      *msg = "did not finish within " + std::to_string(limit_us) + " us (hung)";
      return Status::kTimeout;
    }
    if (end.backend != Status::kOk && end.backend != Status::kCancelled) {
      *msg = std::string("failed (") + status_name(end.backend) + "): " + end.error;
      return end.backend == Status::kTimeout ? Status::kTimeout : Status::kFault;
    }
    if (js.job.fc_timeout_us != 0 && took_ns / 1000 > js.job.fc_timeout_us) {
      *msg = "took " + std::to_string(took_ns / 1000) + " us, over its timeout of " +
             std::to_string(js.job.fc_timeout_us) + " us";
      return Status::kTimeout;
    }
    if (js.cancel || end.backend == Status::kCancelled) {
      *msg = "cancelled";
      return Status::kCancelled;
    }
    return Status::kOk;
  }

  // Releases the cores of an ended fc and books its time (lock held).
  void finish_fc(Core& c, Core* p, const JobPtr& js, size_t fc, uint64_t t0, uint64_t t1) {
    js->running = false;
    c.busy = false;
    if (p != nullptr) {
      p->busy = false;
      p->wake.notify_all();
    }
    js->run_ns += t1 - t0;
    js->last_core = c.index;
    const uint64_t cyc = js->program->fcs[fc].est_cycles;
    js->remaining_cycles = sat_sub(js->remaining_cycles, cyc);
    c.queued_cycles = sat_sub(c.queued_cycles, cyc);
    if (p != nullptr) p->queued_cycles = sat_sub(p->queued_cycles, cyc);
    js->next_fc++;
    ++stats_.fcs_run;
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
      // Poll briefly before sleeping (state changes that concern this core
      // come with a notification of its `wake`).
      if (!c.wake.poll(lk, options_.spin_ns) && !stop_) c.wake.cv().wait(lk);
    }
  }

  // The fc on the backend, then (paced mode) the rest of its board time.
  Status run_fc(const JobState& js, int core, size_t fc, uint64_t t0, uint64_t deadline_ns, std::string* error) {
    FcRun run;
    run.program = js.program->impl.get();
    run.call = js.program->fcs[fc];
    run.bindings = &js.job.bindings;
    run.core = core;
    run.gang = js.gang;
    run.deadline_ns = deadline_ns;
    const Status st = backend_->run_fc(run, error);
    if (st == Status::kOk && options_.paced) {
      // A gang fc is split over both cores: half the single-core estimate.
      double ns = static_cast<double>(run.call.est_cycles) * ns_per_cycle_;
      if (js.gang) ns /= 2.0;
      // At most an hour per fc (absurd estimates must not overflow the clock).
      ns = std::min(ns, 3600e9);
      std::this_thread::sleep_until(to_time_point(t0 + static_cast<uint64_t>(ns)));
    }
    return st;
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

  std::unique_ptr<Backend> backend_;
  SchedulerOptions options_;
  double ns_per_cycle_ = 1.0;  // board ns per estimated cycle, times pace_scale
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

Scheduler::Scheduler(std::unique_ptr<Backend> backend, const SchedulerOptions& options)
    : impl_(std::make_unique<Impl>(std::move(backend), options)) {}
Scheduler::~Scheduler() = default;

const DeviceInfo& Scheduler::info() const { return impl_->backend().info(); }
Status Scheduler::alloc(uint64_t size, bool cached, DmaBuffer* out) { return impl_->backend().alloc(size, cached, out); }
void Scheduler::free(const DmaBuffer& buffer) { impl_->backend().free(buffer); }
Status Scheduler::flush(const DmaBuffer& buffer, bool clean) { return impl_->backend().flush(buffer, clean); }
Status Scheduler::load_program(const uint8_t* code, uint64_t code_size, const std::vector<FunctionCall>& fcs,
                               const ProgramLayout& layout, std::unique_ptr<Program>* out, std::string* error) {
  return impl_->load_program(code, code_size, fcs, layout, out, error);
}
JobId Scheduler::submit(Job job) { return impl_->submit(std::move(job)); }
bool Scheduler::cancel(JobId id) { return impl_->cancel(id); }
double Scheduler::queued_us(uint32_t core_mask) const { return impl_->queued_us(core_mask); }
void Scheduler::set_trace_hook(TraceHook hook) { impl_->set_trace_hook(std::move(hook)); }
void Scheduler::set_fault_hook(FaultHook hook) { impl_->set_fault_hook(std::move(hook)); }
DeviceStats Scheduler::stats() const { return impl_->stats(); }
std::string Scheduler::describe() const { return impl_->describe(); }
bool Scheduler::step(int core, int timeout_ms, TraceEvent* ran) { return impl_->step(core, timeout_ms, ran); }
bool Scheduler::wait_jobs(size_t jobs, int timeout_ms) { return impl_->wait_jobs(jobs, timeout_ms); }

std::unique_ptr<Scheduler> create_device(const isa::MarchInfo& march, const DeviceOptions& options,
                                         std::string* error) {
  const BackendEntry* entry = find_backend(options.backend);
  if (entry == nullptr) {
    *error = "unknown BPU device backend '" + options.backend + "' (accepted: " + backend_names() + ")";
    return nullptr;
  }
  std::unique_ptr<Backend> backend = entry->create(march, options.backend_options, error);
  if (!backend) return nullptr;
  return std::make_unique<Scheduler>(std::move(backend), options.scheduler);
}

}  // namespace openbpu::drv
