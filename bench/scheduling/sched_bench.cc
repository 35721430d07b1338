// SPDX-License-Identifier: Apache-2.0
// Scheduling benchmarks (docs/scheduling.md, "Performance"):
//   * submit-to-done overhead of a trivial model: hbDNNInfer + WaitTaskDone +
//     ReleaseTask of a one-instruction BPU model, with the time its fc spent
//     on the simulated core reported separately (runtime overhead = total -
//     kernel); also at the device interface alone and for TinyCnn (CPU
//     segments on the pool);
//   * preemption latency distribution: a preemptive job submitted while a
//     long low-priority job runs, on the paced simulator (board time) at the
//     device interface and through the C API while a model loops;
//   * throughput with 1, 2 and 4 submitting threads.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "runtime/device/device_manager.h"
#include "tests/common/test_models.h"
#include "tests/scheduling/sched_util.h"

namespace openbpu::sched_test {
namespace {

double process_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Sums the time fcs spend on the simulated cores (what the "kernel" costs).
struct KernelClock {
  std::atomic<uint64_t> ns{0}, fcs{0};
  void install(drv::Scheduler* dev) {
    dev->set_trace_hook([this](const drv::TraceEvent& e) {
      if (e.kind != drv::TraceEvent::Kind::kFc) return;
      ns.fetch_add(e.t1_ns - e.t0_ns, std::memory_order_relaxed);
      fcs.fetch_add(1, std::memory_order_relaxed);
    });
  }
};

// The process's device (fast mode) with the benchmark models, loaded once.
struct ApiModels {
  Loaded trivial, tiny, long_model;
  KernelClock kernel;
  static ApiModels& get() {
    static ApiModels* m = new ApiModels();
    return *m;
  }

