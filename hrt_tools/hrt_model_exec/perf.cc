// SPDX-License-Identifier: Apache-2.0
// perf: --thread_num threads submit frames of one model until --frame_count
// frames are done (or --perf_time minutes have passed). A frame's latency is
// the time from submission to the return of hbDNNWaitTaskDone. The console
// output follows TOOLS.md 1.6 exactly (scripts match its spacing); with
// --profile_path libdnn's profiler session writes profiler.log/.csv.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "commands.h"
#include "dump.h"
#include "input_data.h"
#include "log.h"
#include "model.h"
#include "openbpu/openbpu.h"

namespace openbpu::tools {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Latency statistics over all threads; prints the progress line every 200
// frames as the vendor tool does.
class Stats {
 public:
  explicit Stats(Clock::time_point start) : start_(start) {}

  void add(double ms) {
    std::lock_guard<std::mutex> lk(mu_);
    if (count_ == 0 || ms < min_) min_ = ms;
    if (count_ == 0 || ms > max_) max_ = ms;
    sum_ += ms;
    ++count_;
    if (count_ % kProgressEvery == 0) progress_locked();
  }
  // The final progress line, unless the last frame already printed one.
  void finish() {
    std::lock_guard<std::mutex> lk(mu_);
    if (count_ % kProgressEvery != 0) progress_locked();
  }
  int64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  static constexpr int64_t kProgressEvery = 200;

  void progress_locked() {
    const double elapsed = ms_since(start_);
    std::printf(
        "Frame count: %lld,  Thread Average: %f ms,  thread max latency: %f ms,  thread min "
        "latency: %f ms,  FPS: %f\n",
        static_cast<long long>(count_), count_ ? sum_ / static_cast<double>(count_) : 0.0, max_,
        min_, elapsed > 0 ? static_cast<double>(count_) * 1000.0 / elapsed : 0.0);
    std::fflush(stdout);
  }

  Clock::time_point start_;
  std::mutex mu_;
  int64_t count_ = 0;
  double sum_ = 0.0, min_ = 0.0, max_ = 0.0;
};

// Closes a profiler session on every exit path; stop() reports the result.
class ProfilerSession {
 public:
  ~ProfilerSession() {
    if (active_) obpuProfilerStop();
  }
  bool start(const std::string& dir) {
    const int32_t rc = obpuProfilerStart(dir.c_str());
    if (rc != 0) {
      log_error("obpuProfilerStart('%s') failed: %s", dir.c_str(), dnn_error(rc).c_str());
      return false;
    }
    active_ = true;
    return true;
  }
  bool stop() {
    active_ = false;
    const int32_t rc = obpuProfilerStop();
    if (rc != 0) log_error("cannot write the profiler files: %s", dnn_error(rc).c_str());
    return rc == 0;
  }
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

}  // namespace

int run_perf(const Options& opt) {
  RunModel run;
  if (!open_run_model(opt, &run)) return 1;
  const ModelDesc& desc = run.desc;
  const std::vector<Roi>& rois = run.rois;

  std::vector<InputData> inputs;
  const std::vector<std::string> files = split_list(opt.input_file, ',');
  if (!files.empty()) {
    if (!load_inputs(desc, files, opt.roi_infer, &inputs)) return 1;
  } else {
    log_warn(
        "no --input_file: perf runs on random input data; the results of models with "
        "range-sensitive operators (Gather, GridSample, Div, Log, Sqrt, ...) may not be "
        "representative, give real data with --input_file");
    if (!random_inputs(desc, 0x5eed, &inputs)) return 1;
  }

  // Every thread has its own buffers (and its own tasks in run_inference).
  const int threads = opt.thread_num;
  std::vector<std::unique_ptr<TensorSet>> sets;
  for (int t = 0; t < threads; ++t) {
    sets.push_back(std::make_unique<TensorSet>());
    for (const InputData& in : inputs)
      if (!sets.back()->add_input(in.props, in.bytes)) return 1;
    for (const hbDNNTensorProperties& p : desc.outputs)
      if (!sets.back()->add_output(p)) return 1;
  }

  ProfilerSession profiler;
  if (!opt.profile_path.empty()) {
    bool existed = false;
    if (!make_dirs(opt.profile_path, &existed)) return 1;
    if (existed) std::printf("profile_path: %s exsit!\n", opt.profile_path.c_str());
    if (!profiler.start(opt.profile_path)) return 1;
  }

  const bool timed = opt.perf_time > 0;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::minutes(opt.perf_time);
  Stats stats(start);
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  auto worker = [&](int t) {
    const std::vector<Roi>& my_rois = rois;
    while (!failed.load()) {
      if (timed ? Clock::now() >= deadline : next.fetch_add(1) >= opt.frame_count) break;
      double ms = 0.0;
      if (run_inference(desc, sets[t].get(), opt.core_id, opt.roi_infer ? &my_rois : nullptr,
                        &ms) != 0) {
        failed.store(true);
        break;
      }
      stats.add(ms);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  for (std::thread& th : pool) th.join();
  const double run_ms = ms_since(start);
  if (failed.load()) return 1;

  stats.finish();
  const int64_t frames = stats.count();
  const double avg = frames ? stats.sum() / static_cast<double>(frames) : 0.0;
  const double fps = run_ms > 0 ? static_cast<double>(frames) * 1000.0 / run_ms : 0.0;
  std::printf("Running condition:\n");
  std::printf("  Thread number is: %d\n", threads);
  std::printf("  Frame count   is: %lld\n", static_cast<long long>(frames));
  std::printf("  Program run time: %f ms\n", run_ms);
  std::printf("Perf result:\n");
  std::printf("  Frame totally latency is: %f ms\n", stats.sum());
  std::printf("  Average    latency    is: %f ms\n", avg);
  std::printf("  Frame      rate       is: %f FPS\n", fps);
  std::fflush(stdout);

  if (profiler.active()) {
    const int32_t rc = obpuProfilerSetRunningCondition(
        desc.name.c_str(), opt.core_id, static_cast<int32_t>(std::min<int64_t>(frames, INT32_MAX)),
        threads, run_ms, fps, avg);
    if (rc != 0) {
      log_error("obpuProfilerSetRunningCondition failed: %s", dnn_error(rc).c_str());
      return 1;
    }
    if (!profiler.stop()) return 1;
  }
  return 0;
}

}  // namespace openbpu::tools
