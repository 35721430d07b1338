// SPDX-License-Identifier: Apache-2.0
// The fc scheduler (bpu_driver/scheduler.h) through the device interface,
// on every backend (sim and the timing-only null backend): exact ordering in
// the deterministic (stepped) mode, preemption when paced, core choice, gang
// (core_num 2) jobs, faults, cancellation and shutdown. Checks of computed
// outputs apply to backends that compute (DeviceInfo::computes).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <string>
#include <thread>

#include "tests/scheduling/sched_util.h"

namespace openbpu::sched_test {
namespace {

using drv::Status;

const isa::MarchInfo& b2() { return isa::march_info(isa::March::kBernoulli2); }

// The scheduler over the backend under test.
class SchedDevice : public ::testing::TestWithParam<const char*> {
 protected:
  std::unique_ptr<drv::Scheduler> device(const drv::SchedulerOptions& o, const isa::MarchInfo& m = b2()) {
    drv::DeviceOptions d;
    d.backend = GetParam();
    d.scheduler = o;
    std::string err;
    auto dev = drv::create_device(m, d, &err);
    EXPECT_TRUE(dev) << err;
    return dev;
  }
  std::unique_ptr<drv::Scheduler> stepped_device(const isa::MarchInfo& m = b2()) {
    drv::SchedulerOptions o;
    o.stepped = true;
    return device(o, m);
  }
  bool computes() const { return std::string(GetParam()) != "null"; }
};

// Collects job results (thread-safe).
struct Results {
  std::mutex mu;
  std::condition_variable cv;
  std::map<int, std::vector<drv::JobResult>> by_tag;
  std::function<void(const drv::JobResult&)> cb(int tag) {
    return [this, tag](const drv::JobResult& r) {
      std::lock_guard<std::mutex> lk(mu);
      by_tag[tag].push_back(r);
      cv.notify_all();
    };
  }
  size_t count(int tag) {
    std::lock_guard<std::mutex> lk(mu);
    return by_tag[tag].size();
  }
  drv::JobResult get(int tag) {
    std::lock_guard<std::mutex> lk(mu);
    return by_tag[tag].empty() ? drv::JobResult{} : by_tag[tag].back();
  }
  bool wait(int tag, int ms) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, std::chrono::milliseconds(ms), [&] { return !by_tag[tag].empty(); });
  }
};

// Steps core 0 until nothing is left; returns the job ids in fc order.
std::vector<drv::JobId> drain(drv::Scheduler* dev, int core = 0) {
  std::vector<drv::JobId> order;
  drv::TraceEvent ev;
  while (dev->step(core, 0, &ev)) order.push_back(ev.job);
  return order;
}

TEST_P(SchedDevice, SteppedOrderIsPriorityThenCustomIdThenFifo) {
  auto dev = stepped_device();
  ChainProgram p3(dev.get(), 3, 1000), p2(dev.get(), 2, 1000), p1(dev.get(), 1, 1000);
  Results res;
  auto submit = [&](const ChainProgram& p, int prio, int64_t cid, int tag) {
    drv::Job j = p.job(prio, res.cb(tag), /*core_mask=*/1);
    j.custom_id = cid;
    return dev->submit(std::move(j));
  };
  const drv::JobId a = submit(p3, 0, 0, 0);
  drv::TraceEvent ev;
  ASSERT_TRUE(dev->step(0, 0, &ev));
  EXPECT_EQ(ev.job, a);
  EXPECT_EQ(ev.fc, 0u);
  // While A is mid-program: non-preemptive priorities wait for it, the
  // preemptive level takes the core at the next fc boundary.
  const drv::JobId b = submit(p2, 10, 0, 1);
  const drv::JobId c = submit(p2, 10, -1, 2);
  const drv::JobId d = submit(p2, 10, 0, 3);
  const drv::JobId e = submit(p1, 5, 0, 4);
  const drv::JobId f = submit(p2, 255, 0, 5);
  const drv::JobId g = submit(p1, 255, 0, 6);
  const std::vector<drv::JobId> order = drain(dev.get());
  // F preempts A at once; G (same level, later) does not preempt F; then the
  // ready queue in (priority desc, customId asc, FIFO) order; A resumes last
  // (lowest priority) from its next fc.
  const std::vector<drv::JobId> want = {f, f, g, c, c, b, b, d, d, e, a, a};
  EXPECT_EQ(order, want);
  EXPECT_EQ(dev->stats().preemptions, 1u);
  for (int tag = 0; tag <= 6; ++tag) {
    ASSERT_EQ(res.count(tag), 1u) << tag;
    EXPECT_EQ(res.get(tag).status, Status::kOk) << tag;
  }
  EXPECT_EQ(res.get(0).preemptions, 1u);
}

