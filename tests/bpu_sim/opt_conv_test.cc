// SPDX-License-Identifier: Apache-2.0
// Differential tests of the optimized convolution kernels against the
// reference kernels, on every dispatch path usable on this machine (plus the
// AVX-512 VNNI GEMM through SIMDe's emulation where that is built): random
// shapes, strides, paddings, dilations, groups (dense, depthwise, depthwise
// with a channel multiplier, grouped, fully connected), channel counts around
// every vector width, int8/int16 inputs, int8/int16/int32 outputs, residual
// inputs, strided views, extreme values that saturate, one and two threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cfenv>
#include <cstdio>
#include <string>
#include <vector>

#include "bpu_sim/isa/numerics.h"
#include "bpu_sim/kernels/kernels.h"
#include "tests/bpu_sim/opt_test_util.h"

namespace openbpu::sim::kern {
#if defined(OPENBPU_TEST_SIMDE_VNNI)
const ConvIsa& avx512vnni_emulated_isa();
#endif
}  // namespace openbpu::sim::kern

namespace openbpu::sim::test {
namespace {

struct Case {
  isa::Instruction ins;
  Arena arena;
  std::string desc;
};

const std::vector<int> kChannels = {1,  2,  3,  4,  5,  7,  8,  9,  12, 15, 16, 17,
                                    23, 24, 31, 32, 33, 40, 47, 48, 63, 64, 65, 96};

// A random valid conv/deconv instruction with its arena; false if the
// validator rejects the draw (the caller draws again).
bool make_case(Rng& r, bool deconv, Case* out, bool stem = false) {
  isa::Conv c;
  int n = r.chance(0.2) ? 2 : 1;
  int cin, cout, groups = 1, kh, kw;
  int ih = r.uniform(1, 12), iw = r.uniform(1, 12);
  const int kind = stem ? -1 : r.uniform(0, 9);
  std::string what;
  if (stem) {  // image-input stems (7x7 s2 of 3 channels): ConvPlan::columns
    ih = r.uniform(7, 40), iw = r.uniform(7, 40);
    cin = r.pick<int>({1, 3, 3}), cout = r.pick<int>({32, 64, 64, 128});
    kh = r.pick<int>({5, 7}), kw = r.chance(0.8) ? kh : r.uniform(2, 7);
    what = "stem";
  } else if (kind <= 3) {  // dense
    cin = r.pick(kChannels), cout = r.pick(kChannels);
    kh = r.pick<int>({1, 1, 2, 3, 3, 5}), kw = r.chance(0.8) ? kh : r.uniform(1, 4);
    what = "dense";
  } else if (kind <= 5) {  // depthwise
    cin = cout = groups = r.pick(kChannels);
    kh = r.pick<int>({1, 3, 3, 5}), kw = r.chance(0.8) ? kh : r.uniform(1, 4);
    what = "depthwise";
  } else if (kind == 6) {  // depthwise with a channel multiplier
    cin = groups = r.pick<int>({1, 3, 8, 16, 17});
    cout = cin * r.pick<int>({2, 3});
    kh = kw = r.pick<int>({1, 3});
    what = "dw-multiplier";
  } else if (kind == 7) {  // grouped
    groups = r.pick<int>({2, 3, 4, 8});
    cin = groups * r.pick<int>({1, 2, 3, 4, 5, 8, 9, 16});
    cout = groups * r.pick<int>({1, 2, 4, 7, 8, 16});
    kh = kw = r.pick<int>({1, 3});
    what = "grouped";
  } else if (kind == 8) {  // fully connected
    ih = iw = 1;
    cin = r.pick<int>({16, 64, 100, 256, 1024}), cout = r.pick<int>({1, 10, 16, 33, 100});
    kh = kw = 1;
    what = "fc";
  } else {  // pointwise on a larger map
    ih = r.uniform(8, 20), iw = r.uniform(8, 20);
    cin = r.pick(kChannels), cout = r.pick(kChannels);
    kh = kw = 1;
    what = "pointwise";
  }
  c.kernel_h = kh, c.kernel_w = kw;
  c.groups = groups;
  c.stride_h = r.pick<int>({1, 1, 2, 3}), c.stride_w = r.chance(0.8) ? c.stride_h : r.uniform(1, 3);
  c.dilation_h = r.chance(0.8) ? 1 : 2,
  c.dilation_w = r.chance(0.8) ? c.dilation_h : r.uniform(1, 2);
  if (stem) c.dilation_h = c.dilation_w = 1, c.stride_w = c.stride_h;
  auto pad = [&](int k) { return r.chance(0.3) ? 0 : r.uniform(0, k); };
  c.pad_top = pad(kh), c.pad_bottom = pad(kh), c.pad_left = pad(kw), c.pad_right = pad(kw);
  int oh, ow;
  if (!deconv) {
    const int sh = c.dilation_h * (kh - 1) + 1, sw = c.dilation_w * (kw - 1) + 1;
    if (ih + c.pad_top + c.pad_bottom < sh || iw + c.pad_left + c.pad_right < sw) return false;
    oh = (ih + c.pad_top + c.pad_bottom - sh) / c.stride_h + 1;
    ow = (iw + c.pad_left + c.pad_right - sw) / c.stride_w + 1;
  } else {
    oh = (ih - 1) * c.stride_h - c.pad_top - c.pad_bottom + c.dilation_h * (kh - 1) + 1;
    ow = (iw - 1) * c.stride_w - c.pad_left - c.pad_right + c.dilation_w * (kw - 1) + 1;
    if (oh < 1 || ow < 1) return false;
  }
  const isa::DType in_t = r.chance(0.1) ? isa::DType::kInt16 : isa::DType::kInt8;
  const int ot = r.uniform(0, 9);
  const isa::DType out_t =
      ot < 6 ? isa::DType::kInt8 : (ot < 8 ? isa::DType::kInt16 : isa::DType::kInt32);
  const bool residual = out_t != isa::DType::kInt32 && r.chance(0.3);

  Case cs;
  Arena& a = cs.arena;
  c.in = place(r, &a.input, isa::Region::kInput, in_t, {n, ih, iw, cin}, true);
  if (in_t == isa::DType::kInt8 && r.chance(0.35)) {  // post-ReLU input: no negative value
    for (size_t i = c.in.offset; i < a.input.size(); ++i) a.input[i] &= 0x7f;
  }
  c.out = place(r, &a.output, isa::Region::kOutput, out_t, {n, oh, ow, cout}, true);
  const int cin_g = cin / groups;
  const int64_t k = static_cast<int64_t>(kh) * kw * cin_g;
  std::vector<int8_t> w(static_cast<size_t>(cout * k));
  // Symmetric weights ([-127, 127], as the converter quantizes) or the whole
  // int8 range (-128 sends depthwise to its generic path).
  const bool extreme_w = r.chance(0.2);
  const int wmin = r.chance(0.5) ? -127 : -128;
  for (auto& v : w)
    v = static_cast<int8_t>(extreme_w && r.chance(0.5) ? (r.chance(0.5) ? wmin : 127)
                                                       : r.uniform(wmin, 127));
  c.weight = add_const(&a.consts, w.data(), w.size(), static_cast<uint32_t>(w.size()));
  // Bias within the int32 accumulator bound the validator enforces.
  const int64_t room = INT32_MAX - k * 128 * 128;
  if (room < 0) return false;
  if (r.chance(0.8)) {
    std::vector<int32_t> b(static_cast<size_t>(cout));
    const int64_t mag = r.chance(0.2) ? room : std::min<int64_t>(room, 1 << 16);
    for (auto& v : b)
      v = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(-mag, mag)(r.gen()));
    c.bias = add_const(&a.consts, b.data(), b.size() * 4, static_cast<uint32_t>(cout));
  }
  if (out_t != isa::DType::kInt32) {
    std::vector<int32_t> m(static_cast<size_t>(cout)), mr(static_cast<size_t>(cout));
    std::vector<int8_t> s(static_cast<size_t>(cout));
    const int mode = r.uniform(0, 4);
    for (int co = 0; co < cout; ++co) {
      if (mode == 4) {  // small or power-of-two ratios: exact halves (rounding ties) are common
        m[co] = r.chance(0.5) ? r.uniform(1, 15) : (1 << r.uniform(0, 30));
        s[co] = static_cast<int8_t>(r.uniform(0, 12) + (m[co] > 15 ? 24 : 0));
      } else if (mode == 0) {  // anything valid: saturating extremes, S = 0 and S = 63 included
        m[co] = r.chance(0.2) ? INT32_MAX
                              : std::uniform_int_distribution<int32_t>(1, INT32_MAX)(r.gen());
        s[co] = static_cast<int8_t>(r.chance(0.2) ? r.pick<int>({0, 1, 31, 32, 62, 63})
                                                  : r.uniform(0, 63));
      } else {  // typical converter ratios ~ 1 / (k * 64)
        m[co] = std::uniform_int_distribution<int32_t>(1 << 30, INT32_MAX)(r.gen());
        int sh =
            31 + 6 + static_cast<int>(std::log2(static_cast<double>(k) + 1)) + r.uniform(-4, 4);
        if (out_t == isa::DType::kInt16) sh -= 8;
        s[co] = static_cast<int8_t>(std::max(0, std::min(63, sh)));
      }
      mr[co] =
          r.chance(0.1) ? INT32_MAX : std::uniform_int_distribution<int32_t>(1, INT32_MAX)(r.gen());
      if (mode != 0 && s[co] <= 31)  // a residual of about the output's scale
        mr[co] = static_cast<int32_t>(
            std::min<int64_t>(INT32_MAX, int64_t{1} << std::max(0, s[co] - 1)));
    }
    c.multiplier = add_const(&a.consts, m.data(), m.size() * 4, static_cast<uint32_t>(cout));
    c.shift = add_const(&a.consts, s.data(), s.size(), static_cast<uint32_t>(cout));
    if (residual) {
      c.has_residual = 1;
      c.residual =
          place(r, &a.scratch, isa::Region::kScratch,
                r.chance(0.7) ? isa::DType::kInt8 : isa::DType::kInt16, {n, oh, ow, cout}, true);
      c.residual_multiplier =
          add_const(&a.consts, mr.data(), mr.size() * 4, static_cast<uint32_t>(cout));
    }
  }
  const int64_t tlo =
      out_t == isa::DType::kInt8 ? -128 : (out_t == isa::DType::kInt16 ? -32768 : INT32_MIN);
  const int64_t thi =
      out_t == isa::DType::kInt8 ? 127 : (out_t == isa::DType::kInt16 ? 32767 : INT32_MAX);
  c.act_min = static_cast<int32_t>(tlo), c.act_max = static_cast<int32_t>(thi);
  if (r.chance(0.4)) c.act_min = 0;
  if (r.chance(0.2))
    c.act_max = static_cast<int32_t>(std::max<int64_t>(c.act_min, r.uniform(0, 100)));
  // An asymmetric input's zero point: out-of-image taps read it (also with
  // inputs without negative values, which must then leave their variant).
  if (!deconv && in_t == isa::DType::kInt8 && r.chance(0.3))
    c.pad_value = r.chance(0.5) ? r.pick<int>({-128, 127}) : r.uniform(-128, 127);
  if (a.scratch.empty()) a.scratch.resize(16);
  cs.ins.opcode = deconv ? isa::Opcode::kDeconv : isa::Opcode::kConv;
  cs.ins.body = c;
  std::string err;
  if (!validate_instruction(cs.ins, a.layout(), &err)) return false;
  cs.desc = std::string(deconv ? "deconv " : "conv ") + what + " n" + std::to_string(n) + " " +
            std::to_string(ih) + "x" + std::to_string(iw) + "x" + std::to_string(cin) + " -> " +
            std::to_string(oh) + "x" + std::to_string(ow) + "x" + std::to_string(cout) + " k" +
            std::to_string(kh) + "x" + std::to_string(kw) + " s" + std::to_string(c.stride_h) +
            std::to_string(c.stride_w) + " d" + std::to_string(c.dilation_h) +
            std::to_string(c.dilation_w) + " g" + std::to_string(groups) + " in " +
            isa::dtype_name(in_t) + " out " + isa::dtype_name(out_t) + (residual ? " +res" : "") +
            (c.pad_value != 0 ? " pad " + std::to_string(c.pad_value) : "");
  *out = std::move(cs);
  return true;
}

int case_count() {
#if defined(__aarch64__)
  return 250;  // runs under qemu in the cross build
#else
  return 600;
#endif
}

void run_cases(uint32_t seed, bool deconv, int count, bool stem = false) {
  Rng r(seed);
  const auto tables = optimized_tables();
  ASSERT_FALSE(tables.empty());
  const SplitEveryConvolution split;
  int done = 0;
  while (done < count) {
    Case cs;
    if (!make_case(r, deconv, &cs, stem)) continue;
    ++done;
    for (const KernelTable* t : tables) {
      set_sim_threads(done % 4 == 0 ? 2 : 1);
      ASSERT_TRUE(same_as_reference(cs.ins, cs.arena, *t)) << cs.desc << " (case " << done << ")";
    }
  }
  set_sim_threads(1);
}

TEST(OptConv, RandomConvMatchesReferenceOnEveryPath) { run_cases(1234, false, case_count()); }

TEST(OptConv, RandomDeconvMatchesReferenceOnEveryPath) { run_cases(99, true, case_count() / 4); }

TEST(OptConv, ImageStemsMatchReferenceOnEveryPath) { run_cases(4242, false, 120, true); }

// Depthwise 1x1 over dense maps (the per-channel scale after an image
// input: the flat path), in place or not, pixel strides with padding.
TEST(OptConv, PerChannelScaleMatchesReference) {
  Rng r(4321);
  const auto tables = optimized_tables();
  int done = 0;
  while (done < case_count() / 4) {
    const int C = r.pick<int>({1, 2, 3, 4, 7, 8, 16, 24, 40, 88}), P = C + r.pick<int>({0, 0, 1, 5, 8});
    const int h = r.uniform(1, 40), w = r.uniform(1, 40);
    Arena a;
    isa::Conv c;
    auto dense = [&](std::vector<uint8_t>* region, isa::Region reg) {
      isa::TensorRef t;
      t.region = reg;
      t.dtype = isa::DType::kInt8;
      t.offset = region->size() + static_cast<size_t>(r.uniform(0, 8));
      const int d[4] = {1, h, w, C};
      const int64_t s[4] = {int64_t{h} * w * P, int64_t{w} * P, P, 1};
      for (int k = 0; k < 4; ++k) t.dims[k] = d[k], t.strides[k] = s[k];
      region->resize(t.offset + static_cast<size_t>(h) * w * P + static_cast<size_t>(r.uniform(0, 40)));
      r.fill(region->data(), region->size(), r.chance(0.2));
      return t;
    };
    c.in = dense(&a.scratch, isa::Region::kScratch);
    c.out = r.chance(0.4) ? c.in : dense(&a.output, isa::Region::kOutput);
    c.groups = C;
    std::vector<int8_t> wt(static_cast<size_t>(C));
    for (auto& v : wt) v = static_cast<int8_t>(r.uniform(-127, 127));
    c.weight = add_const(&a.consts, wt.data(), wt.size(), static_cast<uint32_t>(C));
    std::vector<int32_t> b(static_cast<size_t>(C)), m(static_cast<size_t>(C));
    std::vector<int8_t> sh(static_cast<size_t>(C));
    const bool m24 = r.chance(0.5);  // the converter's 24 bits (3-operation form) or 31
    for (int k = 0; k < C; ++k) {
      b[k] = r.uniform(-20000, 20000);
      m[k] = m24 ? r.uniform(1, (1 << 24) - 1)
                 : std::uniform_int_distribution<int32_t>(1 << 30, INT32_MAX)(r.gen());
      sh[k] = static_cast<int8_t>(r.uniform(r.chance(0.8) ? 33 : 20, 45));
    }
    c.bias = add_const(&a.consts, b.data(), b.size() * 4, static_cast<uint32_t>(C));
    c.multiplier = add_const(&a.consts, m.data(), m.size() * 4, static_cast<uint32_t>(C));
    c.shift = add_const(&a.consts, sh.data(), sh.size(), static_cast<uint32_t>(C));
    if (r.chance(0.4)) c.act_min = 0;
    if (a.output.empty()) a.output.resize(16);
    if (a.input.empty()) a.input.resize(16);
    isa::Instruction ins;
    ins.opcode = isa::Opcode::kConv;
    ins.body = c;
    std::string err;
    if (!validate_instruction(ins, a.layout(), &err)) continue;
    ++done;
    for (const KernelTable* t : tables)
      ASSERT_TRUE(same_as_reference(ins, a, *t))
          << "per-channel scale C" << C << " P" << P << " " << h << "x" << w << " case " << done;
  }
}

// A 1x1 depthwise over dense maps with bottom / right padding: the output
// is larger than the input and its padded pixels are bias-only results (the
// flat path must not take it, or it leaves them unwritten).
isa::Instruction padded_scale_case(Rng& r, int C, int P, int pb, int pr, Arena* a) {
  const int h = r.uniform(1, 12), w = r.uniform(1, 12);
  auto dense = [&](std::vector<uint8_t>* region, isa::Region reg, int hh, int ww) {
    isa::TensorRef t;
    t.region = reg;
    t.dtype = isa::DType::kInt8;
    const int d[4] = {1, hh, ww, C};
    const int64_t s[4] = {int64_t{hh} * ww * P, int64_t{ww} * P, P, 1};
    for (int k = 0; k < 4; ++k) t.dims[k] = d[k], t.strides[k] = s[k];
    region->resize(static_cast<size_t>(hh) * ww * P + 64);
    r.fill(region->data(), region->size(), false);
    return t;
  };
  isa::Conv c;
  c.in = dense(&a->scratch, isa::Region::kScratch, h, w);
  c.out = dense(&a->output, isa::Region::kOutput, h + pb, w + pr);
  c.groups = C;
  c.pad_bottom = pb, c.pad_right = pr;
  std::vector<int8_t> wt(static_cast<size_t>(C));
  std::vector<int32_t> b(static_cast<size_t>(C)), m(static_cast<size_t>(C));
  std::vector<int8_t> sh(static_cast<size_t>(C));
  for (int k = 0; k < C; ++k) {
    wt[k] = static_cast<int8_t>(r.uniform(-127, 127));
    b[k] = r.uniform(-20000, 20000);
    m[k] = std::uniform_int_distribution<int32_t>(1 << 30, INT32_MAX)(r.gen());
    sh[k] = static_cast<int8_t>(r.uniform(33, 40));
  }
  c.weight = add_const(&a->consts, wt.data(), wt.size(), static_cast<uint32_t>(C));
  c.bias = add_const(&a->consts, b.data(), b.size() * 4, static_cast<uint32_t>(C));
  c.multiplier = add_const(&a->consts, m.data(), m.size() * 4, static_cast<uint32_t>(C));
  c.shift = add_const(&a->consts, sh.data(), sh.size(), static_cast<uint32_t>(C));
  if (a->input.empty()) a->input.resize(16);
  isa::Instruction ins;
  ins.opcode = isa::Opcode::kConv;
  ins.body = c;
  return ins;
}

TEST(OptConv, PerChannelScaleWithBottomRightPaddingMatchesReference) {
  Rng r(8765);
  const auto tables = optimized_tables();
  int done = 0;
  for (int it = 0; it < 200 && done < 60; ++it) {
    const int C = r.pick<int>({1, 3, 8, 16, 24, 40}), P = C + r.pick<int>({0, 0, 1, 8});
    const int pb = r.uniform(0, 1), pr = pb == 0 ? 1 : r.uniform(0, 1);
    Arena a;
    const isa::Instruction ins = padded_scale_case(r, C, P, pb, pr, &a);
    std::string err;
    if (!validate_instruction(ins, a.layout(), &err)) continue;
    ++done;
    for (const KernelTable* t : tables)
      ASSERT_TRUE(same_as_reference(ins, a, *t))
          << "padded per-channel scale C" << C << " P" << P << " pad b" << pb << " r" << pr;
  }
  EXPECT_GE(done, 30);
}

// float_requant (kernels.h) in scalar code, rounding as the current mode
// says (the caller sets round-down).
int64_t float_requant_scalar(int32_t acc, kern::FloatRequant f) {
  volatile float lo = f.lo;  // no compile-time evaluation in the default mode
  const float a = static_cast<float>(acc);
  const float z = std::fma(a, f.hi, a * lo);
  return static_cast<int64_t>(std::floor(z + 0.5f));
}
int64_t requant_int(int64_t acc, int32_t m, int s) {
  return (acc * m + (s > 0 ? int64_t{1} << (s - 1) : 0)) >> s;  // |acc*m| < 2^55
}

// The 3-operation form (FloatRequant with lo == 0): int(fma(float(acc),
// hi, 1/2)), rounding as the current mode says.
int64_t float3_scalar(int32_t acc, kern::FloatRequant f) {
  volatile float hi = f.hi;
  return static_cast<int64_t>(std::floor(std::fma(static_cast<float>(acc), hi, 0.5f)));
}

// For a channel (m, s) float_requant_channel accepts: every accumulator up
// to its largest accepted bound gives requant's result through eval(acc, f)
// (rounding down set by the caller). Exhaustive for bounds up to 2^19, else
// around every result in [-300, 300] (with the ties among them) and the
// ends. Counts into *accepted, *checked.
template <class Eval>
void check_largest_bound(int32_t m, int s, Eval eval, int* accepted, int* checked) {
  kern::FloatRequant f;
  int64_t lo = -1, hi = (int64_t{1} << 24) + 1;  // binary search: acceptance is monotone
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (kern::float_requant_channel(mid, m, s, &f) ? lo : hi) = mid;
  }
  if (lo < 0) return;
  ASSERT_FALSE(kern::float_requant_channel(lo + 1, m, s, &f));
  ASSERT_TRUE(kern::float_requant_channel(lo, m, s, &f));
  ++*accepted;
  auto check = [&](int64_t acc) {
    ++*checked;
    return eval(static_cast<int32_t>(acc), f) == requant_int(acc, m, s);
  };
  const int64_t amax = lo;
  if (amax <= (int64_t{1} << 19)) {
    for (int64_t acc = -amax; acc <= amax; ++acc)
      ASSERT_TRUE(check(acc)) << "M " << m << " S " << s << " acc " << acc;
    return;
  }
  for (int64_t y = -300; y <= 300; ++y) {  // accumulators around result y
    const int64_t c = static_cast<int64_t>(std::ldexp(static_cast<double>(y), s) / m);
    for (int64_t acc = std::max(-amax, c - 600); acc <= std::min(amax, c + 600); ++acc)
      ASSERT_TRUE(check(acc)) << "M " << m << " S " << s << " acc " << acc;
    const long double tie = std::ldexp(static_cast<long double>(2 * y + 1), s - 1) / m;
    const int64_t t = static_cast<int64_t>(tie);  // acc * M = (y + 1/2) * 2^S, when an integer
    if (static_cast<long double>(t) == tie && std::llabs(t) <= amax)
      ASSERT_TRUE(check(t)) << "tie: M " << m << " S " << s << " acc " << t;
  }
  ASSERT_TRUE(check(amax) && check(-amax)) << "M " << m << " S " << s << " bound " << amax;
}

