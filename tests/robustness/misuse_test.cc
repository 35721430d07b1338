// SPDX-License-Identifier: Apache-2.0
// Misuse of the libdnn C API (issue 15, findings 1-5 and 13; docs/robustness.md):
// handles released while other threads use them, buffers freed under a task,
// model files changed after loading, FIFOs given as model files, release
// retried in a loop. Each case must give an error code (or be deferred
// safely), never a crash, a hang or a read of freed memory; the suite runs
// in the ASan+UBSan step and under ThreadSanitizer (OPENBPU_TEST_TSAN=1).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "tests/common/dnn_calls.h"
#include "tests/common/fifo_call.h"
#include "tests/common/test_models.h"

namespace {

using openbpu::testing::TinyCnn;
using Clock = std::chrono::steady_clock;

const bool kEnvironment = [] {
  setenv("HB_DNN_LOG_LEVEL", "4", 1);
  return true;
}();

const std::vector<uint8_t>& tiny_bytes() {
  static const std::vector<uint8_t> b = TinyCnn{}.build();
  return b;
}

hbPackedDNNHandle_t load_tiny(hbDNNHandle_t* h) {
  hbPackedDNNHandle_t pack = nullptr;
  const void* data = tiny_bytes().data();
  int32_t len = static_cast<int32_t>(tiny_bytes().size());
  EXPECT_EQ(hbDNNInitializeFromDDR(&pack, &data, &len, 1), 0);
  EXPECT_EQ(hbDNNGetModelHandle(h, pack, "tiny_cnn"), 0);
  return pack;
}

// The buffers of one TinyCnn run.
struct Buffers {
  hbDNNTensor in{}, out{};
  bool ok = false;
  // Properties from `h`: false when the handle is gone (released).
  bool alloc(hbDNNHandle_t h, const std::vector<float>& x) {
    if (hbDNNGetInputTensorProperties(&in.properties, h, 0) != 0 ||
        hbDNNGetOutputTensorProperties(&out.properties, h, 0) != 0)
      return false;
    EXPECT_EQ(hbSysAllocCachedMem(&in.sysMem[0], static_cast<uint32_t>(in.properties.alignedByteSize)), 0);
    EXPECT_EQ(hbSysAllocCachedMem(&out.sysMem[0], static_cast<uint32_t>(out.properties.alignedByteSize)), 0);
    std::memcpy(in.sysMem[0].virAddr, x.data(), x.size() * sizeof(float));
    hbSysFlushMem(&in.sysMem[0], HB_SYS_MEM_CACHE_CLEAN);
    ok = true;
    return true;
  }
  std::vector<float> output() {
    hbSysFlushMem(&out.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE);
    const float* p = static_cast<const float*>(out.sysMem[0].virAddr);
    return std::vector<float>(p, p + out.properties.alignedByteSize / 4);
  }
  void free() {
    if (!ok) return;
    EXPECT_EQ(hbSysFreeMem(&in.sysMem[0]), 0);
    EXPECT_EQ(hbSysFreeMem(&out.sysMem[0]), 0);
    ok = false;
  }
};

int32_t submit(hbDNNTaskHandle_t* task, Buffers* b, hbDNNHandle_t h, bool more) {
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  param.more = more ? 1 : 0;
  hbDNNTensor* outp = &b->out;
  *task = nullptr;
  return hbDNNInfer(task, &outp, &b->in, h, &param);
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

std::string temp_path(const char* what) {
  return ::testing::TempDir() + "obpu_misuse_" + std::to_string(::getpid()) + "_" + what;
}

// Finding 1: getters on a model of a pack that another thread releases read
// freed memory (SIGSEGV in a release build). Getters must succeed or report
// the handle invalid; the pack is freed after the last of them returns.
TEST(Misuse, ReleaseRacingGettersNeverFreesUnderAReader) {
  constexpr int kRounds = 20, kThreads = 8;
  for (int round = 0; round < kRounds; ++round) {
    hbDNNHandle_t h = nullptr;
    hbPackedDNNHandle_t pack = load_tiny(&h);
    std::atomic<int> started{0}, unexpected{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        started++;
        for (;;) {
          int32_t n = 0;
          hbDNNTensorProperties p;
          const char* name = nullptr;
          hbDNNHandle_t h2 = nullptr;
          const int32_t r1 = hbDNNGetOutputCount(&n, h);
          const int32_t r2 = hbDNNGetInputTensorProperties(&p, h, 0);
          const int32_t r3 = hbDNNGetOutputName(&name, h, 0);
          const int32_t r4 = hbDNNGetModelHandle(&h2, pack, "tiny_cnn");
          for (int32_t r : {r1, r2, r3})
            if (r != 0 && r != HB_DNN_INVALID_DNN_HANDLE) unexpected++;
          if (r4 != 0 && r4 != HB_DNN_INVALID_PACKED_DNN_HANDLE) unexpected++;
          if (r1 == HB_DNN_INVALID_DNN_HANDLE && r4 == HB_DNN_INVALID_PACKED_DNN_HANDLE) break;
        }
      });
    while (started.load() < kThreads) std::this_thread::yield();
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(hbDNNRelease(pack), 0);
    for (auto& th : threads) th.join();
    ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(unexpected.load(), 0) << "round " << round;
  }
}

// Finding 3: hbSysFreeMem of a buffer that a task still uses returned 0 and
// the task then read freed memory. It is refused (HB_SYS_INVALID_ARGUMENT,
// logged) until the task has finished.
TEST(Misuse, FreeOfABufferATaskUsesIsRefused) {
  hbDNNHandle_t h = nullptr;
  hbPackedDNNHandle_t pack = load_tiny(&h);
  TinyCnn m;
  const std::vector<float> x = m.random_input(5);
  Buffers b;
  ASSERT_TRUE(b.alloc(h, x));
  hbDNNTaskHandle_t task = nullptr;
  // An open chain (more = 1): queued, not started, deterministic.
  ASSERT_EQ(submit(&task, &b, h, true), 0);
  ::testing::internal::CaptureStderr();
  hbSysMem in_copy = b.in.sysMem[0], out_copy = b.out.sysMem[0];
  EXPECT_EQ(hbSysFreeMem(&in_copy), HB_SYS_INVALID_ARGUMENT);
  EXPECT_EQ(hbSysFreeMem(&out_copy), HB_SYS_INVALID_ARGUMENT);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(in_copy.virAddr, b.in.sysMem[0].virAddr) << "a refused free must leave the descriptor";
  EXPECT_NE(log.find("used by a task"), std::string::npos) << log;
  // Close the chain, wait: the output is right (the buffers were kept).
  hbDNNTensor* outp = &b.out;
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  ASSERT_EQ(hbDNNInfer(&task, &outp, &b.in, h, &param), 0);
  ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_EQ(b.output(), m.expected(x));
  // A finished task no longer holds them (freeing before hbDNNReleaseTask is fine).
  b.free();
  EXPECT_EQ(hbDNNReleaseTask(task), 0);
  EXPECT_EQ(hbDNNRelease(pack), 0);
}

// Finding 4: hbDNNInitializeFromFiles on a FIFO blocked in open() forever.
TEST(Misuse, InitializeFromAFifoFailsAtOnce) {
  const std::string fifo = temp_path("fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int32_t rc = 0;
  std::string log;
  const bool hung = openbpu::testing::blocked_on_fifo(fifo, [&] {
    ::testing::internal::CaptureStderr();
    hbPackedDNNHandle_t pack = nullptr;
    const char* names[1] = {fifo.c_str()};
    rc = hbDNNInitializeFromFiles(&pack, names, 1);
    log = ::testing::internal::GetCapturedStderr();
  });
  ::unlink(fifo.c_str());
  EXPECT_FALSE(hung) << "hbDNNInitializeFromFiles blocked on a FIFO";
  EXPECT_EQ(rc, HB_DNN_CAN_NOT_OPEN_FILE);
  EXPECT_NE(log.find("not a regular file"), std::string::npos) << log;
}

// Finding 5: a refused hbDNNRelease (tasks not released) logged a line every
// call; a retry loop filled the log. Once per handle.
TEST(Misuse, RefusedReleaseIsLoggedOncePerHandle) {
  hbDNNHandle_t h = nullptr;
  hbPackedDNNHandle_t pack = load_tiny(&h);
  TinyCnn m;
  Buffers b;
  ASSERT_TRUE(b.alloc(h, m.random_input(1)));
  hbDNNTaskHandle_t task = nullptr;
  ASSERT_EQ(submit(&task, &b, h, false), 0);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(hbDNNRelease(pack), HB_DNN_MODEL_IS_RUNNING);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(log, "[E][DNN]"), 1u) << log.substr(0, 2000);
  EXPECT_NE(log.find("not released"), std::string::npos) << log;
  EXPECT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_EQ(hbDNNReleaseTask(task), 0);
  b.free();
  EXPECT_EQ(hbDNNRelease(pack), 0);
}

// Finding 2: the loader kept pointers into the mmap'ed file: truncating it
// after loading killed the process with SIGBUS at inference, rewriting it
// changed the computation. The runtime owns the bytes it keeps.
TEST(Misuse, ModelFileChangedAfterLoadingDoesNotReachTheModel) {
  const std::string path = temp_path("model.bin");
  const std::vector<uint8_t>& bytes = tiny_bytes();
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
  hbPackedDNNHandle_t pack = nullptr;
  const char* names[1] = {path.c_str()};
  ASSERT_EQ(hbDNNInitializeFromFiles(&pack, names, 1), 0);
  hbDNNHandle_t h = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&h, pack, "tiny_cnn"), 0);
  TinyCnn m;
  const std::vector<float> x = m.random_input(9), expected = m.expected(x);
  // Rewritten in place (same inode): every byte inverted.
  std::vector<uint8_t> inverted(bytes);
  for (auto& c : inverted) c = static_cast<uint8_t>(~c);
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, inverted.data(), inverted.size(), 0), static_cast<ssize_t>(inverted.size()));
  std::vector<float> out;
  EXPECT_EQ(openbpu::testing::infer_once(h, x, 0, &out), 0);
  EXPECT_EQ(out, expected) << "rewriting the file changed the loaded model";
  // Truncated to nothing.
  ASSERT_EQ(::ftruncate(fd, 0), 0);
  ::close(fd);
  EXPECT_EQ(openbpu::testing::infer_once(h, x, 0, &out), 0);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(hbDNNRelease(pack), 0);
  ::unlink(path.c_str());
}

