// SPDX-License-Identifier: Apache-2.0
// Microbenchmarks of the optimized simulator kernels (Google Benchmark).
//
// Each convolution benchmark runs one layer shape of MobileNetV1/V2 and
// ResNet18 with one dispatch path and reports
//   MACs/cycle  achieved int8 multiply-accumulates per core clock cycle
//   peak%       that number over the measured int8 peak of THAT path
// The core clock and the peaks are measured in the same run (peaks.h): the
// clock with a chain of dependent adds (one cycle each), each path's peak
// with an unrolled loop of its exact multiply-accumulate mix on independent
// accumulators (AVX2: vpmaddubsw + vpmaddwd + vpaddd, 32 MACs, or vpmaddwd +
// vpaddd, 16 MACs; AVX-512 VNNI: vpdpbusd, 64 MACs; NEON: smlal, 4 MACs;
// SDOT, 16 MACs). Times are CPU times of the benchmark thread, which matters
// on a shared machine. `--layers <model.bin>` profiles a model per
// instruction and per layer kind instead (layers.h).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/kernels/layers.h"
#include "bench/kernels/peaks.h"
#include "bpu_sim/executor.h"
#include "bpu_sim/isa/program_builder.h"
#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/memory.h"
#include "bpu_sim/reference/kernels.h"

#if defined(OPENBPU_BENCH_MODELS)
#include "bpu_sim/isa/codec.h"
#include "schema/writer.h"
#include "tests/common/test_models.h"
#endif

