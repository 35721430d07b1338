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
//   With an int8 output (channel stride 1, no residual, every S >= 33) the
//   tile requantizes in registers as the AVX2 one does (bias first, high
//   halves of vpmuldq, saturating packs of two pixels, int8 clamp) and
//   stores 32 channels per pixel.
// Depthwise: the dw4 kernel (dw4_x86.h) with vpdpbusd (ymm / xmm, exact: no
// saturation) instead of vpmaddubsw + vpmaddwd; the flat depthwise and the
// epilogue are the AVX2 ones.
//
// Built a second time against SIMDe's portable AVX-512 implementation
// (OPENBPU_KERNELS_SIMDE) so that the tests exercise this code on CPUs
// without AVX-512 as avx512vnni_emulated_isa().
// GCC's AVX-512 intrinsics pass _mm512_undefined_* as the unused masked-off
// source, which -Wuninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#if defined(OPENBPU_KERNELS_SIMDE)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#else
#include <immintrin.h>
#endif

#include <cstring>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/kernels/x86/dw4_x86.h"

namespace openbpu::sim::kern {
namespace {

constexpr int kNr = 32;

inline __m512i ld16(const int32_t* p) { return _mm512_loadu_si512(p); }
inline __m512i srav16(__m512i a, __m512i s) {
#if defined(OPENBPU_KERNELS_SIMDE)  // Debian's SIMDe has no _mm512_srav_epi32: two halves
  const __m256i lo = _mm256_srav_epi32(_mm512_castsi512_si256(a), _mm512_castsi512_si256(s));
  const __m256i hi =
      _mm256_srav_epi32(_mm512_extracti64x4_epi64(a, 1), _mm512_extracti64x4_epi64(s, 1));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
#else
  return _mm512_srav_epi32(a, s);
#endif
}

// floor((acc*M + 2^(S-1)) / 2^S) for 16 channels from co, every S >= 33.
inline __m512i rq_ge33(__m512i acc, const RequantParams& q, int co) {
  const __m512i e = _mm512_mul_epi32(acc, ld16(q.mult + co));
  const __m512i o = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), ld16(q.m_odd + co));
  const __m512i h = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e, 32), o);
  return srav16(_mm512_add_epi32(h, ld16(q.r32 + co)), ld16(q.sh32 + co));
}

// Two pixels per 64-byte result: per 128-bit lane L the packs give dwords
// (a: ch 4L..4L+3, a: 16+4L.., b: 4L.., b: 16+4L..), reordered to a 0..31
// then b 0..31.
template <int MR>
inline void store_q(__m512i (&acc)[MR][2], const GemmArgs& a) {
  const RequantParams& q = *a.rq;
  const int co = a.co0;
  const __m512i lo = _mm512_set1_epi8(static_cast<char>(q.lo)),
                hi = _mm512_set1_epi8(static_cast<char>(q.hi));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  for (int m = 0; m < MR; m += 2) {
    const int m1 = m + 1 < MR ? m + 1 : m;
    const __m512i pa = _mm512_packs_epi32(rq_ge33(acc[m][0], q, co), rq_ge33(acc[m][1], q, co + 16));
    const __m512i pb = m1 == m ? pa
                               : _mm512_packs_epi32(rq_ge33(acc[m1][0], q, co),
                                                    rq_ge33(acc[m1][1], q, co + 16));
    __m512i b = _mm512_permutexvar_epi32(order, _mm512_packs_epi16(pa, pb));
    b = _mm512_min_epi8(_mm512_max_epi8(b, lo), hi);
    if (a.n == kNr) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.out[m] + co), _mm512_castsi512_si256(b));
      if (m1 != m)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.out[m1] + co),
                            _mm512_extracti64x4_epi64(b, 1));
    } else {
      alignas(64) int8_t t[64];
      _mm512_store_si512(t, b);
      const size_t n = static_cast<size_t>(a.n) & (kNr - 1);  // a partial block: 0 < n < 32
      copy_small(a.out[m] + co, t, n);
      if (m1 != m) copy_small(a.out[m1] + co, t + 32, n);
    }
  }
}

template <int MR, bool kFused = false>
void gemm_k4_vnni(const GemmArgs& a) {
  __m512i acc[MR][2];
  const __m512i b0 = kFused ? ld16(a.rq->bias + a.co0) : _mm512_setzero_si512();
  const __m512i b1 = kFused ? ld16(a.rq->bias + a.co0 + 16) : _mm512_setzero_si512();
  for (int m = 0; m < MR; ++m) acc[m][0] = b0, acc[m][1] = b1;
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
  if (kFused) {
    store_q<MR>(acc, a);
    return;
  }
  for (int m = 0; m < MR; ++m) {
    _mm512_storeu_si512(a.acc + m * a.acc_stride, acc[m][0]);
    _mm512_storeu_si512(a.acc + m * a.acc_stride + 16, acc[m][1]);
  }
}