 private:
  ApiModels() {
    trivial = load_model(testing::TrivialBpu{}.build(), "trivial_bpu");
    tiny = load_model(testing::TinyCnn{}.build(), "tiny_cnn");
    testing::MobileNetV1 m;
    m.h = m.w = 64;
    m.classes = 100;
    m.max_fc_us = 20;
    m.name = "long_mobilenet";
    long_model = load_model(m.build(), "long_mobilenet");
    kernel.install(rt::current_device());
  }
};

void submit_to_done(benchmark::State& state, const Loaded& l) {
  ApiModels& m = ApiModels::get();
  Io io(l.handle);
  io.fill_inputs(1);
  for (int i = 0; i < 100; ++i) run_sync(l.handle, io, ctrl(0));  // warm up
  const uint64_t k0 = m.kernel.ns.load(), f0 = m.kernel.fcs.load();
  const uint64_t t0 = now_ns();
  const double c0 = process_cpu_us();
  for (auto _ : state) {
    if (run_sync(l.handle, io, ctrl(0)) != 0) state.SkipWithError("task failed");
  }
  const double n = static_cast<double>(state.iterations());
  const double total_us = static_cast<double>(now_ns() - t0) / 1e3 / n;
  const double kernel_us = static_cast<double>(m.kernel.ns.load() - k0) / 1e3 / n;
  state.counters["total_us"] = total_us;
  state.counters["kernel_us"] = kernel_us;
  state.counters["overhead_us"] = total_us - kernel_us;
  // CPU time of all threads per task minus the kernel: the runtime's own
  // work, without the OS's thread wake-up latency.
  state.counters["cpu_overhead_us"] = (process_cpu_us() - c0) / n - kernel_us;
  state.counters["fcs_per_task"] = static_cast<double>(m.kernel.fcs.load() - f0) / n;
}

void BM_SubmitToDone_Trivial(benchmark::State& state) { submit_to_done(state, ApiModels::get().trivial); }
BENCHMARK(BM_SubmitToDone_Trivial)->UseRealTime()->MinTime(1.0);

void BM_SubmitToDone_TinyCnn(benchmark::State& state) { submit_to_done(state, ApiModels::get().tiny); }
BENCHMARK(BM_SubmitToDone_TinyCnn)->UseRealTime()->MinTime(1.0);

// The floor of any asynchronous submit-and-wait: one round trip between two
// threads through a mutex and condition variables (two wake-ups).
void BM_ThreadHandoffBaseline(benchmark::State& state) {
  std::mutex mu;
  std::condition_variable to_worker, to_main;
  int turn = 0;  // 1: worker's turn, 2: main's, -1: stop
  std::thread worker([&] {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      to_worker.wait(lk, [&] { return turn != 0 && turn != 2; });
      if (turn < 0) return;
      turn = 2;
      to_main.notify_one();
    }
  });
  const double c0 = process_cpu_us();
  for (auto _ : state) {
    std::unique_lock<std::mutex> lk(mu);
    turn = 1;
    to_worker.notify_one();
    to_main.wait(lk, [&] { return turn == 2; });
    turn = 0;
  }
  state.counters["cpu_us"] = (process_cpu_us() - c0) / static_cast<double>(state.iterations());
  {
    std::lock_guard<std::mutex> lk(mu);
    turn = -1;
  }
  to_worker.notify_one();
  worker.join();
}
BENCHMARK(BM_ThreadHandoffBaseline)->UseRealTime()->MinTime(1.0);

// The device interface alone: submit a one-fc job, wait for its callback.
void BM_DeviceSubmitToDone(benchmark::State& state) {
  std::string err;
  auto dev = drv::create_device(isa::march_info(isa::March::kBernoulli2), drv::DeviceOptions{}, &err);
  KernelClock kernel;
  kernel.install(dev.get());
  ChainProgram p(dev.get(), 1, 100);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  auto run = [&] {
    done = false;
    dev->submit(p.job(0, [&](const drv::JobResult&) {
      std::lock_guard<std::mutex> lk(mu);
      done = true;
      cv.notify_one();
    }, 1));
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return done; });
  };
  for (int i = 0; i < 100; ++i) run();
  const uint64_t k0 = kernel.ns.load(), t0 = now_ns();
  for (auto _ : state) run();
  const double n = static_cast<double>(state.iterations());
  const double total_us = static_cast<double>(now_ns() - t0) / 1e3 / n;
  const double kernel_us = static_cast<double>(kernel.ns.load() - k0) / 1e3 / n;
  state.counters["total_us"] = total_us;
  state.counters["kernel_us"] = kernel_us;
  state.counters["overhead_us"] = total_us - kernel_us;
}
BENCHMARK(BM_DeviceSubmitToDone)->UseRealTime()->MinTime(1.0);

void percentiles(benchmark::State& state, std::vector<double> v, const char* unit) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  state.counters[std::string("p50_") + unit] = at(0.50);
  state.counters[std::string("p90_") + unit] = at(0.90);
  state.counters[std::string("p99_") + unit] = at(0.99);
  state.counters[std::string("max_") + unit] = v.back();
  state.counters[std::string("min_") + unit] = v.front();
}

// Paced simulator, board time: the low job has 16 fcs of 1 ms (bernoulli2
// runs at 1000 MHz: one cycle per ns), the preemptive one 1 fc of 50 us.
// Reported: submit-to-done latency of the preemptive job minus its own 50 us
// (the wait for the low job's fc in flight, at most 1 ms, plus overhead).
void BM_PreemptionLatency_PacedDevice(benchmark::State& state) {
  drv::DeviceOptions o;
  o.scheduler.paced = true;
  std::string err;
  auto dev = drv::create_device(isa::march_info(isa::March::kBernoulli2), o, &err);
  constexpr uint64_t kLowFcNs = 1'000'000, kHighNs = 50'000;
  ChainProgram low(dev.get(), 16, kLowFcNs), high(dev.get(), 1, kHighNs);
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  uint64_t high_done = 0;
  std::mt19937 rng(1);
  std::vector<double> wait_us;
  for (auto _ : state) {
    {
      std::lock_guard<std::mutex> lk(mu);
      done = 0;
    }
    dev->submit(low.job(0, [&](const drv::JobResult&) {
      std::lock_guard<std::mutex> lk(mu);
      ++done;
      cv.notify_all();
    }, 1));
    std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 12000));
    const uint64_t t0 = now_ns();
    dev->submit(high.job(255, [&](const drv::JobResult&) {
      std::lock_guard<std::mutex> lk(mu);
      high_done = now_ns();
      ++done;
      cv.notify_all();
    }, 1));
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return done == 2; });
    const double us = static_cast<double>(high_done - t0) / 1e3;
    state.SetIterationTime(us / 1e6);
    wait_us.push_back(us - kHighNs / 1e3);
  }
  percentiles(state, wait_us, "wait_us");
}
BENCHMARK(BM_PreemptionLatency_PacedDevice)->UseManualTime()->Iterations(200);

