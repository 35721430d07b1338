// SPDX-License-Identifier: Apache-2.0
// GotoBLAS-style blocking: B is packed in KC x NC panels of NR-wide column
// slivers, A in MC x KC blocks of MR-tall row slivers (alpha folded in), and
// a micro-kernel computes one MR x NR tile of C in registers.
#include "runtime/cpu_ops/sgemm.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bpu_sim/cpu_features.h"

namespace openbpu::rt {

namespace {

constexpr int64_t kKC = 256;
constexpr int64_t kMC = 96;    // multiple of MR (6)
constexpr int64_t kNC = 4096;  // multiple of NR (8, 16)

using MicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                             float beta, int mr, int nr);

// Stores an MR x NR register tile `t` (row-major, stride NR) into C.
template <int MR, int NR>
inline void store_tile(const float* t, float* c, int64_t ldc, float beta, int mr, int nr) {
  for (int i = 0; i < mr; ++i) {
    float* ci = c + i * ldc;
    const float* ti = t + i * NR;
    if (beta == 0.0f) {
      for (int j = 0; j < nr; ++j) ci[j] = ti[j];
    } else if (beta == 1.0f) {
      for (int j = 0; j < nr; ++j) ci[j] += ti[j];
    } else {
      for (int j = 0; j < nr; ++j) ci[j] = beta * ci[j] + ti[j];
    }
  }
}

// Portable kernel: 6 x 8 with 4-wide vectors (SSE2 / NEON).
typedef float v4sf __attribute__((vector_size(16)));

inline v4sf load4(const float* p) {
  v4sf v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

void kernel_generic(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float beta,
                    int mr, int nr) {
  constexpr int MR = 6, NR = 8;
  v4sf acc[MR][2];
  for (auto& r : acc) r[0] = r[1] = v4sf{0, 0, 0, 0};
  for (int64_t p = 0; p < kc; ++p) {
    const v4sf b0 = load4(b), b1 = load4(b + 4);
    for (int i = 0; i < MR; ++i) {
      const v4sf ai = v4sf{a[i], a[i], a[i], a[i]};
      acc[i][0] += ai * b0;
      acc[i][1] += ai * b1;
    }
    a += MR;
    b += NR;
  }
  alignas(16) float t[MR * NR];
  for (int i = 0; i < MR; ++i) {
    std::memcpy(t + i * NR, &acc[i][0], 16);
    std::memcpy(t + i * NR + 4, &acc[i][1], 16);
  }
  store_tile<MR, NR>(t, c, ldc, beta, mr, nr);
}

#if defined(__x86_64__)
// AVX2 + FMA kernel: 6 x 16 (12 accumulators, 2 B vectors, 1 broadcast).
__attribute__((target("avx2,fma"))) void kernel_avx2(int64_t kc, const float* a, const float* b,
                                                     float* c, int64_t ldc, float beta, int mr,
                                                     int nr) {
  constexpr int MR = 6, NR = 16;
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    __m256 ai = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(ai, b0, c00), c01 = _mm256_fmadd_ps(ai, b1, c01);
    ai = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(ai, b0, c10), c11 = _mm256_fmadd_ps(ai, b1, c11);
    ai = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(ai, b0, c20), c21 = _mm256_fmadd_ps(ai, b1, c21);
    ai = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(ai, b0, c30), c31 = _mm256_fmadd_ps(ai, b1, c31);
    ai = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(ai, b0, c40), c41 = _mm256_fmadd_ps(ai, b1, c41);
    ai = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(ai, b0, c50), c51 = _mm256_fmadd_ps(ai, b1, c51);
    a += MR;
    b += NR;
  }
  const __m256 r[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (mr == MR && nr == NR) {
    const __m256 vb = _mm256_set1_ps(beta);
    for (int i = 0; i < MR; ++i) {
      float* ci = c + i * ldc;
      if (beta == 0.0f) {
        _mm256_storeu_ps(ci, r[i][0]);
        _mm256_storeu_ps(ci + 8, r[i][1]);
      } else {
        _mm256_storeu_ps(ci, _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), r[i][0]));
        _mm256_storeu_ps(ci + 8, _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), r[i][1]));
      }
    }
    return;
  }
  alignas(32) float t[MR * NR];
  for (int i = 0; i < MR; ++i) {
    _mm256_store_ps(t + i * NR, r[i][0]);
    _mm256_store_ps(t + i * NR + 8, r[i][1]);
  }
  store_tile<MR, NR>(t, c, ldc, beta, mr, nr);
}
#endif

struct KernelInfo {
  MicroKernel fn;
  int mr, nr;
  const char* name;
};

std::atomic<bool> g_force_generic{false};

const KernelInfo& kernel_info() {
  static const KernelInfo generic{kernel_generic, 6, 8, "generic 6x8"};
  if (g_force_generic.load(std::memory_order_relaxed)) return generic;
  static const KernelInfo info = [] {
#if defined(__x86_64__)
    if (sim::cpu_features().avx2)
      return KernelInfo{kernel_avx2, 6, 16, "avx2-fma 6x16"};
#endif
    return KernelInfo{kernel_generic, 6, 8, "generic 6x8"};
  }();
  return info;
}

