// SPDX-License-Identifier: Apache-2.0
// The AVX-512 intrinsics for the files compiled with AVX-512 flags, or
// SIMDe's portable implementation of them where such a file is built a
// second time for the tests (OPENBPU_KERNELS_SIMDE: CPUs without AVX-512).
// GCC's AVX-512 intrinsics pass _mm512_undefined_* as the unused masked-off
// source, which -Wuninitialized reports at every use.
#ifndef OPENBPU_BPU_SIM_KERNELS_X86_AVX512_INTRIN_H_
#define OPENBPU_BPU_SIM_KERNELS_X86_AVX512_INTRIN_H_

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#if defined(OPENBPU_KERNELS_SIMDE)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <cstring>
#else
#include <immintrin.h>
#endif

// The first n bytes of v at p (n < 32 / 16): a masked store, no call and no
// stack copy (SIMDe has no masked byte stores: a copy there).
#if defined(OPENBPU_KERNELS_SIMDE)
template <class V>
static inline void store_first_bytes(void* p, V v, unsigned n) {
  std::memcpy(p, &v, n);
}
#else
static inline void store_first_bytes(void* p, __m256i v, unsigned n) {
  _mm256_mask_storeu_epi8(p, (__mmask32{1} << n) - 1, v);
}
static inline void store_first_bytes(void* p, __m128i v, unsigned n) {
  _mm_mask_storeu_epi8(p, static_cast<__mmask16>((1u << n) - 1), v);
}
#endif

#endif  // OPENBPU_BPU_SIM_KERNELS_X86_AVX512_INTRIN_H_
