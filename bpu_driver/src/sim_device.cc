// SPDX-License-Identifier: Apache-2.0
// The simulator backend: one worker thread per simulated core, each with its
// own ready queue; instructions run on the host through bpu_sim's kernels.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

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

class SimProgram final : public Program {
 public:
  std::vector<isa::Instruction> instructions;
  std::vector<FunctionCall> fcs;
  size_t fc_count() const override { return fcs.size(); }
  uint64_t fc_cycles(size_t fc) const override { return fc < fcs.size() ? fcs[fc].est_cycles : 0; }
  size_t instruction_count() const override { return instructions.size(); }
};

struct JobState {
  JobId id = 0;
  uint64_t seq = 0;
  Job job;
  const SimProgram* program = nullptr;
  size_t next_fc = 0;
  bool cancel = false;
  int core = 0;
  uint64_t start_ns = 0;
  uint64_t remaining_cycles = 0;
};
using JobPtr = std::shared_ptr<JobState>;

// Ready-queue order: priority desc, custom_id asc, submission order.
bool before(const JobState& a, const JobState& b) {
  if (a.job.priority != b.job.priority) return a.job.priority > b.job.priority;
  if (a.job.custom_id != b.job.custom_id) return a.job.custom_id < b.job.custom_id;
  return a.seq < b.seq;
}

class SimDevice final : public Device {
 public:
  SimDevice(const isa::MarchInfo& march, const SimOptions& options) : options_(options) {
    info_.backend = "sim";
    info_.march = &march;
    info_.cores = march.cores;
    kernels_ = &sim::best_kernels();
    for (int c = 0; c < march.cores; ++c) cores_.push_back(std::make_unique<Core>());
  }

  ~SimDevice() override {
    for (auto& core : cores_) {
      std::lock_guard<std::mutex> lk(core->mu);
      core->stop = true;
      core->cv.notify_all();
    }
    for (auto& core : cores_)
      if (core->thread.joinable()) core->thread.join();
  }

  const DeviceInfo& info() const override { return info_; }

  Status alloc(uint64_t size, bool cached, DmaBuffer* out) override {
    if (size == 0) return Status::kInvalidArgument;
    const uint64_t rounded = (size + 4095) / 4096 * 4096;
    void* p = nullptr;
    if (rounded < size || ::posix_memalign(&p, 4096, rounded) != 0 || p == nullptr)
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
    *out = std::move(prog);
    return Status::kOk;
  }

  JobId submit(Job job) override {
    if (job.program == nullptr || job.priority < 0 || job.priority > kPreemptPriority) return 0;
    const uint32_t all = (1u << cores_.size()) - 1u;
    if ((job.core_mask & ~all) != 0) return 0;
    auto js = std::make_shared<JobState>();
    js->program = static_cast<const SimProgram*>(job.program);
    for (const auto& fc : js->program->fcs) js->remaining_cycles += fc.est_cycles;
    js->job = std::move(job);
    js->id = next_id_.fetch_add(1) + 1;
    js->seq = js->id;
    // Core threads start with the first job (a device used only for memory
    // never runs any).
    std::call_once(started_, [this] {
      for (size_t c = 0; c < cores_.size(); ++c)
        cores_[c]->thread = std::thread([this, c] { worker(static_cast<int>(c)); });
    });
    js->core = pick_core(js->job.core_mask);
    {
      std::lock_guard<std::mutex> lk(ids_mu_);
      ids_[js->id] = js->core;
    }
    Core& core = *cores_[js->core];
    {
      std::lock_guard<std::mutex> lk(core.mu);
      core.ready.push_back(js);
      core.queued_cycles += js->remaining_cycles;
      core.cv.notify_one();
    }
    return js->id;
  }

  bool cancel(JobId id) override {
    int core_index;
    {
      std::lock_guard<std::mutex> lk(ids_mu_);
      auto it = ids_.find(id);
      if (it == ids_.end()) return false;
      core_index = it->second;
    }
    Core& core = *cores_[core_index];
    JobPtr removed;
    {
      std::lock_guard<std::mutex> lk(core.mu);
      if (core.current && core.current->id == id) {
        core.current->cancel = true;
        return true;
      }
      auto it = std::find_if(core.ready.begin(), core.ready.end(),
                             [id](const JobPtr& j) { return j->id == id; });
      if (it == core.ready.end()) return false;
      removed = *it;
      core.ready.erase(it);
      core.queued_cycles -= removed->remaining_cycles;
    }
    complete(removed, Status::kCancelled, "cancelled");
    return true;
  }

  double queued_us(uint32_t core_mask) const override {
    double best = -1.0;
    for (size_t c = 0; c < cores_.size(); ++c) {
      if (core_mask != 0 && !(core_mask & (1u << c))) continue;
      std::lock_guard<std::mutex> lk(cores_[c]->mu);
      const double us = static_cast<double>(cores_[c]->queued_cycles) / info_.march->clock_mhz;
      if (best < 0 || us < best) best = us;
    }
    return best < 0 ? 0.0 : best;
  }

 private:
  struct Core {
    mutable std::mutex mu;
    std::condition_variable cv;
    std::vector<JobPtr> ready;
    JobPtr current;
    uint64_t queued_cycles = 0;
    bool stop = false;
    std::thread thread;
  };

