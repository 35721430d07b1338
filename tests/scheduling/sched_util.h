// SPDX-License-Identifier: Apache-2.0
// Helpers of the scheduling tests and benchmarks: models through the C API,
// their buffers, a device trace recorder, and hand-assembled programs for
// tests of the device interface itself.
#ifndef OPENBPU_TESTS_SCHEDULING_SCHED_UTIL_H_
#define OPENBPU_TESTS_SCHEDULING_SCHED_UTIL_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "bpu_driver/scheduler.h"
#include "bpu_sim/isa/codec.h"
#include "bpu_sim/isa/program_builder.h"
#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"

namespace openbpu::sched_test {

inline uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Sanitized builds run several times slower, and the aarch64 build is
// tested under qemu-user (a board only gets looser bounds): time bounds
// scale with this.
inline double slowdown() {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return 8.0;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
  return 8.0;
#elif defined(__aarch64__)
  return 4.0;
#else
  return 1.0;
#endif
#elif defined(__aarch64__)
  return 4.0;
#else
  return 1.0;
#endif
}

struct Loaded {
  hbPackedDNNHandle_t pack = nullptr;
  hbDNNHandle_t handle = nullptr;
  int32_t rc = 0;
};

inline Loaded load_model(const std::vector<uint8_t>& bytes, const char* name) {
  Loaded l;
  const void* data = bytes.data();
  int32_t len = static_cast<int32_t>(bytes.size());
  l.rc = hbDNNInitializeFromDDR(&l.pack, &data, &len, 1);
  if (l.rc == 0) l.rc = hbDNNGetModelHandle(&l.handle, l.pack, name);
  return l;
}

// Input and output buffers for one task of a model.
class Io {
 public:
  explicit Io(hbDNNHandle_t h) {
    int32_t n_in = 0, n_out = 0;
    hbDNNGetInputCount(&n_in, h);
    hbDNNGetOutputCount(&n_out, h);
    in.resize(static_cast<size_t>(n_in));
    out.resize(static_cast<size_t>(n_out));
    for (int32_t i = 0; i < n_in; ++i) {
      in[i] = hbDNNTensor{};
      hbDNNGetInputTensorProperties(&in[i].properties, h, i);
      hbSysAllocCachedMem(&in[i].sysMem[0], static_cast<uint32_t>(in[i].properties.alignedByteSize));
    }
    for (int32_t i = 0; i < n_out; ++i) {
      out[i] = hbDNNTensor{};
      hbDNNGetOutputTensorProperties(&out[i].properties, h, i);
      hbSysAllocCachedMem(&out[i].sysMem[0], static_cast<uint32_t>(out[i].properties.alignedByteSize));
    }
  }
  Io(const Io&) = delete;
  Io& operator=(const Io&) = delete;
  ~Io() {
    for (auto& t : in) hbSysFreeMem(&t.sysMem[0]);
    for (auto& t : out) hbSysFreeMem(&t.sysMem[0]);
  }

  // Deterministic pseudo-random inputs (floats in [-3, 3] for F32 tensors).
  void fill_inputs(uint32_t seed) {
    std::mt19937 rng(seed);
    for (auto& t : in) {
      auto* p = static_cast<uint8_t*>(t.sysMem[0].virAddr);
      const size_t n = static_cast<size_t>(t.properties.alignedByteSize);
      if (t.properties.tensorType == HB_DNN_TENSOR_TYPE_F32) {
        std::uniform_real_distribution<float> d(-3.0f, 3.0f);
        for (size_t i = 0; i + 4 <= n; i += 4) {
          const float v = d(rng);
          std::memcpy(p + i, &v, 4);
        }
      } else {
        for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng() >> 24);
      }
      hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_CLEAN);
    }
  }

  void clear_outputs() {
    for (auto& t : out) std::memset(t.sysMem[0].virAddr, 0xA5, t.properties.alignedByteSize);
  }

  std::vector<uint8_t> outputs() {
    std::vector<uint8_t> r;
    for (auto& t : out) {
      hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE);
      const auto* p = static_cast<const uint8_t*>(t.sysMem[0].virAddr);
      r.insert(r.end(), p, p + t.properties.alignedByteSize);
    }
    return r;
  }

  std::vector<hbDNNTensor> in, out;
};

inline hbDNNInferCtrlParam ctrl(int priority, int32_t core = HB_BPU_CORE_ANY, int64_t custom_id = 0) {
  hbDNNInferCtrlParam p;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
  p.priority = priority;
  p.bpuCoreId = core;
  p.customId = custom_id;
  return p;
}

inline int32_t infer(hbDNNTaskHandle_t* task, hbDNNHandle_t h, Io& io, hbDNNInferCtrlParam p) {
  *task = nullptr;
  hbDNNTensor* outp = io.out.data();
  return hbDNNInfer(task, &outp, io.in.data(), h, &p);
}

