// SPDX-License-Identifier: Apache-2.0
// Reference preprocess: every supported src/dst pair, packed and planar, NV12
// with odd row strides, odd sizes and batch > 1. Each result is compared with
// the documented Q14 integer formula (written here with divisions) and with a
// double-precision BT.601 conversion (|diff| <= 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bpu_sim/reference/kernels.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

using isa::ColorRange;
using isa::DType;
using isa::ImageFormat;
using isa::Region;

int64_t u8(int128 v) { return clamp_to(v, 0, 255); }
int64_t q14(int64_t v) { return static_cast<int64_t>(floor_div(v + 8192, 16384)); }
int64_t u8d(double v) { return static_cast<int64_t>(std::clamp(std::floor(v + 0.5), 0.0, 255.0)); }

struct Rgb {
  int64_t r, g, b;
};

// Documented fixed-point conversion.
Rgb yuv_to_rgb_q14(int64_t y, int64_t u, int64_t v, bool video) {
  u -= 128;
  v -= 128;
  if (video) {
    const int64_t yv = 19077 * (y - 16);
    return {u8(q14(yv + 26149 * v)), u8(q14(yv - 6419 * u - 13320 * v)), u8(q14(yv + 33050 * u))};
  }
  return {u8(q14(16384 * y + 22970 * v)), u8(q14(16384 * y - 5638 * u - 11700 * v)),
          u8(q14(16384 * y + 29032 * u))};
}

// BT.601 in double.
Rgb yuv_to_rgb_double(int64_t y, int64_t u, int64_t v, bool video) {
  const double uu = u - 128.0, vv = v - 128.0;
  if (video) {
    const double yy = 255.0 / 219.0 * (y - 16.0);
    const double cu = 255.0 / 224.0 * uu, cv = 255.0 / 224.0 * vv;
    return {u8d(yy + 1.402 * cv), u8d(yy - 0.344136 * cu - 0.714136 * cv), u8d(yy + 1.772 * cu)};
  }
  return {u8d(y + 1.402 * vv), u8d(y - 0.344136 * uu - 0.714136 * vv), u8d(y + 1.772 * uu)};
}

// Expected (exact, double) 8-bit destination channels of one pixel.
void expected_pixel(ImageFormat src, ImageFormat dst, bool video, const int64_t s[3],
                    std::vector<int64_t>* exact, std::vector<int64_t>* approx) {
  const bool yuv = src == ImageFormat::kNV12 || src == ImageFormat::kYUV444;
  if (!yuv) {
    if (src == ImageFormat::kGray) {
      *exact = *approx = {s[0]};
    } else if (src == dst) {
      *exact = *approx = {s[0], s[1], s[2]};
    } else {
      *exact = *approx = {s[2], s[1], s[0]};
    }
    return;
  }
  if (dst == ImageFormat::kRGB || dst == ImageFormat::kBGR) {
    const Rgb e = yuv_to_rgb_q14(s[0], s[1], s[2], video);
    const Rgb d = yuv_to_rgb_double(s[0], s[1], s[2], video);
    if (dst == ImageFormat::kRGB) {
      *exact = {e.r, e.g, e.b};
      *approx = {d.r, d.g, d.b};
    } else {
      *exact = {e.b, e.g, e.r};
      *approx = {d.b, d.g, d.r};
    }
    return;
  }
  // YUV444 / Gray: identity (full range) or expansion to full range (video).
  if (video) {
    *exact = {u8(q14(19077 * (s[0] - 16))), u8(q14(18651 * (s[1] - 128)) + 128),
              u8(q14(18651 * (s[2] - 128)) + 128)};
    *approx = {u8d(255.0 / 219.0 * (s[0] - 16.0)), u8d(255.0 / 224.0 * (s[1] - 128.0) + 128),
               u8d(255.0 / 224.0 * (s[2] - 128.0) + 128)};
  } else {
    *exact = *approx = {s[0], s[1], s[2]};
  }
  if (dst == ImageFormat::kGray) {
    exact->resize(1);
    approx->resize(1);
  }
}

int channels(ImageFormat f) { return f == ImageFormat::kGray ? 1 : 3; }

