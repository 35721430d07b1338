// SPDX-License-Identifier: Apache-2.0
// AArch64 NEON dot-product GEMM (ARMv8.2 SDOT; compiled with
// -march=armv8.2-a+dotprod, reached only when HWCAP_ASIMDDP is set).
//
// GEMM: int8 data (signed, no offset), k-group 4, cin_pad a multiple of 16,
//   MR = 8 pixels x NR = 8 channels, 16 int32x4 accumulators. Packed weights
//   of one block: [tap][cin_pad/4][8 channels][4] int8. Per 16 input
//   channels, one q register holds a pixel's 16 inputs; sdot by lane j adds,
//   for 4 channels, the 4 products of input group j. Exact: int8 x int8
//   products summed in int32, which cannot overflow for a validated
//   instruction.
// Depthwise and the epilogue are the baseline NEON ones.
#include <arm_neon.h>

#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

constexpr int kMr = 8, kNr = 8;

void gemm_k4_sdot(const GemmArgs& a) {
  int32x4_t acc[kMr][2];
  for (int m = 0; m < kMr; ++m) acc[m][0] = acc[m][1] = vdupq_n_s32(0);
  const int8_t* w = static_cast<const int8_t*>(a.w);
  for (int t = 0; t < a.taps; ++t) {
    const int8_t* r[kMr];
    for (int m = 0; m < kMr; ++m) r[m] = static_cast<const int8_t*>(a.rows[t * kMr + m]);
    for (int k = 0; k < a.cin_pad; k += 16) {
      int8x16_t x[kMr];
      for (int m = 0; m < kMr; ++m) x[m] = vld1q_s8(r[m] + k);
#define OPENBPU_SDOT_STEP(j)                                 \
  {                                                          \
    const int8x16_t w0 = vld1q_s8(w + 32 * (j));             \
    const int8x16_t w1 = vld1q_s8(w + 32 * (j) + 16);        \
    for (int m = 0; m < kMr; ++m) {                          \
      acc[m][0] = vdotq_laneq_s32(acc[m][0], w0, x[m], (j)); \
      acc[m][1] = vdotq_laneq_s32(acc[m][1], w1, x[m], (j)); \
    }                                                        \
  }
      OPENBPU_SDOT_STEP(0);
      OPENBPU_SDOT_STEP(1);
      OPENBPU_SDOT_STEP(2);
      OPENBPU_SDOT_STEP(3);
#undef OPENBPU_SDOT_STEP
          w += 128;
    }
  }
  for (int m = 0; m < kMr; ++m) {
    vst1q_s32(a.acc + m * a.acc_stride, acc[m][0]);
    vst1q_s32(a.acc + m * a.acc_stride + 4, acc[m][1]);
  }
}

}  // namespace

const ConvIsa& neondot_isa() {
  static const ConvIsa isa = {
      .name = "neondot",
      .mr = kMr,
      .nr = kNr,
      .kg = 4,
      .kpad = 16,
      .esize = 1,
      .fmt = InputFormat::kS8,
      .gemm = gemm_k4_sdot,
      .mr2 = 0,
      .gemm2 = nullptr,
      .dw = neon_isa().dw,
      .dw_pack = neon_isa().dw_pack,
      .epilogue = neon_isa().epilogue,
  };
  return isa;
}

}  // namespace openbpu::sim::kern