// Every accumulator a channel accepted by float_requant_channel can reach
// gives requant's result: edge multipliers (M_lo at its extremes, M of 24
// bits or less, 2^31 - 1), shifts 0..63, the largest accepted bound.
TEST(OptConv, FloatRequantIsExact) {
  Rng r(2468);
  const std::vector<int32_t> edge = {1,          3,          (1 << 24) - 1, 1 << 24,
                                     (1 << 30) + 63, (1 << 30) + 64, (1 << 30) + 192,
                                     INT32_MAX,  INT32_MAX - 64, (1 << 29) + 31};
  int accepted = 0, checked = 0;
  const int old_mode = std::fegetround();
  std::fesetround(FE_DOWNWARD);
  for (int it = 0; it < 120 && !HasFatalFailure(); ++it) {
    const int32_t m = it < static_cast<int>(edge.size()) * 4
                          ? edge[static_cast<size_t>(it) % edge.size()]
                          : std::uniform_int_distribution<int32_t>(1, INT32_MAX)(r.gen());
    const int s = it < 40 ? r.uniform(28, 63) : r.uniform(0, 63);
    check_largest_bound(m, s, float_requant_scalar, &accepted, &checked);
  }
  std::fesetround(old_mode);
  EXPECT_GE(accepted, 60);
  std::printf("float_requant: %d channels accepted, %d accumulators checked\n", accepted, checked);
}

