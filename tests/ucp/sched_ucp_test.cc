// SPDX-License-Identifier: Apache-2.0
// Scheduling of the UCP generation through its public API only (hobot/*.h,
// libdnn + libhbucp, as an application): priorities and preemption,
// sub-task batches, wait timeouts, callbacks and many threads submitting at
// once. Every output is compared with the same model run alone. Each test
// runs in its own process (gtest_discover_tests). libhbucp reads the
// environment when it is loaded, so the Paced* tests get
// OPENBPU_SIM_PACED=2000 from ctest (tests/ucp/CMakeLists.txt): the long
// model's ~30 function calls then take ~0.3 s, long enough for tasks to
// arrive while it runs. Run under ASan + UBSan and on the aarch64 build
// (ctest -R Ucp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_sys.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string data_path(const std::string& name) { return std::string(OPENBPU_UCP_TESTDATA) + "/" + name; }

// One model of a file (the pack stays loaded for the process).
hbDNNHandle_t load(const std::string& file, const std::string& model) {
  hbDNNPackedHandle_t pack = nullptr;
  const std::string path = data_path(file);
  const char* p = path.c_str();
  EXPECT_EQ(hbDNNInitializeFromFiles(&pack, &p, 1), 0) << path;
  hbDNNHandle_t h = nullptr;
  EXPECT_EQ(hbDNNGetModelHandle(&h, pack, model.c_str()), 0) << model;
  return h;
}

int64_t element_size(int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8:
    case HB_DNN_TENSOR_TYPE_U8: return 1;
    case HB_DNN_TENSOR_TYPE_S16:
    case HB_DNN_TENSOR_TYPE_U16:
    case HB_DNN_TENSOR_TYPE_F16: return 2;
    case HB_DNN_TENSOR_TYPE_F64:
    case HB_DNN_TENSOR_TYPE_S64:
    case HB_DNN_TENSOR_TYPE_U64: return 8;
    default: return 4;
  }
}

// The valid bytes of a tensor, walked by its strides.
std::vector<uint8_t> valid_bytes(const hbDNNTensor& t) {
  const hbDNNTensorProperties& p = t.properties;
  const int n = p.validShape.numDimensions;
  const int64_t es = element_size(p.tensorType);
  std::vector<uint8_t> out;
  std::vector<int32_t> idx(static_cast<size_t>(n), 0);
  const auto* base = static_cast<const uint8_t*>(t.sysMem.virAddr);
  while (true) {
    int64_t off = 0;
    for (int k = 0; k < n; ++k) off += idx[static_cast<size_t>(k)] * p.stride[k];
    out.insert(out.end(), base + off, base + off + es);
    int k = n - 1;
    while (k >= 0 && ++idx[static_cast<size_t>(k)] == p.validShape.dimensionSize[k]) idx[static_cast<size_t>(k--)] = 0;
    if (k < 0) break;
  }
  return out;
}

// Input and output buffers of one model run: dynamic (-1) strides set to
// 32-byte aligned rows, inputs filled from a seed.
struct Io {
  std::vector<hbDNNTensor> in, out;

