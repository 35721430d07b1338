// SPDX-License-Identifier: Apache-2.0
// AVX-512 VBMI rows of the non-convolution instructions (compiled with
// -mavx512f -mavx512bw -mavx512vbmi; reached only through the avx512vnni
// table when the CPU also has VBMI, cpu_features().avx512vbmi). See
// ops_avx2.cc for the drivers' contract.
//
// Lut int8 -> int8: the 256-entry table as four zmm of 64 entries; index
// i = x + 128 (x ^ 0x80 as a byte). vpermt2b looks up 128 entries by the
// low 7 bits of each byte, once in entries 0-127 and once in 128-255, and
// bit 7 of the index picks one of the two: 3 instructions per 64 bytes
// (the AVX2 row needs 16 vpshufb per 32).
// GCC's AVX-512 intrinsics pass _mm512_undefined_* as the unused masked-off
// source, which -Wuninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

int64_t lut_row_vbmi(const int8_t* in, int8_t* out, int64_t n, const int8_t* table) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64),
                t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i idx = _mm512_xor_si512(_mm512_loadu_si512(in + i), flip);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
    _mm512_storeu_si512(out + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
  }
  if (i < n) {  // the last 1-63 bytes under a mask
    const __mmask64 m = ~uint64_t{0} >> (64 - (n - i));
    const __m512i idx = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, in + i), flip);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
    _mm512_mask_storeu_epi8(out + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
    i = n;
  }
  return i;
}

}  // namespace

const OpsIsa& avx512vbmi_ops() {
  static const OpsIsa ops = {
      .eltwise_s8 = avx2_ops().eltwise_s8,
      .lut_s8 = lut_row_vbmi,
  };
  return ops;
}

}  // namespace openbpu::sim::kern
