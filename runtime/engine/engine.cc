// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include "bpu_driver/spin.h"
#include "runtime/core/env.h"
#include "runtime/core/log.h"
#include "runtime/device/memory.h"
#include "runtime/engine/layer_run.h"
#include "runtime/engine/thread_pool.h"
#include "runtime/profiler/profiler.h"
#include "schema/verify.h"

namespace openbpu::rt {

namespace {

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// A staged copy between a user buffer and the model's layout.
struct Copy {
  uint32_t io = 0;  // input or output index
  IoBuffer user;
};

// The caller's buffer as a tensor description: the model's tensor with the
// caller's strides, or tight over the valid shape.
TensorDesc user_desc(const TensorDesc& md, const IoBuffer& u) {
  TensorDesc ud = md;
  ud.aligned = ud.valid;
  ud.strides = u.strides;
  return ud;
}

// Row strides of the caller's Y and UV planes (UV only for NV12).
void image_row_strides(const IoBuffer& u, int wi, int64_t* sy, int64_t* suv) {
  *sy = u.row_stride[0] > 0 ? u.row_stride[0] : u.aligned[static_cast<size_t>(wi)];
  *suv = u.row_stride[1] > 0 ? u.row_stride[1] : *sy;
}

// Image planes to the tight rows the BPU reads (Y, then the interleaved UV
// rows when uv is set).
void copy_image_rows(const uint8_t* y, int64_t sy, const uint8_t* uv, int64_t suv, int h, int w, uint8_t* dst) {
  for (int r = 0; r < h; ++r) std::memcpy(dst + static_cast<size_t>(r) * w, y + r * sy, static_cast<size_t>(w));
  if (uv == nullptr) return;
  for (int r = 0; r < h / 2; ++r)
    std::memcpy(dst + static_cast<size_t>(h + r) * w, uv + r * suv, static_cast<size_t>(w));
}

struct Run {
  Model* model = nullptr;
  int bpu_cores = 1;  // cores each BPU job of the run occupies (2: core_num 2 model, gang)
  drv::DmaBuffer arena;
  std::vector<uint8_t*> ptr;  // bound address per model tensor
  std::vector<Copy> in_copies, out_copies;
  size_t next_segment = 0;
  bool inputs_ready = false;
  // Allocations of hbSysAllocMem holding the user's buffers, pinned until the
  // task stops (hbSysFreeMem refuses to free them meanwhile).
  std::vector<uintptr_t> pinned;
};

void pin_buffers(const std::vector<IoBuffer>& buffers, Run* run) {
  for (const IoBuffer& b : buffers)
    for (int plane = 0; plane < 2; ++plane)
      if (b.data[plane] != nullptr)
        if (const uintptr_t base = memory::pin(b.data[plane]); base != 0) run->pinned.push_back(base);
}

void unpin_buffers(Run* run) {
  for (uintptr_t base : run->pinned) memory::unpin(base);
  run->pinned.clear();
}

}  // namespace

// A CPU step of a task (Engine::post_cpu): run once, by a pool worker or by
// a thread waiting for the task, whichever claims it first.
struct CpuStep {
  std::function<void()> fn;
  std::atomic<bool> taken{false};
  bool claim() { return !taken.exchange(true); }
};

class Task {
 public:
  enum class State { kOpen, kQueued, kRunning, kDone };

  std::mutex mu;
  drv::PollingCondition cv;  // waits poll briefly before sleeping (bpu_driver/spin.h)
  State state = State::kOpen;
  int32_t status = kOk;
  std::string error;
  std::function<void(int32_t)> callback;
  bool callback_done = false;     // taken for its one call
  bool callback_running = false;  // a user thread's release (and wait) waits for it to return
  std::thread::id callback_thread;  // the thread running it (a wait from inside does not wait)
  // A thread is between submitting a BPU job and its last use of the device
  // for it: the job may complete, and the task end, before that thread
  // returns; a user thread's release waits for it (the process may exit,
  // and the device go, right after the release).
  bool submitting = false;
  // The task's last posted CPU step (at most one is in flight), which a
  // thread in wait_task without a timeout runs itself if no pool worker has
  // taken it (no hand-over to the pool and back); `helpers` such threads
  // are waiting: a step posted meanwhile goes to them alone.
  std::shared_ptr<CpuStep> step;
  int helpers = 0;

  // Owned by the thread running the current step.
  std::vector<Run> runs;
  size_t current = 0;
  // Segments dispatched so far over all runs (read by task_estimate_us from
  // other threads while the task advances).
  std::atomic<size_t> dispatched{0};
  CtrlParam ctrl;
  std::atomic<bool> cancel{false};
  std::atomic<drv::JobId> job{0};
  drv::Device* device = nullptr;
  uint64_t submit_ns = 0, start_ns = 0;
  uint64_t bpu_ns = 0, cpu_ns = 0;  // time spent in nodes (profiler)

  // A task counts against its packs (hbDNNRelease refuses) until it is both
  // released by the user and stopped; whichever comes second uncounts it.
  bool released = false;
  bool uncounted = false;

  // Returns arenas and uncounts the task once released and done (mu held).
  void settle_locked() {
    if (!released || state != State::kDone || uncounted) return;
    uncounted = true;
    for (auto& r : runs) {
      r.model->arenas->release(r.arena);
      r.arena = drv::DmaBuffer{};
      r.model->pack->remove_task();
    }
  }
};

// Set on threads of the library (CPU pool, device cores): a release issued
// from a completion callback must not wait for work queued behind it.
thread_local bool t_library_thread = false;

struct LibraryThreadScope {
  bool saved = t_library_thread;
  LibraryThreadScope() { t_library_thread = true; }
  ~LibraryThreadScope() { t_library_thread = saved; }
};

namespace {

class Engine {
 public:
  static Engine& get() {
    // Never destroyed: tasks may still complete while the process exits.
    static Engine* e = new Engine();
    return *e;
  }