// Adds the weights and per-channel constants of an int8-output convolution
// c to cs's arena, a random activation range, validates (false: rejected)
// and moves cs to out.
bool finish_q_case(isa::Conv c, const std::vector<int8_t>& w, const std::vector<int32_t>& b,
                   const std::vector<int32_t>& m, const std::vector<int8_t>& sh, std::string desc,
                   Rng& r, Case& cs, Case* out) {
  Arena& a = cs.arena;
  const auto C = static_cast<uint32_t>(b.size());
  c.weight = add_const(&a.consts, w.data(), w.size(), static_cast<uint32_t>(w.size()));
  c.bias = add_const(&a.consts, b.data(), b.size() * 4, C);
  c.multiplier = add_const(&a.consts, m.data(), m.size() * 4, C);
  c.shift = add_const(&a.consts, sh.data(), sh.size(), C);
  c.act_min = r.chance(0.4) ? 0 : -128;
  c.act_max = r.chance(0.2) ? r.uniform(0, 100) : 127;
  a.scratch.resize(16);
  cs.ins.opcode = isa::Opcode::kConv;
  cs.ins.body = c;
  std::string err;
  if (!validate_instruction(cs.ins, a.layout(), &err)) return false;
  cs.desc = std::move(desc);
  *out = std::move(cs);
  return true;
}

