// SPDX-License-Identifier: Apache-2.0
// Reference resize against an independent computation in double: source
// coordinates as real numbers, bilinear weights as dyadic fractions (exact in
// double), the documented integer rounding only for the final steps; for int8
// bilinear with a ratio <= 1 the result is within one LSB of true bilinear
// interpolation with unquantized weights.
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
using isa::ResizeMode;

struct ResizeCase {
  ResizeMode mode = ResizeMode::kBilinear;
  int n = 1, ih = 4, iw = 5, oh = 8, ow = 10, c = 3;
  int64_t y_start = 0, y_step = 1 << 15, x_start = 0, x_step = 1 << 15;
  int32_t round_bias = 0;
  DType in_t = DType::kInt8, out_t = DType::kInt8;
  int32_t m = 1 << 30, s = 30;
  bool padded = true;
  bool extreme_inputs = false;
};

void run_case(const ResizeCase& r, uint32_t seed) {
  char buf[300];
  std::snprintf(
      buf, sizeof buf,
      "%s in=%dx%d out=%dx%d c=%d y=%lld+%lld x=%lld+%lld rb=%d M=%d S=%d in_t=%d out_t=%d",
      r.mode == ResizeMode::kNearest ? "nearest" : "bilinear", r.ih, r.iw, r.oh, r.ow, r.c,
      static_cast<long long>(r.y_start), static_cast<long long>(r.y_step),
      static_cast<long long>(r.x_start), static_cast<long long>(r.x_step), r.round_bias, r.m, r.s,
      static_cast<int>(r.in_t), static_cast<int>(r.out_t));
  SCOPED_TRACE(buf);
  TestMemory tm(seed);
  isa::Resize ins;
  ins.mode = r.mode;
  ins.in = tm.tensor(Region::kInput, r.in_t, {r.n, r.ih, r.iw, r.c}, r.padded);
  ins.out = tm.tensor(Region::kOutput, r.out_t, {r.n, r.oh, r.ow, r.c}, r.padded);
  ins.y_start = r.y_start;
  ins.y_step = r.y_step;
  ins.x_start = r.x_start;
  ins.x_step = r.x_step;
  ins.round_bias = r.round_bias;
  ins.multiplier = r.m;
  ins.shift = r.s;
  const Dense x = r.extreme_inputs ? tm.fill_random(ins.in, type_min(r.in_t), type_min(r.in_t) + 1)
                                   : tm.fill_random(ins.in);
  const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
  const Memory mem = tm.bind();
  ref::resize(ins, mem);
  const Dense got = tm.read(ins.out);
  tm.expect_only_views_written(Region::kOutput, before, {ins.out});

  const int64_t lo = type_min(r.out_t), hi = type_max(r.out_t);
  const long double ratio = std::ldexp(static_cast<long double>(r.m), -r.s);
  Dense want = got;
  for (int n = 0; n < r.n; ++n)
    for (int oy = 0; oy < r.oh; ++oy)
      for (int ox = 0; ox < r.ow; ++ox)
        for (int ch = 0; ch < r.c; ++ch) {
          const double sy = (r.y_start + oy * r.y_step) / 65536.0;
          const double sx = (r.x_start + ox * r.x_step) / 65536.0;
          int128 yv;
          long double real;
          if (r.mode == ResizeMode::kNearest) {
            const int iy = static_cast<int>(
                std::clamp(std::floor(sy + r.round_bias / 65536.0), 0.0, r.ih - 1.0));
            const int ix = static_cast<int>(
                std::clamp(std::floor(sx + r.round_bias / 65536.0), 0.0, r.iw - 1.0));
            yv = round_div_pow2(static_cast<int128>(x.at(n, iy, ix, ch)) * r.m, r.s);
            real = x.at(n, iy, ix, ch) * ratio;
          } else {
            const double cy = std::clamp(sy, 0.0, r.ih - 1.0);
            const double cx = std::clamp(sx, 0.0, r.iw - 1.0);
            const int y0 = static_cast<int>(std::floor(cy)), x0 = static_cast<int>(std::floor(cx));
            const int y1 = std::min(y0 + 1, r.ih - 1), x1 = std::min(x0 + 1, r.iw - 1);
            // 11-bit weights: the fraction truncated to a multiple of 1/2048.
            const double fy = std::floor((cy - y0) * 2048) / 2048;
            const double fx = std::floor((cx - x0) * 2048) / 2048;
            const double v = x.at(n, y0, x0, ch) * (1 - fy) * (1 - fx) +
                             x.at(n, y0, x1, ch) * (1 - fy) * fx +
                             x.at(n, y1, x0, ch) * fy * (1 - fx) + x.at(n, y1, x1, ch) * fy * fx;
            const int128 t = static_cast<int128>(std::floor(v * 256 + 0.5));  // Q8
            yv = round_div_pow2(t * r.m, r.s + 8);
            // True bilinear with the exact fraction.
            const double ey = cy - y0, ex = cx - x0;
            real =
                (x.at(n, y0, x0, ch) * (1 - ey) * (1 - ex) + x.at(n, y0, x1, ch) * (1 - ey) * ex +
                 x.at(n, y1, x0, ch) * ey * (1 - ex) + x.at(n, y1, x1, ch) * ey * ex) *
                ratio;
          }
          want.v[want.index(n, oy, ox, ch)] = clamp_to(yv, lo, hi);
          real = std::clamp<long double>(real, lo, hi);
          const long double err = std::fabs(static_cast<long double>(got.at(n, oy, ox, ch)) - real);
          if (r.mode == ResizeMode::kNearest) {
            EXPECT_LE(err, 0.5L + 1e-9L);
          } else if (r.in_t == DType::kInt8 && ratio <= 1) {
            EXPECT_LE(err, 1.0L);
          }
        }
  expect_equal(got, want, buf);
}