  ThreadPool& pool() { return pool_; }

  Status admit_new() {
    std::lock_guard<std::mutex> lk(mu_);
    if (live_ >= kMaxLiveTasks)
      return error(kTaskNumExceedLimit, "too many live tasks (" + std::to_string(kMaxLiveTasks) +
                                            "): wait for and release tasks before submitting more");
    ++live_;
    return Status::Ok();
  }
  void drop_live() {
    std::lock_guard<std::mutex> lk(mu_);
    --live_;
  }
  int live() {
    std::lock_guard<std::mutex> lk(mu_);
    return live_;
  }

  // Starts the task now or queues it behind HB_MAX_TASK_NUM running ones. A
  // task of the preemptive priority never waits behind running tasks (it
  // would defeat preemption); it still counts against the live-task limit.
  void start(const std::shared_ptr<Task>& t) {
    t->submit_ns = now_ns();
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (running_ >= max_running_ && t->ctrl.priority != drv::kPreemptPriority) {
        {
          std::lock_guard<std::mutex> tl(t->mu);
          t->state = Task::State::kQueued;
        }
        pending_.push_back(t);
        return;
      }
      ++running_;
    }
    begin(t);
  }

  void begin(const std::shared_ptr<Task>& t) {
    {
      std::lock_guard<std::mutex> tl(t->mu);
      t->state = Task::State::kRunning;
      t->start_ns = now_ns();
    }
    advance(t);
  }

  // Runs or dispatches the next step of a task.
  void advance(const std::shared_ptr<Task>& t) {
    if (t->cancel.load()) return finish(t, kRunTaskFailed, "task was cancelled");
    if (t->current >= t->runs.size()) return finish(t, kOk, "");
    Run& run = t->runs[t->current];
    Model& m = *run.model;
    if (!run.inputs_ready) {
      run.inputs_ready = true;
      if (!run.in_copies.empty())
        return post_cpu(t, [this, t] {
          t->cpu_ns += step_input_copies(t->runs[t->current]);
          advance(t);
        });
    }
    if (run.next_segment < m.segments.size()) {
      const size_t si = run.next_segment++;
      t->dispatched.fetch_add(1, std::memory_order_relaxed);
      Segment& seg = m.segments[si];
      if (seg.bpu && !t->ctrl.observer) return submit_bpu(t, run, seg);
      return post_cpu(t, [this, t, si] {
        Run& r = t->runs[t->current];
        Segment& s = r.model->segments[si];
        const auto on_layer = [&](const LayerRecord& l, const std::vector<const uint8_t*>& out) {
          return t->ctrl.observer->layer_done(*r.model, si, l, out);
        };
        const Status st = s.bpu ? run_bpu_on_host(*r.model, si, r.ptr, r.arena.vir + s.scratch_offset, on_layer)
                                : run_cpu_segment(r, s, &t->cpu_ns);
        if (!st.ok()) return finish(t, kRunTaskFailed, st.message());
        if (t->ctrl.observer && !t->ctrl.observer->segment_done(*r.model, si, r.ptr))
          return finish(t, kRunTaskFailed, "the layer output callback stopped the run");
        advance(t);
      });
    }
    // All segments done: unstage outputs, then the next run.
    if (!run.out_copies.empty()) {
      return post_cpu(t, [this, t] {
        Run& r = t->runs[t->current];
        t->cpu_ns += step_output_copies(r);
        r.out_copies.clear();
        advance(t);
      });
    }
    run.model->arenas->release(run.arena);
    run.arena = drv::DmaBuffer{};
    ++t->current;
    advance(t);
  }

 private:
  Engine()
      : max_running_(env().max_task_num),
        fc_timeout_us_(env().fc_timeout_us),
        pool_(env().max_thread_num, env().spin_ns) {}

  // Hands a CPU step to a waiting thread of the task (Task::step) or to the
  // pool, where a thread that starts waiting later may still take it first.
  void post_cpu(const std::shared_ptr<Task>& t, std::function<void()> fn) {
    auto step = std::make_shared<CpuStep>();
    step->fn = std::move(fn);
    bool helped;
    {
      std::lock_guard<std::mutex> lk(t->mu);
      t->step = step;
      helped = t->helpers > 0;
    }
    if (helped) return t->cv.notify_all();
    pool_.post(t->ctrl.priority, [t, step] {
      t_library_thread = true;
      run_step(t.get(), *step);
    });
  }

 public:
  // Runs a claimed step: empties the task's slot first (the step's function
  // holds the task), then runs the function on this thread.
  static void run_step(Task* t, CpuStep& step) {
    if (!step.claim()) return;
    std::function<void()> fn = std::move(step.fn);
    {
      std::lock_guard<std::mutex> lk(t->mu);
      if (t->step.get() == &step) t->step.reset();
    }
    fn();
  }

 private:

