// SPDX-License-Identifier: Apache-2.0
// Scripted misuse of the libdnn C API from several threads (issue 15,
// docs/robustness.md): the input is a script of load / get handle / getters /
// alloc / infer (chained or not) / wait / release task / free / release pack
// operations over two shared pack slots, dealt round-robin to 1-4 threads.
// Every call must return success or one of its documented refusals (a stale
// handle, a pack with live tasks, a buffer a task uses); anything else, a
// crash or (under ASan/TSan) a use of freed memory or a race is a finding.
// At the end every task is released, every buffer must free and every pack
// must release.
//
// Built three ways from this file: the replay test fuzz_replay_capi (the
// seeds in capi_corpus/ plus deterministic random scripts; also in the ASan
// build), and with OPENBPU_LIBFUZZER the libFuzzer target fuzz_capi_sequences.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "tests/fuzz/corpus_files.h"

namespace {

constexpr int kMaxThreads = 4;
constexpr int kPacks = 2;
constexpr size_t kMaxOps = 512;

// TinyCnn (tests/fuzz/corpus/tiny_cnn.bin; the path is compiled in).
const std::vector<uint8_t>& model_bytes() {
  static const std::vector<uint8_t> b = [] {
    std::vector<uint8_t> bytes = openbpu::fuzz::read_bytes(OPENBPU_FUZZ_CAPI_MODEL);
    if (bytes.empty()) {
      std::fprintf(stderr, "cannot read %s\n", OPENBPU_FUZZ_CAPI_MODEL);
      std::abort();
    }
    return bytes;
  }();
  return b;
}

[[noreturn]] void violation(const char* what, int32_t rc) {
  std::fprintf(stderr, "C API contract violation: %s returned %d (%s)\n", what, rc, hbDNNGetErrorDesc(rc));
  std::abort();
}

void expect(const char* what, int32_t rc, std::initializer_list<int32_t> allowed) {
  for (int32_t a : allowed)
    if (rc == a) return;
  violation(what, rc);
}

// What the scripts did (the replay prints it: a replay that never reaches
// inference or a refusal tests little).
struct Counts {
  std::atomic<long> loads{0}, infers{0}, refused_releases{0}, releases{0}, refused_frees{0}, stale{0};
};
Counts g_counts;

struct Shared {
  std::atomic<hbPackedDNNHandle_t> packs[kPacks] = {};
};

class Worker {
 public:
  explicit Worker(Shared* s) : s_(s) {}

  void op(uint8_t code, uint8_t arg) {
    switch (code % 10) {
      case 0: load(arg % kPacks); break;
      case 1: release_pack(arg % kPacks); break;
      case 2: get_handle(arg % kPacks); break;
      case 3: getters(); break;
      case 4: alloc(); break;
      case 5: infer((arg & 1) != 0); break;
      case 6: wait(arg); break;
      case 7: release_task(); break;
      case 8: free_buffer(arg & 1); break;
      default: callback(); break;
    }
  }

  // Releases the task (cancelled if running) and frees the buffers: both
  // must succeed now.
  void finish() {
    release_task();
    for (hbSysMem* m : {&in_.sysMem[0], &out_.sysMem[0]})
      if (m->virAddr != nullptr) expect("hbSysFreeMem (end)", hbSysFreeMem(m), {0});
  }

 private:
  // Loads and releases race each other on the slots (no lock): a thread may
  // release a handle another thread released already, while a pack loaded
  // since (often at the released one's address) fills the slot. Handle
  // values are never reused, so that stale release must be refused; had it
  // released the new pack, the release at the end would fail.
  void load(int slot) {
    if (s_->packs[slot].load() != nullptr) return;
    hbPackedDNNHandle_t p = nullptr;
    const void* data = model_bytes().data();
    int32_t len = static_cast<int32_t>(model_bytes().size());
    expect("hbDNNInitializeFromDDR", hbDNNInitializeFromDDR(&p, &data, &len, 1), {0});
    g_counts.loads++;
    hbPackedDNNHandle_t empty = nullptr;
    if (!s_->packs[slot].compare_exchange_strong(empty, p)) expect("hbDNNRelease (lost slot)", hbDNNRelease(p), {0});
  }

