// SPDX-License-Identifier: Apache-2.0
// Reference pooling against an independent computation over NCHW doubles with
// an explicitly padded input (-inf / "absent" padding), plus the half-LSB bound
// against the real-valued mean / max.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "bpu_sim/reference/kernels.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

using isa::DType;
using isa::Region;

struct PoolCase {
  isa::PoolKind kind = isa::PoolKind::kAvg;
  bool include_pad = false;
  int n = 1, ih = 6, iw = 6, c = 5;
  int kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  int pt = 1, pl = 1, pb = 1, pr = 1;
  DType in_t = DType::kInt8, out_t = DType::kInt8;
  int64_t in_lo = -128, in_hi = 127;
  int32_t m = 1 << 30, s = 30;
  int32_t act_min = -128, act_max = 127;
  bool padded = true;
  int32_t zi = 0, zo = 0;  // zero points (int8 input / output)
};

std::string describe(const PoolCase& p) {
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "%s incl=%d n=%d in=%dx%dx%d k=%dx%d s=%dx%d d=%dx%d pad=t%d,l%d,b%d,r%d M=%d S=%d "
                "act=[%d,%d] in_t=%d out_t=%d",
                p.kind == isa::PoolKind::kMax ? "max" : "avg", p.include_pad, p.n, p.ih, p.iw, p.c,
                p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, p.pb, p.pr, p.m, p.s, p.act_min,
                p.act_max, static_cast<int>(p.in_t), static_cast<int>(p.out_t));
  return buf;
}

int out_size(int in, int k, int s, int d, int p0, int p1) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

void run_case(const PoolCase& p, uint32_t seed) {
  SCOPED_TRACE(describe(p));
  TestMemory tm(seed);
  const int oh = out_size(p.ih, p.kh, p.sh, p.dh, p.pt, p.pb);
  const int ow = out_size(p.iw, p.kw, p.sw, p.dw, p.pl, p.pr);
  ASSERT_GE(oh, 1);
  ASSERT_GE(ow, 1);
  isa::Pool ins;
  ins.kind = p.kind;
  ins.count_include_pad = p.include_pad;
  ins.in = tm.tensor(Region::kInput, p.in_t, {p.n, p.ih, p.iw, p.c}, p.padded);
  ins.out = tm.tensor(Region::kOutput, p.out_t, {p.n, oh, ow, p.c}, p.padded);
  ins.kernel_h = p.kh;
  ins.kernel_w = p.kw;
  ins.stride_h = p.sh;
  ins.stride_w = p.sw;
  ins.dilation_h = p.dh;
  ins.dilation_w = p.dw;
  ins.pad_top = p.pt;
  ins.pad_left = p.pl;
  ins.pad_bottom = p.pb;
  ins.pad_right = p.pr;
  ins.multiplier = p.m;
  ins.shift = p.s;
  ins.act_min = p.act_min;
  ins.act_max = p.act_max;
  ins.zero_in = p.zi, ins.zero_out = p.zo;
  const Dense x = tm.fill_random(ins.in, p.in_lo, p.in_hi);
  const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
  const Memory mem = tm.bind();
  ref::pool(ins, mem);
  const Dense got = tm.read(ins.out);
  tm.expect_only_views_written(Region::kOutput, before, {ins.out});

  // NCHW copy padded with NaN, which marks "no value".
  const int hp = p.ih + p.pt + p.pb, wp = p.iw + p.pl + p.pr;
  const double kAbsent = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> xp(static_cast<size_t>(p.n) * p.c * hp * wp, kAbsent);
  auto xp_at = [&](int n, int ch, int y, int xx) -> double& {
    return xp[((static_cast<size_t>(n) * p.c + ch) * hp + y) * wp + xx];
  };
  for (int n = 0; n < p.n; ++n)
    for (int ch = 0; ch < p.c; ++ch)
      for (int y = 0; y < p.ih; ++y)
        for (int xx = 0; xx < p.iw; ++xx)
          xp_at(n, ch, y + p.pt, xx + p.pl) = static_cast<double>(x.at(n, y, xx, ch) - p.zi);

  Dense want;
  for (int k = 0; k < isa::kMaxRank; ++k) want.dims[k] = ins.out.dims[k];
  want.v.resize(got.v.size());
  const int64_t lo = std::max<int64_t>(p.act_min, type_min(p.out_t));
  const int64_t hi = std::min<int64_t>(p.act_max, type_max(p.out_t));
  for (int n = 0; n < p.n; ++n)
    for (int ch = 0; ch < p.c; ++ch)
      for (int y = 0; y < oh; ++y)
        for (int xx = 0; xx < ow; ++xx) {
          double sum = 0, mx = -std::numeric_limits<double>::infinity();
          int present = 0;
          for (int a = 0; a < p.kh; ++a)
            for (int b = 0; b < p.kw; ++b) {
              const double v = xp_at(n, ch, y * p.sh + a * p.dh, xx * p.sw + b * p.dw);
              if (std::isnan(v)) continue;
              sum += v;
              mx = std::max(mx, v);
              ++present;
            }
          int128 yv = 0;
          long double real = 0;
          if (present > 0) {
            if (p.kind == isa::PoolKind::kMax) {
              yv = round_div_pow2(static_cast<int128>(mx) * p.m, p.s);
              real = std::ldexp(static_cast<long double>(mx) * p.m, -p.s);
            } else {
              const int64_t cnt = p.include_pad ? p.kh * p.kw : present;
              const int128 den = static_cast<int128>(cnt) << p.s;
              yv = floor_div(static_cast<int128>(sum) * p.m + den / 2, den);
              real = std::ldexp(static_cast<long double>(sum) * p.m / cnt, -p.s);
            }
          }
          yv += p.zo, real += p.zo;
          const int64_t yc = clamp_to(yv, lo, hi);
          want.v[want.index(n, y, xx, ch)] = yc;
          real = std::min<long double>(std::max<long double>(real, lo), hi);
          EXPECT_LE(std::fabs(static_cast<long double>(got.at(n, y, xx, ch)) - real), 0.5L)
              << n << "," << y << "," << xx << "," << ch;
        }
  expect_equal(got, want, describe(p));
}