  static uint64_t step_input_copies(Run& run) {
    const uint64_t t0 = now_ns();
    Model& m = *run.model;
    for (const Copy& c : run.in_copies) {
      const InputInfo& in = m.inputs[c.io];
      const TensorDesc& md = m.tensors[in.tensor];
      uint8_t* dst = run.ptr[in.tensor];
      if (in.nv12 || md.data_type == kImgY) {
        // Repack image planes to tight rows (Y then interleaved UV).
        const int wi = md.layout == kNHWC ? 2 : 3;
        const int h = md.valid[static_cast<size_t>(wi - 1)];
        const int w = md.valid[static_cast<size_t>(wi)];
        int64_t sy = 0, suv = 0;
        image_row_strides(c.user, wi, &sy, &suv);
        // The UV plane: the second buffer, or after the frame's Y rows.
        const int64_t frame_rows = c.user.resizer ? c.user.image_h : h;
        const uint8_t* uv = !in.nv12 ? nullptr
                            : c.user.data_type == kImgNV12Separate ? c.user.data[1]
                                                                   : c.user.data[0] + sy * frame_rows;
        if (c.user.resizer)
          roi_resize_image(c.user.data[0], sy, uv, suv, c.user.roi, in.nv12, dst, h, w);
        else
          copy_image_rows(c.user.data[0], sy, uv, suv, h, w, dst);
        // Any rest of the region (alignedByteSize above the tight image) reads as zeros.
        const size_t tight = static_cast<size_t>(h) * w * (in.nv12 ? 3 : 2) / 2;
        if (static_cast<size_t>(md.aligned_byte_size) > tight)
          std::memset(dst + tight, 0, static_cast<size_t>(md.aligned_byte_size) - tight);
        continue;
      }
      const TensorDesc ud = user_desc(md, c.user);
      if (md.aligned != md.valid || md.byte_strides() != dense_strides(md.valid, element_size(md.data_type)))
        std::memset(dst, 0, static_cast<size_t>(md.aligned_byte_size));
      copy_elements(logical_view(ud), c.user.data[0], logical_view(md), dst);
    }
    const uint64_t ns = now_ns() - t0;
    if (profiler::enabled()) profiler::record_node("Preprocess", profiler::NodeKind::kCpu, ns);
    return ns;
  }

  static uint64_t step_output_copies(Run& run) {
    const uint64_t t0 = now_ns();
    Model& m = *run.model;
    for (const Copy& c : run.out_copies) {
      const TensorDesc& md = m.tensors[m.outputs[c.io].tensor];
      copy_elements(logical_view(md), run.ptr[m.outputs[c.io].tensor], logical_view(user_desc(md, c.user)),
                    c.user.data[0]);
    }
    const uint64_t ns = now_ns() - t0;
    if (profiler::enabled()) profiler::record_node(m.name + "_output_layout_convert", profiler::NodeKind::kCpu, ns);
    return ns;
  }

  static Status run_cpu_segment(Run& run, Segment& seg, uint64_t* cpu_ns) {
    const uint64_t t0 = now_ns();
    // Omitted inputs/outputs: a CpuTensor with a nullptr desc, as at creation.
    std::vector<CpuTensor> ins, outs;
    for (uint32_t i : seg.inputs)
      ins.push_back(i == model::kAbsentInput ? CpuTensor{} : CpuTensor{&run.model->tensors[i], run.ptr[i]});
    for (uint32_t o : seg.outputs)
      outs.push_back(o == model::kAbsentInput ? CpuTensor{} : CpuTensor{&run.model->tensors[o], run.ptr[o]});
    const Status st = seg.kernel->run(ins, outs);
    const uint64_t ns = now_ns() - t0;
    *cpu_ns += ns;
    if (profiler::enabled()) profiler::record_node(seg.profile_name, profiler::NodeKind::kCpu, ns);
    return st;
  }

  void submit_bpu(const std::shared_ptr<Task>& t, Run& run, Segment& seg) {
    drv::Job job;
    job.program = seg.program.get();
    for (uint32_t i : seg.inputs)
      job.bindings.inputs.push_back({run.ptr[i], reinterpret_cast<uintptr_t>(run.ptr[i]),
                                     static_cast<uint64_t>(run.model->tensors[i].aligned_byte_size)});
    for (uint32_t o : seg.outputs)
      job.bindings.outputs.push_back({run.ptr[o], reinterpret_cast<uintptr_t>(run.ptr[o]),
                                      static_cast<uint64_t>(run.model->tensors[o].aligned_byte_size)});
    job.bindings.constants = {const_cast<uint8_t*>(seg.constants),
                              reinterpret_cast<uintptr_t>(seg.constants), seg.constants_size};
    uint8_t* scratch = run.arena.vir + seg.scratch_offset;
    job.bindings.scratch = {scratch, reinterpret_cast<uintptr_t>(scratch), seg.scratch_size};
    job.priority = t->ctrl.priority;
    job.custom_id = t->ctrl.custom_id;
    job.core_mask = t->ctrl.core_mask;
    job.cores = run.bpu_cores;
    job.fc_timeout_us = fc_timeout_us_;
    const std::string* profile_name = &seg.profile_name;
    job.on_done = [this, t, profile_name](const drv::JobResult& r) {
      // Also runs synchronously inside Device::cancel on the releasing thread.
      LibraryThreadScope scope;
      t->job.store(0);
      if (r.start_ns != 0) {
        // Chip time is what the cores spent on the job; the node's latency is
        // first fc to completion (it includes time preempted).
        t->bpu_ns += r.run_ns;
        if (profiler::enabled()) profiler::record_node(*profile_name, profiler::NodeKind::kBpu, r.end_ns - r.start_ns);
      }
      if (r.status == drv::Status::kCancelled) return finish(t, kRunTaskFailed, "task was cancelled");
      if (r.status != drv::Status::kOk)
        return finish(t, kRunTaskFailed, std::string("BPU execution failed (") + drv::status_name(r.status) +
                                             "): " + r.message);
      advance(t);
    };
    set_submitting(t, true);
    const drv::JobId id = t->device->submit(std::move(job));
    if (id == 0) {
      set_submitting(t, false);
      return finish(t, kRunTaskFailed, "the BPU rejected the job (core or priority)");
    }
    t->job.store(id);
    // A release that raced with the submission cancels the job now.
    if (t->cancel.load()) t->device->cancel(id);
    set_submitting(t, false);
  }