// The 3-operation form for multipliers of at most 24 significant bits (the
// converter's rule, isa::quantize_multipliers): every such M has lo == 0;
// edge multipliers, the converter's own (ratios over 2^-40..2^20, shared
// pairs), odd M with small shifts (ties every few accumulators), shifts
// 0..63, bounds up to 2^24.
TEST(OptConv, FloatRequant3IsExact) {
  Rng r(8642);
  const std::vector<int32_t> edge = {1, 3, 5, 7, (1 << 23) - 1, 1 << 23, (1 << 23) + 1,
                                     (1 << 24) - 1, 3 << 21, 0xAAAAAB, 1 << 24};
  int accepted = 0, checked = 0;
  auto three = [](int32_t acc, kern::FloatRequant f) {
    EXPECT_EQ(f.lo, 0.0f);
    return float3_scalar(acc, f);
  };
  const int old_mode = std::fegetround();
  std::fesetround(FE_DOWNWARD);
  for (int it = 0; it < 200 && !HasFatalFailure(); ++it) {
    int32_t m, s, m2;
    if (it < static_cast<int>(edge.size()) * 4) {
      m = edge[static_cast<size_t>(it) % edge.size()], s = r.uniform(0, 63);
    } else if (it < 120) {
      const double ratio = std::ldexp(r.uniform(1 << 20, 1 << 21) / double{1 << 20}, r.uniform(-40, 20));
      if (it % 2 == 0)
        isa::quantize_multiplier(ratio, &m, &s);
      else
        isa::quantize_multiplier_pair(ratio, ratio * r.uniform(1, 1000) / 1000.0, &m, &m2, &s);
      EXPECT_LT(m, 1 << isa::kMultiplierBits) << ratio;
    } else {
      m = 2 * r.uniform(0, 1 << 20) + 1;
      s = 32 - __builtin_clz(static_cast<unsigned>(m)) + r.uniform(1, 12);
    }
    check_largest_bound(m, s, three, &accepted, &checked);
  }
  std::fesetround(old_mode);
  EXPECT_GE(accepted, 150);
  std::printf("3-operation float_requant: %d channels accepted, %d accumulators checked\n", accepted,
              checked);
}