TEST_P(SchedDevice, StartedJobKeepsCoreAgainstHigherNonPreemptivePriority) {
  auto dev = stepped_device();
  ChainProgram low(dev.get(), 4, 1000), high(dev.get(), 1, 1000);
  Results res;
  const drv::JobId l = dev->submit(low.job(0, res.cb(0), 1));
  drv::TraceEvent ev;
  ASSERT_TRUE(dev->step(0, 0, &ev));
  const drv::JobId h = dev->submit(high.job(254, res.cb(1), 1));
  EXPECT_EQ(drain(dev.get()), (std::vector<drv::JobId>{l, l, l, h}));
  EXPECT_EQ(dev->stats().preemptions, 0u);
}

TEST_P(SchedDevice, PreemptiveJobsDoNotPreemptEachOther) {
  auto dev = stepped_device();
  ChainProgram a(dev.get(), 3, 1000), b(dev.get(), 1, 1000);
  Results res;
  const drv::JobId x = dev->submit(a.job(255, res.cb(0), 1));
  drv::TraceEvent ev;
  ASSERT_TRUE(dev->step(0, 0, &ev));
  const drv::JobId y = dev->submit(b.job(255, res.cb(1), 1));
  EXPECT_EQ(drain(dev.get()), (std::vector<drv::JobId>{x, x, y}));
}

TEST_P(SchedDevice, PreemptedJobResumesWithBitIdenticalResult) {
  auto dev = stepped_device();
  constexpr int kFcs = 12;
  ChainProgram ref(dev.get(), kFcs, 1000, /*seed=*/9);
  Results res;
  dev->submit(ref.job(0, res.cb(0), 1));
  drain(dev.get());
  ASSERT_EQ(res.get(0).status, Status::kOk);
  const std::vector<uint8_t> want = ref.output();
  // The same computation preempted at every boundary k by another job that
  // runs the same program on its own buffers.
  for (int k = 1; k < kFcs; ++k) {
    ChainProgram low(dev.get(), kFcs, 1000, 9), high(dev.get(), kFcs, 1000, 100 + k);
    dev->submit(low.job(3, res.cb(10 + k), 1));
    drv::TraceEvent ev;
    for (int i = 0; i < k; ++i) ASSERT_TRUE(dev->step(0, 0, &ev));
    const drv::JobId h = dev->submit(high.job(255, res.cb(100 + k), 1));
    ASSERT_TRUE(dev->step(0, 0, &ev));
    EXPECT_EQ(ev.job, h);
    drain(dev.get());
    EXPECT_EQ(res.get(10 + k).status, Status::kOk);
    EXPECT_EQ(res.get(10 + k).preemptions, 1u);
    if (computes()) {
      EXPECT_EQ(low.output(), want) << "preempted after fc " << k;
    }
  }
}