  static void set_submitting(const std::shared_ptr<Task>& t, bool on) {
    {
      std::lock_guard<std::mutex> lk(t->mu);
      t->submitting = on;
    }
    if (!on) t->cv.notify_all();
  }

 public:
  void finish(const std::shared_ptr<Task>& t, int32_t status, const std::string& msg) {
    const uint64_t end = now_ns();
    if (status != kOk && !t->cancel.load()) OBPU_LOGE("task failed: %s", msg.c_str());
    if (profiler::enabled() && status == kOk) profiler::record_task(t->start_ns - t->submit_ns, end - t->start_ns, t->bpu_ns, t->cpu_ns);
    if (status == kOk && t->runs.size() == 1) {
      std::atomic<uint64_t>& usual = t->runs[0].model->usual_run_ns;
      const uint64_t d = end - t->start_ns, old = usual.load(std::memory_order_relaxed);
      usual.store(old == 0 ? d : old - old / 8 + d / 8, std::memory_order_relaxed);
    }
    std::function<void(int32_t)> cb;
    {
      std::lock_guard<std::mutex> lk(t->mu);
      t->status = status;
      t->error = msg;
      t->state = Task::State::kDone;
      for (auto& r : t->runs) {
        r.model->arenas->release(r.arena);
        r.arena = drv::DmaBuffer{};
        unpin_buffers(&r);
      }
      t->settle_locked();
      if (t->callback && !t->callback_done) {
        cb = t->callback;
        t->callback_done = true;
        t->callback_running = true;
        t->callback_thread = std::this_thread::get_id();
      }
    }
    t->cv.notify_all();
    // Start a queued task, if any: (priority desc, customId asc, FIFO).
    std::shared_ptr<Task> next;
    {
      std::lock_guard<std::mutex> lk(mu_);
      --running_;
      if (running_ < max_running_ && !pending_.empty()) {
        auto best = pending_.begin();
        for (auto it = pending_.begin(); it != pending_.end(); ++it) {
          const CtrlParam& a = (*it)->ctrl;
          const CtrlParam& b = (*best)->ctrl;
          if (a.priority > b.priority || (a.priority == b.priority && a.custom_id < b.custom_id)) best = it;
        }
        next = *best;
        pending_.erase(best);
        ++running_;
      }
    }
    if (cb) {
      cb(status);
      {
        std::lock_guard<std::mutex> lk(t->mu);
        t->callback_running = false;
      }
      t->cv.notify_all();
    }
    if (next) begin(next);
  }

  bool remove_pending(const std::shared_ptr<Task>& t) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = std::find(pending_.begin(), pending_.end(), t);
    if (it == pending_.end()) return false;
    pending_.erase(it);
    return true;
  }

 private:
  std::mutex mu_;
  int live_ = 0;
  int running_ = 0;  // may exceed max_running_ by preemptive-priority tasks
  const int max_running_;
  const uint64_t fc_timeout_us_;  // OPENBPU_FC_TIMEOUT_MS; 0 = device watchdog only
  std::deque<std::shared_ptr<Task>> pending_;
  ThreadPool pool_;
};

bool same_shape(const std::vector<int32_t>& a, const std::vector<int32_t>& b) { return a == b; }

// An image input (NV12 or Y): planes with row strides, staged to the tight
// rows the BPU program reads unless the buffer already is that.
Status bind_image_input(Run& run, uint32_t idx, const IoBuffer& u, const std::string& what) {
  Model& m = *run.model;
  const InputInfo& in = m.inputs[idx];
  const TensorDesc& md = m.tensors[in.tensor];
  const int hi = md.layout == kNHWC ? 1 : 2, wi = hi + 1;
  const int64_t model_h = md.valid[static_cast<size_t>(hi)], model_w = md.valid[static_cast<size_t>(wi)];
  if (u.resizer) {
    if (in.source != kInputFromResizer)
      return error(kInvalidArgument, what + ": a ROI was given, but the input was not compiled with input_source "
                                            "resizer");
    OBPU_RETURN_IF_ERROR(check_roi(u.roi, u.image_h, u.image_w, static_cast<int32_t>(model_h),
                                   static_cast<int32_t>(model_w), in.nv12, resizer_limits(m.march), what));
  }
  // The buffer holds the model's image, or a resizer input's whole frame.
  const int64_t h = u.resizer ? u.image_h : model_h, w = u.resizer ? u.image_w : model_w;
  int64_t sy = 0, suv = 0;
  image_row_strides(u, wi, &sy, &suv);
  const bool separate = u.data_type == kImgNV12Separate;
  if (sy < w || (in.nv12 && separate && suv < w))
    return error(kInvalidArgument, what + ": row stride " + std::to_string(sy < w ? sy : suv) +
                                       " is smaller than the width " + std::to_string(w));
  const int64_t y_bytes = sy * h;
  const int64_t need0 = (in.nv12 && !separate) ? y_bytes + sy * h / 2 : y_bytes;
  if (static_cast<int64_t>(u.size[0]) < need0)
    return error(kInvalidArgument, what + ": sysMem[0] holds " + std::to_string(u.size[0]) +
                                       " bytes, the image needs " + std::to_string(need0));
  if (separate && (u.data[1] == nullptr || static_cast<int64_t>(u.size[1]) < suv * h / 2))
    return error(kInvalidArgument, what + ": the UV plane needs " + std::to_string(suv * h / 2) +
                                       " bytes in the second buffer");
  // Zero-copy only when the buffer covers the whole region the BPU
  // program may read (alignedByteSize can exceed the tight image).
  if (!u.resizer && sy == w && !separate && static_cast<int64_t>(u.size[0]) >= md.aligned_byte_size) {
    run.ptr[in.tensor] = u.data[0];
  } else {
    run.ptr[in.tensor] = run.arena.vir + m.input_staging[idx];
    run.in_copies.push_back({idx, u});
  }
  return Status::Ok();
}