// The accumulator of largest magnitude at most bmax (sign bsign) for which
// fma(float(acc), M/2^S, 1/2) rounded to nearest is not requant(acc, M, S)
// (x + 1/2 just below an integer, within half a float step), else bsign * bmax.
int32_t near_tie_bias(int32_t m, int s, int64_t bmax, int bsign) {
  const volatile float hi = std::ldexp(static_cast<float>(m), -s);  // exact (M < 2^24)
  for (int64_t b = bmax; b > bmax - 20000 && b > 0; --b) {
    const int64_t acc = bsign * b;
    const float z = std::fma(static_cast<float>(acc), hi, 0.5f);  // the default mode: nearest
    if (static_cast<int64_t>(std::floor(z)) != requant_int(acc, m, s)) return static_cast<int32_t>(acc);
  }
  return static_cast<int32_t>(bsign * bmax);
}

// Bias, multiplier and shift of one channel of a float_requant case (the
// sum of its |w| is wsum) by mode: 0 a converted layer's ratio
// (isa::quantize_multiplier: 24 significant bits, the 3-operation form), 1
// power-of-two ratios (exact halves), 2 shifts below 33, 3 a 31-bit M (the
// rule before November 2026: the 5-operation form), 4 small odd M (ties
// every 2^(S-1) accumulators), 5 the bias that puts the bound at exactly
// 2^24 (bsign: its sign), which inputs of -128 reach, ratios that saturate,
// 6 a bias near the bound for which the 3-operation form's fma, rounded to
// nearest instead of down, would give the next integer (inputs of 0: every
// accumulator is that bias).
void float_rq_consts(Rng& r, int mode, int64_t wsum, int bsign, int32_t* b, int32_t* m, int32_t* s) {
  *b = r.uniform(-30000, 30000);
  if (mode == 0) {
    isa::quantize_multiplier(std::ldexp(1.0, -r.uniform(7, 12)) * r.uniform(100, 400) / 256.0, m, s);
  } else if (mode == 1) {
    *m = 1 << r.uniform(0, 30);
    *s = 31 - __builtin_clz(static_cast<unsigned>(*m)) + r.uniform(1, 12);
  } else if (mode == 2) {
    *m = r.uniform(1 << 20, 1 << 24), *s = r.uniform(24, 32);
  } else if (mode == 3) {
    *m = std::uniform_int_distribution<int32_t>(1 << 30, INT32_MAX)(r.gen());
    *s = r.uniform(36, 42);
  } else if (mode == 4) {
    *m = 2 * r.uniform(0, 500) + 1;
    *s = 32 - __builtin_clz(static_cast<unsigned>(*m)) + r.uniform(1, 9);
  } else if (mode == 5) {
    *b = static_cast<int32_t>(bsign * ((int64_t{1} << 24) - 128 * wsum));
    isa::quantize_multiplier(std::ldexp(static_cast<double>(r.uniform(64, 400)), -24), m, s);
  } else {
    isa::quantize_multiplier(std::ldexp(static_cast<double>(r.uniform(20, 120)), -24), m, s);
    *b = near_tie_bias(*m, *s, (int64_t{1} << 24) - 128 * wsum, bsign);
  }
}