TEST(RefPool, ZeroPoints) {
  std::mt19937 rng(778);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 60; ++i) {
    PoolCase p;
    p.kind = i % 2 ? isa::PoolKind::kMax : isa::PoolKind::kAvg;
    p.include_pad = i % 4 < 2;
    p.zi = ri(-128, 127), p.zo = ri(-128, 127);
    p.m = ri(1 << 29, 1 << 30);
    run_case(p, 900 + static_cast<uint32_t>(i));
  }
}

TEST(RefPool, RandomConfigurations) {
  std::mt19937 rng(777);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 1000; ++i) {
    PoolCase p;
    for (;;) {
      p.kind = ri(0, 1) ? isa::PoolKind::kMax : isa::PoolKind::kAvg;
      p.include_pad = ri(0, 1);
      p.n = ri(1, 2);
      p.ih = ri(1, 9);
      p.iw = ri(1, 9);
      p.c = ri(1, 35);
      p.kh = ri(1, 4);
      p.kw = ri(1, 4);
      p.sh = ri(1, 3);
      p.sw = ri(1, 3);
      p.dh = ri(1, 2);
      p.dw = ri(1, 2);
      // Pads up to the kernel extent: some windows may lie wholly in padding.
      p.pt = ri(0, p.dh * (p.kh - 1) + 1);
      p.pb = ri(0, p.dh * (p.kh - 1));
      p.pl = ri(0, p.dw * (p.kw - 1) + 1);
      p.pr = ri(0, p.dw * (p.kw - 1));
      if (p.ih + p.pt + p.pb > p.dh * (p.kh - 1) && p.iw + p.pl + p.pr > p.dw * (p.kw - 1)) break;
    }
    if (ri(0, 3) == 0) {
      p.in_t = DType::kInt16;
      p.in_lo = INT16_MIN;
      p.in_hi = INT16_MAX;
    }
    p.out_t = ri(0, 3) == 0 ? DType::kInt16 : DType::kInt8;
    // Ratio around in_range -> out_range.
    const double ratio = (p.out_t == DType::kInt16 ? 32768.0 : 128.0) /
                         (p.in_t == DType::kInt16 ? 32768.0 : 128.0) *
                         std::uniform_real_distribution<double>(0.3, 1.5)(rng);
    derive_multiplier(ratio, &p.m, &p.s);
    if (ri(0, 4) == 0) {
      p.m = ri(1, INT32_MAX);
      p.s = ri(0, 63);
    }
    if (ri(0, 3) == 0) {
      p.act_min = 0;
      p.act_max = ri(1, 100);
    } else {
      p.act_min = INT32_MIN;
      p.act_max = INT32_MAX;
    }
    p.padded = ri(0, 4) != 0;
    run_case(p, 100 + i);
    if (HasFailure()) return;
  }
}