// Q16 start/step of the usual coordinate transforms for in -> out.
void coords(int mode, int in, int out, int64_t* start, int64_t* step, std::mt19937& rng) {
  const double scale = static_cast<double>(in) / out;
  switch (mode) {
    case 0:  // asymmetric
      *start = 0;
      *step = std::llround(scale * 65536);
      break;
    case 1:  // half pixel
      *step = std::llround(scale * 65536);
      *start = std::llround((0.5 * scale - 0.5) * 65536);
      break;
    case 2:  // align corners
      *start = 0;
      *step = out > 1 ? std::llround((in - 1.0) / (out - 1.0) * 65536) : 0;
      break;
    default:  // arbitrary, also negative and beyond the image
      *start = std::uniform_int_distribution<int64_t>(-(3 << 16), 3 << 16)(rng);
      *step = std::uniform_int_distribution<int64_t>(0, 4 << 16)(rng);
      break;
  }
}

TEST(RefResize, RandomConfigurations) {
  std::mt19937 rng(4242);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 1000; ++i) {
    ResizeCase r;
    r.mode = ri(0, 1) ? ResizeMode::kNearest : ResizeMode::kBilinear;
    r.n = ri(1, 2);
    r.ih = ri(1, 9);
    r.iw = ri(1, 9);
    r.oh = ri(1, 13);
    r.ow = ri(1, 13);
    r.c = ri(1, 21);
    const int cm = ri(0, 3);
    coords(cm, r.ih, r.oh, &r.y_start, &r.y_step, rng);
    coords(cm, r.iw, r.ow, &r.x_start, &r.x_step, rng);
    r.round_bias = ri(0, 2) == 0 ? 0 : (ri(0, 1) ? 32768 : ri(0, 65535));
    r.in_t = ri(0, 3) == 0 ? DType::kInt16 : DType::kInt8;
    r.out_t = ri(0, 3) == 0 ? DType::kInt16 : DType::kInt8;
    const double ratio = (r.out_t == DType::kInt16 ? 32768.0 : 128.0) /
                         (r.in_t == DType::kInt16 ? 32768.0 : 128.0) *
                         std::uniform_real_distribution<double>(0.3, 1.0)(rng);
    derive_multiplier(ratio, &r.m, &r.s);
    if (ri(0, 3) == 0) {
      r.m = 1 << 30;
      r.s = 30;
    }
    if (ri(0, 6) == 0) {
      r.m = ri(1, INT32_MAX);
      r.s = ri(0, 63);
    }
    r.padded = ri(0, 3) != 0;
    run_case(r, 300 + i);
    if (HasFailure()) return;
  }
}

TEST(RefResize, OneByOneAndIdentity) {
  for (ResizeMode mode : {ResizeMode::kNearest, ResizeMode::kBilinear}) {
    ResizeCase r;
    r.mode = mode;
    r.ih = r.iw = 1;
    r.oh = 3;
    r.ow = 2;
    run_case(r, 1);
    r.ih = r.oh = 6;
    r.iw = r.ow = 7;
    r.y_step = r.x_step = 1 << 16;
    run_case(r, 2);
  }
}

TEST(RefResize, SaturatingExtremes) {
  for (ResizeMode mode : {ResizeMode::kNearest, ResizeMode::kBilinear}) {
    for (int s : {0, 63}) {
      for (DType t : {DType::kInt8, DType::kInt16}) {
        ResizeCase r;
        r.mode = mode;
        r.in_t = r.out_t = t;
        r.m = INT32_MAX;
        r.s = s;
        r.extreme_inputs = true;
        run_case(r, 3);
        r.extreme_inputs = false;
        run_case(r, 4);
      }
    }
  }
}

}  // namespace
}  // namespace openbpu::sim::test