TEST_P(SchedDevice, PacedPreemptionLatencyIsOneFcPlusOwnTime) {
  drv::SchedulerOptions o;
  o.paced = true;
  auto dev = device(o);
  TraceLog trace;
  trace.install(dev.get());
  // Board estimates: the low job is 40 fcs of 2 ms, the urgent one 1 fc of
  // 0.2 ms (bernoulli2 runs at 1000 MHz: one cycle per ns).
  constexpr uint64_t kLowFcNs = 2'000'000, kHighNs = 200'000;
  ChainProgram low(dev.get(), 40, kLowFcNs), high(dev.get(), 1, kHighNs);
  std::mt19937 rng(5);
  std::vector<double> latency_ms;
  for (int round = 0; round < 6; ++round) {
    Results res;
    dev->submit(low.job(0, res.cb(0), 1));
    std::this_thread::sleep_for(std::chrono::microseconds(2500 + rng() % 20000));
    const uint64_t t_submit = now_ns();
    const drv::JobId h = dev->submit(high.job(255, res.cb(1), 1));
    ASSERT_TRUE(res.wait(1, 10000));
    const uint64_t t_done = now_ns();
    ASSERT_TRUE(res.wait(0, 10000));
    ASSERT_EQ(res.get(1).status, Status::kOk);
    ASSERT_EQ(res.get(0).status, Status::kOk);
    latency_ms.push_back(static_cast<double>(t_done - t_submit) / 1e6);
    // Exact: no fc of the low job started between the urgent job's
    // submission and its first fc.
    uint64_t h_submit = 0, h_start = 0;
    for (const auto& e : trace.events()) {
      if (e.job == h && e.kind == drv::TraceEvent::Kind::kSubmit) h_submit = e.t0_ns;
      if (e.job == h && e.kind == drv::TraceEvent::Kind::kFc) h_start = e.t0_ns;
    }
    ASSERT_NE(h_start, 0u);
    for (const auto& e : trace.events()) {
      if (e.kind == drv::TraceEvent::Kind::kFc && e.job != h) {
        EXPECT_FALSE(e.t0_ns > h_submit && e.t0_ns < h_start) << "low fc " << e.fc << " started in between";
      }
    }
    trace.clear();
  }
  // One low fc (2 ms) + own time (0.2 ms) + a generous margin for a loaded
  // host; without preemption the wait would be the rest of the 80 ms low job
  // (at least 57 ms). The median of the 6 rounds is bounded: a host that
  // stalls the process once (measured: 53 ms in one round under load) does
  // not fail the test, a scheduler that does not preempt fails every round.
  const double bound_ms = (kLowFcNs + kHighNs) / 1e6 + 20.0 * slowdown();
  std::vector<double> sorted = latency_ms;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_LE(sorted[sorted.size() / 2], bound_ms) << ::testing::PrintToString(latency_ms);
  for (double l : latency_ms) EXPECT_GE(l, kHighNs / 1e6 * 0.95);
  const double worst = *std::max_element(latency_ms.begin(), latency_ms.end());
  RecordProperty("max_latency_us", static_cast<int>(worst * 1000));
}

TEST_P(SchedDevice, AnyCoreGoesToLeastLoadedAndIdleCoreSteals) {
  auto dev = stepped_device();
  TraceLog trace;
  trace.install(dev.get());
  ChainProgram big(dev.get(), 4, 100000), small(dev.get(), 1, 1000), small2(dev.get(), 1, 1000);
  Results res;
  dev->submit(big.job(0, res.cb(0)));     // both idle: core 0
  dev->submit(small.job(0, res.cb(1)));   // core 1 (less queued work)
  dev->submit(small2.job(0, res.cb(2)));  // core 1 again (1000 < 400000 cycles)
  std::vector<int> homes;
  for (const auto& e : trace.events())
    if (e.kind == drv::TraceEvent::Kind::kSubmit) homes.push_back(e.core);
  EXPECT_EQ(homes, (std::vector<int>{0, 1, 1}));
  EXPECT_NEAR(dev->queued_us(0), 2.0, 0.01);  // least loaded core: 2 small jobs of 1000 cycles
  // Core 0 runs its own job; then, idle, it takes core 1's unstarted work.
  drv::TraceEvent ev;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(dev->step(0, 0, &ev));
  ASSERT_TRUE(dev->step(0, 0, &ev));
  EXPECT_EQ(ev.core, 0);
  EXPECT_EQ(dev->stats().steals, 1u);
  // A job pinned to core 1 is never taken by core 0.
  ChainProgram pinned(dev.get(), 1, 1000);
  dev->submit(pinned.job(0, res.cb(3), 2));
  drain(dev.get(), 0);
  EXPECT_EQ(res.count(3), 0u);
  ASSERT_TRUE(dev->step(1, 0, &ev));
  EXPECT_EQ(res.count(3), 1u);
}

