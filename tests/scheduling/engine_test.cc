// SPDX-License-Identifier: Apache-2.0
// The task engine through the C API: HB_MAX_TASK_NUM queueing order and the
// preemptive level's bypass, hbDNNWaitTaskDone timeouts, release of running
// tasks, done-callbacks, `more` chains with priorities, no busy-waiting, and
// a waiter running its task's CPU steps.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <atomic>
#include <thread>

#include "runtime/device/device_manager.h"
#include "runtime/engine/engine.h"
#include "tests/common/test_models.h"
#include "tests/scheduling/sched_util.h"

namespace openbpu::sched_test {
namespace {

using drv::TraceEvent;

// The process's simulator runs only when a test steps it.
void stepped_platform() {
  drv::SchedulerOptions o;
  o.stepped = true;
  EXPECT_TRUE(rt::set_scheduler_options(o));
}

testing::Nv12Classifier split_classifier() {
  testing::Nv12Classifier c;
  c.max_fc_us = 0.5;  // 6 function calls
  c.name = "split_classifier";
  return c;
}

std::vector<std::pair<int, int64_t>> fc_order(const TraceLog& trace) {
  std::vector<std::pair<int, int64_t>> order;
  for (const auto& e : trace.events())
    if (e.kind == TraceEvent::Kind::kFc) order.emplace_back(e.priority, e.custom_id);
  return order;
}

// HB_MAX_TASK_NUM=1: one task runs, the others wait in the engine and start
// by (priority desc, customId asc, FIFO); a preemptive task does not wait.
TEST(SchedEngine, MaxTaskNumQueueOrderAndPreemptiveBypass) {
  setenv("HB_MAX_TASK_NUM", "1", 1);
  stepped_platform();
  testing::TinyCnn tiny;
  const Loaded l = load_model(tiny.build(), "tiny_cnn");
  ASSERT_EQ(l.rc, 0);
  drv::Scheduler* dev = rt::current_device();
  TraceLog trace;
  trace.install(dev);
  struct Sub {
    int prio;
    int64_t cid;
  };
  const Sub subs[] = {{0, 0}, {5, 0}, {9, 0}, {9, -1}, {255, 0}};
  std::vector<std::unique_ptr<Io>> ios;
  std::vector<hbDNNTaskHandle_t> tasks;
  for (const Sub& s : subs) {
    ios.push_back(std::make_unique<Io>(l.handle));
    ios.back()->fill_inputs(1);
    tasks.push_back(nullptr);
    ASSERT_EQ(infer(&tasks.back(), l.handle, *ios.back(), ctrl(s.prio, HB_BPU_CORE_0, s.cid)), 0);
    if (s.prio == 0) {
      ASSERT_TRUE(dev->wait_jobs(1, 5000));
    }
  }
  // The first task and the preemptive one are on the device; the rest wait.
  ASSERT_TRUE(dev->wait_jobs(2, 5000));
  EXPECT_FALSE(dev->wait_jobs(3, 100));
  for (auto t : tasks) EXPECT_EQ(step_until_done(dev, t), 0);
  for (auto t : tasks) EXPECT_EQ(hbDNNReleaseTask(t), 0);
  const std::vector<std::pair<int, int64_t>> want = {{255, 0}, {0, 0}, {9, -1}, {9, 0}, {5, 0}};
  EXPECT_EQ(fc_order(trace), want);
  EXPECT_EQ(hbDNNRelease(l.pack), 0);
}

TEST(SchedEngine, WaitTimeoutDoesNotCancelAndZeroWaitsForever) {
  stepped_platform();
  testing::TinyCnn tiny;
  const Loaded l = load_model(tiny.build(), "tiny_cnn");
  ASSERT_EQ(l.rc, 0);
  drv::Scheduler* dev = rt::current_device();
  Io io(l.handle);
  io.fill_inputs(1);
  hbDNNTaskHandle_t t = nullptr;
  ASSERT_EQ(infer(&t, l.handle, io, ctrl(0)), 0);
  const uint64_t t0 = now_ns();
  EXPECT_EQ(hbDNNWaitTaskDone(t, 30), HB_DNN_TIMEOUT);
  EXPECT_GE(static_cast<double>(now_ns() - t0) / 1e6, 29.0);
  EXPECT_EQ(hbDNNWaitTaskDone(t, 1), HB_DNN_TIMEOUT);
  // Nothing runs until stepped; a wait with timeout 0 blocks until done.
  std::thread stepper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    drv::TraceEvent ev;
    while (!dev->step(0, 1000, &ev)) {
    }
  });
  const uint64_t t1 = now_ns();
  EXPECT_EQ(hbDNNWaitTaskDone(t, 0), 0);
  EXPECT_GE(static_cast<double>(now_ns() - t1) / 1e6, 45.0);
  stepper.join();
  EXPECT_EQ(hbDNNWaitTaskDone(t, -5), 0);
  EXPECT_EQ(hbDNNReleaseTask(t), 0);
  EXPECT_EQ(hbDNNRelease(l.pack), 0);
}

