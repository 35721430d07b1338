// SPDX-License-Identifier: Apache-2.0
// Portable convolution parts (plain C++, auto-vectorized by the compiler):
// the scalar requantization epilogue every path uses for tails, the portable
// indirect-GEMM tile and the portable depthwise rows.
//
// Portable GEMM layout: int16 data, k-group 1, MR = 4 pixels x NR = 16
// channels. Packed weights of one 16-channel block: [tap][cin_pad][16] int16;
// each row pointer addresses cin_pad int16 input values of one pixel and tap.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

__extension__ typedef __int128 int128;

constexpr int kMr = 4, kNr = 16;

void gemm_portable(const GemmArgs& a) {
  int32_t acc[kMr][kNr] = {};
  const int16_t* w = static_cast<const int16_t*>(a.w);
  for (int t = 0; t < a.taps; ++t) {
    const int16_t* r[kMr];
    for (int m = 0; m < kMr; ++m) r[m] = static_cast<const int16_t*>(a.rows[t * kMr + m]);
    for (int k = 0; k < a.cin_pad; ++k, w += kNr) {
      for (int m = 0; m < kMr; ++m) {
        const int32_t x = r[m][k];
        for (int n = 0; n < kNr; ++n) acc[m][n] += x * w[n];
      }
    }
  }
  for (int m = 0; m < kMr; ++m) std::memcpy(a.acc + m * a.acc_stride, acc[m], sizeof acc[m]);
}

}  // namespace

// y = clamp(floor((acc*M + R*Mr + 2^(S-1)) / 2^S), lo, hi), or clamp(acc) for
// int32 outputs. acc + bias is exact in int32 (validator), computed with
// wrapping adds so that the VNNI compensation folded into the bias cancels.
namespace {
void scalar_one(const EpilogueArgs& a) {
  const RequantParams& q = *a.rq;
  for (int i = 0; i < a.n; ++i) {
    const int co = a.co0 + i;
    const int32_t acc =
        static_cast<int32_t>(static_cast<uint32_t>(a.acc[i]) + static_cast<uint32_t>(q.bias[co]));
    int64_t y;
    if (a.out_type == isa::DType::kInt32) {
      y = acc;
    } else {
      const int s = q.shift[co];
      if (a.residual == nullptr) {  // |acc * M| < 2^62: int64, overflow-free rounding
        const int64_t v = static_cast<int64_t>(acc) * q.mult[co];
        y = s == 0 ? v : ((v >> (s - 1)) + 1) >> 1;
        y = y < q.lo ? q.lo : (y > q.hi ? q.hi : y);
        goto store;
      }
      int128 v = static_cast<int128>(acc) * q.mult[co];
      if (a.residual != nullptr) {
        int64_t r;
        if (a.res_type == isa::DType::kInt8) {
          r = reinterpret_cast<const int8_t*>(a.residual)[i * a.res_cstride];
        } else {
          int16_t r16;
          std::memcpy(&r16, a.residual + 2 * i * a.res_cstride, 2);
          r = r16;
        }
        v += static_cast<int128>(r) * q.rmult[co];
      }
      if (s > 0) v = (v + (static_cast<int128>(1) << (s - 1))) >> s;
      y = v < q.lo ? q.lo : (v > q.hi ? q.hi : static_cast<int64_t>(v));
    }
    y = y < q.lo ? q.lo : (y > q.hi ? q.hi : y);
  store:
    switch (a.out_type) {
      case isa::DType::kInt8:
        reinterpret_cast<int8_t*>(a.out)[i * a.out_cstride] = static_cast<int8_t>(y);
        break;
      case isa::DType::kInt16: {
        const int16_t v16 = static_cast<int16_t>(y);
        std::memcpy(a.out + 2 * i * a.out_cstride, &v16, 2);
        break;
      }
      default: {
        const int32_t v32 = static_cast<int32_t>(y);
        std::memcpy(a.out + 4 * i * a.out_cstride, &v32, 4);
        break;
      }
    }
  }
}

}  // namespace

void epilogue_scalar(const EpilogueArgs& a) {
  EpilogueArgs t = a;
  for (int p = 0; p < a.npix; ++p) {
    t.acc = a.acc + p * a.acc_pstride;
    t.out = a.out + p * a.out_pstride;
    t.residual = a.residual != nullptr ? a.residual + p * a.res_pstride : nullptr;
    scalar_one(t);
  }
}

// The condition of kernels.h (FloatRequant): M_hi = M rounded to 24
// significant bits, M_lo = M - M_hi (|M_lo| <= 2^(bits - 25)).
bool float_requant_channel(int64_t amax, int32_t m, int s, FloatRequant* f) {
  if (amax < 0 || amax > (int64_t{1} << 24) || m <= 0 || s < 0 || s > 63) return false;
  const int bits = 64 - __builtin_clzll(static_cast<uint64_t>(m));
  const int drop = bits > 24 ? bits - 24 : 0;
  const int64_t half = drop > 0 ? int64_t{1} << (drop - 1) : 0;
  const int64_t mhi = ((int64_t{m} + half) >> drop) << drop;
  const int64_t mlo = int64_t{m} - mhi;
  if (amax * std::llabs(mlo) >= (int64_t{1} << 24)) return false;
  // amax * M < 2^55 always (amax <= 2^24, M < 2^31).
  if (s + 22 < 55 && amax * m >= (int64_t{1} << (s + 22))) return false;
  f->hi = std::ldexp(static_cast<float>(mhi), -s);  // <= 24 significant bits: exact
  f->lo = std::ldexp(static_cast<float>(mlo), -s);
  return true;
}

// Depthwise weights as int16 [tap][c_full].
size_t dw_pack_s16(const int8_t* src, int c_full, int taps, void* dst) {
  const size_t bytes = static_cast<size_t>(taps) * c_full * 2;
  if (dst == nullptr) return bytes;
  int16_t* d = static_cast<int16_t*>(dst);
  for (int t = 0; t < taps; ++t)
    for (int c = 0; c < c_full; ++c) d[t * c_full + c] = src[c * taps + t];
  return bytes;
}

void dw_portable(const DwArgs& a) {
  const int16_t* w = static_cast<const int16_t*>(a.w);
  for (int p = 0; p < a.npix; ++p) {
    int32_t* acc = a.acc + static_cast<size_t>(p) * a.acc_stride;
    for (int c = 0; c < a.c_full; ++c) acc[c] = 0;
    for (int t = 0; t < a.taps; ++t) {
      const int8_t* x = a.px[p * a.taps + t];
      const int16_t* wt = w + static_cast<size_t>(t) * a.c_full;
      for (int c = 0; c < a.c_full; ++c) acc[c] += static_cast<int32_t>(x[c]) * wt[c];
    }
  }
}

const ConvIsa& portable_isa() {
  static const ConvIsa isa = {
      .name = "portable",
      .mr = kMr,
      .nr = kNr,
      .kg = 1,
      .kpad = 1,
      .esize = 2,
      .fmt = InputFormat::kS16,
      .gemm = gemm_portable,
      .mr2 = 0,
      .gemm2 = nullptr,
      .dw = dw_portable,
      .dw_pack = dw_pack_s16,
      .epilogue = epilogue_scalar,
  };
  return isa;
}

}  // namespace openbpu::sim::kern