  void release_pack(int slot) {
    hbPackedDNNHandle_t p = s_->packs[slot].load();
    if (p == nullptr) return;
    const int32_t rc = hbDNNRelease(p);
    expect("hbDNNRelease", rc, {0, HB_DNN_MODEL_IS_RUNNING, HB_DNN_INVALID_PACKED_DNN_HANDLE});
    if (rc == 0) s_->packs[slot].compare_exchange_strong(p, nullptr);
    if (rc == 0) g_counts.releases++;
    if (rc == HB_DNN_MODEL_IS_RUNNING) g_counts.refused_releases++;
    if (rc == HB_DNN_INVALID_PACKED_DNN_HANDLE) g_counts.stale++;
  }

  void get_handle(int slot) {
    hbPackedDNNHandle_t p = s_->packs[slot].load();
    if (p == nullptr) return;
    hbDNNHandle_t h = nullptr;
    const int32_t rc = hbDNNGetModelHandle(&h, p, "tiny_cnn");
    expect("hbDNNGetModelHandle", rc, {0, HB_DNN_INVALID_PACKED_DNN_HANDLE});
    if (rc == 0) model_ = h;
  }

  // Getters on a handle whose pack another thread may be releasing; the
  // returned pointers are not read (they die with the pack).
  void getters() {
    if (model_ == nullptr) return;
    int32_t n = 0;
    const char* name = nullptr;
    hbDNNTensorProperties p;
    const std::initializer_list<int32_t> ok = {0, HB_DNN_INVALID_DNN_HANDLE};
    expect("hbDNNGetInputCount", hbDNNGetInputCount(&n, model_), ok);
    expect("hbDNNGetOutputCount", hbDNNGetOutputCount(&n, model_), ok);
    expect("hbDNNGetInputName", hbDNNGetInputName(&name, model_, 0), ok);
    expect("hbDNNGetOutputTensorProperties", hbDNNGetOutputTensorProperties(&p, model_, 0), ok);
  }

  bool properties() {
    if (model_ == nullptr) return false;
    const int32_t a = hbDNNGetInputTensorProperties(&in_.properties, model_, 0);
    const int32_t b = hbDNNGetOutputTensorProperties(&out_.properties, model_, 0);
    expect("hbDNNGetInputTensorProperties", a, {0, HB_DNN_INVALID_DNN_HANDLE});
    expect("hbDNNGetOutputTensorProperties", b, {0, HB_DNN_INVALID_DNN_HANDLE});
    return a == 0 && b == 0;
  }

  void alloc() {
    if (!properties()) return;
    for (hbDNNTensor* t : {&in_, &out_})
      if (t->sysMem[0].virAddr == nullptr)
        expect("hbSysAllocCachedMem",
               hbSysAllocCachedMem(&t->sysMem[0], static_cast<uint32_t>(t->properties.alignedByteSize)), {0});
  }

  void infer(bool more) {
    if (in_.sysMem[0].virAddr == nullptr || out_.sysMem[0].virAddr == nullptr || !properties()) return;
    hbDNNInferCtrlParam param;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
    param.more = more ? 1 : 0;
    hbDNNTensor* outp = &out_;
    hbDNNTaskHandle_t t = task_;
    const int32_t rc = hbDNNInfer(&t, &outp, &in_, model_, &param);
    // Appending to a started task is an API use error; a chain is limited.
    expect("hbDNNInfer", rc,
           {0, HB_DNN_INVALID_DNN_HANDLE, HB_DNN_TASK_NUM_EXCEED_LIMIT, HB_DNN_API_USE_ERROR,
            HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT});
    if (rc == 0) task_ = t;
    if (rc == 0) g_counts.infers++;
    if (rc == HB_DNN_INVALID_DNN_HANDLE) g_counts.stale++;
  }

