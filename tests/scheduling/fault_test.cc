// SPDX-License-Identifier: Apache-2.0
// Fault injection through the device's hook: a failing or hanging function
// call fails its task with HB_DNN_RUN_TASK_FAILED, the core is reset, later
// tasks run and give correct results, and nothing leaks (LeakSanitizer in
// the ASan build; packs release cleanly).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <thread>

#include "runtime/device/device_manager.h"
#include "runtime/engine/engine.h"
#include "tests/common/test_models.h"
#include "tests/scheduling/sched_util.h"

namespace openbpu::sched_test {
namespace {

testing::Nv12Classifier split_classifier() {
  testing::Nv12Classifier c;
  c.max_fc_us = 0.5;  // 6 function calls
  c.name = "split_classifier";
  return c;
}

// Injects `fault` once, at function call `fc` of the next job that reaches it.
class OneShot {
 public:
  OneShot(drv::Scheduler* dev, drv::Fault fault, size_t fc) : fault_(fault), fc_(fc) {
    dev->set_fault_hook([this](const drv::FcInfo& f) {
      if (f.fc != fc_ || !armed_.exchange(false)) return drv::Fault::kNone;
      fired_++;
      return fault_;
    });
  }
  void arm() { armed_ = true; }
  int fired() const { return fired_.load(); }