struct PreCase {
  ImageFormat src = ImageFormat::kNV12, dst = ImageFormat::kRGB;
  ColorRange range = ColorRange::kFull;
  bool planar = false;
  int n = 1, h = 4, w = 6;
};

void run_case(const PreCase& p, uint32_t seed) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "src=%d dst=%d range=%d planar=%d n=%d h=%d w=%d",
                static_cast<int>(p.src), static_cast<int>(p.dst), static_cast<int>(p.range),
                p.planar, p.n, p.h, p.w);
  SCOPED_TRACE(buf);
  TestMemory tm(seed);
  isa::Preprocess ins;
  ins.src_format = p.src;
  ins.dst_format = p.dst;
  ins.range = p.range;
  ins.src_planar = p.planar;
  const int oc = channels(p.dst);
  int64_t y_row = 0, uv_rows = 0;
  if (p.src == ImageFormat::kNV12) {
    // Odd row strides; the UV plane follows the Y plane after a gap; per-batch
    // planes are batch_stride bytes apart.
    y_row = p.w + 1 + 2 * tm.rand_int(0, 3);
    ins.uv_row_stride = 2 * ((p.w + 1) / 2) + 1 + 2 * tm.rand_int(0, 2);
    uv_rows = (p.h + 1) / 2;
    ins.uv_offset = static_cast<uint64_t>(y_row * p.h + tm.rand_int(0, 5));
    const int64_t batch =
        static_cast<int64_t>(ins.uv_offset) + uv_rows * ins.uv_row_stride + tm.rand_int(0, 7);
    ins.in.region = Region::kInput;
    ins.in.dtype = DType::kUInt8;
    ins.in.offset = tm.reserve(Region::kInput, static_cast<uint64_t>(batch * p.n), 1);
    const int dims[4] = {p.n, p.h, p.w, 1};
    const int64_t strides[4] = {batch, y_row, 1, 1};
    for (int k = 0; k < 4; ++k) {
      ins.in.dims[k] = dims[k];
      ins.in.strides[k] = strides[k];
    }
  } else {
    const int ic = channels(p.src);
    ins.in = p.planar ? tm.tensor(Region::kInput, DType::kUInt8, {p.n, ic, p.h, p.w}, true)
                      : tm.tensor(Region::kInput, DType::kUInt8, {p.n, p.h, p.w, ic}, true);
  }
  ins.out = tm.tensor(Region::kOutput, DType::kInt8, {p.n, p.h, p.w, oc}, true);
  const std::vector<uint8_t> in_bytes = tm.region(Region::kInput);  // random bytes
  const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
  const Memory mem = tm.bind();
  ref::preprocess(ins, mem);
  tm.expect_only_views_written(Region::kOutput, before, {ins.out});
  EXPECT_EQ(tm.region(Region::kInput), in_bytes);
  const Dense y = tm.read(ins.out);

  const bool video = p.range == ColorRange::kVideo;
  int64_t worst = 0;
  for (int n = 0; n < p.n; ++n)
    for (int i = 0; i < p.h; ++i)
      for (int j = 0; j < p.w; ++j) {
        int64_t s[3] = {0, 0, 0};
        if (p.src == ImageFormat::kNV12) {
          const uint64_t base = ins.in.offset + static_cast<uint64_t>(n * ins.in.strides[0]);
          s[0] = in_bytes[base + i * y_row + j];
          const uint64_t uv = base + ins.uv_offset + (i / 2) * ins.uv_row_stride + (j / 2) * 2;
          s[1] = in_bytes[uv];
          s[2] = in_bytes[uv + 1];
        } else {
          for (int c = 0; c < channels(p.src); ++c) {
            const int64_t idx[6] = {n, p.planar ? c : i, p.planar ? i : j, p.planar ? j : c, 0, 0};
            s[c] = in_bytes[TestMemory::byte_of(ins.in, idx)];
          }
        }
        std::vector<int64_t> exact, approx;
        expected_pixel(p.src, p.dst, video, s, &exact, &approx);
        ASSERT_EQ(static_cast<int>(exact.size()), oc);
        for (int c = 0; c < oc; ++c) {
          const int64_t got = y.at(n, i, j, c) + 128;
          ASSERT_EQ(got, exact[c]) << "pixel " << n << "," << i << "," << j << " channel " << c
                                   << " src " << s[0] << "," << s[1] << "," << s[2];
          worst = std::max<int64_t>(worst, std::abs(got - approx[c]));
        }
      }
  EXPECT_LE(worst, 1) << "fixed point vs double BT.601";
}

