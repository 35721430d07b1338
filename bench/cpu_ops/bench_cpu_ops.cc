// SPDX-License-Identifier: Apache-2.0
// Float CPU operator benchmark (docs/cpu_ops.md section 3): the convolution /
// pooling / Gemm stacks of ResNet18 and MobileNetV2 at 224x224, batch 1,
// float32, one thread - what the converter's calibration runs per image - with
// the sgemm kernel the CPU selects and with the portable kernel (the peer
// printed as a ratio in the same run), and sgemm alone.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "runtime/cpu_ops/sgemm.h"
#include "tests/cpu_ops/op_test_util.h"

namespace openbpu::rt::test {
namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_cpu_ops: %s\n", what.c_str());
  std::exit(1);
}

struct Layer {
  std::string kind;  // "conv", "maxpool", "gap", "gemm", "add"
  int64_t c, h, w;   // input
  int64_t m, k, s, p, g;
};

struct Stage {
  CpuOpDef def;
  std::vector<std::unique_ptr<T>> ins, outs;
  std::unique_ptr<CpuKernel> kernel;
  double macs = 0;
  std::string kind;
};

Stage make_stage(const Layer& l) {
  Stage st;
  st.kind = l.kind == "conv" && l.g > 1    ? "dwconv"
            : l.kind == "conv" && l.k == 1 ? "conv1x1"
                                           : l.kind;
  auto add_in = [&](T t) { st.ins.push_back(std::make_unique<T>(std::move(t))); };
  auto add_out = [&](T t) { st.outs.push_back(std::make_unique<T>(std::move(t))); };
  if (l.kind == "conv") {
    const int64_t oh = (l.h + 2 * l.p - l.k) / l.s + 1, ow = (l.w + 2 * l.p - l.k) / l.s + 1;
    st.def = op("Conv");
    set_ints(&st.def, "kernel_shape", {l.k, l.k});
    set_ints(&st.def, "strides", {l.s, l.s});
    set_ints(&st.def, "pads", {l.p, l.p, l.p, l.p});
    set_int(&st.def, "group", l.g);
    add_in(f32({1, l.c, l.h, l.w}));
    add_in(f32({l.m, l.c / l.g, l.k, l.k}));
    add_in(f32({l.m}));
    add_out(f32({1, l.m, oh, ow}));
    st.macs = static_cast<double>(l.m) * oh * ow * (l.c / l.g) * l.k * l.k;
  } else if (l.kind == "maxpool") {
    const int64_t oh = (l.h + 2 * l.p - l.k) / l.s + 1, ow = (l.w + 2 * l.p - l.k) / l.s + 1;
    st.def = op("MaxPool");
    set_ints(&st.def, "kernel_shape", {l.k, l.k});
    set_ints(&st.def, "strides", {l.s, l.s});
    set_ints(&st.def, "pads", {l.p, l.p, l.p, l.p});
    add_in(f32({1, l.c, l.h, l.w}));
    add_out(f32({1, l.c, oh, ow}));
  } else if (l.kind == "gap") {
    st.def = op("GlobalAveragePool");
    add_in(f32({1, l.c, l.h, l.w}));
    add_out(f32({1, l.c, 1, 1}));
  } else if (l.kind == "gemm") {
    st.def = op("Gemm");
    set_int(&st.def, "transB", 1);
    add_in(f32({1, l.c}));
    add_in(f32({l.m, l.c}));
    add_in(f32({l.m}));
    add_out(f32({1, l.m}));
    st.macs = static_cast<double>(l.c) * l.m;
  } else if (l.kind == "relu" || l.kind == "add") {
    st.def = op(l.kind == "relu" ? "Relu" : "Add");
    add_in(f32({1, l.c, l.h, l.w}));
    if (l.kind == "add") add_in(f32({1, l.c, l.h, l.w}));
    add_out(f32({1, l.c, l.h, l.w}));
  }
  uint32_t seed = 1;
  for (auto& t : st.ins) fill_random(t.get(), seed++, -0.5f, 0.5f);
  std::vector<T*> in, out;
  for (auto& t : st.ins) in.push_back(t.get());
  for (auto& t : st.outs) out.push_back(t.get());
  const Status s = create(st.def, in, out, &st.kernel);
  if (!s.ok()) fail(st.def.op_type + ": " + s.message());
  return st;
}