 private:
  drv::Fault fault_;
  size_t fc_;
  std::atomic<bool> armed_{false};
  std::atomic<int> fired_{0};
};

struct Fixture {
  Loaded cls, tiny;
  std::vector<uint8_t> cls_ref, tiny_ref;
  explicit Fixture() {
    const auto c = split_classifier();
    testing::TinyCnn t;
    cls = load_model(c.build(), "split_classifier");
    tiny = load_model(t.build(), "tiny_cnn");
    EXPECT_EQ(cls.rc, 0);
    EXPECT_EQ(tiny.rc, 0);
    Io a(cls.handle), b(tiny.handle);
    a.fill_inputs(1);
    b.fill_inputs(2);
    EXPECT_EQ(run_sync(cls.handle, a, ctrl(0)), 0);
    EXPECT_EQ(run_sync(tiny.handle, b, ctrl(0)), 0);
    cls_ref = a.outputs();
    tiny_ref = b.outputs();
  }
  // Runs both models `n` times; all must succeed with the reference outputs.
  void expect_healthy(int n = 3) {
    Io a(cls.handle), b(tiny.handle);
    a.fill_inputs(1);
    b.fill_inputs(2);
    for (int i = 0; i < n; ++i) {
      a.clear_outputs();
      b.clear_outputs();
      EXPECT_EQ(run_sync(cls.handle, a, ctrl(0)), 0);
      EXPECT_EQ(run_sync(tiny.handle, b, ctrl(0)), 0);
      EXPECT_EQ(a.outputs(), cls_ref);
      EXPECT_EQ(b.outputs(), tiny_ref);
    }
  }
  ~Fixture() {
    EXPECT_EQ(rt::live_task_count(), 0);
    EXPECT_EQ(hbDNNRelease(cls.pack), 0);
    EXPECT_EQ(hbDNNRelease(tiny.pack), 0);
    const drv::DeviceStats st = rt::current_device()->stats();
    EXPECT_EQ(st.jobs_submitted, st.jobs_completed);
  }
};

TEST(SchedFault, FailingFcFailsTaskAndLaterTasksSucceed) {
  Fixture fx;
  drv::Scheduler* dev = rt::current_device();
  OneShot shot(dev, drv::Fault::kFail, 3);
  for (int round = 0; round < 3; ++round) {
    Io io(fx.cls.handle);
    io.fill_inputs(1);
    shot.arm();
    EXPECT_EQ(run_sync(fx.cls.handle, io, ctrl(round * 100)), HB_DNN_RUN_TASK_FAILED);
    EXPECT_EQ(shot.fired(), round + 1);
    fx.expect_healthy();
  }
  EXPECT_EQ(dev->stats().core_resets, 3u);
  EXPECT_EQ(dev->stats().jobs_failed, 3u);
}

TEST(SchedFault, HangingFcIsCaughtByTheWatchdog) {
  drv::SchedulerOptions o;
  o.watchdog_us = 100'000;
  ASSERT_TRUE(rt::set_scheduler_options(o));
  Fixture fx;
  OneShot shot(rt::current_device(), drv::Fault::kHang, 2);
  Io io(fx.cls.handle);
  io.fill_inputs(1);
  shot.arm();
  const uint64_t t0 = now_ns();
  EXPECT_EQ(run_sync(fx.cls.handle, io, ctrl(0)), HB_DNN_RUN_TASK_FAILED);
  const double ms = static_cast<double>(now_ns() - t0) / 1e6;
  EXPECT_GE(ms, 99.0);
  EXPECT_LT(ms, 2000.0 * slowdown());
  fx.expect_healthy();
}

TEST(SchedFault, FcTimeoutFromEnvironment) {
  // The engine reads OPENBPU_FC_TIMEOUT_MS when it starts (this process's
  // first task); the device watchdog would take 2 s. 30 ms per fc, longer
  // where the host is slower (a real TinyCnn fc took 66 ms under
  // ThreadSanitizer on a loaded host).
  const double timeout_ms = 30.0 * slowdown();
  setenv("OPENBPU_FC_TIMEOUT_MS", std::to_string(static_cast<int>(timeout_ms)).c_str(), 1);
  Fixture fx;
  OneShot shot(rt::current_device(), drv::Fault::kHang, 0);
  Io io(fx.tiny.handle);
  io.fill_inputs(2);
  shot.arm();
  const uint64_t t0 = now_ns();
  EXPECT_EQ(run_sync(fx.tiny.handle, io, ctrl(0)), HB_DNN_RUN_TASK_FAILED);
  const double ms = static_cast<double>(now_ns() - t0) / 1e6;
  EXPECT_GE(ms, timeout_ms - 1.0);
  EXPECT_LT(ms, 1500.0);
  fx.expect_healthy();
}

TEST(SchedFault, ReleasingATaskWithAHungFcReturnsAtOnce) {
  drv::SchedulerOptions o;
  o.watchdog_us = 30'000'000;
  ASSERT_TRUE(rt::set_scheduler_options(o));
  Fixture fx;
  OneShot shot(rt::current_device(), drv::Fault::kHang, 1);
  Io io(fx.cls.handle);
  io.fill_inputs(1);
  shot.arm();
  hbDNNTaskHandle_t t = nullptr;
  ASSERT_EQ(infer(&t, fx.cls.handle, io, ctrl(0)), 0);
  while (shot.fired() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(hbDNNWaitTaskDone(t, 20), HB_DNN_TIMEOUT);
  const uint64_t t0 = now_ns();
  EXPECT_EQ(hbDNNReleaseTask(t), 0);
  EXPECT_LT(static_cast<double>(now_ns() - t0) / 1e6, 1000.0);
  fx.expect_healthy();
}

TEST(SchedFault, FaultInAChainedTaskFailsTheWholeTask) {
  Fixture fx;
  OneShot shot(rt::current_device(), drv::Fault::kFail, 4);
  Io a(fx.tiny.handle), b(fx.cls.handle), c(fx.tiny.handle);
  a.fill_inputs(2);
  b.fill_inputs(1);
  c.fill_inputs(2);
  hbDNNTaskHandle_t t = nullptr;
  hbDNNInferCtrlParam p = ctrl(7);
  p.more = 1;
  hbDNNTensor* outp = a.out.data();
  ASSERT_EQ(hbDNNInfer(&t, &outp, a.in.data(), fx.tiny.handle, &p), 0);
  outp = b.out.data();
  ASSERT_EQ(hbDNNInfer(&t, &outp, b.in.data(), fx.cls.handle, &p), 0);
  p.more = 0;
  outp = c.out.data();
  shot.arm();  // only the classifier has an fc 4
  ASSERT_EQ(hbDNNInfer(&t, &outp, c.in.data(), fx.tiny.handle, &p), 0);
  EXPECT_EQ(hbDNNWaitTaskDone(t, 0), HB_DNN_RUN_TASK_FAILED);
  EXPECT_EQ(hbDNNReleaseTask(t), 0);
  EXPECT_EQ(shot.fired(), 1);
  fx.expect_healthy();
}

// Random failing and hanging fcs while several threads run tasks: every task
// ends, successful ones are correct, each injected fault fails exactly one
// task.
TEST(SchedFault, FaultsUnderLoad) {
  drv::SchedulerOptions o;
  o.watchdog_us = 20'000;
  ASSERT_TRUE(rt::set_scheduler_options(o));
  Fixture fx;
  std::atomic<int> injected{0};
  rt::current_device()->set_fault_hook([&](const drv::FcInfo& f) {
    const uint64_t h = (f.job * 0x9E3779B97F4A7C15ull + f.fc) >> 52;  // 0..4095
    if (h < 80) {
      injected++;
      return drv::Fault::kFail;
    }
    if (h < 100) {
      injected++;
      return drv::Fault::kHang;
    }
    return drv::Fault::kNone;
  });
  std::atomic<int> failed{0}, bad{0}, ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Io a(fx.cls.handle), b(fx.tiny.handle);
      a.fill_inputs(1);
      b.fill_inputs(2);
      for (int i = 0; i < 60; ++i) {
        const bool cls = (i + t) % 2 == 0;
        Io& io = cls ? a : b;
        io.clear_outputs();
        const int32_t rc = run_sync(cls ? fx.cls.handle : fx.tiny.handle, io, ctrl((i * 37) % 256));
        if (rc == HB_DNN_RUN_TASK_FAILED) {
          failed++;
        } else if (rc != 0 || io.outputs() != (cls ? fx.cls_ref : fx.tiny_ref)) {
          bad++;
        } else {
          ok++;
        }
      }
    });
  for (auto& th : threads) th.join();
  rt::current_device()->set_fault_hook(nullptr);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(failed.load(), injected.load());
  EXPECT_EQ(failed.load() + ok.load(), 240);
  EXPECT_GT(injected.load(), 0);
  EXPECT_EQ(rt::current_device()->stats().core_resets, static_cast<uint64_t>(injected.load()));
  fx.expect_healthy();
}

}  // namespace
}  // namespace openbpu::sched_test