  void wait(uint8_t arg) {
    if (task_ == nullptr) return;
    const int32_t timeout = arg % 4 == 0 ? 0 : arg % 8;
    expect("hbDNNWaitTaskDone", hbDNNWaitTaskDone(task_, timeout),
           {0, HB_DNN_TIMEOUT, HB_DNN_API_USE_ERROR, HB_DNN_RUN_TASK_FAILED});
  }

  void release_task() {
    if (task_ == nullptr) return;
    expect("hbDNNReleaseTask", hbDNNReleaseTask(task_), {0});
    task_ = nullptr;
  }

  // Refused while a task uses the buffer.
  void free_buffer(int which) {
    hbSysMem* m = which == 0 ? &in_.sysMem[0] : &out_.sysMem[0];
    if (m->virAddr == nullptr) return;
    hbSysMem copy = *m;
    const int32_t rc = hbSysFreeMem(&copy);
    expect("hbSysFreeMem", rc, {0, HB_SYS_INVALID_ARGUMENT});
    if (rc == 0) *m = hbSysMem{};
    if (rc != 0) g_counts.refused_frees++;
  }

  void callback() {
    if (task_ == nullptr) return;
    expect("hbDNNSetTaskDoneCb",
           hbDNNSetTaskDoneCb(task_, [](hbDNNTaskHandle_t, int32_t, void*) {}, nullptr), {0});
  }

  Shared* s_;
  hbDNNHandle_t model_ = nullptr;
  hbDNNTaskHandle_t task_ = nullptr;
  hbDNNTensor in_{}, out_{};
};

void run_script(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const int threads = 1 + data[0] % kMaxThreads;
  const size_t ops = std::min((size - 1) / 2, kMaxOps);
  Shared shared;
  std::vector<Worker> workers(static_cast<size_t>(threads), Worker(&shared));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (size_t j = static_cast<size_t>(t); j < ops; j += static_cast<size_t>(threads))
        workers[static_cast<size_t>(t)].op(data[1 + 2 * j], data[2 + 2 * j]);
      workers[static_cast<size_t>(t)].finish();
    });
  for (auto& th : pool) th.join();
  for (auto& p : shared.packs)
    if (p.load() != nullptr) expect("hbDNNRelease (end)", hbDNNRelease(p.load()), {0});
}

void init() {
  if (std::getenv("HB_DNN_LOG_LEVEL") == nullptr) setenv("HB_DNN_LOG_LEVEL", "0", 1);  // quiet
  unsetenv("HB_DNN_SIM_PLATFORM");
  (void)model_bytes();
}

}  // namespace

#ifdef OPENBPU_LIBFUZZER

OPENBPU_LIBFUZZER_ENTRY(init, run_script)

#else

// fuzz_capi_replay DIR [--random N]: every file of DIR, then N scripts of
// random operations (deterministic seeds).
int main(int argc, char** argv) {
  init();
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [--random N]\n", argv[0]);
    return 2;
  }
  int random = 0;
  if (argc >= 4 && std::strcmp(argv[2], "--random") == 0) random = std::atoi(argv[3]);
  size_t files = 0;
  for (const std::string& path : openbpu::fuzz::corpus_files(argv[1])) {
    const std::vector<uint8_t> bytes = openbpu::fuzz::read_bytes(path);
    run_script(bytes.data(), bytes.size());
    ++files;
  }
  if (files == 0) {
    std::fprintf(stderr, "no corpus files in %s\n", argv[1]);
    return 1;
  }
  std::mt19937 rng(15);
  for (int i = 0; i < random; ++i) {
    std::vector<uint8_t> script(1 + 2 * (16 + rng() % 200));
    for (auto& b : script) b = static_cast<uint8_t>(rng());
    run_script(script.data(), script.size());
  }
  std::printf(
      "%zu corpus scripts and %d random scripts ran within the API contract: %ld loads, %ld releases "
      "(%ld refused: tasks), %ld inferences, %ld frees refused (a task used the buffer), %ld calls on "
      "released handles\n",
      files, random, g_counts.loads.load(), g_counts.releases.load(), g_counts.refused_releases.load(),
      g_counts.infers.load(), g_counts.refused_frees.load(), g_counts.stale.load());
  return 0;
}

#endif