TEST_P(SchedDevice, RejectsInvalidJobs) {
  auto dev = stepped_device();
  ChainProgram p(dev.get(), 1, 1000);
  Results res;
  drv::Job j = p.job(0, res.cb(0), 4);  // core 2 does not exist
  EXPECT_EQ(dev->submit(j), 0u);
  j = p.job(256, res.cb(0));
  EXPECT_EQ(dev->submit(j), 0u);
  j = p.job(-1, res.cb(0));
  EXPECT_EQ(dev->submit(j), 0u);
  j = p.job(0, res.cb(0), 1);
  j.cores = 2;  // a gang job cannot be pinned to one core
  EXPECT_EQ(dev->submit(j), 0u);
  j = p.job(0, res.cb(0));
  j.cores = 3;
  EXPECT_EQ(dev->submit(j), 0u);
  auto single = stepped_device(isa::march_info(isa::March::kBayesE));
  ChainProgram q(single.get(), 1, 1000);
  j = q.job(0, res.cb(0));
  j.cores = 2;  // needs two cores
  EXPECT_EQ(single->submit(j), 0u);
  j = q.job(0, res.cb(0), 2);
  EXPECT_EQ(single->submit(j), 0u);
  EXPECT_EQ(res.count(0), 0u);
}

TEST_P(SchedDevice, GangJobHoldsBothCores) {
  auto dev = stepped_device();
  ChainProgram gang(dev.get(), 3, 1000, 4), solo(dev.get(), 1, 1000), ref(dev.get(), 3, 1000, 4);
  Results res;
  dev->submit(ref.job(0, res.cb(9), 1));
  drain(dev.get());
  drv::Job g = gang.job(10, res.cb(0));
  g.cores = 2;
  const drv::JobId gid = dev->submit(std::move(g));
  ASSERT_NE(gid, 0u);
  const drv::JobId sid = dev->submit(solo.job(0, res.cb(1), 2));  // pinned to core 1, lower priority
  drv::TraceEvent ev;
  EXPECT_FALSE(dev->step(0, 0, &ev));  // core 0 holds the gang job, waits for core 1
  ASSERT_TRUE(dev->step(1, 0, &ev));   // core 1 joins: the fc runs on both
  EXPECT_EQ(ev.job, gid);
  EXPECT_EQ(ev.cores, 2);
  ASSERT_TRUE(dev->step(0, 0, &ev));
  EXPECT_EQ(ev.job, gid);
  ASSERT_TRUE(dev->step(1, 0, &ev));
  EXPECT_EQ(ev.job, gid);
  EXPECT_EQ(res.get(0).status, Status::kOk);
  if (computes()) {
    EXPECT_EQ(gang.output(), ref.output());
  }
  ASSERT_TRUE(dev->step(1, 0, &ev));
  EXPECT_EQ(ev.job, sid);
}

// A started gang job preempted on one core (by a pinned preemptive job) still
// binds that core: afterwards it resumes there before a better unstarted
// gang job, else the two cores would wait for two different gang jobs.
TEST_P(SchedDevice, PreemptedGangJobResumesBeforeOtherGangJobs) {
  auto dev = stepped_device();
  ChainProgram g1p(dev.get(), 4, 1000), g2p(dev.get(), 1, 1000), pp(dev.get(), 1, 1000);
  Results res;
  drv::Job j = g1p.job(0, res.cb(0));
  j.cores = 2;
  const drv::JobId g1 = dev->submit(std::move(j));
  std::vector<drv::JobId> order;
  drv::TraceEvent ev;
  EXPECT_FALSE(dev->step(0, 0, &ev));
  ASSERT_TRUE(dev->step(1, 0, &ev));
  order.push_back(ev.job);
  const drv::JobId p = dev->submit(pp.job(255, res.cb(1), 1));
  ASSERT_TRUE(dev->step(0, 0, &ev));
  order.push_back(ev.job);
  j = g2p.job(200, res.cb(2));
  j.cores = 2;
  const drv::JobId g2 = dev->submit(std::move(j));
  for (int i = 0; i < 8; ++i) {
    if (dev->step(i % 2, 0, &ev)) order.push_back(ev.job);
  }
  EXPECT_EQ(order, (std::vector<drv::JobId>{g1, p, g1, g1, g1, g2}));
  for (int tag = 0; tag < 3; ++tag) EXPECT_EQ(res.get(tag).status, Status::kOk) << tag;
}

