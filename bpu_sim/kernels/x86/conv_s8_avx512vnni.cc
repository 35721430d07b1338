// SPDX-License-Identifier: Apache-2.0
// AVX-512 VNNI convolution GEMM (compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni; reached only when the CPU and the OS support it).
//
// GEMM: int8 data, k-group 4, MR = 8 pixels x NR = 32 channels, 16 zmm
//   accumulators. vpdpbusd multiplies unsigned bytes by signed bytes, so the
//   dense input copy holds x ^ 0x80 = x + 128 (as uint8; the zero row holds
//   0x80) and the plan folds -128 * sum(w) into the bias:
//     sum (x + 128) * w - 128 * sum w = sum x * w.
//   vpdpbusd adds four products (each |.| <= 255*128) to an int32 lane without
//   saturation, so the wrapping int32 arithmetic gives the exact accumulator
//   modulo 2^32, and the true value fits int32 (validator): bit-exact.
//   Packed weights of one block: [tap][cin_pad/4][32 channels][4] int8.
// Depthwise and the epilogue are the AVX2 ones.
//
// Built a second time against SIMDe's portable AVX-512 implementation
// (OPENBPU_KERNELS_SIMDE) so that the tests exercise this code on CPUs
// without AVX-512 as avx512vnni_emulated_isa().
#if defined(OPENBPU_KERNELS_SIMDE)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#else
#include <immintrin.h>
#endif

#include <cstring>

#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

constexpr int kNr = 32;

template <int MR>
void gemm_k4_vnni(const GemmArgs& a) {
  __m512i acc[MR][2];
  for (int m = 0; m < MR; ++m) acc[m][0] = acc[m][1] = _mm512_setzero_si512();
  const __m512i* w = static_cast<const __m512i*>(a.w);
  const int k4n = a.cin_pad / 4;
  for (int t = 0; t < a.taps; ++t) {
    const uint8_t* r[MR];
    for (int m = 0; m < MR; ++m) r[m] = static_cast<const uint8_t*>(a.rows[t * MR + m]);
    for (int k = 0; k < k4n; ++k) {
      const __m512i w0 = _mm512_load_si512(w), w1 = _mm512_load_si512(w + 1);
      w += 2;
      for (int m = 0; m < MR; ++m) {
        int32_t x;
        std::memcpy(&x, r[m] + 4 * k, 4);
        const __m512i b = _mm512_set1_epi32(x);
        acc[m][0] = _mm512_dpbusd_epi32(acc[m][0], b, w0);
        acc[m][1] = _mm512_dpbusd_epi32(acc[m][1], b, w1);
      }
    }
  }
  for (int m = 0; m < MR; ++m) {
    _mm512_storeu_si512(a.acc + m * a.acc_stride, acc[m][0]);
    _mm512_storeu_si512(a.acc + m * a.acc_stride + 16, acc[m][1]);
  }
}

}  // namespace

#if defined(OPENBPU_KERNELS_SIMDE)
const ConvIsa& avx512vnni_emulated_isa() {
  static const ConvIsa isa = {
      "avx512vnni-simde",
      8,
      kNr,
      /*kg=*/4,
      /*kpad=*/4,
      /*esize=*/1,
      InputFormat::kU8,
      gemm_k4_vnni<8>,
      7,
      gemm_k4_vnni<7>,
      avx2_isa().dw,
      avx2_isa().dw_pack,
      avx2_isa().epilogue,
      nullptr,
  };
  return isa;
}
#else
const ConvIsa& avx512vnni_isa() {
  static const ConvIsa isa = {
      "avx512vnni",
      8,
      kNr,
      /*kg=*/4,
      /*kpad=*/4,
      /*esize=*/1,
      InputFormat::kU8,
      gemm_k4_vnni<8>,
      7,
      gemm_k4_vnni<7>,
      avx2_isa().dw,
      avx2_isa().dw_pack,
      avx2_isa().epilogue,
      nullptr,
  };
  return isa;
}
#endif

}  // namespace openbpu::sim::kern
