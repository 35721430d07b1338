// SPDX-License-Identifier: Apache-2.0
// Single-precision GEMM for the CPU operators (Gemm, MatMul, Conv,
// ConvTranspose): packed, cache-blocked, with a register-blocked micro-kernel
// (AVX2+FMA on x86-64 CPUs that have it, picked at run time; portable vector
// code otherwise). Single-threaded; thread-safe (scratch is per thread).
#ifndef OPENBPU_RUNTIME_CPU_OPS_SGEMM_H_
#define OPENBPU_RUNTIME_CPU_OPS_SGEMM_H_

#include <cstdint>

namespace openbpu::rt {

// C[M,N] = alpha * op(A) * op(B) + beta * C, row-major, leading dimensions in
// elements. op(A) is [M,K]: A[i*lda+k], or A[k*lda+i] when trans_a.
// op(B) is [K,N]: B[k*ldb+j], or B[j*ldb+k] when trans_b. With beta == 0, C
// is not read.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Name of the micro-kernel in use ("avx2-fma 6x16" or "generic 6x8").
const char* sgemm_kernel_name();

// Testing hook: use the portable micro-kernel even where AVX2 is available
// (process-wide; for tests and benchmarks only).
void sgemm_force_generic(bool on);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CPU_OPS_SGEMM_H_