// Bytes from the first to past the last element of a strided tensor.
int64_t span_bytes(const std::vector<int32_t>& valid, const std::vector<int64_t>& strides, int esize) {
  int64_t end = esize;
  for (size_t i = 0; i < valid.size(); ++i) end += (valid[i] - 1) * strides[i];
  return end;
}

// A tensor the caller describes by byte strides (UCP API): zero-copy when
// they are the model's, else staged. Strides must not let elements overlap.
Status bind_strided(const TensorDesc& md, const IoBuffer& u, const std::string& what, uint8_t* staging,
                    uint8_t** bound, bool* staged) {
  const int es = element_size(md.data_type);
  if (u.strides.size() != md.valid.size())
    return error(kInvalidArgument, what + ": " + std::to_string(u.strides.size()) + " strides for " +
                                       std::to_string(md.valid.size()) + " dimensions");
  for (size_t i = u.strides.size(); i-- > 0;) {
    const int64_t min = i + 1 == u.strides.size() ? es : u.strides[i + 1] * md.valid[i + 1];
    if (u.strides[i] < min)
      return error(kInvalidArgument, what + ": stride[" + std::to_string(i) + "] " + std::to_string(u.strides[i]) +
                                         " should be at least " + std::to_string(min));
  }
  if (u.strides == md.byte_strides() && static_cast<int64_t>(u.size[0]) >= md.aligned_byte_size) {
    *bound = u.data[0];
    *staged = false;
    return Status::Ok();
  }
  const int64_t need = span_bytes(md.valid, u.strides, es);
  if (static_cast<int64_t>(u.size[0]) < need)
    return error(kInvalidArgument, what + ": the buffer holds " + std::to_string(u.size[0]) +
                                       " bytes, the strides need " + std::to_string(need));
  *bound = staging;
  *staged = true;
  return Status::Ok();
}

// Binds one model input to the user's buffer, directly or through staging.
Status bind_input(Run& run, uint32_t idx, const IoBuffer& u) {
  Model& m = *run.model;
  const InputInfo& in = m.inputs[idx];
  const TensorDesc& md = m.tensors[in.tensor];
  const std::string what = "model '" + m.name + "' input " + std::to_string(idx) + " '" + md.name + "'";
  const bool type_ok = u.data_type == md.data_type ||
                       (in.nv12 && (u.data_type == kImgNV12 || u.data_type == kImgNV12Separate));
  if (!type_ok)
    return error(kInvalidArgument, what + ": tensor type " + data_type_name(u.data_type) +
                                       " does not match the model's " + data_type_name(md.data_type));
  if (u.layout != md.layout)
    return error(kInvalidArgument, what + ": tensor layout does not match the model's");
  if (!same_shape(u.valid, md.valid))
    return error(kInvalidArgument, what + ": validShape does not match the model's");
  if (u.aligned.size() != md.valid.size())
    return error(kInvalidArgument, what + ": alignedShape has the wrong number of dimensions");
  if (u.data[0] == nullptr) return error(kInvalidArgument, what + ": sysMem[0].virAddr is NULL");
  if (in.nv12 || md.data_type == kImgY) return bind_image_input(run, idx, u, what);
  uint8_t* staging = run.arena.vir + m.input_staging[idx];
  if (!u.strides.empty()) {
    bool staged = false;
    OBPU_RETURN_IF_ERROR(bind_strided(md, u, what, staging, &run.ptr[in.tensor], &staged));
    if (staged) run.in_copies.push_back({idx, u});
    return Status::Ok();
  }
  const int es = element_size(md.data_type);
  if (same_shape(u.aligned, md.aligned)) {
    if (static_cast<int64_t>(u.size[0]) < md.aligned_byte_size)
      return error(kInvalidArgument, what + ": sysMem[0] holds " + std::to_string(u.size[0]) +
                                         " bytes, alignedByteSize is " + std::to_string(md.aligned_byte_size));
    run.ptr[in.tensor] = u.data[0];
    return Status::Ok();
  }
  if (same_shape(u.aligned, md.valid)) {
    const int64_t need = md.valid_elements() * es;
    if (static_cast<int64_t>(u.size[0]) < need)
      return error(kInvalidArgument, what + ": sysMem[0] holds " + std::to_string(u.size[0]) +
                                         " bytes, the unpadded tensor needs " + std::to_string(need));
    run.ptr[in.tensor] = staging;
    run.in_copies.push_back({idx, u});
    return Status::Ok();
  }
  return error(kInvalidArgument, what + ": alignedShape must equal the model's alignedShape or its validShape");
}

