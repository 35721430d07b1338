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
#else
#include <immintrin.h>
#endif

#endif  // OPENBPU_BPU_SIM_KERNELS_X86_AVX512_INTRIN_H_
