// SPDX-License-Identifier: Apache-2.0
// Stress: many threads x many tasks over three models (one fc, six fcs, and a
// core_num 2 model running as a gang on both cores), random priorities
// (including the preemptive level), random cores and customIds, random
// release-while-running (cancel) and short waits. Checks: every completed
// task's output equals the single-threaded result; every task reports
// exactly once through its done-callback before its release returns; no
// task is lost (device and engine counters balance); the run ends in
// bounded time (every wait has a deadline).
//
// Size: OPENBPU_SCHED_STRESS_THREADS (default 16) x OPENBPU_SCHED_STRESS_TASKS
// (default 2000) tasks; sanitizer CI steps may pass a smaller count.
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

int env_count(const char* name, int def) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return def;
  const int n = std::atoi(v);
  return n > 0 ? n : def;
}

struct Record {
  std::atomic<int> calls{0};
  std::atomic<int32_t> status{1};
};

void on_done(hbDNNTaskHandle_t, int32_t status, void* userdata) {
  auto* r = static_cast<Record*>(userdata);
  r->status.store(status);
  r->calls.fetch_add(1);
}

TEST(SchedStress, ThreadsTasksModelsRandomPriorityReleaseCancel) {
  const int kThreads = env_count("OPENBPU_SCHED_STRESS_THREADS", 16);
  const int kTasks = env_count("OPENBPU_SCHED_STRESS_TASKS", 2000);
  const int wait_ms = env_count("OPENBPU_SCHED_STRESS_WAIT_MS", 120000);
  testing::TinyCnn tiny;
  testing::Nv12Classifier split;
  split.max_fc_us = 0.5;
  split.name = "split";
  testing::Nv12Classifier dual;
  dual.h = dual.w = 16;
  dual.seed = 17;
  dual.max_fc_us = 0.5;
  dual.core_num = 2;
  dual.name = "dual";
  std::vector<Loaded> models = {load_model(tiny.build(), "tiny_cnn"), load_model(split.build(), "split"),
                                load_model(dual.build(), "dual")};
  std::vector<std::vector<uint8_t>> refs;
  for (size_t m = 0; m < models.size(); ++m) {
    ASSERT_EQ(models[m].rc, 0);
    Io io(models[m].handle);
    io.fill_inputs(static_cast<uint32_t>(m + 1));
    ASSERT_EQ(run_sync(models[m].handle, io, ctrl(0)), 0);
    refs.push_back(io.outputs());
  }

  std::atomic<int> wrong_output{0}, bad_status{0}, callback_count_wrong{0}, deadlocked{0};
  std::atomic<int> completed{0}, cancelled{0}, submitted{0};
  const uint64_t t0 = now_ns();
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      std::mt19937 rng(1000u + static_cast<uint32_t>(th));
      // Two task slots per thread (16 x 2 = the 32-live-task limit), each
      // with buffers for every model.
      struct Slot {
        std::vector<std::unique_ptr<Io>> io;
        hbDNNTaskHandle_t task = nullptr;
        size_t model = 0;
        int action = 0;
        std::unique_ptr<Record> rec;
      };
      Slot slots[2];
      for (Slot& s : slots)
        for (size_t m = 0; m < models.size(); ++m) {
          s.io.push_back(std::make_unique<Io>(models[m].handle));
          s.io.back()->fill_inputs(static_cast<uint32_t>(m + 1));
        }
      auto finish = [&](Slot& s) {
        if (s.task == nullptr) return;
        int32_t rc = 1;
        if (s.action == 0) {
          rc = hbDNNWaitTaskDone(s.task, wait_ms);  // a deadline: a deadlock fails the test
          if (rc == HB_DNN_TIMEOUT && deadlocked++ == 0) {
            const drv::DeviceStats st = rt::current_device()->stats();
            ADD_FAILURE() << "no progress for " << wait_ms << " ms: device " << st.jobs_submitted
                          << " jobs submitted, " << st.jobs_completed << " completed; " << rt::live_task_count() << " live tasks; "
                          << rt::current_device()->describe();
          }
        } else if (s.action == 1) {
          rc = hbDNNWaitTaskDone(s.task, 1);
        }
        EXPECT_EQ(hbDNNReleaseTask(s.task), 0);
        s.task = nullptr;
        // The callback ran exactly once before the release returned.
        if (s.rec->calls.load() != 1) callback_count_wrong++;
        const int32_t st = s.rec->status.load();
        if (rc == 0 && st != 0) bad_status++;
        if (st == 0) {
          completed++;
          if (s.io[s.model]->outputs() != refs[s.model]) wrong_output++;
        } else if (st == HB_DNN_RUN_TASK_FAILED && s.action != 0) {
          cancelled++;
        } else {
          bad_status++;
        }
      };
      for (int i = 0; i < kTasks; ++i) {
        Slot& s = slots[i % 2];
        finish(s);
        s.model = rng() % models.size();
        const uint32_t r = rng() % 100;
        s.action = r < 70 ? 0 : (r < 85 ? 1 : 2);  // wait / short wait then release / release at once
        const int prio = rng() % 10 == 0 ? 255 : static_cast<int>(rng() % 256);
        const int32_t cores[] = {HB_BPU_CORE_ANY, HB_BPU_CORE_0, HB_BPU_CORE_1, HB_BPU_CORE_ANY};
        hbDNNInferCtrlParam p = ctrl(prio, cores[rng() % 4], static_cast<int64_t>(rng() % 5) - 2);
        Io& io = *s.io[s.model];
        io.clear_outputs();
        s.rec = std::make_unique<Record>();
        const int32_t rc = infer(&s.task, models[s.model].handle, io, p);
        if (rc != 0) {
          ADD_FAILURE() << "hbDNNInfer: " << rc;
          s.task = nullptr;
          continue;
        }
        submitted++;
        EXPECT_EQ(hbDNNSetTaskDoneCb(s.task, on_done, s.rec.get()), 0);
      }
      finish(slots[0]);
      finish(slots[1]);
    });
  for (auto& t : threads) t.join();
  const double secs = static_cast<double>(now_ns() - t0) / 1e9;

  EXPECT_EQ(wrong_output.load(), 0);
  EXPECT_EQ(bad_status.load(), 0);
  EXPECT_EQ(callback_count_wrong.load(), 0);
  EXPECT_EQ(deadlocked.load(), 0);
  EXPECT_EQ(submitted.load(), kThreads * kTasks);
  EXPECT_EQ(completed.load() + cancelled.load(), submitted.load());
  EXPECT_GT(completed.load(), submitted.load() / 2);
  EXPECT_EQ(rt::live_task_count(), 0);
  const drv::DeviceStats st = rt::current_device()->stats();
  EXPECT_EQ(st.jobs_submitted, st.jobs_completed);
  EXPECT_EQ(st.jobs_failed, 0u);
  for (auto& m : models) EXPECT_EQ(hbDNNRelease(m.pack), 0);
  std::printf("stress: %d threads x %d tasks in %.2f s (%.0f tasks/s): %d completed, %d cancelled; "
              "device: %llu jobs, %llu fcs, %llu preemptions, %llu steals\n",
              kThreads, kTasks, secs, submitted.load() / secs, completed.load(), cancelled.load(),
              static_cast<unsigned long long>(st.jobs_submitted), static_cast<unsigned long long>(st.fcs_run),
              static_cast<unsigned long long>(st.preemptions), static_cast<unsigned long long>(st.steals));
  ::testing::Test::RecordProperty("seconds", static_cast<int>(secs));
}

}  // namespace
}  // namespace openbpu::sched_test