// One pixel: 32 channels over K, four k-groups in flight on independent
// accumulators (vpdpbusd's latency), summed at the end (wrapping int32 sums:
// exact, see above).
template <bool kFused>
void gemv_k4_vnni(const GemmArgs& a) {
  __m512i acc[4][2];
  for (auto& v : acc) v[0] = v[1] = _mm512_setzero_si512();
  if (kFused) acc[0][0] = ld16(a.rq->bias + a.co0), acc[0][1] = ld16(a.rq->bias + a.co0 + 16);
  const __m512i* w = static_cast<const __m512i*>(a.w);
  const int k4n = a.cin_pad / 4;
  for (int t = 0; t < a.taps; ++t) {
    const uint8_t* r = static_cast<const uint8_t*>(a.rows[t]);
    int k = 0;
    for (; k + 4 <= k4n; k += 4, w += 8) {
      for (int u = 0; u < 4; ++u) {
        int32_t x;
        std::memcpy(&x, r + 4 * (k + u), 4);
        const __m512i b = _mm512_set1_epi32(x);
        acc[u][0] = _mm512_dpbusd_epi32(acc[u][0], b, _mm512_load_si512(w + 2 * u));
        acc[u][1] = _mm512_dpbusd_epi32(acc[u][1], b, _mm512_load_si512(w + 2 * u + 1));
      }
    }
    for (; k < k4n; ++k, w += 2) {
      int32_t x;
      std::memcpy(&x, r + 4 * k, 4);
      const __m512i b = _mm512_set1_epi32(x);
      acc[0][0] = _mm512_dpbusd_epi32(acc[0][0], b, _mm512_load_si512(w));
      acc[0][1] = _mm512_dpbusd_epi32(acc[0][1], b, _mm512_load_si512(w + 1));
    }
  }
  __m512i sum[1][2];
  for (int v = 0; v < 2; ++v)
    sum[0][v] = _mm512_add_epi32(_mm512_add_epi32(acc[0][v], acc[1][v]),
                                 _mm512_add_epi32(acc[2][v], acc[3][v]));
  if (kFused) {
    store_q<1>(sum, a);
    return;
  }
  _mm512_storeu_si512(a.acc, sum[0][0]);
  _mm512_storeu_si512(a.acc + 16, sum[0][1]);
}

// dw4 multiply-accumulate: vpdpbusd adds the four unsigned x signed byte
// products of each lane to it, without saturation.
struct MacVnni {
  static __m256i dp(__m256i acc, __m256i x, __m256i w) { return _mm256_dpbusd_epi32(acc, x, w); }
  static __m128i dp(__m128i acc, __m128i x, __m128i w) { return _mm_dpbusd_epi32(acc, x, w); }
  template <class O>
  static typename O::V dot4(typename O::V acc, typename O::V x, typename O::V w, typename O::V) {
    return dp(acc, x, w);
  }
};
void dw4_row_vnni(const DwRowArgs& a) { dw4::row<MacVnni>(a); }

}  // namespace

// The SIMDe build is the test-only table avx512vnni_emulated_isa().
#if defined(OPENBPU_KERNELS_SIMDE)
#define OPENBPU_VNNI_ISA avx512vnni_emulated_isa
#define OPENBPU_VNNI_NAME "avx512vnni-simde"
#else
#define OPENBPU_VNNI_ISA avx512vnni_isa
#define OPENBPU_VNNI_NAME "avx512vnni"
#endif
const ConvIsa& OPENBPU_VNNI_ISA() {
  static const ConvIsa isa = {
      .name = OPENBPU_VNNI_NAME,
      .mr = 8,
      .nr = kNr,
      .kg = 4,
      .kpad = 4,
      .esize = 1,
      .fmt = InputFormat::kU8,
      .gemm = gemm_k4_vnni<8>,
      .mr2 = 7,
      .gemm2 = gemm_k4_vnni<7>,
      .gemm_q = gemm_k4_vnni<8, true>,
      .gemm2_q = gemm_k4_vnni<7, true>,
      .gemv = gemv_k4_vnni<false>,
      .gemv_q = gemv_k4_vnni<true>,
      .dw = avx2_isa().dw,
      .dw_pack = avx2_isa().dw_pack,
      .epilogue = avx2_isa().epilogue,
      .dw4_cpad = dw4::cpad,
      .dw4_pack = dw4::pack,
      .dw4_convert = dw4::convert,
      .dw4_row = dw4_row_vnni,
      .dwflat_pack = avx2_isa().dwflat_pack,
      .dwflat = avx2_isa().dwflat,
  };
  return isa;
}
#undef OPENBPU_VNNI_ISA
#undef OPENBPU_VNNI_NAME

}  // namespace openbpu::sim::kern
