// SPDX-License-Identifier: Apache-2.0
// float_requant (kernels.h, FloatRequant) of 8 (ymm) or 4 (xmm) int32
// lanes, for the x86 files compiled with AVX2 and FMA (included by each, so
// each keeps its own copy: see dw4_x86.h). The float operations round as
// MXCSR says: the caller sets rounding toward -infinity around the code
// that calls these.
// The includer provides the intrinsics (<immintrin.h>).
#ifndef OPENBPU_BPU_SIM_KERNELS_X86_FLOAT_RQ_AVX2_H_
#define OPENBPU_BPU_SIM_KERNELS_X86_FLOAT_RQ_AVX2_H_

namespace openbpu::sim::kern {
namespace {

// int(fma(x, hi, x * lo) + 1/2) of x = float(acc) (an accumulator already
// in fp32 for the _ps forms: an exact integer).
inline __m256i rq_float_ps(__m256 x, __m256 hi, __m256 lo) {
  const __m256 z = _mm256_fmadd_ps(x, hi, _mm256_mul_ps(x, lo));
  return _mm256_cvtps_epi32(_mm256_add_ps(z, _mm256_set1_ps(0.5f)));
}
inline __m256i rq_float(__m256i acc, __m256 hi, __m256 lo) {
  return rq_float_ps(_mm256_cvtepi32_ps(acc), hi, lo);
}
// The 3-operation form (every lo == 0): int(fma(x, hi, 1/2)).
inline __m256i rq_float3_ps(__m256 x, __m256 hi) {
  return _mm256_cvtps_epi32(_mm256_fmadd_ps(x, hi, _mm256_set1_ps(0.5f)));
}
inline __m256i rq_float3(__m256i acc, __m256 hi) { return rq_float3_ps(_mm256_cvtepi32_ps(acc), hi); }

// The same of 4 lanes.
inline __m128i rq_float(__m128i acc, __m128 hi, __m128 lo) {
  const __m128 x = _mm_cvtepi32_ps(acc);
  const __m128 z = _mm_fmadd_ps(x, hi, _mm_mul_ps(x, lo));
  return _mm_cvtps_epi32(_mm_add_ps(z, _mm_set1_ps(0.5f)));
}
inline __m128i rq_float3(__m128i acc, __m128 hi) {
  return _mm_cvtps_epi32(_mm_fmadd_ps(_mm_cvtepi32_ps(acc), hi, _mm_set1_ps(0.5f)));
}

}  // namespace
}  // namespace openbpu::sim::kern

#endif  // OPENBPU_BPU_SIM_KERNELS_X86_FLOAT_RQ_AVX2_H_