TEST(SchedEngine, ReleaseOfARunningTaskCancelsItAtTheFcBoundary) {
  stepped_platform();
  const auto c = split_classifier();
  const Loaded l = load_model(c.build(), "split_classifier");
  ASSERT_EQ(l.rc, 0);
  drv::Scheduler* dev = rt::current_device();
  Io io(l.handle);
  io.fill_inputs(1);
  hbDNNTaskHandle_t t = nullptr;
  ASSERT_EQ(infer(&t, l.handle, io, ctrl(0)), 0);
  ASSERT_TRUE(dev->wait_jobs(1, 5000));
  drv::TraceEvent ev;
  ASSERT_TRUE(dev->step(0, 1000, &ev));
  ASSERT_TRUE(dev->step(0, 1000, &ev));
  EXPECT_EQ(hbDNNReleaseTask(t), 0);  // between fcs: returns at once
  EXPECT_EQ(dev->stats().jobs_cancelled, 1u);
  EXPECT_EQ(rt::live_task_count(), 0);
  EXPECT_FALSE(dev->step(0, 0, &ev));
  // The pack has no task left and the core runs later tasks.
  ASSERT_EQ(infer(&t, l.handle, io, ctrl(0)), 0);
  EXPECT_EQ(step_until_done(dev, t), 0);
  EXPECT_EQ(hbDNNReleaseTask(t), 0);
  EXPECT_EQ(hbDNNRelease(l.pack), 0);
}

struct CbCount {
  std::atomic<int> calls{0};
  std::atomic<int32_t> status{1};
};
void count_cb(hbDNNTaskHandle_t, int32_t status, void* p) {
  auto* c = static_cast<CbCount*>(p);
  c->status = status;
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a slow callback
  c->calls++;
}

// Every task that ends reports once through its callback, cancelled ones
// included, and hbDNNReleaseTask returns only after the callback returned.
TEST(SchedEngine, DoneCallbackOncePerTaskBeforeReleaseReturns) {
  setenv("HB_MAX_TASK_NUM", "2", 1);
  testing::TinyCnn tiny;
  const auto c = split_classifier();
  const Loaded a = load_model(tiny.build(), "tiny_cnn");
  const Loaded b = load_model(c.build(), "split_classifier");
  ASSERT_EQ(a.rc, 0);
  ASSERT_EQ(b.rc, 0);
  for (int round = 0; round < 20; ++round) {
    constexpr int kTasks = 8;
    std::vector<std::unique_ptr<Io>> ios;
    std::vector<hbDNNTaskHandle_t> tasks(kTasks, nullptr);
    std::vector<CbCount> counts(kTasks);
    for (int i = 0; i < kTasks; ++i) {
      const Loaded& m = i % 2 ? a : b;
      ios.push_back(std::make_unique<Io>(m.handle));
      ios.back()->fill_inputs(1);
      ASSERT_EQ(infer(&tasks[i], m.handle, *ios.back(), ctrl(i * 30)), 0);
      ASSERT_EQ(hbDNNSetTaskDoneCb(tasks[i], count_cb, &counts[i]), 0);
    }
    // Release half at once (running, queued in the engine, or done), wait
    // for the others first.
    for (int i = 0; i < kTasks; ++i) {
      const bool waited = i % 2 == round % 2;
      if (waited) {
        EXPECT_EQ(hbDNNWaitTaskDone(tasks[i], 0), 0);
      }
      EXPECT_EQ(hbDNNReleaseTask(tasks[i]), 0);
      EXPECT_EQ(counts[i].calls.load(), 1) << "task " << i;
      if (waited) {
        EXPECT_EQ(counts[i].status.load(), 0);
      }
    }
  }
  EXPECT_EQ(rt::live_task_count(), 0);
  EXPECT_EQ(hbDNNRelease(a.pack), 0);
  EXPECT_EQ(hbDNNRelease(b.pack), 0);
}