Status bind_output(Run& run, uint32_t idx, const IoBuffer& u) {
  Model& m = *run.model;
  const TensorDesc& md = m.tensors[m.outputs[idx].tensor];
  const std::string what = "model '" + m.name + "' output " + std::to_string(idx) + " '" + md.name + "'";
  if (u.data_type != md.data_type)
    return error(kInvalidArgument, what + ": tensor type does not match the model's");
  if (u.data[0] == nullptr) return error(kInvalidArgument, what + ": sysMem[0].virAddr is NULL");
  if (u.layout != md.layout || !same_shape(u.valid, md.valid))
    return error(kInvalidArgument, what + ": layout or validShape does not match the model's");
  if (!u.strides.empty()) {
    bool staged = false;
    OBPU_RETURN_IF_ERROR(bind_strided(md, u, what, run.arena.vir + m.output_staging[idx],
                                      &run.ptr[m.outputs[idx].tensor], &staged));
    if (staged) run.out_copies.push_back({idx, u});
    return Status::Ok();
  }
  if (same_shape(u.aligned, md.aligned)) {
    if (static_cast<int64_t>(u.size[0]) < md.aligned_byte_size)
      return error(kInvalidArgument, what + ": sysMem[0] holds " + std::to_string(u.size[0]) +
                                         " bytes, alignedByteSize is " + std::to_string(md.aligned_byte_size));
    run.ptr[m.outputs[idx].tensor] = u.data[0];
    return Status::Ok();
  }
  if (same_shape(u.aligned, md.valid)) {
    const int64_t need = md.valid_elements() * element_size(md.data_type);
    if (static_cast<int64_t>(u.size[0]) < need)
      return error(kInvalidArgument, what + ": sysMem[0] holds " + std::to_string(u.size[0]) +
                                         " bytes, the unpadded tensor needs " + std::to_string(need));
    run.ptr[m.outputs[idx].tensor] = run.arena.vir + m.output_staging[idx];
    run.out_copies.push_back({idx, u});
    return Status::Ok();
  }
  return error(kInvalidArgument, what + ": alignedShape must equal the model's alignedShape or its validShape");
}

Status make_run(Model* model, const std::vector<IoBuffer>& inputs, const std::vector<IoBuffer>& outputs,
                Run* run) {
  run->model = model;
  run->arena = model->arenas->acquire();
  if (run->arena.vir == nullptr)
    return error(kOutOfMemory, "cannot allocate " + std::to_string(model->arenas->size()) +
                                   " bytes of task memory for model '" + model->name + "'");
  run->ptr.assign(model->tensors.size(), nullptr);
  for (size_t t = 0; t < model->tensors.size(); ++t) {
    if (model->arena_offset[t] >= 0) run->ptr[t] = run->arena.vir + model->arena_offset[t];
    if (model->constant_data[t] != nullptr) run->ptr[t] = const_cast<uint8_t*>(model->constant_data[t]);
  }
  Status st;
  for (size_t i = 0; i < inputs.size() && st.ok(); ++i) st = bind_input(*run, static_cast<uint32_t>(i), inputs[i]);
  for (size_t i = 0; i < outputs.size() && st.ok(); ++i) st = bind_output(*run, static_cast<uint32_t>(i), outputs[i]);
  // Outputs must not alias inputs or each other.
  if (st.ok()) {
    std::vector<std::pair<const uint8_t*, const uint8_t*>> ranges;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const TensorDesc& d = model->tensors[model->outputs[i].tensor];
      const uint8_t* b = outputs[i].data[0];
      ranges.emplace_back(b, b + std::max<int64_t>(1, std::min<int64_t>(outputs[i].size[0], d.aligned_byte_size)));
    }
    for (size_t i = 0; i < ranges.size() && st.ok(); ++i) {
      for (size_t j = i + 1; j < ranges.size(); ++j)
        if (ranges[i].first < ranges[j].second && ranges[j].first < ranges[i].second) {
          st = error(kInvalidArgument, "model '" + model->name + "': output buffers " + std::to_string(i) +
                                           " and " + std::to_string(j) + " overlap");
          break;
        }
      for (size_t k = 0; k < inputs.size() && st.ok(); ++k) {
        const uint8_t* b = inputs[k].data[0];
        if (b < ranges[i].second && ranges[i].first < b + std::max<uint64_t>(1, inputs[k].size[0]))
          st = error(kInvalidArgument, "model '" + model->name + "': output buffer " + std::to_string(i) +
                                           " overlaps input buffer " + std::to_string(k));
      }
    }
  }
  if (!st.ok()) {
    model->arenas->release(run->arena);
    run->arena = drv::DmaBuffer{};
  }
  return st;
}

}  // namespace

// Cores each BPU job of a run occupies. A core_num 2 model takes both cores
// when the task may use both; pinned to one core it runs there alone
// (docs/scheduling.md). The loader rejects models compiled for more cores
// than the device has.
static int run_cores(const Model& model, uint32_t core_mask) {
  const uint32_t all = (1u << model.device->info().cores) - 1u;
  return model.core_num == 2 && (core_mask == 0 || core_mask == all) ? 2 : 1;
}

Status submit_run(std::shared_ptr<Task>* task, Model* model, const std::vector<IoBuffer>& inputs,
                  const std::vector<IoBuffer>& outputs, const CtrlParam& ctrl, bool more) {
  return submit_runs(task, model, {RunBuffers{inputs, outputs}}, ctrl, more);
}

