// SPDX-License-Identifier: Apache-2.0
// AArch64 NEON convolution parts (baseline ARMv8-A, no dot product).
//
// GEMM: int16 data, k-group 1, MR = 8 pixels x NR = 8 channels, 16 int32x4
//   accumulators. Packed weights of one block: [tap][cin_pad][8] int16
//   (cin_pad a multiple of 8). For each 8 input channels, one q register holds
//   the 8 int16 inputs of a pixel and smlal/smlal2 (by lane) add the exact
//   int16 x int16 products to int32.
// Depthwise: 16 channels per block, int16 weights [tap][c_full]; sxtl then
//   smlal/smlal2 into four int32x4 accumulators.
// Epilogue: smull/smlal to int64, srshl by -S (the architecture's rounding
//   shift is exactly floor((v + 2^(S-1)) / 2^S), without overflow), sqxtn to
//   int32 (saturating; the clamp bounds are inside int32), clamp, narrow.
#include <arm_neon.h>

#include <cstring>

#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

constexpr int kMr = 8, kNr = 8;

void gemm_k1_neon(const GemmArgs& a) {
  int32x4_t acc[kMr][2];
  for (int m = 0; m < kMr; ++m) acc[m][0] = acc[m][1] = vdupq_n_s32(0);
  const int16_t* w = static_cast<const int16_t*>(a.w);
  for (int t = 0; t < a.taps; ++t) {
    const int16_t* r[kMr];
    for (int m = 0; m < kMr; ++m) r[m] = static_cast<const int16_t*>(a.rows[t * kMr + m]);
    for (int k = 0; k < a.cin_pad; k += 8) {
      int16x8_t x[kMr];
      for (int m = 0; m < kMr; ++m) x[m] = vld1q_s16(r[m] + k);
#define OPENBPU_NEON_STEP(j)                                               \
  {                                                                        \
    const int16x8_t wv = vld1q_s16(w + 8 * (j));                           \
    for (int m = 0; m < kMr; ++m) {                                        \
      acc[m][0] = vmlal_laneq_s16(acc[m][0], vget_low_s16(wv), x[m], (j)); \
      acc[m][1] = vmlal_high_laneq_s16(acc[m][1], wv, x[m], (j));          \
    }                                                                      \
  }
      OPENBPU_NEON_STEP(0);
      OPENBPU_NEON_STEP(1);
      OPENBPU_NEON_STEP(2);
      OPENBPU_NEON_STEP(3);
      OPENBPU_NEON_STEP(4);
      OPENBPU_NEON_STEP(5);
      OPENBPU_NEON_STEP(6);
      OPENBPU_NEON_STEP(7);
#undef OPENBPU_NEON_STEP
              w += 64;
    }
  }
  for (int m = 0; m < kMr; ++m) {
    vst1q_s32(a.acc + m * a.acc_stride, acc[m][0]);
    vst1q_s32(a.acc + m * a.acc_stride + 4, acc[m][1]);
  }
}

void dw_neon(const DwArgs& a) {
  const int16_t* w = static_cast<const int16_t*>(a.w);
  for (int cb = 0; cb < a.c_full / 16; ++cb) {
    for (int p = 0; p < a.npix; ++p) {
      const int8_t* const* px = a.px + static_cast<size_t>(p) * a.taps;
      int32x4_t c0 = vdupq_n_s32(0), c1 = c0, c2 = c0, c3 = c0;
      for (int t = 0; t < a.taps; ++t) {
        const int8x16_t x = vld1q_s8(px[t] + cb * 16);
        const int16x8_t xl = vmovl_s8(vget_low_s8(x)), xh = vmovl_high_s8(x);
        const int16_t* wt = w + static_cast<size_t>(t) * a.c_full + cb * 16;
        const int16x8_t w0 = vld1q_s16(wt), w1 = vld1q_s16(wt + 8);
        c0 = vmlal_s16(c0, vget_low_s16(xl), vget_low_s16(w0));
        c1 = vmlal_high_s16(c1, xl, w0);
        c2 = vmlal_s16(c2, vget_low_s16(xh), vget_low_s16(w1));
        c3 = vmlal_high_s16(c3, xh, w1);
      }
      int32_t* acc = a.acc + static_cast<size_t>(p) * a.acc_stride + cb * 16;
      vst1q_s32(acc, c0);
      vst1q_s32(acc + 4, c1);
      vst1q_s32(acc + 8, c2);
      vst1q_s32(acc + 12, c3);
    }
  }
}

