// SPDX-License-Identifier: Apache-2.0
// Convolution and transposed convolution (kConv, kDeconv), NHWC.
//
//   acc(n, oh, ow, co) = bias[co] + sum over the taps that reach (oh, ow) of
//                        in[n, ih, iw, g*Cin_g + ci] * w[co][kh][kw][ci]
//   conv:   ih = oh*stride_h - pad_top + kh*dilation_h   (taps outside the image read pad_value)
//   deconv: the taps with oh = ih*stride_h - pad_top + kh*dilation_h
//   int32 out:     y = clamp(acc, act_min, act_max)
//   int8/16 out:   y = clamp(floor((acc*M[co] + R*Mr[co] + 2^(S[co]-1)) / 2^S[co]))
// acc is the exact sum: each product is below 2^22 in magnitude, so an int64
// accumulator cannot overflow for fewer than 2^41 taps.
#include <cstring>

#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {
namespace {

using detail::int128;

// sum_i x[i] * w[i] for n input elements spaced stride_bytes apart.
template <class T>
int64_t dot(const uint8_t* x, int64_t stride_bytes, const int8_t* w, int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, x + i * stride_bytes, sizeof v);
    s += static_cast<int64_t>(v) * w[i];
  }
  return s;
}

int64_t dot_any(isa::DType t, const uint8_t* x, int64_t stride_bytes, const int8_t* w, int64_t n) {
  switch (t) {
    case isa::DType::kInt8:
      return dot<int8_t>(x, stride_bytes, w, n);
    case isa::DType::kInt16:
      return dot<int16_t>(x, stride_bytes, w, n);
    case isa::DType::kInt32:
      return dot<int32_t>(x, stride_bytes, w, n);
    case isa::DType::kUInt8:
      return dot<uint8_t>(x, stride_bytes, w, n);
  }
  return 0;
}

int64_t tap_sum(const int8_t* w, int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += w[i];
  return s;
}

// Structural preconditions the validator guarantees; checked again so that an
// unvalidated instruction cannot divide by zero or index a negative group.
bool structurally_valid(const isa::Conv& c) {
  const int64_t cin = c.in.dims[3], cout = c.out.dims[3];
  return c.groups >= 1 && cin >= 1 && cout >= 1 && cin % c.groups == 0 && cout % c.groups == 0 &&
         c.kernel_h >= 1 && c.kernel_w >= 1 && c.stride_h >= 1 && c.stride_w >= 1 &&
         c.dilation_h >= 1 && c.dilation_w >= 1;
}

// The tap (kh, kw) of output (oh, ow) reads input (ih, iw); false when it
// reads nothing (outside the image, or no input position for deconv).
bool tap_source(const isa::Conv& c, bool transposed, int64_t oh, int64_t ow, int64_t kh, int64_t kw,
                int64_t ih_count, int64_t iw_count, int64_t* ih, int64_t* iw) {
  if (!transposed) {
    *ih = oh * c.stride_h - c.pad_top + kh * c.dilation_h;
    *iw = ow * c.stride_w - c.pad_left + kw * c.dilation_w;
  } else {
    // oh = ih*stride_h - pad_top + kh*dilation_h  <=>  ih*stride_h = oh + pad_top - kh*dilation_h
    const int64_t nh = oh + c.pad_top - kh * c.dilation_h;
    const int64_t nw = ow + c.pad_left - kw * c.dilation_w;
    if (nh < 0 || nw < 0 || nh % c.stride_h != 0 || nw % c.stride_w != 0) return false;
    *ih = nh / c.stride_h;
    *iw = nw / c.stride_w;
  }
  return *ih >= 0 && *ih < ih_count && *iw >= 0 && *iw < iw_count;
}

void conv_common(const isa::Conv& c, const Memory& mem, bool transposed) {
  if (!structurally_valid(c)) return;
  const detail::View in(mem, c.in), out(mem, c.out);
  const int64_t batch = c.out.dims[0], oh_count = c.out.dims[1], ow_count = c.out.dims[2];
  const int64_t cout = c.out.dims[3];
  const int64_t ih_count = c.in.dims[1], iw_count = c.in.dims[2];
  const int64_t cin_g = c.in.dims[3] / c.groups, cout_g = cout / c.groups;
  const int64_t in_cstride = c.in.strides[3] * isa::dtype_size(c.in.dtype);
  const int8_t* weight = reinterpret_cast<const int8_t*>(mem.ptr(c.weight));
  const bool int32_out = c.out.dtype == isa::DType::kInt32;
  const bool residual = c.has_residual != 0 && !int32_out;
  const detail::Range range = detail::out_range(c.out.dtype, c.act_min, c.act_max);
  // Bound to the output view when unused, so an absent residual is never resolved.
  const detail::View res(mem, residual ? c.residual : c.out);

  for (int64_t co = 0; co < cout; ++co) {
    const int64_t g = co / cout_g;
    const int64_t bias =
        c.bias.count != 0 ? detail::const_at(mem, c.bias, isa::DType::kInt32, co) : 0;
    int64_t m = 0, mr = 0;
    int s = 0;
    if (!int32_out) {
      m = detail::const_at(mem, c.multiplier, isa::DType::kInt32, co);
      s = detail::sanitize_shift(detail::const_at(mem, c.shift, isa::DType::kInt8, co));
      if (residual) mr = detail::const_at(mem, c.residual_multiplier, isa::DType::kInt32, co);
    }
    const int8_t* w_co = weight + co * c.kernel_h * c.kernel_w * cin_g;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t oh = 0; oh < oh_count; ++oh) {
        for (int64_t ow = 0; ow < ow_count; ++ow) {
          int64_t acc = bias;
          for (int64_t kh = 0; kh < c.kernel_h; ++kh) {
            for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
              int64_t ih, iw;
              if (!tap_source(c, transposed, oh, ow, kh, kw, ih_count, iw_count, &ih, &iw)) {
                if (!transposed) acc += c.pad_value * tap_sum(w_co + (kh * c.kernel_w + kw) * cin_g, cin_g);
                continue;
              }
              acc += dot_any(c.in.dtype, in.addr(n, ih, iw, g * cin_g), in_cstride,
                             w_co + (kh * c.kernel_w + kw) * cin_g, cin_g);
            }
          }
          int64_t y;
          if (int32_out) {
            y = detail::clamp(acc, range.lo, range.hi);
          } else {
            int128 v = static_cast<int128>(acc) * m;
            if (residual) v += static_cast<int128>(res.get(n, oh, ow, co)) * mr;
            y = detail::saturate64(detail::clamp128(detail::round_shift(v, s), range.lo, range.hi));
          }
          out.set(y, n, oh, ow, co);
        }
      }
    }
  }
}

}  // namespace

void conv(const isa::Conv& ins, const Memory& mem) { conv_common(ins, mem, false); }
void deconv(const isa::Conv& ins, const Memory& mem) { conv_common(ins, mem, true); }

}  // namespace openbpu::sim::ref