// Submit, wait, release; returns the status of the wait (or of the submit).
inline int32_t run_sync(hbDNNHandle_t h, Io& io, hbDNNInferCtrlParam p) {
  hbDNNTaskHandle_t task = nullptr;
  int32_t rc = infer(&task, h, io, p);
  if (rc != 0) return rc;
  rc = hbDNNWaitTaskDone(task, 0);
  hbDNNReleaseTask(task);
  return rc;
}

// Deterministic mode: steps core `core` until the task is done; returns the
// task's status.
inline int32_t step_until_done(drv::Scheduler* dev, hbDNNTaskHandle_t task, int core = 0) {
  for (int i = 0; i < 100000; ++i) {
    const int32_t rc = hbDNNWaitTaskDone(task, 1);
    if (rc != HB_DNN_TIMEOUT) return rc;
    drv::TraceEvent ev;
    dev->step(core, 10, &ev);
  }
  return HB_DNN_TIMEOUT;
}

// Records the device's trace events (thread-safe).
class TraceLog {
 public:
  void install(drv::Scheduler* dev) {
    dev->set_trace_hook([this](const drv::TraceEvent& e) {
      std::lock_guard<std::mutex> lk(mu_);
      events_.push_back(e);
    });
  }
  std::vector<drv::TraceEvent> events() const {
    std::lock_guard<std::mutex> lk(mu_);
    return events_;
  }
  void clear() {
    std::lock_guard<std::mutex> lk(mu_);
    events_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::vector<drv::TraceEvent> events_;
};

// A hand-assembled program for device tests: `n` function calls, each one
// requantizing Move over a 64-element int8 vector (input -> scratch ... ->
// output), alternating gains so values stay spread. Each fc declares
// `fc_cycles` estimated cycles (what paced mode sleeps for).
struct ChainProgram {
  static constexpr int kElems = 64;
  std::unique_ptr<drv::Program> program;
  drv::DmaBuffer in, out, scratch, constants;
  drv::Device* dev = nullptr;

  ChainProgram(drv::Device* device, int n, uint64_t fc_cycles, uint32_t seed = 1) : dev(device) {
    const isa::MarchInfo& m = *device->info().march;
    isa::ProgramBuilder pb(m);
    const int align = m.channel_align;
    const isa::TensorRef x = isa::nhwc_view(isa::Region::kInput, 0, 0, 1, 1, 1, kElems, isa::DType::kInt8, align);
    const isa::TensorRef y = isa::nhwc_view(isa::Region::kOutput, 0, 0, 1, 1, 1, kElems, isa::DType::kInt8, align);
    const isa::TensorRef s0 = pb.scratch_nhwc(1, 1, 1, kElems, isa::DType::kInt8);
    const isa::TensorRef s1 = pb.scratch_nhwc(1, 1, 1, kElems, isa::DType::kInt8);
    std::vector<drv::FunctionCall> fcs;
    for (int i = 0; i < n; ++i) {
      isa::Move mv;
      mv.in = i == 0 ? x : (i % 2 == 1 ? s0 : s1);
      mv.out = i == n - 1 ? y : (i % 2 == 0 ? s0 : s1);
      mv.requantize = 1;
      isa::quantize_multiplier(i % 2 == 0 ? 1.37 : 0.71, &mv.multiplier, &mv.shift);
      pb.emit(isa::Opcode::kMove, mv);
      fcs.push_back({static_cast<uint32_t>(i), 1, fc_cycles});
    }
    const std::vector<uint8_t> code = isa::encode_program(pb.program());
    drv::ProgramLayout layout;
    layout.input_sizes = {isa::nhwc_bytes(1, 1, 1, kElems, isa::DType::kInt8, align)};
    layout.output_sizes = layout.input_sizes;
    layout.scratch_size = pb.scratch_size();
    std::string err;
    device->load_program(code.data(), code.size(), fcs, layout, &program, &err);
    device->alloc(layout.input_sizes[0], true, &in);
    device->alloc(layout.output_sizes[0], true, &out);
    device->alloc(pb.scratch_size(), true, &scratch);
    std::mt19937 rng(seed);
    for (uint64_t i = 0; i < layout.input_sizes[0]; ++i) in.vir[i] = static_cast<uint8_t>(rng() >> 24);
  }
  ChainProgram(const ChainProgram&) = delete;
  ChainProgram& operator=(const ChainProgram&) = delete;
  ~ChainProgram() {
    dev->free(in);
    dev->free(out);
    dev->free(scratch);
  }

  drv::Job job(int priority, std::function<void(const drv::JobResult&)> done, uint32_t core_mask = 0) const {
    drv::Job j;
    j.program = program.get();
    j.bindings.inputs = {{in.vir, in.phy, in.size}};
    j.bindings.outputs = {{out.vir, out.phy, out.size}};
    j.bindings.scratch = {scratch.vir, scratch.phy, scratch.size};
    j.priority = priority;
    j.core_mask = core_mask;
    j.on_done = std::move(done);
    return j;
  }

  std::vector<uint8_t> output() const { return std::vector<uint8_t>(out.vir, out.vir + out.size); }
};

}  // namespace openbpu::sched_test

#endif  // OPENBPU_TESTS_SCHEDULING_SCHED_UTIL_H_
