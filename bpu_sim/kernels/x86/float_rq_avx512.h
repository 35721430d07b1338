// SPDX-License-Identifier: Apache-2.0
// float_requant (kernels.h, FloatRequant) of 16 int32 lanes for the files
// compiled with AVX-512 (the avx512vnni GEMM tiles, the AVX-512 eltwise
// rows; included by each, so each keeps its own copy: see dw4_x86.h). The
// rounding toward -infinity is embedded in the instructions (no MXCSR
// change); built against SIMDe (OPENBPU_KERNELS_SIMDE), whose AVX-512 lacks
// the embedded-rounding forms, a scalar loop under fesetround.
// The includer provides the intrinsics (avx512_intrin.h).
#ifndef OPENBPU_BPU_SIM_KERNELS_X86_FLOAT_RQ_AVX512_H_
#define OPENBPU_BPU_SIM_KERNELS_X86_FLOAT_RQ_AVX512_H_

#include <cfenv>
#include <cmath>

namespace openbpu::sim::kern {
namespace {

// float_requant (kernels.h) for 16 channels from co: the fma, the + 1/2 and
// the conversion round toward -infinity by their embedded rounding (no
// MXCSR change); float(acc) and acc * lo are exact.
struct FloatRq {
  __m512 hi, lo;
};
inline __m512i rq_float(__m512i acc, FloatRq f) {
#if defined(OPENBPU_KERNELS_SIMDE)  // Debian's SIMDe lacks these: scalar, rounding down
  alignas(64) int32_t t[16];
  alignas(64) float fh[16], fl[16];
  _mm512_store_si512(t, acc), _mm512_store_ps(fh, f.hi), _mm512_store_ps(fl, f.lo);
  const int mode = std::fegetround();
  std::fesetround(FE_DOWNWARD);
  for (int i = 0; i < 16; ++i) {
    volatile float lo = fl[i];
    const float a = static_cast<float>(t[i]);
    t[i] = static_cast<int32_t>(std::floor(std::fma(a, fh[i], a * lo) + 0.5f));
  }
  std::fesetround(mode);
  return _mm512_load_si512(t);
#else
  constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  const __m512 a = _mm512_cvtepi32_ps(acc);
  const __m512 z = _mm512_fmadd_round_ps(a, f.hi, _mm512_mul_ps(a, f.lo), kDown);
  return _mm512_cvt_roundps_epi32(_mm512_add_round_ps(z, _mm512_set1_ps(0.5f), kDown), kDown);
#endif
}
// The 3-operation float_requant (RequantParams::float3, every lo == 0):
// y = int(fma(float(acc), hi, 1/2)), both rounding down (kernels.h).
inline __m512i rq_float3(__m512i acc, FloatRq f) {
#if defined(OPENBPU_KERNELS_SIMDE)
  alignas(64) int32_t t[16];
  alignas(64) float fh[16];
  _mm512_store_si512(t, acc), _mm512_store_ps(fh, f.hi);
  const int mode = std::fegetround();
  std::fesetround(FE_DOWNWARD);
  for (int i = 0; i < 16; ++i) {
    volatile float h = fh[i];
    t[i] = static_cast<int32_t>(std::floor(std::fma(static_cast<float>(t[i]), h, 0.5f)));
  }
  std::fesetround(mode);
  return _mm512_load_si512(t);
#else
  constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  const __m512 z = _mm512_fmadd_round_ps(_mm512_cvtepi32_ps(acc), f.hi, _mm512_set1_ps(0.5f), kDown);
  return _mm512_cvt_roundps_epi32(z, kDown);
#endif
}

}  // namespace
}  // namespace openbpu::sim::kern

#endif  // OPENBPU_BPU_SIM_KERNELS_X86_FLOAT_RQ_AVX512_H_
