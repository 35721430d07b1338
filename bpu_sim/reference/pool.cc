// SPDX-License-Identifier: Apache-2.0
// Max and average pooling over H and W of NHWC tensors (kPool).
//
// Window taps of output (oh, ow): ih = oh*stride_h - pad_top + kh*dilation_h,
// iw likewise; only in-image taps are read (padding is never a value).
//   max: y = clamp(requant(max of the taps - zi, M, S) + zo)
//   avg: c = kernel_h*kernel_w if count_include_pad else the in-image tap count,
//        y = clamp(floor((sum*M + floor(c*2^S/2)) / (c*2^S)) + zo), sum of x - zi
// A window without in-image taps gives zo before the clamp.
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {

void pool(const isa::Pool& p, const Memory& mem) {
  if (p.kernel_h < 1 || p.kernel_w < 1 || p.stride_h < 1 || p.stride_w < 1 || p.dilation_h < 1 ||
      p.dilation_w < 1) {
    return;  // rejected by the validator
  }
  using detail::int128;
  const detail::View in(mem, p.in), out(mem, p.out);
  const int64_t ih_count = p.in.dims[1], iw_count = p.in.dims[2];
  const int s = detail::sanitize_shift(p.shift);
  const detail::Range range = detail::out_range(p.out.dtype, p.act_min, p.act_max);

  for (int64_t n = 0; n < p.out.dims[0]; ++n) {
    for (int64_t oh = 0; oh < p.out.dims[1]; ++oh) {
      for (int64_t ow = 0; ow < p.out.dims[2]; ++ow) {
        for (int64_t ch = 0; ch < p.out.dims[3]; ++ch) {
          int64_t taps = 0, sum = 0, max = 0;
          for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
            const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
            if (ih < 0 || ih >= ih_count) continue;
            for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
              const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
              if (iw < 0 || iw >= iw_count) continue;
              const int64_t x = in.get(n, ih, iw, ch) - p.zero_in;
              max = (taps == 0 || x > max) ? x : max;
              sum += x;
              ++taps;
            }
          }
          int128 y = 0;
          if (taps > 0) {
            if (p.kind == isa::PoolKind::kMax) {
              y = detail::round_shift(static_cast<int128>(max) * p.multiplier, s);
            } else {
              const int128 c =
                  p.count_include_pad ? static_cast<int128>(p.kernel_h) * p.kernel_w : taps;
              const int128 den = c << s;  // c * 2^S < 2^126
              const int128 num = static_cast<int128>(sum) * p.multiplier + den / 2;
              y = num / den - ((num % den != 0 && num < 0) ? 1 : 0);  // floor division
            }
          }
          y += p.zero_out;
          out.set(detail::saturate64(detail::clamp128(y, range.lo, range.hi)), n, oh, ow, ch);
        }
      }
    }
  }
}

}  // namespace openbpu::sim::ref
