// SPDX-License-Identifier: Apache-2.0
// Image input conversion (kPreprocess): uint8 pixels of src_format to int8
// (value - 128) in dst_format, NHWC [N, H, W, C].
//
// Sources: kRGB/kBGR/kYUV444/kGray packed NHWC [N, H, W, C] or planar NCHW
// [N, C, H, W] (src_planar); kNV12 as a Y view [N, H, W, 1] plus an interleaved
// UV plane at in.offset + uv_offset + n*in.strides[0] with uv_row_stride bytes
// per row; pixel (y, x) takes U, V from UV row y/2, pair x/2.
// Conversions (BT.601, Q14 fixed point, see docs/numerics.md):
//   RGB/BGR -> RGB/BGR        identity or channel swap
//   Gray -> Gray              identity
//   YUV -> RGB/BGR            full or video range matrix, clamped to 0..255
//   YUV -> YUV444 / Gray      identity (full range) or expansion to full range (video)
// (YUV = NV12 or YUV444; YUV444 -> Gray is defined like NV12 -> Gray.)
// Any other combination is rejected by the validator; the kernel writes 0.
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {
namespace {

using isa::ImageFormat;

int64_t clamp_u8(int64_t v) { return detail::clamp(v, 0, 255); }

struct Pixel {
  int64_t c[3] = {128, 128, 128};  // 8-bit values of the destination channels
  int count = 0;                   // 0 = conversion not defined
};

bool is_yuv(ImageFormat f) { return f == ImageFormat::kNV12 || f == ImageFormat::kYUV444; }
bool is_rgb(ImageFormat f) { return f == ImageFormat::kRGB || f == ImageFormat::kBGR; }

// Converts one source pixel (s0, s1, s2 in source channel order; Y, U, V for
// YUV sources) to the destination format.
Pixel convert(const isa::Preprocess& p, int64_t s0, int64_t s1, int64_t s2) {
  Pixel px;
  const bool video = p.range == isa::ColorRange::kVideo;
  if (is_rgb(p.src_format) && is_rgb(p.dst_format)) {
    const bool swap = p.src_format != p.dst_format;
    px.c[0] = swap ? s2 : s0;
    px.c[1] = s1;
    px.c[2] = swap ? s0 : s2;
    px.count = 3;
  } else if (p.src_format == ImageFormat::kGray && p.dst_format == ImageFormat::kGray) {
    px.c[0] = s0;
    px.count = 1;
  } else if (is_yuv(p.src_format)) {
    const int64_t y = s0, u = s1 - 128, v = s2 - 128;
    if (is_rgb(p.dst_format)) {
      int64_t r, g, b;
      if (video) {
        const int64_t yv = 19077 * (y - 16);
        r = clamp_u8((yv + 26149 * v + 8192) >> 14);
        g = clamp_u8((yv - 6419 * u - 13320 * v + 8192) >> 14);
        b = clamp_u8((yv + 33050 * u + 8192) >> 14);
      } else {
        const int64_t yf = y * 16384;
        r = clamp_u8((yf + 22970 * v + 8192) >> 14);
        g = clamp_u8((yf - 5638 * u - 11700 * v + 8192) >> 14);
        b = clamp_u8((yf + 29032 * u + 8192) >> 14);
      }
      const bool bgr = p.dst_format == ImageFormat::kBGR;
      px.c[0] = bgr ? b : r;
      px.c[1] = g;
      px.c[2] = bgr ? r : b;
      px.count = 3;
    } else if (p.dst_format == ImageFormat::kYUV444 || p.dst_format == ImageFormat::kGray) {
      if (video) {
        px.c[0] = clamp_u8((19077 * (y - 16) + 8192) >> 14);
        px.c[1] = clamp_u8(((18651 * u + 8192) >> 14) + 128);
        px.c[2] = clamp_u8(((18651 * v + 8192) >> 14) + 128);
      } else {
        px.c[0] = y;
        px.c[1] = s1;
        px.c[2] = s2;
      }
      px.count = p.dst_format == ImageFormat::kGray ? 1 : 3;
    }
  }
  return px;
}

}  // namespace

void preprocess(const isa::Preprocess& p, const Memory& mem) {
  const detail::View in(mem, p.in), out(mem, p.out);
  const uint8_t* base = mem.ptr(p.in);
  const bool nv12 = p.src_format == ImageFormat::kNV12;
  const int src_channels = p.src_format == ImageFormat::kGray ? 1 : 3;

  for (int64_t n = 0; n < p.out.dims[0]; ++n) {
    for (int64_t y = 0; y < p.out.dims[1]; ++y) {
      for (int64_t x = 0; x < p.out.dims[2]; ++x) {
        int64_t s[3] = {0, 0, 0};
        if (nv12) {
          s[0] = in.get(n, y, x, 0);
          const uint8_t* uv =
              base + p.uv_offset + n * p.in.strides[0] + (y / 2) * p.uv_row_stride + (x / 2) * 2;
          s[1] = uv[0];
          s[2] = uv[1];
        } else {
          for (int c = 0; c < src_channels; ++c) {
            s[c] = p.src_planar ? in.get(n, c, y, x) : in.get(n, y, x, c);
          }
        }
        const Pixel px = convert(p, s[0], s[1], s[2]);
        for (int64_t c = 0; c < p.out.dims[3]; ++c) {
          out.set(c < px.count ? px.c[c] - 128 : 0, n, y, x, c);
        }
      }
    }
  }
}

}  // namespace openbpu::sim::ref
