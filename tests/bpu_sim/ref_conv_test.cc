// SPDX-License-Identifier: Apache-2.0
// Reference conv / deconv against an independent computation: real-valued
// convolution in double over NCHW std::vectors with an explicitly zero-padded
// input (conv) or a scatter over input positions (deconv); only the final
// requantization applies the documented integer formula to the accumulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bpu_sim/reference/kernels.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

using isa::DType;
using isa::Region;

enum class Mult { kFitted, kRandom, kMaxShift0, kMaxShift63 };

struct ConvCase {
  int n = 1, ih = 5, iw = 5, cin = 3, cout = 4, groups = 1;
  int kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  int pt = 1, pl = 1, pb = 1, pr = 1;
  int extra_h = 0, extra_w = 0;  // deconv only: rows/cols beyond the last tap
  DType in_t = DType::kInt8, out_t = DType::kInt8, res_t = DType::kInt8;
  bool bias = true, residual = false;
  int64_t in_lo = -128, in_hi = 127, w_lo = -128, w_hi = 127;
  int64_t bias_abs = 1 << 16;
  int32_t act_min = INT32_MIN, act_max = INT32_MAX;
  Mult mult = Mult::kFitted;
  bool padded = true;
  int pad_value = 0;  // conv only: what out-of-image taps read
};

std::string describe(const ConvCase& c, bool transposed) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s n=%d in=%dx%dx%d cout=%d g=%d k=%dx%d s=%dx%d d=%dx%d pad=t%d,l%d,b%d,r%d "
                "extra=%d,%d in_t=%d out_t=%d bias=%d res=%d mult=%d act=[%d,%d]",
                transposed ? "deconv" : "conv", c.n, c.ih, c.iw, c.cin, c.cout, c.groups, c.kh,
                c.kw, c.sh, c.sw, c.dh, c.dw, c.pt, c.pl, c.pb, c.pr, c.extra_h, c.extra_w,
                static_cast<int>(c.in_t), static_cast<int>(c.out_t), c.bias, c.residual,
                static_cast<int>(c.mult), c.act_min, c.act_max);
  return buf;
}