// A convolution whose fused requantization can be float_requant: int8
// output, no residual, every channel meeting the condition. Depthwise (dw4)
// or dense (the GEMM tiles: 8x32, 16x16 for <= 16 output channels, one
// pixel). three: only multipliers of at most 24 significant bits (every lo
// is 0: the 3-operation form), modes 0, 4, 5, 6 of float_rq_consts; else
// modes 0-3.
bool float_rq_case(Rng& r, bool dense, bool three, Case* out) {
  isa::Conv c;
  const int C = r.pick<int>({1, 5, 8, 16, 17, 24, 32, 40, 48, 64, 72, 96, 100});
  const int cin = dense ? r.pick<int>({3, 8, 16, 24, 32, 64}) : C;
  const int k = dense ? r.pick<int>({1, 1, 3}) : r.pick<int>({1, 3, 3, 5});
  c.kernel_h = c.kernel_w = k;
  c.groups = dense ? 1 : C;
  c.stride_h = c.stride_w = r.pick<int>({1, 1, 2});
  c.pad_top = c.pad_left = r.uniform(k == 1 ? 1 : 0, k / 2 + (k == 1));
  c.pad_bottom = c.pad_right = r.uniform(0, k / 2);
  const bool one_px = dense && r.chance(0.2);
  const int ih = one_px ? 1 : r.uniform(1, 14), iw = one_px ? 1 : r.uniform(1, 20);
  if (one_px) c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 0, c.kernel_h = c.kernel_w = 1;
  const int kk = one_px ? 1 : k;
  const int oh = (ih + c.pad_top + c.pad_bottom - kk) / c.stride_h + 1;
  const int ow = (iw + c.pad_left + c.pad_right - kk) / c.stride_w + 1;
  if (oh < 1 || ow < 1) return false;
  const int mode = three ? r.pick<int>({0, 4, 5, 6}) : r.uniform(0, 3);
  const int bsign = r.chance(0.5) ? 1 : -1;  // mode 5: the sign of the bound's accumulator
  Case cs;
  Arena& a = cs.arena;
  c.in = place(r, &a.input, isa::Region::kInput, isa::DType::kInt8, {1, ih, iw, cin}, true);
  if (mode == 5)  // -128 everywhere (some values 127: not quite the bound)
    for (size_t i = c.in.offset; i < a.input.size(); ++i) a.input[i] = r.chance(0.9) ? 0x80 : 0x7f;
  else if (mode == 6)  // mostly 0: the accumulator is the bias
    for (size_t i = c.in.offset; i < a.input.size(); ++i) a.input[i] = r.chance(0.9) ? 0 : a.input[i];
  else if (r.chance(0.3))
    for (size_t i = c.in.offset; i < a.input.size(); ++i) a.input[i] &= 0x7f;
  c.out = place(r, &a.output, isa::Region::kOutput, isa::DType::kInt8, {1, oh, ow, C}, false);
  const int taps = kk * kk * (dense ? cin : 1);
  std::vector<int8_t> w(static_cast<size_t>(C * taps));
  for (auto& v : w) v = static_cast<int8_t>(r.chance(0.1) ? r.pick<int>({-127, 127}) : r.uniform(-127, 127));
  if (mode == 5)  // all of sign -bsign: acc = bias - 128 * sum w reaches bsign * 2^24
    for (auto& v : w) v = static_cast<int8_t>(-bsign * r.uniform(1, 127));
  std::vector<int32_t> b(static_cast<size_t>(C)), m(static_cast<size_t>(C));
  std::vector<int8_t> sh(static_cast<size_t>(C));
  for (int co = 0; co < C; ++co) {
    int64_t sum = 0;
    for (int t = 0; t < taps; ++t) sum += std::abs(w[co * taps + t]);
    int32_t ss;
    float_rq_consts(r, mode, sum, bsign, &b[co], &m[co], &ss);
    sh[co] = static_cast<int8_t>(ss);
    kern::FloatRequant f;
    if (!kern::float_requant_channel(std::llabs(int64_t{b[co]}) + 128 * sum, m[co], ss, &f)) return false;
    if (three && f.lo != 0.0f) ADD_FAILURE() << "M " << m[co] << " has more than 24 significant bits";
  }
  const std::string desc =
      std::string(dense ? "float dense cin " + std::to_string(cin) : "float dw") + " C" +
      std::to_string(C) + " k" + std::to_string(kk) + " s" + std::to_string(c.stride_h) + " " +
      std::to_string(ih) + "x" + std::to_string(iw) + " mode " + std::to_string(mode);
  return finish_q_case(c, w, b, m, sh, desc, r, cs, out);
}

// case_count() / 2 cases of make(r, done, &case) on every optimized table
// (two host threads every fourth case), each leaving the rounding mode as
// it was.
void check_generated(uint32_t seed, const std::function<bool(Rng&, int, Case*)>& make) {
  Rng r(seed);
  const auto tables = optimized_tables();
  int done = 0;
  const SplitEveryConvolution split;
  while (done < case_count() / 2) {
    Case cs;
    if (!make(r, done, &cs)) continue;
    ++done;
    for (const KernelTable* t : tables) {
      set_sim_threads(done % 4 == 0 ? 2 : 1);
      ASSERT_TRUE(same_as_reference(cs.ins, cs.arena, *t)) << cs.desc << " (case " << done << ")";
      ASSERT_EQ(std::fegetround(), FE_TONEAREST) << t->name << " left the rounding mode changed";
    }
  }
  set_sim_threads(1);
}