// Whether `t` (an open task, or none) can take `count` more runs of `model`.
static Status check_append(Task* t, const Model& model, size_t count) {
  size_t have = 0;
  if (t != nullptr) {
    std::lock_guard<std::mutex> lk(t->mu);
    have = t->runs.size();
    if (t->state != Task::State::kOpen)
      return error(kApiUseError, "cannot append to a task that was submitted without the 'more' flag");
    if (t->device != model.device) return error(kInvalidArgument, "models of a task must share the device");
  }
  if (have + count > static_cast<size_t>(kMaxRunsPerTask))
    return error(kTaskBatchSizeExceedLimit, "a task chains at most " + std::to_string(kMaxRunsPerTask) +
                                                " runs (it has " + std::to_string(have) + ", this call adds " +
                                                std::to_string(count) + ")");
  return Status::Ok();
}

Status submit_runs(std::shared_ptr<Task>* task, Model* model, const std::vector<RunBuffers>& runs,
                   const CtrlParam& ctrl, bool more) {
  Engine& engine = Engine::get();
  for (const RunBuffers& b : runs)
    if (b.inputs.size() != model->inputs.size() || b.outputs.size() != model->outputs.size())
      return error(kInvalidArgument, "model '" + model->name + "' takes " + std::to_string(model->inputs.size()) +
                                         " inputs and " + std::to_string(model->outputs.size()) + " outputs");
  if (ctrl.priority < 0 || ctrl.priority > 255)
    return error(kInvalidArgument, "priority " + std::to_string(ctrl.priority) + " out of range 0..255");
  OBPU_RETURN_IF_ERROR(check_core_mask(*model->device, ctrl.core_mask));
  std::shared_ptr<Task> t = *task;
  OBPU_RETURN_IF_ERROR(check_append(t.get(), *model, runs.size()));
  // Each run is counted against the pack first: a release of the pack
  // racing this call either happens before (the model is gone) or is refused.
  std::vector<Run> made;
  Status st;
  for (size_t i = 0; i < runs.size() && st.ok(); ++i) {
    if (!model->pack->add_task()) {
      st = error(kInvalidDnnHandle, "model '" + model->name + "': its pack was released");
      break;
    }
    made.emplace_back();
    st = make_run(model, runs[i].inputs, runs[i].outputs, &made.back());
  }
  if (st.ok() && !t) st = engine.admit_new();
  if (!st.ok()) {
    for (Run& r : made) {
      model->arenas->release(r.arena);
      model->pack->remove_task();
    }
    return st;
  }
  if (!t) {
    t = std::make_shared<Task>();
    t->ctrl = ctrl;
    t->device = model->device;
  }
  for (size_t i = 0; i < made.size(); ++i) {
    made[i].bpu_cores = run_cores(*model, ctrl.core_mask);
    pin_buffers(runs[i].inputs, &made[i]);
    pin_buffers(runs[i].outputs, &made[i]);
    t->runs.push_back(std::move(made[i]));
  }
  *task = t;
  if (!more) engine.start(t);
  return Status::Ok();
}

Status start_task(const std::shared_ptr<Task>& t, const CtrlParam& ctrl) {
  if (ctrl.priority < 0 || ctrl.priority > 255)
    return error(kInvalidArgument, "priority " + std::to_string(ctrl.priority) + " out of range 0..255");
  {
    std::lock_guard<std::mutex> lk(t->mu);
    if (t->state != Task::State::kOpen) return error(kApiUseError, "the task was submitted already");
  }
  OBPU_RETURN_IF_ERROR(check_core_mask(*t->device, ctrl.core_mask));
  t->ctrl = ctrl;
  for (Run& r : t->runs) r.bpu_cores = run_cores(*r.model, ctrl.core_mask);
  Engine::get().start(t);
  return Status::Ok();
}

bool task_started(Task* t) {
  std::lock_guard<std::mutex> lk(t->mu);
  return t->state != Task::State::kOpen;
}

size_t task_run_count(Task* t) { return t->runs.size(); }

Model* task_run_model(Task* t, size_t run) { return run < t->runs.size() ? t->runs[run].model : nullptr; }