// The concurrency misuse test: 16 threads run inference and getters on one
// model while the main thread releases its pack (refused while tasks are
// live, retried until it succeeds); inference threads free their buffers
// right after submitting (refused while the task uses them). Every call
// returns success or its documented refusal; ASan/TSan see no access to
// freed memory and no data race.
TEST(Misuse, ReleaseAndFreeRacingInferenceFromManyThreads) {
  constexpr int kRounds = 4, kInferThreads = 8, kGetterThreads = 8;
  TinyCnn m;
  const std::vector<float> x = m.random_input(4), expected = m.expected(x);
  for (int round = 0; round < kRounds; ++round) {
    hbDNNHandle_t h = nullptr;
    hbPackedDNNHandle_t pack = load_tiny(&h);
    std::atomic<int> unexpected{0}, refused_frees{0};
    std::atomic<bool> stop_infer{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kInferThreads; ++t)
      threads.emplace_back([&, t] {
        std::mt19937 rng(static_cast<uint32_t>(round * 100 + t));
        while (!stop_infer.load()) {
          Buffers b;
          if (!b.alloc(h, x)) break;  // released
          hbDNNTaskHandle_t task = nullptr;
          const int32_t rc = submit(&task, &b, h, false);
          if (rc == HB_DNN_INVALID_DNN_HANDLE) {
            b.free();
            break;
          }
          if (rc == HB_DNN_TASK_NUM_EXCEED_LIMIT) {
            b.free();
            std::this_thread::yield();
            continue;
          }
          if (rc != 0) {
            unexpected++;
            b.free();
            break;
          }
          // Free racing the task: refused while it runs, then fine.
          hbSysMem in_copy = b.in.sysMem[0];
          const int32_t fr = hbSysFreeMem(&in_copy);
          if (fr == HB_SYS_INVALID_ARGUMENT) refused_frees++;
          else if (fr != 0) unexpected++;
          if (rng() % 2 == 0 && hbDNNWaitTaskDone(task, 0) != 0) unexpected++;
          if (hbDNNReleaseTask(task) != 0) unexpected++;
          if (fr == 0) {
            b.in.sysMem[0].virAddr = nullptr;  // freed above
            EXPECT_EQ(hbSysFreeMem(&b.out.sysMem[0]), 0);
          } else {
            b.free();
          }
        }
      });
    for (int t = 0; t < kGetterThreads; ++t)
      threads.emplace_back([&] {
        for (;;) {
          int32_t n = 0;
          hbDNNTensorProperties p;
          const int32_t r1 = hbDNNGetInputCount(&n, h);
          const int32_t r2 = hbDNNGetOutputTensorProperties(&p, h, 0);
          if ((r1 != 0 && r1 != HB_DNN_INVALID_DNN_HANDLE) || (r2 != 0 && r2 != HB_DNN_INVALID_DNN_HANDLE))
            unexpected++;
          if (r1 == HB_DNN_INVALID_DNN_HANDLE) break;
        }
      });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::testing::internal::CaptureStderr();
    int32_t rc;
    int attempts = 0;
    while ((rc = hbDNNRelease(pack)) == HB_DNN_MODEL_IS_RUNNING) {
      if (++attempts == 20) stop_infer = true;  // let the live tasks drain
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(rc, 0);
    stop_infer = true;
    for (auto& th : threads) th.join();
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_LE(count(log, "hbDNNRelease"), 1u) << "a refused release is logged once per handle";
    EXPECT_EQ(unexpected.load(), 0) << "round " << round;
  }
  // The model still works after all that (nothing was freed under a task).
  hbDNNHandle_t h = nullptr;
  hbPackedDNNHandle_t pack = load_tiny(&h);
  std::vector<float> out;
  EXPECT_EQ(openbpu::testing::infer_once(h, x, 0, &out), 0);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(hbDNNRelease(pack), 0);
}

// Handles of released packs, models and tasks stay invalid when a pack,
// model or task loaded later takes the released one's address (glibc hands
// the freed blocks back at once). The registry knew addresses only: a stale
// pack handle listed, and released, the new pack. Handle values are never
// reused in a process.
TEST(Misuse, StaleHandlesAreNotTakenForObjectsLoadedAtTheirAddress) {
  constexpr int kRounds = 16;
  TinyCnn m;
  const std::vector<float> x = m.random_input(3), expected = m.expected(x);
  std::vector<hbPackedDNNHandle_t> old_packs;
  std::vector<hbDNNHandle_t> old_models;
  std::vector<hbDNNTaskHandle_t> old_tasks;
  for (int round = 0; round < kRounds; ++round) {
    hbDNNHandle_t h = nullptr;
    hbPackedDNNHandle_t pack = load_tiny(&h);
    Buffers b;
    ASSERT_TRUE(b.alloc(h, x));
    hbDNNTaskHandle_t task = nullptr;
    ASSERT_EQ(submit(&task, &b, h, false), 0);
    ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
    ::testing::internal::CaptureStderr();
    for (hbPackedDNNHandle_t o : old_packs) {
      char const** names = nullptr;
      int32_t n = 0;
      hbDNNHandle_t mh = nullptr;
      EXPECT_EQ(hbDNNGetModelNameList(&names, &n, o), HB_DNN_INVALID_PACKED_DNN_HANDLE) << "round " << round;
      EXPECT_EQ(hbDNNGetModelHandle(&mh, o, "tiny_cnn"), HB_DNN_INVALID_PACKED_DNN_HANDLE) << "round " << round;
      EXPECT_EQ(hbDNNRelease(o), HB_DNN_INVALID_PACKED_DNN_HANDLE) << "round " << round;
    }
    for (hbDNNHandle_t o : old_models) {
      int32_t n = 0;
      EXPECT_EQ(hbDNNGetOutputCount(&n, o), HB_DNN_INVALID_DNN_HANDLE) << "round " << round;
    }
    for (hbDNNTaskHandle_t o : old_tasks) {
      EXPECT_EQ(hbDNNWaitTaskDone(o, 0), HB_DNN_INVALID_TASK_HANDLE) << "round " << round;
      EXPECT_EQ(hbDNNReleaseTask(o), HB_DNN_INVALID_TASK_HANDLE) << "round " << round;
    }
    ::testing::internal::GetCapturedStderr();
    // The stale calls reached nothing: the task and the pack are intact.
    EXPECT_EQ(b.output(), expected);
    ASSERT_EQ(hbDNNReleaseTask(task), 0);
    b.free();
    std::vector<float> out;
    EXPECT_EQ(openbpu::testing::infer_once(h, x, 0, &out), 0);
    EXPECT_EQ(out, expected);
    ASSERT_EQ(hbDNNRelease(pack), 0);
    old_packs.push_back(pack);
    old_models.push_back(h);
    old_tasks.push_back(task);
  }
}

}  // namespace