// Through the C API on the fast simulator: a 64x64 MobileNetV1 (25 fcs)
// loops at priority 0 on core 0; a TinyCnn task at priority 255 on core 0.
// Reported: its submit-to-done latency, the same task alone, and the
// longest low fc (the bound of the wait).
void BM_PreemptionLatency_Api(benchmark::State& state) {
  ApiModels& m = ApiModels::get();
  Io hio(m.tiny.handle);
  hio.fill_inputs(2);
  std::vector<double> alone;
  for (int i = 0; i < 200; ++i) {
    const uint64_t t0 = now_ns();
    run_sync(m.tiny.handle, hio, ctrl(255, HB_BPU_CORE_0));
    alone.push_back(static_cast<double>(now_ns() - t0) / 1e3);
  }
  std::sort(alone.begin(), alone.end());
  std::atomic<bool> stop{false};
  std::thread loop([&] {
    Io io(m.long_model.handle);
    io.fill_inputs(1);
    while (!stop.load()) run_sync(m.long_model.handle, io, ctrl(0, HB_BPU_CORE_0));
  });
  TraceLog trace;
  trace.install(rt::current_device());
  std::mt19937 rng(2);
  std::vector<double> lat;
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 3000));
    const uint64_t t0 = now_ns();
    run_sync(m.tiny.handle, hio, ctrl(255, HB_BPU_CORE_0));
    const double us = static_cast<double>(now_ns() - t0) / 1e3;
    state.SetIterationTime(us / 1e6);
    lat.push_back(us);
  }
  stop = true;
  loop.join();
  double max_low_fc = 0;
  for (const auto& e : trace.events())
    if (e.kind == drv::TraceEvent::Kind::kFc && e.priority == 0)
      max_low_fc = std::max(max_low_fc, static_cast<double>(e.t1_ns - e.t0_ns) / 1e3);
  m.kernel.install(rt::current_device());
  percentiles(state, lat, "us");
  state.counters["alone_p50_us"] = alone[alone.size() / 2];
  state.counters["low_fc_max_us"] = max_low_fc;
}
BENCHMARK(BM_PreemptionLatency_Api)->UseManualTime()->Iterations(300);

// Throughput: N threads each submit, wait, release in a loop (TinyCnn).
void BM_Throughput_TinyCnn(benchmark::State& state) {
  ApiModels& m = ApiModels::get();
  Io io(m.tiny.handle);
  io.fill_inputs(1);
  for (auto _ : state) {
    if (run_sync(m.tiny.handle, io, ctrl(0)) != 0) state.SkipWithError("task failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Throughput_TinyCnn)->Threads(1)->Threads(2)->Threads(4)->UseRealTime()->MinTime(1.0);

// The same with the trivial model (runtime-bound).
void BM_Throughput_Trivial(benchmark::State& state) {
  ApiModels& m = ApiModels::get();
  Io io(m.trivial.handle);
  io.fill_inputs(1);
  for (auto _ : state) {
    if (run_sync(m.trivial.handle, io, ctrl(0)) != 0) state.SkipWithError("task failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Throughput_Trivial)->Threads(1)->Threads(2)->Threads(4)->UseRealTime()->MinTime(1.0);

}  // namespace
}  // namespace openbpu::sched_test

BENCHMARK_MAIN();