// How late a thread sleeping until a given time runs again (smoothed; a
// VM's idle virtual CPU takes tens of microseconds).
std::atomic<uint64_t> g_wake_late_ns{50'000};

// A waiter's sleep ahead of the task's expected end (lk holds t->mu): when
// its model's usual run time is known, until that long after the task's
// start less a margin for the run time's variation (an eighth of it, at
// most kMaxJitterNs) and the wake-up lateness; returns how long to poll
// then (OPENBPU_SPIN_US, twice the margin and the lateness). A thread woken
// by the completion itself pays a thread switch on top of the task's time;
// one polling when it comes does not. OPENBPU_SPIN_US=0 turns this off.
constexpr uint64_t kMaxJitterNs = 200'000;
template <class Ready>
uint64_t sleep_until_near_end(Task* t, std::unique_lock<std::mutex>& lk, const Ready& ready) {
  const uint64_t spin = env().spin_ns;
  if (spin == 0 || t->state != Task::State::kRunning || t->runs.size() != 1 || ready()) return spin;
  const uint64_t usual = t->runs[0].model->usual_run_ns.load(std::memory_order_relaxed);
  const uint64_t late = g_wake_late_ns.load(std::memory_order_relaxed);
  const uint64_t jitter = std::min(usual / 8, kMaxJitterNs);
  const uint64_t target = t->start_ns + usual - std::min(usual, jitter + late);
  if (usual == 0 || target <= now_ns() + spin) return spin + 2 * jitter;
  const std::chrono::steady_clock::time_point until{std::chrono::nanoseconds(target)};  // (now_ns's clock)
  if (!t->cv.cv().wait_until(lk, until, ready)) {  // timed out: a lateness sample
    const uint64_t now = now_ns(), sample = now > target ? now - target : 0;
    g_wake_late_ns.store(late - late / 8 + std::min<uint64_t>(sample, 1'000'000) / 8, std::memory_order_relaxed);
  }
  return spin + 2 * jitter + late;
}

// A wait without a timeout (lk holds t->mu): runs the task's CPU steps on
// this thread as they are posted (Task::step) until done() holds.
template <class Done>
void help_until_done(Task* t, std::unique_lock<std::mutex>& lk, const Done& done) {
  auto step_ready = [t] { return t->step != nullptr && !t->step->taken.load(); };
  auto ready = [&] { return done() || step_ready(); };
  ++t->helpers;
  for (;;) {
    const uint64_t poll_ns = sleep_until_near_end(t, lk, ready);
    if (!ready()) t->cv.poll(lk, poll_ns);  // briefly, before sleeping
    t->cv.cv().wait(lk, ready);
    if (done()) break;
    const std::shared_ptr<CpuStep> step = t->step;
    lk.unlock();
    {
      const LibraryThreadScope scope;
      Engine::run_step(t, *step);
    }
    lk.lock();
  }
  --t->helpers;
}

Status wait_task(Task* t, int32_t timeout_ms) {
  std::unique_lock<std::mutex> lk(t->mu);
  if (t->state == Task::State::kOpen)
    return error(kApiUseError, "waiting on a task whose chain is still open (last hbDNNInfer had more = 1)");
  // Done, and its done-callback returned (UCP: the callback runs before
  // hbUCPWaitTaskDone returns), unless this is the callback's own thread.
  const std::thread::id self = std::this_thread::get_id();
  auto done = [t, self] {
    return t->state == Task::State::kDone && (!t->callback_running || t->callback_thread == self);
  };
  if (timeout_ms > 0) {
    if (!done()) t->cv.poll(lk, env().spin_ns);  // briefly, before sleeping
    if (!t->cv.cv().wait_for(lk, std::chrono::milliseconds(timeout_ms), done))
      return Status(kTimeout, "task not done within " + std::to_string(timeout_ms) + " ms");
  } else {
    help_until_done(t, lk, done);
  }
  if (t->status != kOk) return Status(t->status, t->error);
  return Status::Ok();
}

void release_task(const std::shared_ptr<Task>& t) {
  Engine& engine = Engine::get();
  Task::State state;
  {
    // A finished task is not cancelled: the thread that submitted its last
    // BPU job may still read the flag after the waiter has gone on (and the
    // process may be exiting, its device destroyed).
    std::lock_guard<std::mutex> lk(t->mu);
    state = t->state;
    if (state != Task::State::kDone) t->cancel.store(true);
  }
  if ((state == Task::State::kQueued && engine.remove_pending(t)) || state == Task::State::kOpen) {
    // Never started: nothing runs on its buffers. Its callback still fires
    // once (every task that ends reports it).
    std::function<void(int32_t)> cb;
    {
      std::lock_guard<std::mutex> lk(t->mu);
      t->state = Task::State::kDone;
      t->status = kRunTaskFailed;
      t->error = "task was cancelled before it started";
      for (auto& r : t->runs) unpin_buffers(&r);
      if (t->callback && !t->callback_done) {
        cb = t->callback;
        t->callback_done = true;
      }
    }
    t->cv.notify_all();
    if (cb) cb(kRunTaskFailed);
  } else if (state == Task::State::kRunning) {
    const drv::JobId id = t->job.load();
    if (id != 0) t->device->cancel(id);
  }
  {
    // A running task stops at its next safe point (the end of the current
    // function call or CPU operator); wait for it, and for its done-callback
    // to return, so that the caller may free the task's buffers and the
    // callback's data as soon as this returns. Library threads do not wait
    // (the step they would wait for may be queued behind them).
    std::unique_lock<std::mutex> lk(t->mu);
    if (!t_library_thread)
      t->cv.cv().wait(lk, [&] { return t->state == Task::State::kDone && !t->callback_running && !t->submitting; });
    t->released = true;
    t->settle_locked();
  }
  engine.drop_live();
}

Status set_task_callback(const std::shared_ptr<Task>& t, std::function<void(int32_t)> cb) {
  int32_t status = 0;
  bool call_now = false;
  {
    std::lock_guard<std::mutex> lk(t->mu);
    if (t->state == Task::State::kDone) {
      call_now = !t->callback_done;
      t->callback_done = true;
      status = t->status;
    }
    t->callback = cb;
  }
  if (call_now && cb) cb(status);
  return Status::Ok();
}

double task_estimate_us(Task* t) {
  // Segments not dispatched yet; the runs list is fixed once the task is
  // closed (and only its owner appends before that).
  size_t skip = t->dispatched.load(std::memory_order_relaxed);
  double us = 0.0;
  for (const Run& run : t->runs)
    for (const Segment& seg : run.model->segments) {
      if (skip > 0) {
        --skip;
        continue;
      }
      us += run.bpu_cores == 2 && seg.bpu ? seg.est_us / 2.0 : seg.est_us;
    }
  // Saturates (absurd estimates in a model file must not overflow callers'
  // int32 conversions).
  return std::min(us, 2147483647.0);
}

Status check_core_mask(const drv::Device& device, uint32_t core_mask) {
  const int cores = device.info().cores;
  if (core_mask >= (1u << cores))
    return error(kInvalidArgument, "bpuCoreId " + std::to_string(core_mask) + " names a core the " +
                                       device.info().march->hw_name + " BPU does not have (" +
                                       std::to_string(cores) + " core(s))");
  return Status::Ok();
}

int live_task_count() { return Engine::get().live(); }

}  // namespace openbpu::rt
