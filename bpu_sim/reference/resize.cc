// SPDX-License-Identifier: Apache-2.0
// Nearest and bilinear resize over H and W of NHWC tensors (kResize).
// Source coordinates are Q16 fixed point: sy = y_start + oy*y_step (x likewise).
//   nearest:  iy = clamp((sy + round_bias) >> 16, 0, IH-1), y = clamp(requant(in, M, S))
//   bilinear: sy clamped to [0, (IH-1) << 16], y0 = sy >> 16, y1 = min(y0+1, IH-1),
//             fy = (sy & 0xffff) >> 5, wy0 = 2048 - fy, wy1 = fy (x likewise);
//             v = sum in[yi, xj]*wyi*wxj (weights sum to 2^22),
//             t = floor((v + 2^13) / 2^14)            (value in Q8),
//             y = clamp(floor((t*M + 2^(S+7)) / 2^(S+8)))
// The clamp is to the output type's range (Resize has no activation bounds).
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {
namespace {

using detail::int128;

// Nearest source index of one axis.
int64_t nearest_index(int128 s, int64_t round_bias, int64_t count) {
  return static_cast<int64_t>(
      detail::clamp128(detail::floor_shift(s + round_bias, 16), 0, count - 1));
}

// Bilinear taps of one axis: indices i0, i1 and 11-bit weights w0 + w1 = 2048.
struct Taps {
  int64_t i0, i1, w0, w1;
};
Taps bilinear_taps(int128 s, int64_t count) {
  const int64_t c =
      static_cast<int64_t>(detail::clamp128(s, 0, static_cast<int128>(count - 1) << 16));
  Taps t;
  t.i0 = c >> 16;
  t.i1 = t.i0 + 1 < count ? t.i0 + 1 : count - 1;
  t.w1 = (c & 0xffff) >> 5;
  t.w0 = 2048 - t.w1;
  return t;
}

}  // namespace

void resize(const isa::Resize& r, const Memory& mem) {
  const int64_t ih_count = r.in.dims[1], iw_count = r.in.dims[2];
  if (ih_count < 1 || iw_count < 1) return;  // rejected by the validator
  const detail::View in(mem, r.in), out(mem, r.out);
  const int s = detail::sanitize_shift(r.shift);
  const int128 m = r.multiplier;
  const int64_t lo = detail::dtype_min(r.out.dtype), hi = detail::dtype_max(r.out.dtype);

  for (int64_t n = 0; n < r.out.dims[0]; ++n) {
    for (int64_t oy = 0; oy < r.out.dims[1]; ++oy) {
      const int128 sy = static_cast<int128>(r.y_start) + static_cast<int128>(oy) * r.y_step;
      for (int64_t ox = 0; ox < r.out.dims[2]; ++ox) {
        const int128 sx = static_cast<int128>(r.x_start) + static_cast<int128>(ox) * r.x_step;
        for (int64_t ch = 0; ch < r.out.dims[3]; ++ch) {
          int128 y;
          if (r.mode == isa::ResizeMode::kNearest) {
            const int64_t iy = nearest_index(sy, r.round_bias, ih_count);
            const int64_t ix = nearest_index(sx, r.round_bias, iw_count);
            y = detail::round_shift(in.get(n, iy, ix, ch) * m, s);
          } else {
            const Taps ty = bilinear_taps(sy, ih_count), tx = bilinear_taps(sx, iw_count);
            const int128 v = static_cast<int128>(in.get(n, ty.i0, tx.i0, ch)) * ty.w0 * tx.w0 +
                             static_cast<int128>(in.get(n, ty.i0, tx.i1, ch)) * ty.w0 * tx.w1 +
                             static_cast<int128>(in.get(n, ty.i1, tx.i0, ch)) * ty.w1 * tx.w0 +
                             static_cast<int128>(in.get(n, ty.i1, tx.i1, ch)) * ty.w1 * tx.w1;
            const int128 t = detail::round_shift(v, 14);
            y = detail::round_shift(t * m, s + 8);
          }
          out.set(detail::saturate64(detail::clamp128(y, lo, hi)), n, oy, ox, ch);
        }
      }
    }
  }
}

}  // namespace openbpu::sim::ref