namespace {

using namespace openbpu;
using bench::thread_seconds;

struct Machine {
  double hz = 0;
};
const Machine& machine() {
  static const Machine m = [] {
    Machine r;
    r.hz = bench::core_hz();
    std::printf("core clock %.2f GHz (dependent-add chain)\n", r.hz / 1e9);
    return r;
  }();
  return m;
}

// One convolution layer in its own memory.
struct Layer {
  isa::Conv c;
  std::vector<uint8_t> in, out, consts, scratch;
  sim::Memory mem;
  double macs = 0;
};

std::unique_ptr<Layer> make_layer(int h, int w, int cin, int cout, int k, int stride, int groups,
                                  bool signed_in, isa::DType out_t = isa::DType::kInt8) {
  auto l = std::make_unique<Layer>();
  std::mt19937 rng(1);
  const int pad = k / 2;
  const int oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  isa::Conv& c = l->c;
  c.in = isa::nhwc_view(isa::Region::kInput, 0, 0, 1, h, w, cin, isa::DType::kInt8, 8);
  c.out = isa::nhwc_view(isa::Region::kOutput, 0, 0, 1, oh, ow, cout, out_t, 8);
  l->in.resize(isa::nhwc_bytes(1, h, w, cin, isa::DType::kInt8, 8));
  l->out.resize(isa::nhwc_bytes(1, oh, ow, cout, out_t, 8));
  // Post-ReLU activations (>= 0), or signed ones (the AVX2 int16 path).
  for (auto& b : l->in) b = static_cast<uint8_t>(signed_in ? rng() % 256 : rng() % 128);
  c.kernel_h = c.kernel_w = k;
  c.stride_h = c.stride_w = stride;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = pad;
  c.groups = groups;
  const int kk = k * k * (cin / groups);
  std::vector<int8_t> wt(static_cast<size_t>(cout) * kk);
  for (auto& v : wt) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  auto add = [&](const void* p, size_t bytes, uint32_t count) {
    isa::ConstRef r;
    r.offset = l->consts.size();
    r.count = count;
    l->consts.insert(l->consts.end(), static_cast<const uint8_t*>(p),
                     static_cast<const uint8_t*>(p) + bytes);
    return r;
  };
  c.weight = add(wt.data(), wt.size(), static_cast<uint32_t>(wt.size()));
  std::vector<int32_t> bias(static_cast<size_t>(cout), 100), mult(static_cast<size_t>(cout));
  std::vector<int8_t> shift(static_cast<size_t>(cout));
  for (int i = 0; i < cout; ++i) {
    int32_t m, s;
    isa::quantize_multiplier(1.0 / (std::sqrt(static_cast<double>(kk)) * 60.0), &m, &s);
    mult[i] = m;
    shift[i] = static_cast<int8_t>(s);
  }
  c.bias = add(bias.data(), bias.size() * 4, static_cast<uint32_t>(cout));
  if (out_t != isa::DType::kInt32) {
    c.multiplier = add(mult.data(), mult.size() * 4, static_cast<uint32_t>(cout));
    c.shift = add(shift.data(), shift.size(), static_cast<uint32_t>(cout));
    c.act_min = 0;
  } else {
    c.act_min = INT32_MIN, c.act_max = INT32_MAX;
  }
  l->scratch.resize(64);
  l->mem.inputs.push_back({l->in.data(), l->in.size()});
  l->mem.outputs.push_back({l->out.data(), l->out.size()});
  l->mem.constants = {l->consts.data(), l->consts.size()};
  l->mem.scratch = {l->scratch.data(), l->scratch.size()};
  l->macs = static_cast<double>(oh) * ow * cout * kk;
  return l;
}

void run_layer(benchmark::State& st, const sim::KernelTable* table, int h, int w, int cin, int cout,
               int k, int stride, int groups, bool signed_in, int threads) {
  const Machine& m = machine();
  auto l = make_layer(h, w, cin, cout, k, stride, groups, signed_in);
  sim::set_sim_threads(threads);
  // Pinned as libdnn pins a loaded model's constants: no fingerprint of the
  // weights per run (1.3 MB for the classifier-sized FC, more than its MACs).
  sim::pin_constants(l->mem.constants.data, l->mem.constants.size);
  table->conv(l->c, l->mem);  // packs the weights (first run)
  const double t0 = thread_seconds();
  for (auto _ : st) {
    table->conv(l->c, l->mem);
    benchmark::ClobberMemory();
  }
  const double cpu = thread_seconds() - t0;
  sim::set_sim_threads(1);
  sim::unpin_constants(l->mem.constants.data);
  const double macs = l->macs * static_cast<double>(st.iterations());
  st.counters["GMAC/s"] = benchmark::Counter(macs / 1e9, benchmark::Counter::kIsRate);
  if (threads == 1) {
    const double mpc = macs / (cpu * m.hz);
    st.counters["MACs/cycle"] = mpc;
    st.counters["peak%"] = 100.0 * mpc / bench::table_peak(*table).macs_per_cycle;
  }
}

struct Shape {
  const char* name;
  int h, w, cin, cout, k, stride, groups;
  bool signed_in = false;  // inputs with negative values (else post-ReLU)
};
// Representative layers (input size, channels, kernel, stride, groups).
const Shape kShapes[] = {
    {"mbv1_conv1x1_56x56x128x128", 56, 56, 128, 128, 1, 1, 1},
    {"mbv1_conv1x1_14x14x512x512", 14, 14, 512, 512, 1, 1, 1},
    {"mbv1_conv1x1_7x7x1024x1024", 7, 7, 1024, 1024, 1, 1, 1},
    {"mbv2_conv1x1_56x56x24x144", 56, 56, 24, 144, 1, 1, 1},
    {"mbv2_conv1x1_28x28x192x32", 28, 28, 192, 32, 1, 1, 1},
    {"mbv2_conv1x1_56x56x96x24", 56, 56, 96, 24, 1, 1, 1},
    {"conv3x3s2_224x224x3x32", 224, 224, 3, 32, 3, 2, 1},
    {"resnet_conv3x3_56x56x64x64", 56, 56, 64, 64, 3, 1, 1},
    {"resnet_conv3x3_28x28x128x128", 28, 28, 128, 128, 3, 1, 1},
    {"resnet_conv3x3_7x7x512x512", 7, 7, 512, 512, 3, 1, 1},
    {"signed_conv1x1_14x14x512x512", 14, 14, 512, 512, 1, 1, 1, true},
    {"signed_conv3x3_28x28x128x128", 28, 28, 128, 128, 3, 1, 1, true},
    {"dw3x3_112x112x32", 112, 112, 32, 32, 3, 1, 32},
    {"dw3x3s2_112x112x96", 112, 112, 96, 96, 3, 2, 96},
    {"dw3x3_14x14x576", 14, 14, 576, 576, 3, 1, 576},
    {"dw3x3_56x56x144", 56, 56, 144, 144, 3, 1, 144},
    {"dw3x3s2_56x56x144", 56, 56, 144, 144, 3, 2, 144},
    {"fc_1x1x1280x1000", 1, 1, 1280, 1000, 1, 1, 1},
    {"head1x1_32x32x32x6", 32, 32, 32, 6, 1, 1, 1},
    // PP-OCR direction classifier (48x192, few channels, signed inputs)
    {"cls_dw1x1_48x192x3", 48, 192, 3, 3, 1, 1, 3, true},
    {"cls_conv3x3s2_48x192x3x8", 48, 192, 3, 8, 3, 2, 1, true},
    {"cls_conv1x1_24x96x8x8", 24, 96, 8, 8, 1, 1, 1, true},
    {"cls_dw3x3s2_24x96x8", 24, 96, 8, 8, 3, 2, 8, true},
    {"cls_conv1x1_3x96x16x88", 3, 96, 16, 88, 1, 1, 1, true},
    {"cls_dw5x5_3x96x88", 3, 96, 88, 88, 5, 1, 88, true},
};

#if defined(OPENBPU_BENCH_MODELS)
// MobileNetV1 224x224 nv12 (writer-built, random weights) as one program.
struct ModelRun {
  std::vector<isa::Instruction> ins;
  std::vector<uint8_t> data, input, output, scratch;
  sim::Memory mem;
  double macs = 0;
};
// The writer-built MobileNetV1's BPU program.
std::unique_ptr<ModelRun> load_mobilenet() {
  auto r = std::make_unique<ModelRun>();
  openbpu::testing::MobileNetV1 net;
  const std::vector<uint8_t> file = net.build();
  fb::ModelFileT f;
  std::string err;
  if (!model::unpack_model_file(file.data(), file.size(), &f, &r->data, &err)) std::abort();
  const fb::BpuProgramT* bpu = nullptr;
  for (const auto& seg : f.models[0]->segments)
    if (seg->kind.AsBpuProgram() != nullptr && bpu == nullptr) bpu = seg->kind.AsBpuProgram();
  if (bpu == nullptr) std::abort();
  if (!isa::decode_program(r->data.data() + bpu->code->offset(), bpu->code->size(), &r->ins, &err))
    std::abort();
  r->macs = static_cast<double>(bpu->macs);
  r->input.assign(16 << 20, 100);
  r->output.assign(16 << 20, 0);
  r->scratch.assign(bpu->scratch_size, 0);
  // Every input and output index the program may use shares one buffer.
  for (int i = 0; i < 8; ++i) {
    r->mem.inputs.push_back({r->input.data(), r->input.size()});
    r->mem.outputs.push_back({r->output.data(), r->output.size()});
  }
  r->mem.constants = {r->data.data() + bpu->constants->offset(), bpu->constants->size()};
  r->mem.scratch = {r->scratch.data(), r->scratch.size()};
  // OPENBPU_BENCH_PIN=1: pin the constants (no fingerprint pass per run).
  if (const char* pin = std::getenv("OPENBPU_BENCH_PIN"); pin != nullptr && *pin == '1')
    sim::pin_constants(r->mem.constants.data, r->mem.constants.size);
  return r;
}

void run_model(benchmark::State& st, const sim::KernelTable* table, int threads) {
  const Machine& m = machine();
  static std::unique_ptr<ModelRun> net = load_mobilenet();
  sim::set_sim_threads(threads);
  sim::execute_range(net->ins, 0, net->ins.size(), net->mem, *table);
  const double t0 = thread_seconds();
  for (auto _ : st) {
    sim::execute_range(net->ins, 0, net->ins.size(), net->mem, *table);
    benchmark::ClobberMemory();
  }
  const double cpu = thread_seconds() - t0;
  sim::set_sim_threads(1);
  const double macs = net->macs * static_cast<double>(st.iterations());
  if (threads == 1) {
    st.counters["MACs/cycle"] = macs / (cpu * m.hz);
    st.counters["peak%"] =
        100.0 * macs / (cpu * m.hz) / bench::table_peak(*table).macs_per_cycle;
  }
  st.counters["GMAC/s"] = benchmark::Counter(macs / 1e9, benchmark::Counter::kIsRate);
}

#endif

void register_all() {
#if defined(OPENBPU_BENCH_MODELS)
  for (const sim::KernelTable* t : sim::available_kernels()) {
    if (std::string(t->name) == "reference") continue;
    for (int threads : {1, 2}) {
      const std::string name = std::string("model/") + t->name +
                               "/mobilenetv1_224_nv12/threads:" + std::to_string(threads);
      auto* b = benchmark::RegisterBenchmark(
          name.c_str(), [=](benchmark::State& st) { run_model(st, t, threads); });
      b->Unit(benchmark::kMillisecond);
      if (threads > 1) b->UseRealTime();
    }
  }
#endif
  for (const sim::KernelTable* t : sim::available_kernels()) {
    const std::string tn = t->name;
    for (const Shape& s : kShapes) {
      if (tn == "reference" && s.h * s.w * s.cin * s.cout / s.groups > 56 * 56 * 64 * 64) continue;
      for (int threads : {1, 2}) {
        if (threads == 2 && (tn == "reference" || tn == "portable")) continue;
        const std::string name =
            std::string("conv/") + tn + "/" + s.name + "/threads:" + std::to_string(threads);
        auto* b = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
          run_layer(st, t, s.h, s.w, s.cin, s.cout, s.k, s.stride, s.groups, s.signed_in, threads);
        });
        b->Unit(benchmark::kMicrosecond);
        if (threads > 1) b->UseRealTime();
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--layers") return bench::run_layers(argc - i, argv + i);
  machine();
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