std::vector<Layer> resnet18() {
  std::vector<Layer> v;
  v.push_back({"conv", 3, 224, 224, 64, 7, 2, 3, 1});
  v.push_back({"relu", 64, 112, 112, 0, 0, 0, 0, 0});
  v.push_back({"maxpool", 64, 112, 112, 0, 3, 2, 1, 0});
  int64_t c = 64, hw = 56;
  for (int64_t m : {64, 128, 256, 512}) {
    for (int b = 0; b < 2; ++b) {
      const int64_t s = (b == 0 && m != 64) ? 2 : 1;
      const int64_t ohw = hw / s;
      v.push_back({"conv", c, hw, hw, m, 3, s, 1, 1});
      v.push_back({"relu", m, ohw, ohw, 0, 0, 0, 0, 0});
      v.push_back({"conv", m, ohw, ohw, m, 3, 1, 1, 1});
      if (s == 2) v.push_back({"conv", c, hw, hw, m, 1, 2, 0, 1});
      v.push_back({"add", m, ohw, ohw, 0, 0, 0, 0, 0});
      v.push_back({"relu", m, ohw, ohw, 0, 0, 0, 0, 0});
      c = m;
      hw = ohw;
    }
  }
  v.push_back({"gap", 512, 7, 7, 0, 0, 0, 0, 0});
  v.push_back({"gemm", 512, 1, 1, 1000, 0, 0, 0, 0});
  return v;
}

std::vector<Layer> mobilenet_v2() {
  std::vector<Layer> v;
  v.push_back({"conv", 3, 224, 224, 32, 3, 2, 1, 1});
  int64_t c = 32, hw = 112;
  const int64_t cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                             {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& r : cfg) {
    for (int64_t i = 0; i < r[2]; ++i) {
      const int64_t s = i == 0 ? r[3] : 1, hidden = c * r[0];
      if (r[0] != 1) v.push_back({"conv", c, hw, hw, hidden, 1, 1, 0, 1});
      v.push_back({"conv", hidden, hw, hw, hidden, 3, s, 1, hidden});
      hw /= s;
      v.push_back({"conv", hidden, hw, hw, r[1], 1, 1, 0, 1});
      c = r[1];
    }
  }
  v.push_back({"conv", 320, 7, 7, 1280, 1, 1, 0, 1});
  v.push_back({"gap", 1280, 7, 7, 0, 0, 0, 0, 0});
  v.push_back({"gemm", 1280, 1, 1, 1000, 0, 0, 0, 0});
  return v;
}

// Best of 3 frames in seconds; prints the time per layer kind.
double time_stack(const char* name, const std::vector<Layer>& layers) {
  std::vector<Stage> stages;
  for (const auto& l : layers) stages.push_back(make_stage(l));
  std::map<std::string, double> per_kind;
  double macs = 0;
  for (const auto& s : stages) macs += s.macs;
  const int reps = 3;
  double best = 1e9;
  for (int r = 0; r < reps; ++r) {
    std::map<std::string, double> kinds;
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& s : stages) {
      std::vector<T*> in, out;
      for (auto& t : s.ins) in.push_back(t.get());
      for (auto& t : s.outs) out.push_back(t.get());
      const auto a = std::chrono::steady_clock::now();
      if (!s.kernel->run(tensors(in), tensors(out)).ok()) fail(std::string(name) + ": " + s.def.op_type);
      kinds[s.kind] += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (dt < best) best = dt, per_kind = kinds;
  }
  std::printf("%s (1x3x224x224, sgemm %s): %.1f ms per frame, %.2f GMAC, %.1f GFLOP/s\n", name,
              sgemm_kernel_name(), best * 1e3, macs * 1e-9, 2 * macs / best * 1e-9);
  for (const auto& [k, t] : per_kind) std::printf("  %-8s %8.2f ms\n", k.c_str(), t * 1e3);
  return best;
}

// The stack with the selected sgemm kernel and with the portable one (what
// non-AVX2 x86 and aarch64 boards use), their ratio measured in the same run.
void compare_kernels(const char* name, const std::vector<Layer>& layers) {
  const double selected = time_stack(name, layers);
  sgemm_force_generic(true);
  const double generic = time_stack(name, layers);
  sgemm_force_generic(false);
  std::printf("%s: selected / portable kernel time = %.2f\n\n", name, selected / generic);
}

void bench_sgemm() {
  for (int64_t n : {64, 256, 512, 1024}) {
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    double best = 1e9;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      sgemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (c[0] != 0.125f * static_cast<float>(n)) fail("sgemm: wrong result");
    std::printf("sgemm %4lld^3: %.2f ms, %.1f GFLOP/s\n", static_cast<long long>(n), best * 1e3,
                2.0 * n * n * n / best * 1e-9);
  }
}

}  // namespace
}  // namespace openbpu::rt::test

int main() {
  using namespace openbpu::rt::test;
  compare_kernels("ResNet18", resnet18());
  compare_kernels("MobileNetV2", mobilenet_v2());
  bench_sgemm();
  return 0;
}