// A block [mc x kc] into MR-row slivers: dst[s][p][i] = alpha * A(i0+s*MR+i, p0+p).
void pack_a(bool trans, const float* a, int64_t lda, int64_t i0, int64_t p0, int64_t mc, int64_t kc,
            float alpha, int mr, float* dst) {
  for (int64_t s = 0; s < mc; s += mr) {
    const int64_t rows = std::min<int64_t>(mr, mc - s);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t row = i0 + s + i, col = p0 + p;
        dst[p * mr + i] = alpha * (trans ? a[col * lda + row] : a[row * lda + col]);
      }
      for (int64_t i = rows; i < mr; ++i) dst[p * mr + i] = 0.0f;
    }
    dst += kc * mr;
  }
}

// B panel [kc x nc] into NR-column slivers: dst[s][p][j] = B(p0+p, j0+s*NR+j).
void pack_b(bool trans, const float* b, int64_t ldb, int64_t p0, int64_t j0, int64_t kc, int64_t nc,
            int nr, float* dst) {
  for (int64_t s = 0; s < nc; s += nr) {
    const int64_t cols = std::min<int64_t>(nr, nc - s);
    if (!trans) {
      const float* src = b + p0 * ldb + j0 + s;
      if (cols == nr) {
        for (int64_t p = 0; p < kc; ++p)
          std::memcpy(dst + p * nr, src + p * ldb, sizeof(float) * nr);
      } else {
        for (int64_t p = 0; p < kc; ++p) {
          for (int64_t j = 0; j < cols; ++j) dst[p * nr + j] = src[p * ldb + j];
          for (int64_t j = cols; j < nr; ++j) dst[p * nr + j] = 0.0f;
        }
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t j = 0; j < cols; ++j) dst[p * nr + j] = b[(j0 + s + j) * ldb + p0 + p];
        for (int64_t j = cols; j < nr; ++j) dst[p * nr + j] = 0.0f;
      }
    }
    dst += kc * nr;
  }
}

float* scratch(std::vector<float>& v, size_t n) {
  if (v.size() < n + 16) v.resize(n + 16);
  // 64-byte alignment for the packed panels.
  uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
  p = (p + 63) & ~uintptr_t(63);
  return reinterpret_cast<float*>(p);
}

}  // namespace

const char* sgemm_kernel_name() { return kernel_info().name; }

void sgemm_force_generic(bool on) { g_force_generic.store(on); }

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  if (m == 1 && !trans_a) {
    // Matrix-vector product (fully connected layers at batch 1): no packing.
    if (trans_b) {
      for (int64_t j = 0; j < n; ++j) {
        const float* bj = b + j * ldb;
        v4sf acc0 = {0, 0, 0, 0}, acc1 = {0, 0, 0, 0};
        int64_t p = 0;
        for (; p + 8 <= k; p += 8) {
          acc0 += load4(a + p) * load4(bj + p);
          acc1 += load4(a + p + 4) * load4(bj + p + 4);
        }
        acc0 += acc1;
        float acc = acc0[0] + acc0[1] + acc0[2] + acc0[3];
        for (; p < k; ++p) acc += a[p] * bj[p];
        c[j] = alpha * acc + (beta == 0.0f ? 0.0f : beta * c[j]);
      }
    } else {
      for (int64_t j = 0; j < n; ++j) c[j] = beta == 0.0f ? 0.0f : beta * c[j];
      for (int64_t p = 0; p < k; ++p) {
        const float ap = alpha * a[p];
        const float* bp = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) c[j] += ap * bp[j];
      }
    }
    return;
  }
  const KernelInfo& ki = kernel_info();
  const int mr = ki.mr, nr = ki.nr;
  thread_local std::vector<float> abuf, bbuf;
  const int64_t nc_max = std::min<int64_t>(kNC, (n + nr - 1) / nr * nr);
  const int64_t kc_max = std::min<int64_t>(kKC, k);
  float* pa = scratch(abuf, static_cast<size_t>(kMC * kc_max));
  float* pb = scratch(bbuf, static_cast<size_t>(nc_max * kc_max));
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = std::min(kNC, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKC) {
      const int64_t kc = std::min(kKC, k - pc);
      const float bet = pc == 0 ? beta : 1.0f;
      pack_b(trans_b, b, ldb, pc, jc, kc, nc, nr, pb);
      for (int64_t ic = 0; ic < m; ic += kMC) {
        const int64_t mc = std::min(kMC, m - ic);
        pack_a(trans_a, a, lda, ic, pc, mc, kc, alpha, mr, pa);
        for (int64_t jr = 0; jr < nc; jr += nr) {
          const int nrr = static_cast<int>(std::min<int64_t>(nr, nc - jr));
          for (int64_t ir = 0; ir < mc; ir += mr) {
            const int mrr = static_cast<int>(std::min<int64_t>(mr, mc - ir));
            ki.fn(kc, pa + ir * kc, pb + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc, bet, mrr,
                  nrr);
          }
        }
      }
    }
  }
}

}  // namespace openbpu::rt
