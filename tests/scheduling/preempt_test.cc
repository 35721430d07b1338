// SPDX-License-Identifier: Apache-2.0
// Priorities and preemption through the C API: an exact ordering test on the
// deterministic (stepped) single-core scheduler, and a low-priority model
// running in a loop on the paced simulator while tasks of the preemptive
// level come in. Each test runs in its own process (the simulated platform
// and its options are fixed by the first model load).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "runtime/device/device_manager.h"
#include "tests/common/test_models.h"
#include "tests/scheduling/sched_util.h"

namespace openbpu::sched_test {
namespace {

using drv::TraceEvent;

// A long BPU program: MobileNetV1 on 32x32, one function call per layer.
testing::MobileNetV1 long_model() {
  testing::MobileNetV1 m;
  m.h = m.w = 32;
  m.classes = 10;
  m.max_fc_us = 0.5;
  m.name = "long_mobilenet";
  return m;
}

// Same classifier with 6 function calls.
testing::Nv12Classifier split_classifier() {
  testing::Nv12Classifier c;
  c.max_fc_us = 0.5;
  c.name = "split_classifier";
  return c;
}

// Reference output of a model for given inputs (run alone).
std::vector<uint8_t> reference(hbDNNHandle_t h, uint32_t seed, drv::Scheduler* stepped = nullptr) {
  Io io(h);
  io.fill_inputs(seed);
  hbDNNTaskHandle_t t = nullptr;
  EXPECT_EQ(infer(&t, h, io, ctrl(0, HB_BPU_CORE_0)), 0);
  EXPECT_EQ(stepped ? step_until_done(stepped, t) : hbDNNWaitTaskDone(t, 0), 0);
  EXPECT_EQ(hbDNNReleaseTask(t), 0);
  return io.outputs();
}

TEST(SchedPreempt, SteppedSingleCoreExactOrder) {
  drv::SchedulerOptions o;
  o.stepped = true;
  ASSERT_TRUE(rt::set_scheduler_options(o));
  const auto low_model = split_classifier();
  testing::TinyCnn tiny;
  const Loaded low = load_model(low_model.build(), "split_classifier");
  const Loaded small = load_model(tiny.build(), "tiny_cnn");
  ASSERT_EQ(low.rc, 0);
  ASSERT_EQ(small.rc, 0);
  drv::Scheduler* dev = rt::current_device();
  const std::vector<uint8_t> low_ref = reference(low.handle, 1, dev);
  const std::vector<uint8_t> small_ref = reference(small.handle, 2, dev);

  TraceLog trace;
  trace.install(dev);
  Io lio(low.handle);
  lio.fill_inputs(1);
  hbDNNTaskHandle_t lt = nullptr;
  ASSERT_EQ(infer(&lt, low.handle, lio, ctrl(0, HB_BPU_CORE_0)), 0);
  ASSERT_TRUE(dev->wait_jobs(1, 5000));
  TraceEvent ev;
  ASSERT_TRUE(dev->step(0, 1000, &ev));
  ASSERT_TRUE(dev->step(0, 1000, &ev));
  // Submitted while the low task is mid-program (after 2 of its 6 fcs).
  struct Sub {
    int prio;
    int64_t cid;
  };
  const Sub subs[] = {{100, 0}, {200, 5}, {200, 1}, {255, 0}};
  std::vector<std::unique_ptr<Io>> ios;
  std::vector<hbDNNTaskHandle_t> tasks;
  for (const Sub& s : subs) {
    ios.push_back(std::make_unique<Io>(small.handle));
    ios.back()->fill_inputs(2);
    ios.back()->clear_outputs();
    tasks.push_back(nullptr);
    ASSERT_EQ(infer(&tasks.back(), small.handle, *ios.back(), ctrl(s.prio, HB_BPU_CORE_0, s.cid)), 0);
  }
  // Their BPU jobs reach the device after the CPU quantize step.
  ASSERT_TRUE(dev->wait_jobs(5, 5000));
  while (dev->step(0, 200, &ev)) {
  }
  for (auto t : tasks) {
    EXPECT_EQ(hbDNNWaitTaskDone(t, 0), 0);
    EXPECT_EQ(hbDNNReleaseTask(t), 0);
  }
  EXPECT_EQ(step_until_done(dev, lt), 0);
  EXPECT_EQ(hbDNNReleaseTask(lt), 0);

  std::vector<std::pair<int, int64_t>> order;
  for (const auto& e : trace.events())
    if (e.kind == TraceEvent::Kind::kFc) order.emplace_back(e.priority, e.custom_id);
  // Low fcs 0-1, then the preemptive task at the very next boundary, then the
  // waiting tasks by (priority desc, customId asc), then the low task resumes
  // from fc 2.
  const std::vector<std::pair<int, int64_t>> want = {{0, 0},   {0, 0},   {255, 0}, {200, 1}, {200, 5},
                                                      {100, 0}, {0, 0},   {0, 0},   {0, 0},   {0, 0}};
  EXPECT_EQ(order, want);
  size_t resumed_fc = 0;
  for (const auto& e : trace.events())
    if (e.kind == TraceEvent::Kind::kFc && e.priority == 0 && resumed_fc == 0 && e.fc >= 2) resumed_fc = e.fc;
  EXPECT_EQ(resumed_fc, 2u);
  EXPECT_EQ(dev->stats().preemptions, 1u);
  // Bit-identical results for the preempted task and for the others.
  EXPECT_EQ(lio.outputs(), low_ref);
  for (auto& io : ios) EXPECT_EQ(io->outputs(), small_ref);
  EXPECT_EQ(hbDNNRelease(low.pack), 0);
  EXPECT_EQ(hbDNNRelease(small.pack), 0);
}

// A low-priority model loops on the given core mask(s); tasks of the
// preemptive level arrive meanwhile. Checks, per urgent task: no low fc
// started on its core between its job's submission and its first fc (exact,
// from the trace); its latency is within one low fc + its own time
// (measured, generous margin); all outputs are bit-identical to a lone run.
void run_paced_preemption(const std::vector<int32_t>& low_cores, int32_t urgent_core) {
  drv::SchedulerOptions o;
  o.paced = true;
  o.pace_scale = 200;  // board time x200: paced time, not host speed, sets most fc lengths
  ASSERT_TRUE(rt::set_scheduler_options(o));
  const auto low_model = long_model();
  testing::TinyCnn tiny;
  const Loaded low = load_model(low_model.build(), "long_mobilenet");
  const Loaded small = load_model(tiny.build(), "tiny_cnn");
  ASSERT_EQ(low.rc, 0);
  ASSERT_EQ(small.rc, 0);
  drv::Scheduler* dev = rt::current_device();
  const std::vector<uint8_t> low_ref = reference(low.handle, 1);
  const std::vector<uint8_t> small_ref = reference(small.handle, 2);

  // The urgent task alone (its own time).
  Io sio(small.handle);
  sio.fill_inputs(2);
  double alone_ms = 1e9;
  for (int i = 0; i < 5; ++i) {
    const uint64_t t0 = now_ns();
    ASSERT_EQ(run_sync(small.handle, sio, ctrl(255, urgent_core)), 0);
    alone_ms = std::min(alone_ms, static_cast<double>(now_ns() - t0) / 1e6);
  }

  TraceLog trace;
  trace.install(dev);
  std::atomic<bool> stop{false};
  std::atomic<int> low_runs{0}, low_bad{0};
  std::vector<std::thread> loops;
  for (int32_t core : low_cores)
    loops.emplace_back([&, core] {
      Io io(low.handle);
      io.fill_inputs(1);
      while (!stop.load()) {
        io.clear_outputs();
        if (run_sync(low.handle, io, ctrl(0, core)) != 0 || io.outputs() != low_ref) low_bad++;
        low_runs++;
      }
    });
  while (low_runs.load() == 0 && trace.events().size() < 4 * low_cores.size())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::mt19937 rng(3);
  struct Urgent {
    uint64_t submit_ns, done_ns;
  };
  std::vector<Urgent> urgent;
  int urgent_bad = 0;
  for (int i = 0; i < 12; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(3000 + rng() % 15000));
    sio.clear_outputs();
    const uint64_t t0 = now_ns();
    if (run_sync(small.handle, sio, ctrl(255, urgent_core)) != 0 || sio.outputs() != small_ref) urgent_bad++;
    urgent.push_back({t0, now_ns()});
  }
  stop = true;
  for (auto& th : loops) th.join();
  EXPECT_EQ(low_bad.load(), 0);
  EXPECT_EQ(urgent_bad, 0);