TEST(RefPreprocess, Nv12AllDestinationsOddStridesAndBatches) {
  uint32_t seed = 1;
  for (ImageFormat dst :
       {ImageFormat::kRGB, ImageFormat::kBGR, ImageFormat::kYUV444, ImageFormat::kGray}) {
    for (ColorRange range : {ColorRange::kFull, ColorRange::kVideo}) {
      for (int shape = 0; shape < 4; ++shape) {
        PreCase p;
        p.src = ImageFormat::kNV12;
        p.dst = dst;
        p.range = range;
        p.n = 1 + shape % 3;
        p.h = shape == 1 ? 7 : (shape == 3 ? 1 : 16);  // odd heights and widths too
        p.w = shape == 2 ? 9 : (shape == 3 ? 1 : 24);
        run_case(p, ++seed);
      }
    }
  }
}

TEST(RefPreprocess, PackedAndPlanarSources) {
  uint32_t seed = 100;
  struct Pair {
    ImageFormat src, dst;
  } pairs[] = {
      {ImageFormat::kRGB, ImageFormat::kRGB},     {ImageFormat::kRGB, ImageFormat::kBGR},
      {ImageFormat::kBGR, ImageFormat::kRGB},     {ImageFormat::kBGR, ImageFormat::kBGR},
      {ImageFormat::kGray, ImageFormat::kGray},   {ImageFormat::kYUV444, ImageFormat::kRGB},
      {ImageFormat::kYUV444, ImageFormat::kBGR},  {ImageFormat::kYUV444, ImageFormat::kYUV444},
      {ImageFormat::kYUV444, ImageFormat::kGray},
  };
  for (const Pair& pr : pairs) {
    for (bool planar : {false, true}) {
      for (ColorRange range : {ColorRange::kFull, ColorRange::kVideo}) {
        PreCase p;
        p.src = pr.src;
        p.dst = pr.dst;
        p.planar = planar;
        p.range = range;
        p.n = 2;
        p.h = 5;
        p.w = 7;
        run_case(p, ++seed);
      }
    }
  }
}

TEST(RefPreprocess, AllYuvValuesAgainstDouble) {
  // Every (Y, U, V) triple on a grid of step 5 (0, 5, ..., 255) through a 1-row
  // YUV444 image, both ranges, RGB and YUV444 destinations.
  for (ColorRange range : {ColorRange::kFull, ColorRange::kVideo}) {
    for (ImageFormat dst : {ImageFormat::kRGB, ImageFormat::kYUV444}) {
      TestMemory tm(7);
      isa::Preprocess ins;
      ins.src_format = ImageFormat::kYUV444;
      ins.dst_format = dst;
      ins.range = range;
      const int w = 52 * 52 * 52;
      ins.in = tm.tensor(Region::kInput, DType::kUInt8, {1, 1, w, 3}, false);
      ins.out = tm.tensor(Region::kOutput, DType::kInt8, {1, 1, w, 3}, false);
      std::vector<int64_t> px;
      px.reserve(3 * w);
      for (int a = 0; a < 256; a += 5)
        for (int b = 0; b < 256; b += 5)
          for (int c = 0; c < 256; c += 5) px.insert(px.end(), {a, b, c});
      tm.write(ins.in, px);
      const Memory mem = tm.bind();
      ref::preprocess(ins, mem);
      const Dense y = tm.read(ins.out);
      const bool video = range == ColorRange::kVideo;
      for (int i = 0; i < w; ++i) {
        const int64_t s[3] = {px[3 * i], px[3 * i + 1], px[3 * i + 2]};
        std::vector<int64_t> exact, approx;
        expected_pixel(ImageFormat::kYUV444, dst, video, s, &exact, &approx);
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(y.v[3 * i + c] + 128, exact[c]);
          ASSERT_LE(std::abs(exact[c] - approx[c]), 1) << s[0] << "," << s[1] << "," << s[2];
        }
      }
    }
  }
}

}  // namespace
}  // namespace openbpu::sim::test