  int pick_core(uint32_t mask) {
    int best = -1;
    uint64_t best_load = 0;
    for (size_t c = 0; c < cores_.size(); ++c) {
      if (mask != 0 && !(mask & (1u << c))) continue;
      std::lock_guard<std::mutex> lk(cores_[c]->mu);
      const uint64_t load = cores_[c]->queued_cycles + cores_[c]->ready.size() +
                            (cores_[c]->current ? 1 : 0);
      if (best < 0 || load < best_load) best = static_cast<int>(c), best_load = load;
    }
    return best < 0 ? 0 : best;
  }

  // Picks the job to run next on a core (mu held).
  static void schedule(Core& core) {
    auto best = core.ready.end();
    for (auto it = core.ready.begin(); it != core.ready.end(); ++it)
      if (best == core.ready.end() || before(**it, **best)) best = it;
    if (best == core.ready.end()) return;
    JobPtr next = *best;
    if (core.current) {
      // Only the preemptive level takes a core from a job mid-program.
      if (next->job.priority != kPreemptPriority || core.current->job.priority == kPreemptPriority)
        return;
      core.ready.push_back(core.current);
    }
    core.ready.erase(std::find(core.ready.begin(), core.ready.end(), next));
    core.current = std::move(next);
  }

  void worker(int core_index) {
    Core& core = *cores_[core_index];
    std::unique_lock<std::mutex> lk(core.mu);
    for (;;) {
      core.cv.wait(lk, [&] { return core.stop || core.current || !core.ready.empty(); });
      if (core.stop) break;
      schedule(core);
      JobPtr js = core.current;
      if (js->cancel) {
        core.current.reset();
        core.queued_cycles -= js->remaining_cycles;
        lk.unlock();
        complete(js, Status::kCancelled, "cancelled");
        lk.lock();
        continue;
      }
      const size_t fc = js->next_fc;
      lk.unlock();
      const uint64_t t0 = now_ns();
      if (js->start_ns == 0) js->start_ns = t0;
      run_fc(*js, fc);
      const uint64_t t1 = now_ns();
      lk.lock();
      const uint64_t cyc = js->program->fcs[fc].est_cycles;
      js->remaining_cycles -= cyc;
      core.queued_cycles -= cyc;
      js->next_fc++;
      Status st = Status::kOk;
      std::string msg;
      if (js->job.fc_timeout_us != 0 && (t1 - t0) / 1000 > js->job.fc_timeout_us) {
        st = Status::kTimeout;
        msg = "function call " + std::to_string(fc) + " exceeded its timeout of " +
              std::to_string(js->job.fc_timeout_us) + " us";
      }
      const bool done = js->next_fc >= js->program->fcs.size();
      if (done || st != Status::kOk) {
        core.current.reset();
        core.queued_cycles -= js->remaining_cycles;
        js->remaining_cycles = 0;
        lk.unlock();
        complete(js, st, msg);
        lk.lock();
      }
    }
    // Device shutdown: everything still queued completes as cancelled.
    std::vector<JobPtr> left = core.ready;
    if (core.current) left.push_back(core.current);
    core.ready.clear();
    core.current.reset();
    lk.unlock();
    for (auto& js : left) complete(js, Status::kCancelled, "device shut down");
  }

  void run_fc(JobState& js, size_t fc) {
    const auto& call = js.program->fcs[fc];
    sim::Memory mem;
    const Bindings& b = js.job.bindings;
    mem.inputs.reserve(b.inputs.size());
    for (const auto& v : b.inputs) mem.inputs.push_back({v.vir, v.size});
    mem.outputs.reserve(b.outputs.size());
    for (const auto& v : b.outputs) mem.outputs.push_back({v.vir, v.size});
    mem.constants = {b.constants.vir, b.constants.size};
    mem.scratch = {b.scratch.vir, b.scratch.size};
    const uint64_t t0 = now_ns();
    sim::execute_range(js.program->instructions, call.first, call.count, mem, *kernels_);
    if (options_.paced) {
      const uint64_t target = t0 + static_cast<uint64_t>(
                                       static_cast<double>(call.est_cycles) * 1000.0 /
                                       info_.march->clock_mhz);
      const uint64_t now = now_ns();
      if (now < target) std::this_thread::sleep_for(std::chrono::nanoseconds(target - now));
    }
  }

  void complete(const JobPtr& js, Status st, const std::string& msg) {
    {
      std::lock_guard<std::mutex> lk(ids_mu_);
      ids_.erase(js->id);
    }
    JobResult r;
    r.status = st;
    r.message = msg;
    r.core = js->core;
    r.start_ns = js->start_ns;
    r.end_ns = now_ns();
    if (js->job.on_done) js->job.on_done(r);
  }

  DeviceInfo info_;
  SimOptions options_;
  const sim::KernelTable* kernels_;
  std::vector<std::unique_ptr<Core>> cores_;
  std::atomic<uint64_t> next_id_{0};
  std::once_flag started_;
  std::mutex ids_mu_;
  std::unordered_map<JobId, int> ids_;
};

}  // namespace

std::unique_ptr<Device> create_sim_device(const isa::MarchInfo& march, const SimOptions& options) {
  return std::make_unique<SimDevice>(march, options);
}

}  // namespace openbpu::drv