  const std::vector<TraceEvent> events = trace.events();
  uint64_t max_low_fc_ns = 0;
  for (const auto& e : events)
    if (e.kind == TraceEvent::Kind::kFc && e.priority == 0)
      max_low_fc_ns = std::max(max_low_fc_ns, e.t1_ns - e.t0_ns);
  int preempting = 0;
  for (const auto& e : events) {
    if (e.kind != TraceEvent::Kind::kSubmit || e.priority != 255) continue;
    // The job waits on its home core (chosen at submission; the other core
    // may take it over when idle, within the same scheduling decision that
    // starts it).
    uint64_t start = 0;
    const int core = e.core;
    for (const auto& f : events)
      if (f.kind == TraceEvent::Kind::kFc && f.job == e.job) start = f.t0_ns;
    ASSERT_NE(start, 0u);
    bool low_was_running = false;
    for (const auto& f : events) {
      if (f.kind != TraceEvent::Kind::kFc || f.priority != 0 || f.core != core) continue;
      EXPECT_FALSE(f.t0_ns > e.t0_ns && f.t0_ns < start) << "a low fc started on core " << core
                                                          << " while an urgent job waited";
      if (f.t0_ns <= e.t0_ns && f.t1_ns > e.t0_ns) low_was_running = true;
    }
    preempting += low_was_running;
  }
  // Most urgent tasks arrived while the low model was mid-program.
  EXPECT_GE(preempting, 4);
  EXPECT_GE(dev->stats().preemptions, 1u);
  // Generous: a loaded host delays thread wake-ups (CPU steps of the urgent
  // task, the core's wake-up) by milliseconds.
  const double bound_ms = static_cast<double>(max_low_fc_ns) / 1e6 + 2 * alone_ms + 20.0 * slowdown();
  double worst = 0;
  for (const Urgent& u : urgent) worst = std::max(worst, static_cast<double>(u.done_ns - u.submit_ns) / 1e6);
  EXPECT_LE(worst, bound_ms) << "one low fc: " << max_low_fc_ns / 1e6 << " ms, urgent alone: " << alone_ms
                             << " ms";
  ::testing::Test::RecordProperty("worst_latency_us", static_cast<int>(worst * 1000));
  ::testing::Test::RecordProperty("low_fc_max_us", static_cast<int>(max_low_fc_ns / 1000));
  EXPECT_EQ(hbDNNRelease(low.pack), 0);
  EXPECT_EQ(hbDNNRelease(small.pack), 0);
}

TEST(SchedPreempt, PacedLowModelLoopOnePinnedCore) { run_paced_preemption({HB_BPU_CORE_0}, HB_BPU_CORE_0); }

TEST(SchedPreempt, PacedBothCoresBusyUrgentOnAnyCore) {
  run_paced_preemption({HB_BPU_CORE_ANY, HB_BPU_CORE_ANY}, HB_BPU_CORE_ANY);
}

}  // namespace
}  // namespace openbpu::sched_test