TEST_P(SchedDevice, PacedGangFcTakesHalfTheEstimateAndExcludesOtherWork) {
  drv::SchedulerOptions o;
  o.paced = true;
  auto dev = device(o);
  TraceLog trace;
  trace.install(dev.get());
  // 40 ms and 10 ms fcs: long against the host's own work per fc, which
  // under ASan on a loaded host took ~2 ms (4 ms fcs measured 3.96 ms paced
  // to 2 ms).
  ChainProgram gang(dev.get(), 4, 40'000'000), solo(dev.get(), 2, 10'000'000);
  Results res;
  drv::Job g = gang.job(0, res.cb(0));
  g.cores = 2;
  const uint64_t t0 = now_ns();
  dev->submit(std::move(g));
  // Submit the pinned job once the gang job has finished its first fc, so a
  // loaded host cannot let it start before the gang job holds both cores.
  const auto gang_started = [&trace] {
    for (const auto& e : trace.events())
      if (e.kind == drv::TraceEvent::Kind::kFc && e.cores == 2) return true;
    return false;
  };
  for (int i = 0; i < 10000 && !gang_started(); ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  ASSERT_TRUE(gang_started());
  dev->submit(solo.job(0, res.cb(1), 2));
  ASSERT_TRUE(res.wait(0, 10000));
  ASSERT_TRUE(res.wait(1, 10000));
  const double gang_ms = static_cast<double>(res.get(0).end_ns - t0) / 1e6;
  EXPECT_GE(gang_ms, 4 * 20.0 * 0.95);  // 4 fcs of 40 ms split over two cores
  // Each fc is paced to 20 ms: the shortest one (the least disturbed by a
  // loaded host) ends well before the single-core 40 ms.
  double shortest_ms = 1e9;
  int gang_fcs = 0;
  for (const auto& e : trace.events()) {
    if (e.kind != drv::TraceEvent::Kind::kFc || e.cores != 2) continue;
    ++gang_fcs;
    shortest_ms = std::min(shortest_ms, static_cast<double>(e.t1_ns - e.t0_ns) / 1e6);
  }
  EXPECT_EQ(gang_fcs, 4);
  EXPECT_GE(shortest_ms, 19.5);
  EXPECT_LT(shortest_ms, 35.0);
  // The job pinned to core 1 ran after the gang job's last fc (the gang job
  // held core 1 too, and came first). Device timestamps of the fcs, not the
  // completion times, which a slow host (qemu) delays.
  uint64_t gang_end = 0, solo_start = UINT64_MAX;
  std::string fcs;
  for (const auto& e : trace.events()) {
    if (e.kind != drv::TraceEvent::Kind::kFc) continue;
    fcs += "  fc " + std::to_string(e.fc) + " cores " + std::to_string(e.cores) + " core " + std::to_string(e.core) +
           " [" + std::to_string((e.t0_ns - t0) / 1000) + ", " + std::to_string((e.t1_ns - t0) / 1000) + "] us\n";
    if (e.cores == 2) gang_end = std::max(gang_end, e.t1_ns);
    if (e.cores == 1) solo_start = std::min(solo_start, e.t0_ns);
  }
  EXPECT_GE(solo_start, gang_end) << fcs;
}

TEST_P(SchedDevice, FailingFcFailsItsJobResetsCoreAndLaterJobsRun) {
  for (const bool stepped : {true, false}) {
    drv::SchedulerOptions o;
    o.stepped = stepped;
    auto dev = device(o);
    ChainProgram bad(dev.get(), 5, 1000), good(dev.get(), 5, 1000, 3), ref(dev.get(), 5, 1000, 3);
    Results res;
    dev->submit(ref.job(0, res.cb(9), 1));
    if (stepped) {
      drain(dev.get());
    }
    ASSERT_TRUE(res.wait(9, 10000));
    dev->set_fault_hook([&](const drv::FcInfo& f) {
      return f.program == bad.program.get() && f.fc == 2 ? drv::Fault::kFail : drv::Fault::kNone;
    });
    dev->submit(bad.job(0, res.cb(0), 1));
    dev->submit(good.job(0, res.cb(1), 1));
    if (stepped) {
      drain(dev.get());
    }
    ASSERT_TRUE(res.wait(0, 10000));
    ASSERT_TRUE(res.wait(1, 10000));
    EXPECT_EQ(res.get(0).status, Status::kFault);
    EXPECT_NE(res.get(0).message.find("function call 2"), std::string::npos) << res.get(0).message;
    EXPECT_EQ(res.get(1).status, Status::kOk);
    if (computes()) {
      EXPECT_EQ(good.output(), ref.output());
    }
    const drv::DeviceStats st = dev->stats();
    EXPECT_EQ(st.core_resets, 1u);
    EXPECT_EQ(st.jobs_failed, 1u);
    EXPECT_EQ(st.jobs_submitted, st.jobs_completed);
  }
}

TEST_P(SchedDevice, HungFcIsEndedByWatchdogOrJobTimeout) {
  drv::SchedulerOptions o;
  o.watchdog_us = 60'000;
  auto dev = device(o);
  ChainProgram hang(dev.get(), 3, 1000), good(dev.get(), 3, 1000, 3), ref(dev.get(), 3, 1000, 3);
  Results res;
  dev->submit(ref.job(0, res.cb(9), 1));
  ASSERT_TRUE(res.wait(9, 10000));
  dev->set_fault_hook([&](const drv::FcInfo& f) {
    return f.program == hang.program.get() && f.fc == 1 ? drv::Fault::kHang : drv::Fault::kNone;
  });
  // No job timeout: the device watchdog (60 ms) resets the core.
  uint64_t t0 = now_ns();
  dev->submit(hang.job(0, res.cb(0), 1));
  dev->submit(good.job(0, res.cb(1), 1));
  ASSERT_TRUE(res.wait(0, 10000));
  double ms = static_cast<double>(now_ns() - t0) / 1e6;
  EXPECT_EQ(res.get(0).status, Status::kTimeout);
  EXPECT_GE(ms, 59.0);
  ASSERT_TRUE(res.wait(1, 10000));
  EXPECT_EQ(res.get(1).status, Status::kOk);
  if (computes()) {
    EXPECT_EQ(good.output(), ref.output());
  }
  // With a job timeout of 10 ms the fc ends after it.
  drv::Job j = hang.job(0, res.cb(2), 2);
  j.fc_timeout_us = 10'000;
  t0 = now_ns();
  dev->submit(std::move(j));
  ASSERT_TRUE(res.wait(2, 10000));
  ms = static_cast<double>(now_ns() - t0) / 1e6;
  EXPECT_EQ(res.get(2).status, Status::kTimeout);
  EXPECT_GE(ms, 9.5);
  EXPECT_LT(ms, 55.0 * slowdown());
  EXPECT_EQ(dev->stats().core_resets, 2u);
}

TEST_P(SchedDevice, CancelEndsAHungFcAtOnce) {
  drv::SchedulerOptions o;
  o.watchdog_us = 20'000'000;
  auto dev = device(o);
  ChainProgram hang(dev.get(), 2, 1000), good(dev.get(), 1, 1000);
  Results res;
  std::atomic<int> entered{0};
  dev->set_fault_hook([&](const drv::FcInfo& f) {
    if (f.program != hang.program.get()) return drv::Fault::kNone;
    entered++;
    return drv::Fault::kHang;
  });
  const drv::JobId id = dev->submit(hang.job(0, res.cb(0), 1));
  while (entered.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const uint64_t t0 = now_ns();
  EXPECT_TRUE(dev->cancel(id));
  ASSERT_TRUE(res.wait(0, 5000));
  EXPECT_LT(static_cast<double>(now_ns() - t0) / 1e6, 1000.0);
  EXPECT_EQ(res.get(0).status, Status::kCancelled);
  EXPECT_FALSE(dev->cancel(id));
  dev->submit(good.job(0, res.cb(1), 1));
  ASSERT_TRUE(res.wait(1, 5000));
  EXPECT_EQ(res.get(1).status, Status::kOk);
}

TEST_P(SchedDevice, SlowFcOverItsTimeoutFails) {
  drv::SchedulerOptions o;
  o.paced = true;
  auto dev = device(o);
  ChainProgram slow(dev.get(), 2, 5'000'000);  // 5 ms per fc
  Results res;
  drv::Job j = slow.job(0, res.cb(0));
  j.fc_timeout_us = 1000;
  dev->submit(std::move(j));
  ASSERT_TRUE(res.wait(0, 10000));
  EXPECT_EQ(res.get(0).status, Status::kTimeout);
  EXPECT_NE(res.get(0).message.find("over its timeout"), std::string::npos) << res.get(0).message;
}

TEST_P(SchedDevice, CancelQueuedAndHeldJobs) {
  auto dev = stepped_device();
  ChainProgram a(dev.get(), 3, 1000), b(dev.get(), 1, 1000);
  Results res;
  const drv::JobId x = dev->submit(a.job(0, res.cb(0), 1));
  const drv::JobId y = dev->submit(b.job(0, res.cb(1), 1));
  EXPECT_TRUE(dev->cancel(y));  // queued: completes before cancel returns
  EXPECT_EQ(res.count(1), 1u);
  EXPECT_EQ(res.get(1).status, Status::kCancelled);
  EXPECT_EQ(res.get(1).start_ns, 0u);
  drv::TraceEvent ev;
  ASSERT_TRUE(dev->step(0, 0, &ev));
  EXPECT_TRUE(dev->cancel(x));  // between two fcs
  EXPECT_EQ(res.get(0).status, Status::kCancelled);
  EXPECT_FALSE(dev->cancel(x));
  EXPECT_FALSE(dev->cancel(12345));
  EXPECT_FALSE(dev->step(0, 0, &ev));
  const drv::DeviceStats st = dev->stats();
  EXPECT_EQ(st.jobs_cancelled, 2u);
  EXPECT_EQ(st.jobs_submitted, st.jobs_completed);
}

TEST_P(SchedDevice, ShutdownCompletesEveryPendingJobOnce) {
  Results res;
  auto dev = stepped_device();
  auto memory = stepped_device();  // frees the program's buffers after `dev` is gone
  {
    ChainProgram a(dev.get(), 3, 1000);
    for (int i = 0; i < 5; ++i) dev->submit(a.job(i, res.cb(i)));
    drv::TraceEvent ev;
    ASSERT_TRUE(dev->step(0, 0, &ev));
    dev.reset();
    a.dev = memory.get();
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(res.count(i), 1u);
    EXPECT_EQ(res.get(i).status, Status::kCancelled);
  }
}

// Many threads submitting, cancelling and injecting faults: every job
// completes exactly once; results of successful jobs are right.
TEST_P(SchedDevice, ConcurrentSubmitCancelFaults) {
  drv::SchedulerOptions o;
  o.watchdog_us = 5'000;
  auto dev = device(o);
  constexpr int kThreads = 6, kJobs = 150;
  // Per thread: a program run once for its expected output, then reused.
  std::vector<std::unique_ptr<ChainProgram>> progs, refs;
  for (int t = 0; t < kThreads; ++t) {
    progs.push_back(std::make_unique<ChainProgram>(dev.get(), 1 + t % 4, 500, 50 + t));
    refs.push_back(std::make_unique<ChainProgram>(dev.get(), 1 + t % 4, 500, 50 + t));
    Results res;
    dev->submit(refs[t]->job(0, res.cb(0)));
    ASSERT_TRUE(res.wait(0, 10000));
  }
  std::atomic<int> hang_budget{10};
  dev->set_fault_hook([&](const drv::FcInfo& f) {
    const uint64_t h = (f.job * 2654435761u) % 1000;
    if (h < 8) return drv::Fault::kFail;
    if (h < 10 && hang_budget.fetch_sub(1) > 0) return drv::Fault::kHang;
    return drv::Fault::kNone;
  });
  std::atomic<int> bad{0}, done_twice{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      ChainProgram& p = *progs[t];
      std::mutex mu;
      std::condition_variable cv;
      int calls = 0;
      drv::Status last = Status::kOk;
      for (int i = 0; i < kJobs; ++i) {
        std::memset(p.out.vir, 0, p.out.size);
        drv::Job j = p.job(static_cast<int>(rng() % 256), [&](const drv::JobResult& r) {
          std::lock_guard<std::mutex> lk(mu);
          if (++calls > 1) done_twice++;
          last = r.status;
          cv.notify_all();
        }, static_cast<uint32_t>(rng() % 4));
        if (rng() % 5 == 0 && (t % 2) == 0) {
          j.core_mask = 0;
          j.cores = 2;
        }
        const drv::JobId id = dev->submit(std::move(j));
        if (id == 0) {
          bad++;
          continue;
        }
        if (rng() % 4 == 0) dev->cancel(id);
        std::unique_lock<std::mutex> lk(mu);
        if (!cv.wait_for(lk, std::chrono::seconds(60), [&] { return calls >= 1; })) bad++;
        if (last == Status::kOk && computes() && p.output() != refs[t]->output()) bad++;
        calls = 0;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(done_twice.load(), 0);
  const drv::DeviceStats st = dev->stats();
  EXPECT_EQ(st.jobs_submitted, st.jobs_completed);
  EXPECT_GT(st.fcs_run, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, SchedDevice, ::testing::Values("sim", "null"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// The null backend computes nothing but gives every fc its board time, paced
// or not.
TEST(SchedNullBackend, TakesBoardTimeAndComputesNothing) {
  drv::DeviceOptions d;
  d.backend = "null";
  std::string err;
  auto dev = drv::create_device(b2(), d, &err);
  ASSERT_TRUE(dev) << err;
  EXPECT_FALSE(dev->info().computes);
  EXPECT_EQ(dev->info().backend, "null");
  TraceLog trace;
  trace.install(dev.get());
  constexpr uint64_t kFcNs = 3'000'000;  // 3 ms per fc at 1000 MHz
  ChainProgram p(dev.get(), 3, kFcNs);
  std::memset(p.out.vir, 0x5A, p.out.size);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  drv::Status status = Status::kCancelled;
  dev->submit(p.job(0, [&](const drv::JobResult& r) {
    std::lock_guard<std::mutex> lk(mu);
    status = r.status;
    done = true;
    cv.notify_all();
  }));
  {
    std::unique_lock<std::mutex> lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return done; }));
  }
  EXPECT_EQ(status, Status::kOk);
  int fcs = 0;
  for (const auto& e : trace.events()) {
    if (e.kind != drv::TraceEvent::Kind::kFc) continue;
    ++fcs;
    EXPECT_GE(e.t1_ns - e.t0_ns, kFcNs) << "fc " << e.fc;
  }
  EXPECT_EQ(fcs, 3);
  for (uint8_t b : p.output()) ASSERT_EQ(b, 0x5A);  // not computed
}

TEST(SchedNullBackend, UnknownBackendsAndOptionsAreErrors) {
  std::string err;
  drv::DeviceOptions d;
  d.backend = "board";
  EXPECT_FALSE(drv::create_device(b2(), d, &err));
  EXPECT_NE(err.find("'board'"), std::string::npos) << err;
  EXPECT_NE(err.find("sim, null"), std::string::npos) << err;
  d.backend = "null";
  d.backend_options.kernels = "reference";
  EXPECT_FALSE(drv::create_device(b2(), d, &err));
  d.backend = "sim";
  d.backend_options.kernels = "no-such-table";
  EXPECT_FALSE(drv::create_device(b2(), d, &err));
  EXPECT_NE(err.find("reference"), std::string::npos) << err;  // lists the available tables
  d.backend_options.kernels = "reference";
  auto dev = drv::create_device(b2(), d, &err);
  EXPECT_TRUE(dev) << err;
}

}  // namespace
}  // namespace openbpu::sched_test