TEST(OptConv, Fp32RequantMatchesReference) {
  check_generated(1357, [](Rng& r, int done, Case* cs) {
    return float_rq_case(r, done % 2 == 1, false, cs);
  });
}

// The 3-operation float_requant (multipliers of the converter's 24 bits):
// ties, negative accumulators, the 2^24 bound, saturating outputs, on the
// depthwise (dw4, flat 1x1) and GEMM paths of every table.
TEST(OptConv, Fp32Requant3MatchesReference) {
  check_generated(9753, [](Rng& r, int done, Case* cs) {
    return float_rq_case(r, done % 2 == 1, true, cs);
  });
}

// Requantization constants of a residual layer: kind 0 as the converter
// derives them (one shift shared by M and Mr, the residual's ratio about 1,
// so S is about 30: RequantParams::hi32 with k = 2-3), 1 random M, Mr and S
// in [26, 40] per channel, 2 as 0 with a bias large enough that the hi32
// bound fails in some channels (the 64-bit form then).
void residual_consts(Rng& r, int kind, int C, std::vector<int32_t>* b, std::vector<int32_t>* m,
                     std::vector<int32_t>* mr, std::vector<int8_t>* sh) {
  for (int co = 0; co < C; ++co) {
    int32_t mm, mmr, ss;
    if (kind == 1) {
      mm = std::uniform_int_distribution<int32_t>(1, INT32_MAX)(r.gen());
      mmr = std::uniform_int_distribution<int32_t>(1, INT32_MAX)(r.gen());
      ss = r.uniform(26, 40);
    } else {
      isa::quantize_multiplier_pair(std::ldexp(1.0, -r.uniform(7, 12)) * r.uniform(100, 400) / 256.0,
                                    r.uniform(50, 200) / 100.0, &mm, &mmr, &ss);
    }
    (*m)[co] = mm, (*mr)[co] = mmr, (*sh)[co] = static_cast<int8_t>(ss);
    (*b)[co] = kind == 2 && r.chance(0.3) ? r.uniform(-(1 << 29), 1 << 29) : r.uniform(-30000, 30000);
  }
}

// A dense int8 convolution with an int8 residual of the output's strides
// (the fused 64-bit or hi32 requantization of the avx512vnni tiles: 14, 8
// and 7 pixels, one pixel, partial channel blocks).
bool residual_case(Rng& r, Case* out) {
  isa::Conv c;
  const int C = r.pick<int>({8, 16, 17, 32, 40, 64, 96});
  const int cin = r.pick<int>({3, 8, 16, 32, 64});
  const int k = r.pick<int>({1, 3, 3});
  c.kernel_h = c.kernel_w = k;
  c.stride_h = c.stride_w = r.pick<int>({1, 1, 2});
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = k / 2;
  const bool one_px = r.chance(0.15);
  const int ih = one_px ? 1 : r.pick<int>({7, r.uniform(1, 16)});
  const int iw = one_px ? 1 : r.pick<int>({7, r.uniform(1, 20)});
  const int oh = (ih + 2 * (k / 2) - k) / c.stride_h + 1, ow = (iw + 2 * (k / 2) - k) / c.stride_w + 1;
  Case cs;
  Arena& a = cs.arena;
  c.in = place(r, &a.input, isa::Region::kInput, isa::DType::kInt8, {1, ih, iw, cin}, false);
  c.out = place(r, &a.output, isa::Region::kOutput, isa::DType::kInt8, {1, oh, ow, C}, false);
  c.residual = c.out;  // the output's strides, in scratch
  c.residual.region = isa::Region::kScratch;
  a.scratch.resize(a.output.size());
  r.fill(a.scratch.data(), a.scratch.size(), false);
  std::vector<int8_t> w(static_cast<size_t>(C) * k * k * cin);
  for (auto& v : w) v = static_cast<int8_t>(r.uniform(-127, 127));
  std::vector<int32_t> b(C), m(C), mr(C);
  std::vector<int8_t> sh(C);
  const int kind = r.uniform(0, 2);
  residual_consts(r, kind, C, &b, &m, &mr, &sh);
  c.weight = add_const(&a.consts, w.data(), w.size(), static_cast<uint32_t>(w.size()));
  c.bias = add_const(&a.consts, b.data(), b.size() * 4, static_cast<uint32_t>(C));
  c.multiplier = add_const(&a.consts, m.data(), m.size() * 4, static_cast<uint32_t>(C));
  c.shift = add_const(&a.consts, sh.data(), sh.size(), static_cast<uint32_t>(C));
  c.has_residual = 1;
  c.residual_multiplier = add_const(&a.consts, mr.data(), mr.size() * 4, static_cast<uint32_t>(C));
  c.act_min = r.chance(0.5) ? 0 : -128;
  c.act_max = 127;
  cs.ins.opcode = isa::Opcode::kConv;
  cs.ins.body = c;
  std::string err;
  if (!validate_instruction(cs.ins, a.layout(), &err)) return false;
  cs.desc = "residual cin " + std::to_string(cin) + " C" + std::to_string(C) + " k" +
            std::to_string(k) + " s" + std::to_string(c.stride_h) + " " + std::to_string(ih) +
            "x" + std::to_string(iw) + " kind " + std::to_string(kind);
  *out = std::move(cs);
  return true;
}

TEST(OptConv, ResidualRequantMatchesReference) {
  check_generated(2468, [](Rng& r, int, Case* cs) { return residual_case(r, cs); });
}