TEST(RefPool, GlobalAverage) {
  PoolCase p;
  p.ih = 13;
  p.iw = 11;
  p.c = 70;
  p.kh = 13;
  p.kw = 11;
  p.pt = p.pl = p.pb = p.pr = 0;
  run_case(p, 1);
  p.in_t = DType::kInt16;
  p.in_lo = INT16_MIN;
  p.in_hi = INT16_MAX;
  p.out_t = DType::kInt16;
  run_case(p, 2);
  p.kind = isa::PoolKind::kMax;
  run_case(p, 3);
}

TEST(RefPool, EmptyWindowsGiveZero) {
  // pad_top = 3 with a 2-row kernel: the first output row sees only padding.
  PoolCase p;
  p.ih = p.iw = 2;
  p.kh = p.kw = 2;
  p.pt = p.pl = 3;
  p.pb = p.pr = 0;
  for (isa::PoolKind kind : {isa::PoolKind::kMax, isa::PoolKind::kAvg}) {
    for (bool incl : {false, true}) {
      p.kind = kind;
      p.include_pad = incl;
      p.act_min = -128;
      p.act_max = 127;
      run_case(p, 5);
      p.act_min = 10;  // the empty window's 0 is clamped like any value
      run_case(p, 6);
    }
  }
}

TEST(RefPool, SaturatingExtremes) {
  for (int64_t v : {-128, 127}) {
    for (int s : {0, 63}) {
      for (isa::PoolKind kind : {isa::PoolKind::kMax, isa::PoolKind::kAvg}) {
        PoolCase p;
        p.kind = kind;
        p.in_lo = p.in_hi = v;
        p.m = INT32_MAX;
        p.s = s;
        run_case(p, 7);
        p.include_pad = true;
        run_case(p, 8);
      }
    }
  }
}

TEST(RefPool, AverageRoundsHalfUp) {
  // Window {1, 2}: mean 1.5 -> 2; window {-1, -2}: mean -1.5 -> -1; S = 0, M = 1.
  TestMemory tm(9);
  isa::Pool ins;
  ins.kind = isa::PoolKind::kAvg;
  ins.in = tm.tensor(Region::kInput, DType::kInt8, {1, 1, 4, 1}, false);
  ins.out = tm.tensor(Region::kOutput, DType::kInt8, {1, 1, 2, 1}, false);
  ins.kernel_w = 2;
  ins.stride_w = 2;
  ins.multiplier = 1;
  ins.shift = 0;
  tm.write(ins.in, {1, 2, -1, -2});
  const Memory mem = tm.bind();
  ref::pool(ins, mem);
  EXPECT_EQ(tm.read(ins.out).v, (std::vector<int64_t>{2, -1}));
}

}  // namespace
}  // namespace openbpu::sim::test
