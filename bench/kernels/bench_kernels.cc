// SPDX-License-Identifier: Apache-2.0
// Microbenchmarks of the optimized simulator kernels (Google Benchmark).
//
// Each convolution benchmark runs one layer shape of MobileNetV1/V2 and
// ResNet18 with one dispatch path and reports
//   MACs/cycle  achieved int8 multiply-accumulates per core clock cycle
//   peak%       that number over this CPU's measured int8 peak
// The core clock and the peak are measured in the same run: the clock with a
// chain of dependent adds (one cycle each), the peak with an unrolled loop of
// the path's exact multiply-accumulate instruction on independent
// accumulators (AVX2: vpmaddwd + vpaddd, 16 MACs per pair; AVX-512 VNNI:
// vpdpbusd, 64 MACs; NEON: smlal, 4 MACs; SDOT, 16 MACs). Times are CPU
// times of the benchmark thread, which matters on a shared machine.
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
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

using namespace openbpu;

double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Core clock: a dependent chain of 1-cycle adds, best of several tries.
double measure_hz() {
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    uint64_t x = 1;
    const uint64_t n = 50000000;
    const double t0 = thread_seconds();
    for (uint64_t i = 0; i < n; ++i) {
      asm volatile("add $1, %0" : "+r"(x));
      asm volatile("add $1, %0" : "+r"(x));
      asm volatile("add $1, %0" : "+r"(x));
      asm volatile("add $1, %0" : "+r"(x));
    }
    const double dt = thread_seconds() - t0;
    benchmark::DoNotOptimize(x);
    best = std::max(best, 4.0 * static_cast<double>(n) / dt);
  }
  return best;
}

#if defined(__x86_64__)
// AVX2 int8 peak: vpmaddwd + vpaddd on 8 independent accumulators, each with
// its own operand pair (4 inputs x 2 weights) so that no product is shared.
__attribute__((target("avx2"))) double avx2_peak_macs_per_s() {
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    __m256i acc[8];
    for (auto& a : acc) a = _mm256_set1_epi32(rep);
    __m256i x0 = _mm256_set1_epi16(3), x1 = _mm256_set1_epi16(5), x2 = _mm256_set1_epi16(7),
            x3 = _mm256_set1_epi16(9), w0 = _mm256_set1_epi16(2), w1 = _mm256_set1_epi16(4);
    const int64_t n = 20000000;
    const double t0 = thread_seconds();
    for (int64_t i = 0; i < n; ++i) {
      acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(x0, w0));
      acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(x1, w0));
      acc[2] = _mm256_add_epi32(acc[2], _mm256_madd_epi16(x2, w0));
      acc[3] = _mm256_add_epi32(acc[3], _mm256_madd_epi16(x3, w0));
      acc[4] = _mm256_add_epi32(acc[4], _mm256_madd_epi16(x0, w1));
      acc[5] = _mm256_add_epi32(acc[5], _mm256_madd_epi16(x1, w1));
      acc[6] = _mm256_add_epi32(acc[6], _mm256_madd_epi16(x2, w1));
      acc[7] = _mm256_add_epi32(acc[7], _mm256_madd_epi16(x3, w1));
      // Opaque to the compiler: nothing can be hoisted out of the loop.
      asm volatile(""
                   : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]), "+x"(acc[4]),
                     "+x"(acc[5]), "+x"(acc[6]), "+x"(acc[7]), "+x"(x0), "+x"(x1), "+x"(x2),
                     "+x"(x3), "+x"(w0), "+x"(w1));
    }
    const double dt = thread_seconds() - t0;
    int32_t sink[8];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sink), acc[0]);
    benchmark::DoNotOptimize(sink);
    best = std::max(best, 8.0 * 16.0 * static_cast<double>(n) / dt);
  }
  return best;
}
// AVX2 int8 peak of the path for inputs >= 0: vpmaddubsw + vpmaddwd(ones) +
// vpaddd, 32 MACs per triple, 6 independent accumulators.
__attribute__((target("avx2"))) double avx2_u8_peak_macs_per_s() {
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    __m256i a0 = _mm256_set1_epi32(rep), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
    __m256i x0 = _mm256_set1_epi8(3), x1 = _mm256_set1_epi8(4), x2 = _mm256_set1_epi8(5),
            w0 = _mm256_set1_epi8(7), w1 = _mm256_set1_epi8(9), one = _mm256_set1_epi16(1);
    const int64_t n = 20000000;
    const double t0 = thread_seconds();
    for (int64_t i = 0; i < n; ++i) {
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_maddubs_epi16(x0, w0), one));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_maddubs_epi16(x1, w0), one));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_maddubs_epi16(x2, w0), one));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_maddubs_epi16(x0, w1), one));
      a4 = _mm256_add_epi32(a4, _mm256_madd_epi16(_mm256_maddubs_epi16(x1, w1), one));
      a5 = _mm256_add_epi32(a5, _mm256_madd_epi16(_mm256_maddubs_epi16(x2, w1), one));
      asm volatile(""
                   : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(x0), "+x"(x1),
                     "+x"(x2), "+x"(w0), "+x"(w1), "+x"(one));
    }
    const double dt = thread_seconds() - t0;
    int32_t sink[8];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sink),
                        _mm256_add_epi32(a0, _mm256_add_epi32(a1, a2)));
    benchmark::DoNotOptimize(sink);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sink),
                        _mm256_add_epi32(a3, _mm256_add_epi32(a4, a5)));
    benchmark::DoNotOptimize(sink);
    best = std::max(best, 6.0 * 32.0 * static_cast<double>(n) / dt);
  }
  return best;
}
#endif