// A done-callback that holds its thread (the pool's only one here) until
// released, or for 3 s at most.
struct Holder {
  std::atomic<bool> entered{false}, release{false};
};
void hold_cb(void*, int32_t, void* p) {
  auto* h = static_cast<Holder*>(p);
  h->entered = true;
  const uint64_t t0 = now_ns();
  while (!h->release.load() && now_ns() - t0 < 3'000'000'000ull)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// HB_MAX_THREAD_NUM=1 and that thread held by another task's done-callback:
// a task whose caller waits without a timeout still runs to the end, its CPU
// steps (Quantize, Dequantize) on the waiting thread.
TEST(SchedEngine, WaiterRunsItsTaskCpuStepsWhileThePoolIsBusy) {
  setenv("HB_MAX_THREAD_NUM", "1", 1);
  testing::TinyCnn tiny;
  const Loaded l = load_model(tiny.build(), "tiny_cnn");
  ASSERT_EQ(l.rc, 0);
  Io ia(l.handle), ib(l.handle);
  ia.fill_inputs(1);
  ib.fill_inputs(2);
  Holder holder;
  hbDNNTaskHandle_t a = nullptr, b = nullptr;
  ASSERT_EQ(infer(&a, l.handle, ia, ctrl(0)), 0);
  ASSERT_EQ(hbDNNSetTaskDoneCb(a, hold_cb, &holder), 0);
  while (!holder.entered.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const uint64_t t0 = now_ns();
  ASSERT_EQ(infer(&b, l.handle, ib, ctrl(0)), 0);
  EXPECT_EQ(hbDNNWaitTaskDone(b, 0), 0);
  // Done while the pool is held (the callback holds it for 3 s).
  EXPECT_LT(static_cast<double>(now_ns() - t0) / 1e6, 1000.0);
  holder.release = true;
  EXPECT_EQ(hbDNNWaitTaskDone(a, 0), 0);
  EXPECT_EQ(hbDNNReleaseTask(a), 0);
  EXPECT_EQ(hbDNNReleaseTask(b), 0);
  EXPECT_EQ(hbDNNRelease(l.pack), 0);
}

// A chain of runs (`more`) is one task with one priority: a preemptive chain
// passes a running low one at its next fc boundary; results are right.
TEST(SchedEngine, ChainedTasksTakeTheirPriority) {
  stepped_platform();
  testing::TinyCnn tiny;
  const auto c = split_classifier();
  const Loaded a = load_model(tiny.build(), "tiny_cnn");
  const Loaded b = load_model(c.build(), "split_classifier");
  ASSERT_EQ(a.rc, 0);
  ASSERT_EQ(b.rc, 0);
  drv::Scheduler* dev = rt::current_device();
  Io ra(a.handle), rb(b.handle);
  ra.fill_inputs(1);
  rb.fill_inputs(2);
  hbDNNTaskHandle_t t = nullptr;
  ASSERT_EQ(infer(&t, a.handle, ra, ctrl(0)), 0);
  ASSERT_EQ(step_until_done(dev, t), 0);
  ASSERT_EQ(hbDNNReleaseTask(t), 0);
  ASSERT_EQ(infer(&t, b.handle, rb, ctrl(0)), 0);
  ASSERT_EQ(step_until_done(dev, t), 0);
  ASSERT_EQ(hbDNNReleaseTask(t), 0);

  TraceLog trace;
  trace.install(dev);
  Io low(b.handle);
  low.fill_inputs(2);
  hbDNNTaskHandle_t lt = nullptr;
  ASSERT_EQ(infer(&lt, b.handle, low, ctrl(0, HB_BPU_CORE_0)), 0);
  ASSERT_TRUE(dev->wait_jobs(1, 5000));
  drv::TraceEvent ev;
  ASSERT_TRUE(dev->step(0, 1000, &ev));
  // Chain: tiny, classifier, tiny at the preemptive level.
  Io c1(a.handle), c2(b.handle), c3(a.handle);
  c1.fill_inputs(1);
  c2.fill_inputs(2);
  c3.fill_inputs(1);
  hbDNNTaskHandle_t ct = nullptr;
  hbDNNInferCtrlParam p = ctrl(255, HB_BPU_CORE_0);
  p.more = 1;
  hbDNNTensor* outp = c1.out.data();
  ASSERT_EQ(hbDNNInfer(&ct, &outp, c1.in.data(), a.handle, &p), 0);
  outp = c2.out.data();
  ASSERT_EQ(hbDNNInfer(&ct, &outp, c2.in.data(), b.handle, &p), 0);
  p.more = 0;
  outp = c3.out.data();
  ASSERT_EQ(hbDNNInfer(&ct, &outp, c3.in.data(), a.handle, &p), 0);
  // Step only while a BPU job of the chain is queued: between its runs the
  // chain is on the CPU pool, and then the core rightly continues the low task.
  while (hbDNNWaitTaskDone(ct, 1) == HB_DNN_TIMEOUT)
    if (dev->wait_jobs(2, 100)) dev->step(0, 100, &ev);
  EXPECT_EQ(hbDNNWaitTaskDone(ct, 0), 0);
  EXPECT_EQ(step_until_done(dev, lt), 0);
  EXPECT_EQ(hbDNNReleaseTask(ct), 0);
  EXPECT_EQ(hbDNNReleaseTask(lt), 0);
  // 1 low fc, the chain's 1 + 6 + 1 fcs, then the low task's other 5.
  std::vector<int> prios;
  for (const auto& e : fc_order(trace)) prios.push_back(e.first);
  EXPECT_EQ(prios, (std::vector<int>{0, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0}));
  EXPECT_EQ(c1.outputs(), ra.outputs());
  EXPECT_EQ(c3.outputs(), ra.outputs());
  EXPECT_EQ(c2.outputs(), rb.outputs());
  EXPECT_EQ(low.outputs(), rb.outputs());
  EXPECT_EQ(hbDNNRelease(a.pack), 0);
  EXPECT_EQ(hbDNNRelease(b.pack), 0);
}

double process_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Waiting for paced (slow) tasks costs no CPU: every thread of the library
// sleeps on a condition variable or a timer (after at most OPENBPU_SPIN_US,
// 20 us by default, of polling, bpu_driver/spin.h). The pace makes the wall time
// long against the tasks' own work, which under qemu-user (aarch64 tests) is
// some 30 ms of CPU: a thread spinning while it waits would cost about the
// whole wall time, the work alone stays far below half of it.
TEST(SchedEngine, NoBusyWaiting) {
  drv::SchedulerOptions o;
  o.paced = true;
  o.pace_scale = 80000;  // tiny_cnn's few-us board estimate becomes ~0.1 s
  ASSERT_TRUE(rt::set_scheduler_options(o));
  testing::TinyCnn tiny;
  const Loaded l = load_model(tiny.build(), "tiny_cnn");
  ASSERT_EQ(l.rc, 0);
  std::vector<std::unique_ptr<Io>> ios;
  std::vector<hbDNNTaskHandle_t> tasks(6, nullptr);
  // Warm up (threads started, arenas allocated).
  Io w(l.handle);
  w.fill_inputs(1);
  ASSERT_EQ(run_sync(l.handle, w, ctrl(0)), 0);
  const double cpu0 = process_cpu_ms();
  const uint64_t t0 = now_ns();
  for (size_t i = 0; i < tasks.size(); ++i) {
    ios.push_back(std::make_unique<Io>(l.handle));
    ios.back()->fill_inputs(1);
    ASSERT_EQ(infer(&tasks[i], l.handle, *ios.back(), ctrl(static_cast<int>(i))), 0);
  }
  for (auto t : tasks) EXPECT_EQ(hbDNNWaitTaskDone(t, 0), 0);
  const double wall_ms = static_cast<double>(now_ns() - t0) / 1e6;
  const double cpu_ms = process_cpu_ms() - cpu0;
  for (auto t : tasks) EXPECT_EQ(hbDNNReleaseTask(t), 0);
  // 6 tasks over 2 cores, each tens of ms of paced board time.
  EXPECT_GT(wall_ms, 120.0);
  EXPECT_LT(cpu_ms, 0.4 * wall_ms) << "wall " << wall_ms << " ms, cpu " << cpu_ms << " ms";
  EXPECT_EQ(hbDNNRelease(l.pack), 0);
}

}  // namespace
}  // namespace openbpu::sched_test