// Per-channel constants of dw_block_case: kind 0 as a converted layer
// (float_requant), 1 every S >= 33 (the integer fused form), 2 S of 20-32
// (float_requant where the plan proves it, else the unfused epilogue).
void dw_block_consts(Rng& r, int kind, int C, std::vector<int32_t>* m, std::vector<int8_t>* sh) {
  for (int co = 0; co < C; ++co) {
    int32_t mm, ss;
    if (kind == 0) {
      isa::quantize_multiplier(std::ldexp(1.0, -r.uniform(7, 12)) * r.uniform(100, 400) / 256.0, &mm, &ss);
    } else if (kind == 1) {
      mm = r.uniform(1 << 29, INT32_MAX), ss = r.uniform(33, 40);
    } else {
      mm = r.uniform(1 << 16, 1 << 30), ss = r.uniform(20, 32);
    }
    (*m)[co] = mm, (*sh)[co] = static_cast<int8_t>(ss);
  }
}

// Depthwise rows over the dw4 blocks narrower than 64 channels (two or four
// column groups per zmm on avx512vnni, goff) and the pixels left after the
// wide steps: channels around 16 / 32 / 64, stride 1 and 2, 1x1 / 3x3 /
// 5x5, widths up to 40 (odd too), padding, padded pixel strides. s2: only
// 3x3 / 5x5 with stride_w 2 (the column groups every 4 columns of
// DwPackArgs::gstep 4; stride_h 1 or 2), widths up to 72.
bool dw_block_case(Rng& r, Case* out, bool s2 = false) {
  isa::Conv c;
  const int C = r.pick<int>({8, 16, 24, 32, 40, 48, 64, 80, 88, 96, 112, 144});
  const int k = s2 ? r.pick<int>({3, 3, 5}) : r.pick<int>({1, 3, 3, 5});
  c.kernel_h = c.kernel_w = k;
  c.groups = C;
  c.stride_h = c.stride_w = r.pick<int>({1, 1, 2});
  if (s2) c.stride_h = r.pick<int>({1, 2}), c.stride_w = 2;
  c.pad_top = c.pad_left = r.uniform(0, k / 2);
  c.pad_bottom = c.pad_right = r.uniform(0, k / 2);
  const int ih = r.uniform(1, 5), iw = r.uniform(k, s2 ? 72 : 40);
  const int oh = (ih + c.pad_top + c.pad_bottom - k) / c.stride_h + 1;
  const int ow = (iw + c.pad_left + c.pad_right - k) / c.stride_w + 1;
  if (oh < 1 || ow < 1 || ih + c.pad_top + c.pad_bottom < k) return false;
  Case cs;
  Arena& a = cs.arena;
  c.in = place(r, &a.input, isa::Region::kInput, isa::DType::kInt8, {1, ih, iw, C}, false);
  if (r.chance(0.3))
    for (size_t i = c.in.offset; i < a.input.size(); ++i) a.input[i] &= 0x7f;
  c.out = place(r, &a.output, isa::Region::kOutput, isa::DType::kInt8, {1, oh, ow, C}, false);
  std::vector<int8_t> w(static_cast<size_t>(C * k * k));
  for (auto& v : w) v = static_cast<int8_t>(r.uniform(-127, 127));
  std::vector<int32_t> b(static_cast<size_t>(C)), m(static_cast<size_t>(C));
  std::vector<int8_t> sh(static_cast<size_t>(C));
  for (auto& v : b) v = r.uniform(-30000, 30000);
  const int kind = r.uniform(0, 2);
  dw_block_consts(r, kind, C, &m, &sh);
  const std::string desc = "dw blocks C" + std::to_string(C) + " k" + std::to_string(k) + " s" +
                           std::to_string(c.stride_h) + std::to_string(c.stride_w) + " " + std::to_string(ih) + "x" +
                           std::to_string(iw) + " kind " + std::to_string(kind);
  return finish_q_case(c, w, b, m, sh, desc, r, cs, out);
}

TEST(OptConv, DepthwiseBlocksMatchReference) {
  check_generated(8642, [](Rng& r, int, Case* cs) { return dw_block_case(r, cs); });
}

TEST(OptConv, DepthwiseStride2BlocksMatchReference) {
  check_generated(8643, [](Rng& r, int, Case* cs) { return dw_block_case(r, cs, true); });
}

TEST(OptConv, ListsThePaths) {
  std::string names;
  for (const KernelTable* t : available_kernels()) names += std::string(t->name) + " ";
  std::printf("kernel paths here: %s(best: %s)\n", names.c_str(), best_kernels().name);
  EXPECT_NE(std::string(best_kernels().name), "");
}

#if defined(OPENBPU_TEST_SIMDE_VNNI)
void conv_vnni_emulated(const isa::Conv& c, const Memory& m) {
  kern::conv(kern::avx512vnni_emulated_isa(), c, m);
}
void deconv_vnni_emulated(const isa::Conv& c, const Memory& m) {
  kern::deconv(kern::avx512vnni_emulated_isa(), c, m);
}
TEST(OptConv, Avx512VnniGemmThroughSimdeMatchesReference) {
  KernelTable t = *find_kernels("portable");
  t.name = "avx512vnni-simde";
  t.conv = conv_vnni_emulated;
  t.deconv = deconv_vnni_emulated;
  Rng r(777);
  int done = 0;
  const SplitEveryConvolution split;
  while (done < case_count() / 2) {
    Case cs;
    if (!make_case(r, done % 5 == 4, &cs)) continue;
    ++done;
    set_sim_threads(done % 4 == 0 ? 2 : 1);
    ASSERT_TRUE(same_as_reference(cs.ins, cs.arena, t)) << cs.desc << " (case " << done << ")";
  }
  set_sim_threads(1);
}
TEST(OptConv, Avx512VnniDepthwiseBlocksThroughSimdeMatchReference) {
  KernelTable t = *find_kernels("portable");
  t.name = "avx512vnni-simde";
  t.conv = conv_vnni_emulated;
  Rng r(8643);
  for (int done = 0; done < case_count() / 4;) {
    Case cs;
    if (!dw_block_case(r, &cs, done % 2 == 1)) continue;  // every other: stride_w 2
    ++done;
    ASSERT_TRUE(same_as_reference(cs.ins, cs.arena, t)) << cs.desc << " (case " << done << ")";
  }
}
#endif

}  // namespace
}  // namespace openbpu::sim::test