struct Machine {
  double hz = 0;
  double peak = 0;  // int8 MACs per cycle of the best path here
  const char* peak_what = "";
};
const Machine& machine() {
  static const Machine m = [] {
    Machine r;
    r.hz = measure_hz();
#if defined(__x86_64__)
    if (sim::kern::detect_cpu().avx2) {
      // The best exact int8 instruction mix of the AVX2 table: int16 madd for
      // any input, maddubs for inputs >= 0; the peak is the faster one.
      const double p16 = avx2_peak_macs_per_s() / r.hz, pu8 = avx2_u8_peak_macs_per_s() / r.hz;
      std::printf(
          "AVX2 int16 vpmaddwd+vpaddd: %.1f MACs/cycle; u8 vpmaddubsw+vpmaddwd+vpaddd: %.1f\n", p16,
          pu8);
      r.peak = std::max(p16, pu8);
      r.peak_what = pu8 > p16 ? "AVX2 vpmaddubsw+vpmaddwd+vpaddd" : "AVX2 vpmaddwd+vpaddd";
    }
#endif
    if (r.peak == 0) {
      r.peak = 1;
      r.peak_what = "none measured";
    }
    std::printf("core clock %.2f GHz (dependent-add chain); int8 peak %.1f MACs/cycle (%s)\n",
                r.hz / 1e9, r.peak, r.peak_what);
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
  table->conv(l->c, l->mem);  // packs the weights (first run)
  const double t0 = thread_seconds();
  for (auto _ : st) {
    table->conv(l->c, l->mem);
    benchmark::ClobberMemory();
  }
  const double cpu = thread_seconds() - t0;
  sim::set_sim_threads(1);
  const double macs = l->macs * static_cast<double>(st.iterations());
  st.counters["GMAC/s"] = benchmark::Counter(macs / 1e9, benchmark::Counter::kIsRate);
  if (threads == 1) {
    const double mpc = macs / (cpu * m.hz);
    st.counters["MACs/cycle"] = mpc;
    st.counters["peak%"] = 100.0 * mpc / m.peak;
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
    {"fc_1x1x1280x1000", 1, 1, 1280, 1000, 1, 1, 1},
    {"head1x1_32x32x32x6", 32, 32, 32, 6, 1, 1, 1},
};

#if defined(OPENBPU_BENCH_MODELS)
// MobileNetV1 224x224 nv12 (writer-built, random weights) as one program.
struct ModelRun {
  std::vector<isa::Instruction> ins;
  std::vector<uint8_t> data, input, output, scratch;
  sim::Memory mem;
  double macs = 0;
};
// The first BPU program of a model file (the writer-built MobileNetV1 when
// path is empty).
std::unique_ptr<ModelRun> load_mobilenet(const std::string& path = "") {
  auto r = std::make_unique<ModelRun>();
  std::vector<uint8_t> file;
  if (path.empty()) {
    openbpu::testing::MobileNetV1 net;
    file = net.build();
  } else {
    FILE* fp = std::fopen(path.c_str(), "rb");
    if (fp == nullptr) std::abort();
    std::fseek(fp, 0, SEEK_END);
    file.resize(static_cast<size_t>(std::ftell(fp)));
    std::fseek(fp, 0, SEEK_SET);
    if (std::fread(file.data(), 1, file.size(), fp) != file.size()) std::abort();
    std::fclose(fp);
  }
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
    st.counters["peak%"] = 100.0 * macs / (cpu * m.hz) / m.peak;
  }
  st.counters["GMAC/s"] = benchmark::Counter(macs / 1e9, benchmark::Counter::kIsRate);
}

// --layers: CPU time of every instruction of the model with the best table.
void print_layers(const std::string& path) {
  std::unique_ptr<ModelRun> net = load_mobilenet(path);
  const sim::KernelTable& t = sim::best_kernels();
  std::vector<double> best(net->ins.size(), 1e30);
  for (int rep = 0; rep < 5; ++rep) {
    for (size_t i = 0; i < net->ins.size(); ++i) {
      const double t0 = thread_seconds();
      sim::execute(net->ins[i], net->mem, t);
      best[i] = std::min(best[i], thread_seconds() - t0);
    }
  }
  double total = 0;
  for (size_t i = 0; i < net->ins.size(); ++i) {
    total += best[i];
    std::string what = isa::opcode_name(net->ins[i].opcode);
    double macs = 0;
    if (auto* c = std::get_if<isa::Conv>(&net->ins[i].body)) {
      macs = static_cast<double>(c->out.dims[1]) * c->out.dims[2] * c->out.dims[3] * c->kernel_h *
             c->kernel_w * (c->in.dims[3] / c->groups);
      what += std::string(" ") + isa::dtype_name(c->in.dtype) + ">" +
              isa::dtype_name(c->out.dtype) + (c->has_residual ? "+r" : "") + " cs" +
              std::to_string(c->in.strides[3]) + " " + std::to_string(c->in.dims[1]) + "x" +
              std::to_string(c->in.dims[2]) + "x" + std::to_string(c->in.dims[3]) + "->" +
              std::to_string(c->out.dims[3]) + " k" + std::to_string(c->kernel_h) + " s" +
              std::to_string(c->stride_h) + " g" + std::to_string(c->groups);
    }
    std::printf("%3zu %-40s %8.1f us  %6.2f MACs/cycle\n", i, what.c_str(), best[i] * 1e6,
                macs / (best[i] * machine().hz));
  }
  std::printf("total %.2f ms (%s)\n", total * 1e3, t.name);
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
  machine();
#if defined(OPENBPU_BENCH_MODELS)
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--layers") {
      print_layers(i + 1 < argc ? argv[i + 1] : "");
      return 0;
    }
#endif
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
