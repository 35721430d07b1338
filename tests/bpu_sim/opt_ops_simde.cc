// SPDX-License-Identifier: Apache-2.0
// The AVX-512 (VBMI) rows of the non-convolution instructions built against
// SIMDe's portable AVX-512 (test only): lets the differential tests run
// that code on CPUs without AVX-512 VBMI.
#define OPENBPU_KERNELS_SIMDE 1
#include "bpu_sim/kernels/x86/ops_avx512.cc"
