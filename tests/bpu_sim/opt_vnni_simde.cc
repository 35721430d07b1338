// SPDX-License-Identifier: Apache-2.0
// The AVX-512 VNNI GEMM built against SIMDe's portable AVX-512 (test only):
// lets the differential tests run that kernel's code on CPUs without AVX-512.
#define OPENBPU_KERNELS_SIMDE 1
#include "bpu_sim/kernels/x86/conv_s8_avx512vnni.cc"