// Requantizes 4 channels starting at co (natural order).
inline int32x4_t requant4(int32x4_t acc, const RequantParams& q, int co, const int32x4_t* r) {
  const int32x4_t m = vld1q_s32(q.mult + co);
  int64x2_t lo = vmull_s32(vget_low_s32(acc), vget_low_s32(m));
  int64x2_t hi = vmull_high_s32(acc, m);
  if (r != nullptr) {
    const int32x4_t mr = vld1q_s32(q.rmult + co);
    lo = vmlal_s32(lo, vget_low_s32(*r), vget_low_s32(mr));
    hi = vmlal_high_s32(hi, *r, mr);
  }
  const int8_t* s = q.shift + co;
  const int64x2_t s_lo = {-static_cast<int64_t>(s[0]), -static_cast<int64_t>(s[1])};
  const int64x2_t s_hi = {-static_cast<int64_t>(s[2]), -static_cast<int64_t>(s[3])};
  lo = vrshlq_s64(lo, s_lo);
  hi = vrshlq_s64(hi, s_hi);
  return vcombine_s32(vqmovn_s64(lo), vqmovn_s64(hi));
}

inline void neon_one(const EpilogueArgs& a) {
  const RequantParams& q = *a.rq;
  if (a.out_cstride != 1 || (a.residual != nullptr && a.res_cstride != 1)) {
    epilogue_scalar(a);
    return;
  }
  const int32x4_t lo = vdupq_n_s32(q.lo), hi = vdupq_n_s32(q.hi);
  const isa::DType ot = a.out_type;
  int i = 0;
  for (; i + 8 <= a.n; i += 8) {
    const int co = a.co0 + i;
    int32x4_t y0 = vaddq_s32(vld1q_s32(a.acc + i), vld1q_s32(q.bias + co));
    int32x4_t y1 = vaddq_s32(vld1q_s32(a.acc + i + 4), vld1q_s32(q.bias + co + 4));
    if (ot != isa::DType::kInt32) {
      int32x4_t r0, r1;
      const int32x4_t* pr0 = nullptr;
      const int32x4_t* pr1 = nullptr;
      if (a.residual != nullptr) {
        int16x8_t r16;
        if (a.res_type == isa::DType::kInt8) {
          r16 = vmovl_s8(vld1_s8(reinterpret_cast<const int8_t*>(a.residual) + i));
        } else {
          int16_t t[8];
          std::memcpy(t, a.residual + 2 * i, 16);
          r16 = vld1q_s16(t);
        }
        r0 = vmovl_s16(vget_low_s16(r16));
        r1 = vmovl_high_s16(r16);
        pr0 = &r0;
        pr1 = &r1;
      }
      y0 = requant4(y0, q, co, pr0);
      y1 = requant4(y1, q, co + 4, pr1);
    }
    y0 = vminq_s32(vmaxq_s32(y0, lo), hi);
    y1 = vminq_s32(vmaxq_s32(y1, lo), hi);
    if (ot == isa::DType::kInt32) {
      vst1q_s32(reinterpret_cast<int32_t*>(a.out) + i, y0);
      vst1q_s32(reinterpret_cast<int32_t*>(a.out) + i + 4, y1);
    } else {
      const int16x8_t p16 = vcombine_s16(vqmovn_s32(y0), vqmovn_s32(y1));
      if (ot == isa::DType::kInt8) {
        vst1_s8(reinterpret_cast<int8_t*>(a.out) + i, vqmovn_s16(p16));
      } else {
        int16_t t[8];
        vst1q_s16(t, p16);
        std::memcpy(a.out + 2 * i, t, 16);
      }
    }
  }
  if (i < a.n) {
    EpilogueArgs t = a;
    t.acc += i;
    t.n -= i;
    t.co0 += i;
    t.out += static_cast<int64_t>(i) * isa::dtype_size(ot);
    if (t.residual != nullptr) t.residual += static_cast<int64_t>(i) * isa::dtype_size(a.res_type);
    epilogue_scalar(t);
  }
}

// Pixel loop around neon_one (one call per output row or chunk).
void epilogue_neon(const EpilogueArgs& a) {
  EpilogueArgs t = a;
  t.npix = 1;
  for (int p = 0; p < a.npix; ++p) {
    t.acc = a.acc + p * a.acc_pstride;
    t.out = a.out + p * a.out_pstride;
    t.residual = a.residual != nullptr ? a.residual + p * a.res_pstride : nullptr;
    neon_one(t);
  }
}

}  // namespace

const ConvIsa& neon_isa() {
  static const ConvIsa isa = {
      .name = "neon",
      .mr = kMr,
      .nr = kNr,
      .kg = 1,
      .kpad = 8,
      .esize = 2,
      .fmt = InputFormat::kS16,
      .gemm = gemm_k1_neon,
      .mr2 = 0,
      .gemm2 = nullptr,
      .dw = dw_neon,
      .dw_pack = dw_pack_s16,
      .epilogue = epilogue_neon,
  };
  return isa;
}

}  // namespace openbpu::sim::kern