  Io(hbDNNHandle_t h, uint32_t seed) {
    int32_t nin = 0, nout = 0;
    EXPECT_EQ(hbDNNGetInputCount(&nin, h), 0);
    EXPECT_EQ(hbDNNGetOutputCount(&nout, h), 0);
    in.resize(static_cast<size_t>(nin));
    out.resize(static_cast<size_t>(nout));
    std::mt19937 rng(seed);
    for (int32_t i = 0; i < nin; ++i) {
      hbDNNTensor& t = in[static_cast<size_t>(i)];
      std::memset(&t, 0, sizeof(t));
      EXPECT_EQ(hbDNNGetInputTensorProperties(&t.properties, h, i), 0);
      hbDNNTensorProperties& p = t.properties;
      const int n = p.validShape.numDimensions;
      for (int k = n - 1; k >= 0; --k)
        if (p.stride[k] == -1)
          p.stride[k] = k == n - 1 ? element_size(p.tensorType)
                                   : (p.stride[k + 1] * p.validShape.dimensionSize[k + 1] + 31) / 32 * 32;
      const int64_t size = std::max<int64_t>(p.alignedByteSize, p.stride[0] * p.validShape.dimensionSize[0]);
      EXPECT_EQ(hbUCPMallocCached(&t.sysMem, static_cast<uint64_t>(size), 0), 0);
      auto* b = static_cast<uint8_t*>(t.sysMem.virAddr);
      // Small values: valid for every input type (float featuremaps too).
      for (int64_t k = 0; k < size; ++k) b[k] = p.tensorType == HB_DNN_TENSOR_TYPE_F32 ? 0 : static_cast<uint8_t>(rng());
      if (p.tensorType == HB_DNN_TENSOR_TYPE_F32)
        for (int64_t k = 0; k + 4 <= size; k += 4) {
          const float v = static_cast<float>(rng() % 2001) / 1000.0f - 1.0f;
          std::memcpy(b + k, &v, 4);
        }
      EXPECT_EQ(hbUCPMemFlush(&t.sysMem, HB_SYS_MEM_CACHE_CLEAN), 0);
    }
    for (int32_t i = 0; i < nout; ++i) {
      hbDNNTensor& t = out[static_cast<size_t>(i)];
      std::memset(&t, 0, sizeof(t));
      EXPECT_EQ(hbDNNGetOutputTensorProperties(&t.properties, h, i), 0);
      EXPECT_EQ(hbUCPMallocCached(&t.sysMem, static_cast<uint64_t>(t.properties.alignedByteSize), 0), 0);
    }
  }
  ~Io() {
    for (auto* v : {&in, &out})
      for (hbDNNTensor& t : *v) hbUCPFree(&t.sysMem);
  }
  Io(const Io&) = delete;
  Io& operator=(const Io&) = delete;