int out_size(bool transposed, int in, int k, int s, int d, int p0, int p1, int extra) {
  return transposed ? (in - 1) * s - p0 - p1 + d * (k - 1) + 1 + extra
                    : (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

void run_case(const ConvCase& c, bool transposed, uint32_t seed) {
  SCOPED_TRACE(describe(c, transposed));
  TestMemory tm(seed);
  const int oh = out_size(transposed, c.ih, c.kh, c.sh, c.dh, c.pt, c.pb, c.extra_h);
  const int ow = out_size(transposed, c.iw, c.kw, c.sw, c.dw, c.pl, c.pr, c.extra_w);
  ASSERT_GE(oh, 1);
  ASSERT_GE(ow, 1);
  const int cin_g = c.cin / c.groups, cout_g = c.cout / c.groups;

  isa::Conv ins;
  ins.in = tm.tensor(Region::kInput, c.in_t, {c.n, c.ih, c.iw, c.cin}, c.padded);
  ins.out = tm.tensor(Region::kOutput, c.out_t, {c.n, oh, ow, c.cout}, c.padded);
  ins.kernel_h = c.kh;
  ins.kernel_w = c.kw;
  ins.stride_h = c.sh;
  ins.stride_w = c.sw;
  ins.dilation_h = c.dh;
  ins.dilation_w = c.dw;
  ins.pad_top = c.pt;
  ins.pad_left = c.pl;
  ins.pad_bottom = c.pb;
  ins.pad_right = c.pr;
  ins.groups = c.groups;
  ins.act_min = c.act_min;
  ins.act_max = c.act_max;
  ins.has_residual = c.residual;
  ins.pad_value = c.pad_value;

  const Dense x = tm.fill_random(ins.in, c.in_lo, c.in_hi);
  Dense r;
  if (c.residual) {
    ins.residual = tm.tensor(Region::kScratch, c.res_t, {c.n, oh, ow, c.cout}, c.padded);
    r = tm.fill_random(ins.residual);
  } else {
    // A dangling residual reference must not be used when has_residual = 0.
    ins.residual.region = Region::kInput;
    ins.residual.index = 7;
  }

  // Weights [Cout][KH][KW][Cin/groups].
  std::vector<int64_t> w(static_cast<size_t>(c.cout) * c.kh * c.kw * cin_g);
  for (auto& v : w) v = tm.rand_i64(c.w_lo, c.w_hi);
  ins.weight = tm.constants(DType::kInt8, w);
  std::vector<int64_t> bias(c.cout, 0);
  if (c.bias) {
    for (auto& v : bias) v = tm.rand_i64(-c.bias_abs, c.bias_abs);
    ins.bias = tm.constants(DType::kInt32, bias);
  }

  // Multipliers and shifts per output channel.
  std::vector<int64_t> m(c.cout), s(c.cout), mr(c.cout, 0);
  const double in_mag = std::max(std::abs(c.in_lo), std::abs(c.in_hi)) / 1.7 + 1;
  const double w_mag = std::max(std::abs(c.w_lo), std::abs(c.w_hi)) / 1.7 + 1;
  const double out_mag = c.out_t == DType::kInt16 ? 12000 : 50;
  const double taps = static_cast<double>(cin_g) * c.kh * c.kw;
  for (int co = 0; co < c.cout; ++co) {
    int32_t mm = 1, ss = 0;
    switch (c.mult) {
      case Mult::kFitted: {
        const double ratio = out_mag / (std::sqrt(taps) * in_mag * w_mag) *
                             std::uniform_real_distribution<double>(0.5, 2.0)(tm.rng());
        derive_multiplier(ratio, &mm, &ss);
        break;
      }
      case Mult::kRandom:
        mm = tm.rand_int(1, INT32_MAX);
        ss = tm.rand_int(0, 63);
        break;
      case Mult::kMaxShift0:
        mm = INT32_MAX, ss = 0;
        break;
      case Mult::kMaxShift63:
        mm = INT32_MAX, ss = 63;
        break;
    }
    m[co] = mm;
    s[co] = ss;
    if (c.residual) {
      // Residual scale relative to the output: 0.2 .. 1.5 output LSB per residual LSB.
      const double rr = std::uniform_real_distribution<double>(0.2, 1.5)(tm.rng());
      const long double v = std::round(rr * std::ldexp(1.0L, ss));
      mr[co] = v >= 2147483647.0L ? INT32_MAX : std::max<int64_t>(1, static_cast<int64_t>(v));
    }
  }
  if (c.out_t != DType::kInt32) {
    ins.multiplier = tm.constants(DType::kInt32, m);
    ins.shift = tm.constants(DType::kInt8, s);
    if (c.residual) ins.residual_multiplier = tm.constants(DType::kInt32, mr);
  }

  const std::vector<uint8_t> out_before = tm.snapshot(Region::kOutput);
  const std::vector<uint8_t> in_before = tm.snapshot(Region::kInput);
  const std::vector<uint8_t> scratch_before = tm.snapshot(Region::kScratch);
  const std::vector<uint8_t> const_before = tm.snapshot(Region::kConst);
  const Memory mem = tm.bind();
  if (transposed) {
    ref::deconv(ins, mem);
  } else {
    ref::conv(ins, mem);
  }
  const Dense got = tm.read(ins.out);
  tm.expect_only_views_written(Region::kOutput, out_before, {ins.out});
  EXPECT_EQ(tm.snapshot(Region::kInput), in_before);
  EXPECT_EQ(tm.snapshot(Region::kScratch), scratch_before);
  EXPECT_EQ(tm.snapshot(Region::kConst), const_before);

  // Independent computation, NCHW, in double (exact: every partial sum < 2^53).
  const int hp = c.ih + c.pt + c.pb, wp = c.iw + c.pl + c.pr;
  std::vector<double> acc(static_cast<size_t>(c.n) * c.cout * oh * ow);
  auto acc_at = [&](int n, int co, int y, int xx) -> double& {
    return acc[((static_cast<size_t>(n) * c.cout + co) * oh + y) * ow + xx];
  };
  for (int n = 0; n < c.n; ++n)
    for (int co = 0; co < c.cout; ++co)
      for (int y = 0; y < oh; ++y)
        for (int xx = 0; xx < ow; ++xx) acc_at(n, co, y, xx) = static_cast<double>(bias[co]);
  auto weight = [&](int co, int ci_local, int a, int b) {
    return static_cast<double>(
        w[((static_cast<size_t>(co) * c.kh + a) * c.kw + b) * cin_g + ci_local]);
  };
  if (!transposed) {
    // NCHW input padded with the pad value.
    std::vector<double> xp(static_cast<size_t>(c.n) * c.cin * hp * wp, c.pad_value);
    for (int n = 0; n < c.n; ++n)
      for (int ci = 0; ci < c.cin; ++ci)
        for (int y = 0; y < c.ih; ++y)
          for (int xx = 0; xx < c.iw; ++xx)
            xp[((static_cast<size_t>(n) * c.cin + ci) * hp + y + c.pt) * wp + xx + c.pl] =
                static_cast<double>(x.at(n, y, xx, ci));
    for (int n = 0; n < c.n; ++n)
      for (int co = 0; co < c.cout; ++co) {
        const int g = co / cout_g;
        for (int y = 0; y < oh; ++y)
          for (int xx = 0; xx < ow; ++xx) {
            double sum = 0;
            for (int ci = 0; ci < cin_g; ++ci)
              for (int a = 0; a < c.kh; ++a)
                for (int b = 0; b < c.kw; ++b) {
                  const int py = y * c.sh + a * c.dh, px = xx * c.sw + b * c.dw;
                  sum +=
                      xp[((static_cast<size_t>(n) * c.cin + g * cin_g + ci) * hp + py) * wp + px] *
                      weight(co, ci, a, b);
                }
            acc_at(n, co, y, xx) += sum;
          }
      }
  } else {
    // Scatter every input pixel through every tap.
    for (int n = 0; n < c.n; ++n)
      for (int ci = 0; ci < c.cin; ++ci) {
        const int g = ci / cin_g;
        for (int y = 0; y < c.ih; ++y)
          for (int xx = 0; xx < c.iw; ++xx)
            for (int a = 0; a < c.kh; ++a)
              for (int b = 0; b < c.kw; ++b) {
                const int oy = y * c.sh - c.pt + a * c.dh, ox = xx * c.sw - c.pl + b * c.dw;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                for (int col = 0; col < cout_g; ++col) {
                  const int co = g * cout_g + col;
                  acc_at(n, co, oy, ox) +=
                      static_cast<double>(x.at(n, y, xx, ci)) * weight(co, ci - g * cin_g, a, b);
                }
              }
      }
  }

  Dense want;
  for (int k = 0; k < isa::kMaxRank; ++k) want.dims[k] = ins.out.dims[k];
  want.v.resize(got.v.size());
  const int64_t lo = std::max<int64_t>(c.act_min, type_min(c.out_t));
  const int64_t hi = std::min<int64_t>(c.act_max, type_max(c.out_t));
  int64_t real_checked = 0;
  for (int n = 0; n < c.n; ++n)
    for (int y = 0; y < oh; ++y)
      for (int xx = 0; xx < ow; ++xx)
        for (int co = 0; co < c.cout; ++co) {
          const double a = acc_at(n, co, y, xx);
          const int64_t acc_i = static_cast<int64_t>(a);
          ASSERT_EQ(static_cast<double>(acc_i), a);
          int64_t yv;
          if (c.out_t == DType::kInt32) {
            yv = clamp_to(acc_i, lo, hi);
          } else {
            int128 v = static_cast<int128>(acc_i) * m[co];
            long double real = static_cast<long double>(acc_i) * m[co];
            if (c.residual) {
              v += static_cast<int128>(r.at(n, y, xx, co)) * mr[co];
              real += static_cast<long double>(r.at(n, y, xx, co)) * mr[co];
            }
            yv = clamp_to(round_div_pow2(v, static_cast<int>(s[co])), lo, hi);
            // Within half an LSB of the real-valued result (clamp is 1-Lipschitz).
            real = std::ldexp(real, -static_cast<int>(s[co]));
            real = std::min<long double>(std::max<long double>(real, lo), hi);
            if (std::fabs(static_cast<long double>(got.at(n, y, xx, co)) - real) > 0.5L + 1e-9L) {
              ADD_FAILURE() << "not within 0.5 LSB of the real result at " << n << "," << y << ","
                            << xx << "," << co << ": " << got.at(n, y, xx, co) << " vs "
                            << static_cast<double>(real);
            }
            ++real_checked;
          }
          want.v[want.index(n, y, xx, co)] = yv;
        }
  expect_equal(got, want, describe(c, transposed));
}

// A random configuration over every grouping kind, strides, dilations,
// asymmetric pads, odd sizes and channel counts.
ConvCase random_case(std::mt19937& rng, bool transposed) {
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ConvCase c;
  for (;;) {
    c.n = ri(1, 2);
    c.ih = ri(1, 9);
    c.iw = ri(1, 9);
    switch (ri(0, 3)) {
      case 0:  // dense
        c.groups = 1;
        c.cin = ri(1, 37);
        c.cout = ri(1, 21);
        break;
      case 1:  // depthwise
        c.cin = c.cout = c.groups = ri(1, 19);
        break;
      case 2: {  // grouped
        c.groups = ri(2, 4);
        c.cin = c.groups * ri(1, 6);
        c.cout = c.groups * ri(1, 5);
        break;
      }
      default:  // depthwise with channel multiplier
        c.cin = c.groups = ri(1, 9);
        c.cout = c.cin * ri(2, 3);
        break;
    }
    c.kh = ri(1, 5);
    c.kw = ri(1, 5);
    c.sh = ri(1, 3);
    c.sw = ri(1, 3);
    c.dh = ri(1, 3);
    c.dw = ri(1, 3);
    const int eh = c.dh * (c.kh - 1), ew = c.dw * (c.kw - 1);
    c.pt = ri(0, eh);
    c.pb = ri(0, eh);
    c.pl = ri(0, ew);
    c.pr = ri(0, ew);
    c.extra_h = transposed ? ri(0, 1) : 0;
    c.extra_w = transposed ? ri(0, 1) : 0;
    if (out_size(transposed, c.ih, c.kh, c.sh, c.dh, c.pt, c.pb, c.extra_h) >= 1 &&
        out_size(transposed, c.iw, c.kw, c.sw, c.dw, c.pl, c.pr, c.extra_w) >= 1 &&
        (transposed || (c.ih + c.pt + c.pb > eh && c.iw + c.pl + c.pr > ew))) {
      break;
    }
  }
  const int t = ri(0, 5);
  c.in_t = t == 0 ? DType::kInt16 : DType::kInt8;
  if (c.in_t == DType::kInt16) {
    c.in_lo = INT16_MIN;
    c.in_hi = INT16_MAX;
  }
  const int o = ri(0, 5);
  c.out_t = o == 0 ? DType::kInt32 : (o == 1 ? DType::kInt16 : DType::kInt8);
  c.bias = ri(0, 4) != 0;
  c.residual = c.out_t != DType::kInt32 && ri(0, 2) == 0;
  c.res_t = ri(0, 3) == 0 ? DType::kInt16 : DType::kInt8;
  if (ri(0, 3) == 0 && c.out_t != DType::kInt32) {  // a ReLU-like bound
    c.act_min = 0;
    c.act_max = ri(6, 127);
  }
  c.mult = ri(0, 9) == 0 ? Mult::kRandom : Mult::kFitted;
  c.padded = ri(0, 5) != 0;
  return c;
}

TEST(RefConv, RandomConfigurations) {
  std::mt19937 rng(20240601);
  for (int i = 0; i < 1000; ++i) {
    const ConvCase c = random_case(rng, false);
    run_case(c, false, 10000 + i);
    if (HasFailure()) return;
  }
}

TEST(RefDeconv, RandomConfigurations) {
  std::mt19937 rng(20240602);
  for (int i = 0; i < 1000; ++i) {
    const ConvCase c = random_case(rng, true);
    run_case(c, true, 20000 + i);
    if (HasFailure()) return;
  }
}

TEST(RefConv, OneByOneImage) {
  ConvCase c;
  c.ih = c.iw = 1;
  c.cin = 17;
  c.cout = 33;
  run_case(c, false, 1);  // 3x3 with pad 1: only the centre tap is in the image
  c.kh = c.kw = 1;
  c.pt = c.pl = c.pb = c.pr = 0;
  run_case(c, false, 2);
  run_case(c, true, 3);
}

TEST(RefConv, DepthwiseAndGrouped) {
  ConvCase c;
  c.ih = 7;
  c.iw = 6;
  c.cin = c.cout = c.groups = 13;  // depthwise
  run_case(c, false, 11);
  c.cout = 39;  // depthwise, multiplier 3
  run_case(c, false, 12);
  c.groups = 13;
  c.cin = 26;
  c.cout = 13;  // grouped, 2 in / 1 out per group
  run_case(c, false, 13);
  run_case(c, true, 14);
}

TEST(RefConv, StridedDilatedAsymmetricPads) {
  ConvCase c;
  c.ih = 11;
  c.iw = 8;
  c.cin = 5;
  c.cout = 7;
  c.kh = 3;
  c.kw = 2;
  c.sh = 2;
  c.sw = 3;
  c.dh = 2;
  c.dw = 3;
  c.pt = 0;
  c.pb = 4;
  c.pl = 3;
  c.pr = 1;
  run_case(c, false, 21);
  run_case(c, true, 22);
  c.sh = 4;  // stride larger than the kernel: taps skip input rows
  c.kh = 2;
  c.dh = 1;
  c.pb = 0;
  run_case(c, false, 23);
  run_case(c, true, 24);
}

TEST(RefConv, OutOfImageTapsReadThePadValue) {
  ConvCase c;
  c.pt = 2, c.pb = 1, c.pl = 0, c.pr = 2;
  for (int pad : {-128, -37, 5, 127}) {
    c.pad_value = pad;
    run_case(c, false, 30 + static_cast<uint32_t>(pad + 128));
  }
  c.cin = c.cout = c.groups = 6;  // depthwise
  c.pad_value = -128;
  run_case(c, false, 31);
}

TEST(RefConv, Int16InputAndOutput) {
  ConvCase c;
  c.in_t = DType::kInt16;
  c.in_lo = INT16_MIN;
  c.in_hi = INT16_MAX;
  c.out_t = DType::kInt16;
  c.cin = 40;
  c.cout = 9;
  run_case(c, false, 31);
  c.out_t = DType::kInt8;
  run_case(c, false, 32);
  c.out_t = DType::kInt32;
  run_case(c, true, 33);
}

TEST(RefConv, Int32OutputAndActivationBounds) {
  ConvCase c;
  c.out_t = DType::kInt32;
  c.cin = 64;
  c.cout = 5;
  run_case(c, false, 41);
  c.act_min = -1000;
  c.act_max = 20000;
  run_case(c, false, 42);
  // Bias near the int32 limits: the int64 accumulator leaves int32, the
  // output saturates at the int32 bounds.
  c.act_min = INT32_MIN;
  c.act_max = INT32_MAX;
  c.bias_abs = INT32_MAX;
  run_case(c, false, 43);
}

TEST(RefConv, ResidualAdd) {
  ConvCase c;
  c.residual = true;
  c.cin = 24;
  c.cout = 24;
  run_case(c, false, 51);
  c.res_t = DType::kInt16;
  c.out_t = DType::kInt16;
  run_case(c, false, 52);
  c.act_min = 0;
  c.act_max = 6;
  c.res_t = DType::kInt8;
  c.out_t = DType::kInt8;
  run_case(c, true, 53);
}

TEST(RefConv, SaturatingExtremes) {
  const int64_t vals[2] = {-128, 127};
  uint32_t seed = 60;
  for (int64_t xv : vals) {
    for (int64_t wv : vals) {
      for (Mult mult : {Mult::kFitted, Mult::kMaxShift0, Mult::kMaxShift63, Mult::kRandom}) {
        for (DType out_t : {DType::kInt8, DType::kInt16, DType::kInt32}) {
          ConvCase c;
          c.in_lo = c.in_hi = xv;
          c.w_lo = c.w_hi = wv;
          c.cin = 32;
          c.cout = 6;
          c.mult = mult;
          c.out_t = out_t;
          c.bias_abs = 0;
          run_case(c, false, ++seed);
          c.residual = out_t != DType::kInt32;
          run_case(c, true, ++seed);
        }
      }
    }
  }
  // The largest exact int8 accumulator: every tap -128 * -128.
  ConvCase c;
  c.in_lo = c.in_hi = -128;
  c.w_lo = c.w_hi = -128;
  c.cin = 512;
  c.cout = 2;
  c.out_t = DType::kInt32;
  c.pt = c.pl = c.pb = c.pr = 0;
  run_case(c, false, 99);
}

TEST(RefConv, WrittenOutputExactValues) {
  // A hand-computed case: 1x2x2x1 input, 2x2 kernel, one output.
  TestMemory tm(7);
  isa::Conv ins;
  ins.in = tm.tensor(Region::kInput, DType::kInt8, {1, 2, 2, 1}, false);
  ins.out = tm.tensor(Region::kOutput, DType::kInt8, {1, 1, 1, 1}, false);
  ins.kernel_h = ins.kernel_w = 2;
  tm.write(ins.in, {1, 2, 3, 4});
  ins.weight = tm.constants(DType::kInt8, {1, -1, 2, 5});  // acc = 1 - 2 + 6 + 20 = 25
  ins.bias = tm.constants(DType::kInt32, {-2});            // acc = 23
  ins.multiplier = tm.constants(DType::kInt32, {3});       // 69
  ins.shift = tm.constants(DType::kInt8, {2});             // floor((69 + 2) / 4) = 17
  const Memory mem = tm.bind();
  ref::conv(ins, mem);
  EXPECT_EQ(tm.read(ins.out).v[0], 17);
}

}  // namespace
}  // namespace openbpu::sim::test
