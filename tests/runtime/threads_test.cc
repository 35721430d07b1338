// SPDX-License-Identifier: Apache-2.0
// Several threads running tasks on the same model and on different models at
// once give results identical to the single-threaded run (and to the
// independently computed expectation).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "tests/common/dnn_calls.h"
#include "tests/common/test_models.h"

namespace {

using openbpu::testing::TinyCnn;

struct Loaded {
  hbPackedDNNHandle_t pack = nullptr;
  hbDNNHandle_t handle = nullptr;
};

Loaded load(const std::vector<uint8_t>& bytes, const char* name) {
  Loaded l;
  const void* data = bytes.data();
  int32_t len = static_cast<int32_t>(bytes.size());
  EXPECT_EQ(hbDNNInitializeFromDDR(&l.pack, &data, &len, 1), 0);
  EXPECT_EQ(hbDNNGetModelHandle(&l.handle, l.pack, name), 0);
  return l;
}

// One inference with freshly allocated buffers; returns the float output.
std::vector<float> infer(hbDNNHandle_t h, const std::vector<float>& input, int priority) {
  std::vector<float> out;
  EXPECT_EQ(openbpu::testing::infer_once(h, input, priority, &out), 0);
  return out;
}

TEST(Threads, SameAndDifferentModelsGiveIdenticalResults) {
  TinyCnn a;
  TinyCnn b;
  b.name = "tiny_b";
  b.seed = 3;
  b.h = 16;
  b.w = 10;
  const Loaded la = load(a.build(), "tiny_cnn");
  const Loaded lb = load(b.build(), "tiny_b");
  const std::vector<float> xa = a.random_input(21), xb = b.random_input(22);
  const std::vector<float> ref_a = infer(la.handle, xa, 0), ref_b = infer(lb.handle, xb, 0);
  ASSERT_EQ(ref_a, a.expected(xa));
  ASSERT_EQ(ref_b, b.expected(xb));

  constexpr int kThreads = 8, kIters = 60;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        const bool use_a = (t + i) % 2 == 0;
        const auto got = use_a ? infer(la.handle, xa, (t * 37 + i) % 256) : infer(lb.handle, xb, i % 256);
        if (got != (use_a ? ref_a : ref_b)) mismatches++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(hbDNNRelease(la.pack), 0);
  EXPECT_EQ(hbDNNRelease(lb.pack), 0);
}

// Many tasks in flight from one thread: submit a batch, then wait for all.
TEST(Threads, ManyTasksInFlight) {
  TinyCnn a;
  const Loaded la = load(a.build(), "tiny_cnn");
  const std::vector<float> x = a.random_input(3);
  const std::vector<float> expected = a.expected(x);
  constexpr int kTasks = 32;
  std::vector<hbDNNTensor> in(kTasks), out(kTasks);
  std::vector<hbDNNTaskHandle_t> tasks(kTasks, nullptr);
  for (int i = 0; i < kTasks; ++i) {
    in[i] = hbDNNTensor{};
    out[i] = hbDNNTensor{};
    ASSERT_EQ(hbDNNGetInputTensorProperties(&in[i].properties, la.handle, 0), 0);
    ASSERT_EQ(hbDNNGetOutputTensorProperties(&out[i].properties, la.handle, 0), 0);
    ASSERT_EQ(hbSysAllocCachedMem(&in[i].sysMem[0], static_cast<uint32_t>(in[i].properties.alignedByteSize)), 0);
    ASSERT_EQ(hbSysAllocCachedMem(&out[i].sysMem[0], static_cast<uint32_t>(out[i].properties.alignedByteSize)), 0);
    std::memcpy(in[i].sysMem[0].virAddr, x.data(), x.size() * 4);
    hbDNNInferCtrlParam param;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
    param.bpuCoreId = i % 3;  // any, core 0, core 1
    hbDNNTensor* outp = &out[i];
    ASSERT_EQ(hbDNNInfer(&tasks[i], &outp, &in[i], la.handle, &param), 0);
  }
  hbDNNTaskHandle_t extra = nullptr;
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  hbDNNTensor* outp = &out[0];
  EXPECT_EQ(hbDNNInfer(&extra, &outp, &in[0], la.handle, &param), HB_DNN_TASK_NUM_EXCEED_LIMIT);
  EXPECT_EQ(extra, nullptr);
  for (int i = kTasks; i-- > 0;) {
    ASSERT_EQ(hbDNNWaitTaskDone(tasks[i], 0), 0);
    ASSERT_EQ(hbDNNReleaseTask(tasks[i]), 0);
    const float* p = static_cast<const float*>(out[i].sysMem[0].virAddr);
    EXPECT_EQ(std::vector<float>(p, p + expected.size()), expected) << "task " << i;
    hbSysFreeMem(&in[i].sysMem[0]);
    hbSysFreeMem(&out[i].sysMem[0]);
  }
  EXPECT_EQ(hbDNNRelease(la.pack), 0);
}

// Releasing tasks before they finish cancels them safely; later tasks run.
TEST(Threads, ReleaseWhileRunning) {
  openbpu::testing::Nv12Classifier c;
  c.h = 64;
  c.w = 64;
  const Loaded l = load(c.build(), "nv12_classifier");
  hbDNNTensor in{}, out{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&in.properties, l.handle, 0), 0);
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&out.properties, l.handle, 0), 0);
  ASSERT_EQ(hbSysAllocCachedMem(&in.sysMem[0], static_cast<uint32_t>(in.properties.alignedByteSize)), 0);
  for (int round = 0; round < 20; ++round) {
    std::vector<hbDNNTensor> outs(8, out);
    std::vector<hbDNNTaskHandle_t> tasks(8, nullptr);
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(hbSysAllocCachedMem(&outs[i].sysMem[0], static_cast<uint32_t>(out.properties.alignedByteSize)), 0);
      hbDNNInferCtrlParam param;
      HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
      hbDNNTensor* outp = &outs[i];
      ASSERT_EQ(hbDNNInfer(&tasks[i], &outp, &in, l.handle, &param), 0);
    }
    for (int i = 0; i < 8; ++i) ASSERT_EQ(hbDNNReleaseTask(tasks[i]), 0);
    // The buffers may still be in use by cancelled work until it stops: wait
    // for one more task on the same model, which runs after them in order.
    hbDNNTaskHandle_t t = nullptr;
    hbDNNInferCtrlParam param;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
    hbDNNTensor* outp = &outs[0];
    ASSERT_EQ(hbDNNInfer(&t, &outp, &in, l.handle, &param), 0);
    ASSERT_EQ(hbDNNWaitTaskDone(t, 0), 0);
    ASSERT_EQ(hbDNNReleaseTask(t), 0);
    for (auto& o : outs) hbSysFreeMem(&o.sysMem[0]);
  }
  hbSysFreeMem(&in.sysMem[0]);
  // All tasks released: the pack can be released even if cancelled work is
  // still unwinding.
  EXPECT_EQ(hbDNNRelease(l.pack), 0);
}

}  // namespace