  std::vector<uint8_t> outputs() {
    std::vector<uint8_t> all;
    for (hbDNNTensor& t : out) {
      hbUCPMemFlush(&t.sysMem, HB_SYS_MEM_CACHE_INVALIDATE);
      const std::vector<uint8_t> v = valid_bytes(t);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  }
};

hbUCPSchedParam sched(int32_t priority, uint64_t backend = HB_UCP_BPU_CORE_ANY) {
  hbUCPSchedParam p;
  HB_UCP_INITIALIZE_SCHED_PARAM(&p);
  p.priority = priority;
  p.backend = backend;
  return p;
}

// Submits one model run (a new task) with a completion callback.
struct ModelRun {
  hbDNNHandle_t model;
  Io io;
  hbUCPTaskHandle_t task = nullptr;
  ModelRun(hbDNNHandle_t h, uint32_t seed) : model(h), io(h, seed) {}
  void submit(int32_t priority, hbUCPTaskDoneCb cb = nullptr, void* user = nullptr) {
    ASSERT_EQ(hbDNNInferV2(&task, io.out.data(), io.in.data(), model), 0);
    if (cb != nullptr) {
      ASSERT_EQ(hbUCPSetTaskDoneCb(task, cb, user), 0);
    }
    hbUCPSchedParam p = sched(priority);
    ASSERT_EQ(hbUCPSubmitTask(task, &p), 0);
  }
  void finish() {
    EXPECT_EQ(hbUCPWaitTaskDone(task, 0), 0);
    EXPECT_EQ(hbUCPReleaseTask(task), 0);
    task = nullptr;
  }
};

std::vector<uint8_t> reference(hbDNNHandle_t h, uint32_t seed) {
  ModelRun r(h, seed);
  r.submit(0);
  r.finish();
  return r.io.outputs();
}

// Completion order, recorded by the callbacks.
struct Order {
  std::mutex mu;
  std::vector<std::string> done;
};
struct Tag {
  Order* order;
  std::string name;
};
void record(hbUCPTaskHandle_t, int32_t status, void* user) {
  auto* t = static_cast<Tag*>(user);
  std::lock_guard<std::mutex> lock(t->order->mu);
  t->order->done.push_back(t->name + (status == 0 ? "" : "!"));
}

// The Paced* tests need the paced simulator (set by ctest).
void require_paced() { ASSERT_NE(std::getenv("OPENBPU_SIM_PACED"), nullptr) << "run through ctest"; }

TEST(UcpSched, PacedPreemptiveLevelOvertakesARunningTaskOthersWaitInPriorityOrder) {
  require_paced();
  hbDNNHandle_t long_model = load("long_mobilenet.hbm", "long_mobilenet");
  hbDNNHandle_t tiny = load("tiny_cnn.hbm", "tiny_cnn");
  const std::vector<uint8_t> long_ref = reference(long_model, 1);
  std::vector<std::vector<uint8_t>> tiny_ref;
  for (uint32_t s = 0; s < 4; ++s) tiny_ref.push_back(reference(tiny, 10 + s));

  Order order;
  std::vector<Tag> tags = {{&order, "low"}, {&order, "p10"}, {&order, "p200"}, {&order, "p100"}, {&order, "p255"}};
  ModelRun low(long_model, 1);
  const auto t0 = Clock::now();
  low.submit(0, record, &tags[0]);
  // The low task is on the core (its first fcs take the first milliseconds).
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  // The four runs are made (tensors allocated and filled) before any is
  // submitted, so that the submissions fall between two fc boundaries of
  // the running task even under qemu (made one by one between submissions,
  // p200 and p100 once started before p255 was submitted).
  std::vector<std::unique_ptr<ModelRun>> small;
  const int32_t prios[] = {10, 200, 100, 255};
  for (size_t k = 0; k < 4; ++k) small.push_back(std::make_unique<ModelRun>(tiny, 10 + static_cast<uint32_t>(k)));
  for (size_t k = 0; k < 4; ++k) small[k]->submit(prios[k], record, &tags[k + 1]);
  small[3]->finish();
  const double p255_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  low.finish();
  const double low_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  for (auto& r : small) if (r->task) r->finish();
  EXPECT_EQ(low.io.outputs(), long_ref);  // preempted and resumed: bit-identical
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(small[k]->io.outputs(), tiny_ref[k]) << k;
  std::lock_guard<std::mutex> lock(order.mu);
  ASSERT_EQ(order.done.size(), 5u);
  // 255 takes the core at the next fc boundary of the running task; the
  // others wait for it, then start by priority, the preempted task last.
  EXPECT_EQ(order.done, (std::vector<std::string>{"p255", "p200", "p100", "p10", "low"}));
  EXPECT_LT(p255_ms, low_ms);
  std::printf("p255 done after %.1f ms, the low task after %.1f ms; order:", p255_ms, low_ms);
  for (const std::string& s : order.done) std::printf(" %s", s.c_str());
  std::printf("\n");
}

TEST(UcpSched, PacedWaitTimesOutWhileTheTaskRunsAndReleaseCancels) {
  require_paced();
  hbDNNHandle_t long_model = load("long_mobilenet.hbm", "long_mobilenet");
  const std::vector<uint8_t> ref = reference(long_model, 3);
  ModelRun r(long_model, 3);
  r.submit(0);
  const auto t0 = Clock::now();
  EXPECT_EQ(hbUCPWaitTaskDone(r.task, 1), HB_UCP_TASK_TIMEOUT);
  EXPECT_EQ(hbUCPWaitTaskDone(r.task, 2), HB_UCP_TASK_TIMEOUT);  // still running: wait again
  const double waited = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_LT(waited, 1000.0);
  r.finish();
  EXPECT_EQ(r.io.outputs(), ref);
  // Released while running: cancelled at its next fc boundary, callback with
  // a failure status; the buffers may be freed right after the release.
  Order order;
  Tag tag{&order, "cancelled"};
  auto victim = std::make_unique<ModelRun>(long_model, 4);
  victim->submit(0, record, &tag);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(hbUCPReleaseTask(victim->task), 0);
  victim.reset();
  std::lock_guard<std::mutex> lock(order.mu);
  EXPECT_EQ(order.done, std::vector<std::string>{"cancelled!"});  // once, with a failure status
}

// Callbacks: once per submitted task, after its outputs are written, before
// hbUCPWaitTaskDone returns; a callback may release its own task.
struct CbState {
  std::atomic<int> calls{0};
  std::atomic<int> bad{0};
  std::vector<uint8_t> expected;
  hbDNNTensor* out = nullptr;
  bool release = false;
};
void check_outputs(hbUCPTaskHandle_t task, int32_t status, void* user) {
  auto* s = static_cast<CbState*>(user);
  hbUCPMemFlush(&s->out->sysMem, HB_SYS_MEM_CACHE_INVALIDATE);
  if (status != 0 || valid_bytes(*s->out) != s->expected) s->bad++;
  if (s->release && hbUCPReleaseTask(task) != 0) s->bad++;
  s->calls++;  // last: the test frees the state once it sees the call
}

TEST(UcpSched, CallbacksRunOnceWithTheOutputsWritten) {
  hbDNNHandle_t tiny = load("tiny_cnn.hbm", "tiny_cnn");
  const std::vector<uint8_t> ref = reference(tiny, 5);
  for (bool release_in_callback : {false, true}) {
    std::vector<std::unique_ptr<ModelRun>> runs;
    std::vector<std::unique_ptr<CbState>> states;
    for (int k = 0; k < 16; ++k) {
      runs.push_back(std::make_unique<ModelRun>(tiny, 5));
      states.push_back(std::make_unique<CbState>());
      states.back()->expected = ref;
      states.back()->out = &runs.back()->io.out[0];
      states.back()->release = release_in_callback;
      runs.back()->submit(k * 16, check_outputs, states.back().get());
    }
    for (size_t k = 0; k < runs.size(); ++k) {
      if (!release_in_callback) {
        EXPECT_EQ(hbUCPWaitTaskDone(runs[k]->task, 0), 0);
        EXPECT_EQ(states[k]->calls.load(), 1) << "the callback ran before WaitTaskDone returned";
        EXPECT_EQ(hbUCPReleaseTask(runs[k]->task), 0);
      } else {
        for (int spin = 0; spin < 20000 && states[k]->calls.load() == 0; ++spin)
          std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
      EXPECT_EQ(states[k]->calls.load(), 1) << k;
      EXPECT_EQ(states[k]->bad.load(), 0) << k;
    }
  }
}

// Many threads submit single runs and sub-task batches (1-3 models in one
// task) at random priorities and backends, some with callbacks, some waited
// with short timeouts first; every output equals the model run alone.
TEST(UcpSched, ManyThreadsBatchesPrioritiesAndBackends) {
  hbDNNHandle_t models[3] = {load("tiny_cnn.hbm", "tiny_cnn"), load("tiny_cnn_b.hbm", "tiny_cnn_b"),
                             load("nv12_classifier.hbm", "nv12_classifier")};
  std::vector<uint8_t> refs[3];
  for (int m = 0; m < 3; ++m) refs[m] = reference(models[m], 100 + static_cast<uint32_t>(m));
  const int threads = 8, tasks_per_thread = 40;
  std::atomic<int> ok{0}, wrong{0}, errors{0}, callbacks{0}, with_callback{0};
  auto worker = [&](int t) {
    std::mt19937 rng(static_cast<uint32_t>(t) * 7919u + 1);
    for (int k = 0; k < tasks_per_thread; ++k) {
      const int batch = 1 + static_cast<int>(rng() % 3);
      std::vector<int> which;
      std::vector<std::unique_ptr<Io>> ios;
      hbUCPTaskHandle_t task = nullptr;
      for (int b = 0; b < batch; ++b) {
        which.push_back(static_cast<int>(rng() % 3));
        ios.push_back(std::make_unique<Io>(models[which.back()], 100 + static_cast<uint32_t>(which.back())));
        if (hbDNNInferV2(&task, ios.back()->out.data(), ios.back()->in.data(), models[which.back()]) != 0) errors++;
      }
      if (rng() % 2 == 0) {
        with_callback++;
        if (hbUCPSetTaskDoneCb(task, [](hbUCPTaskHandle_t, int32_t, void* c) { ++*static_cast<std::atomic<int>*>(c); },
                               &callbacks) != 0)
          errors++;
      }
      hbUCPSchedParam p = sched(static_cast<int32_t>(rng() % 256), rng() % 2 ? HB_UCP_BPU_CORE_ANY : HB_UCP_BPU_CORE_0);
      if (hbUCPSubmitTask(task, &p) != 0) errors++;
      int32_t rc = rng() % 4 == 0 ? hbUCPWaitTaskDone(task, 1) : HB_UCP_TASK_TIMEOUT;
      if (rc == HB_UCP_TASK_TIMEOUT) rc = hbUCPWaitTaskDone(task, 0);
      if (rc != 0) errors++;
      if (hbUCPReleaseTask(task) != 0) errors++;
      for (int b = 0; b < batch; ++b) (ios[static_cast<size_t>(b)]->outputs() == refs[which[static_cast<size_t>(b)]] ? ok : wrong)++;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(ok.load(), threads * tasks_per_thread);
  EXPECT_EQ(callbacks.load(), with_callback.load());  // each ran before its WaitTaskDone returned
  std::printf("%d model runs in %d tasks, %d callbacks\n", ok.load(), threads * tasks_per_thread, callbacks.load());
}

}  // namespace
