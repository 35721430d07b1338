// SPDX-License-Identifier: Apache-2.0
// AVX-512 rows of the non-convolution instructions (compiled with
// -mavx512f -mavx512bw -mavx512vbmi; reached only through the avx512vnni
// table when the CPU also has VBMI, cpu_features().avx512vbmi, since the
// compiler may use VBMI anywhere in this file). See ops_avx2.cc for the
// drivers' contract and the eltwise numerics, done here on 16 lanes.
//
// Lut int8 -> int8: the 256-entry table as four zmm of 64 entries; index
// i = x + 128 (x ^ 0x80 as a byte). vpermt2b looks up 128 entries by the
// low 7 bits of each byte, once in entries 0-127 and once in 128-255, and
// bit 7 of the index picks one of the two: 3 instructions per 64 bytes
// (the AVX2 row needs 16 vpshufb per 32).
//
// Built a second time against SIMDe's portable AVX-512 implementation
// (OPENBPU_KERNELS_SIMDE) so that the tests run these rows on CPUs without
// AVX-512 VBMI as avx512vbmi_emulated_ops().
#include <cstring>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/kernels/x86/avx512_intrin.h"
#include "bpu_sim/kernels/x86/float_rq_avx512.h"

namespace openbpu::sim::kern {
namespace {

// Eltwise add / sub / mul of int8 rows: ops_avx2.cc's numerics on 16 int32
// lanes (the 64-bit lanes of the even and odd elements, or the high halves
// of the products for mul with S >= 33, or float_requant where the row
// says float_mul), 64 elements per store.
struct EltConsts {
  __m512i ma, mb, c1, off, r32, za, zb, zo;
  __m128i s, sh32;
  bool mul_hi;
  bool fmul, three;  // EltwiseRowS8::float_mul; flo == 0: the 3-operation form
  FloatRq f;
  __m512i lo, hi;  // the output range as bytes
};

inline __m512i widen16(__m128i v) {  // 16 int8 -> 16 int32
#if defined(OPENBPU_KERNELS_SIMDE)  // Debian's SIMDe has no _mm512_cvtepi8_epi32
  alignas(16) int8_t b[16];
  alignas(64) int32_t w[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(b), v);
  for (int i = 0; i < 16; ++i) w[i] = b[i];
  return _mm512_load_si512(w);
#else
  return _mm512_cvtepi8_epi32(v);
#endif
}

inline __m512i sra16(__m512i a, __m128i count) {
#if defined(OPENBPU_KERNELS_SIMDE)  // nor _mm512_sra_epi32: two AVX2 halves
  const __m256i lo = _mm256_sra_epi32(_mm512_castsi512_si256(a), count);
  const __m256i hi = _mm256_sra_epi32(_mm512_extracti64x4_epi64(a, 1), count);
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
#else
  return _mm512_sra_epi32(a, count);
#endif
}

// Masked byte loads / stores of a prefix mask (the rows' tails).
inline __m512i load_prefix(__mmask64 m, const int8_t* p) {
#if defined(OPENBPU_KERNELS_SIMDE)  // nor masked byte loads and stores
  alignas(64) int8_t b[64] = {};
  std::memcpy(b, p, static_cast<size_t>(__builtin_popcountll(m)));
  return _mm512_load_si512(b);
#else
  return _mm512_maskz_loadu_epi8(m, p);
#endif
}
inline void store_prefix(int8_t* p, __mmask64 m, __m512i v) {
#if defined(OPENBPU_KERNELS_SIMDE)
  alignas(64) int8_t b[64];
  _mm512_store_si512(b, v);
  std::memcpy(p, b, static_cast<size_t>(__builtin_popcountll(m)));
#else
  _mm512_mask_storeu_epi8(p, m, v);
#endif
}

inline __m512i load16(const int8_t* p) {  // 16 int8 -> 16 int32
  return widen16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m512i round64(__m512i ve, __m512i vo, const EltConsts& k) {
  const __m512i e = _mm512_sub_epi64(_mm512_srl_epi64(_mm512_add_epi64(ve, k.c1), k.s), k.off);
  const __m512i o = _mm512_sub_epi64(_mm512_srl_epi64(_mm512_add_epi64(vo, k.c1), k.s), k.off);
  return _mm512_mask_blend_epi32(0xAAAA, e, _mm512_slli_epi64(o, 32));
}

inline __m512i elt16(const EltwiseRowS8& r, const EltConsts& k, const int8_t* a, const int8_t* b) {
  const __m512i x = _mm512_sub_epi32(r.a_step == 0 ? _mm512_set1_epi32(*a) : load16(a), k.za);
  const __m512i z = _mm512_sub_epi32(r.b_step == 0 ? _mm512_set1_epi32(*b) : load16(b), k.zb);
  if (r.kind == isa::EltwiseKind::kMul) {
    const __m512i p = _mm512_mullo_epi32(x, z);  // |a'*b'| < 2^16
    if (k.fmul) return k.three ? rq_float3(p, k.f) : rq_float(p, k.f);
    const __m512i e = _mm512_mul_epi32(p, k.ma);
    const __m512i o = _mm512_mul_epi32(_mm512_srli_epi64(p, 32), k.ma);
    if (k.mul_hi) {
      const __m512i h = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e, 32), o);
      return sra16(_mm512_add_epi32(h, k.r32), k.sh32);
    }
    return round64(e, o, k);
  }
  const __m512i ve = _mm512_add_epi64(_mm512_mul_epi32(x, k.ma), _mm512_mul_epi32(z, k.mb));
  const __m512i vo = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), k.ma),
                                      _mm512_mul_epi32(_mm512_srli_epi64(z, 32), k.mb));
  return round64(ve, vo, k);
}

EltConsts elt_consts(const EltwiseRowS8& r) {
  EltConsts k;
  const int s = r.shift;
  k.ma = _mm512_set1_epi64(r.ma);
  k.mb = _mm512_set1_epi64(r.kind == isa::EltwiseKind::kSub ? -int64_t{r.mb} : r.mb);
  k.c1 = _mm512_set1_epi64(
      static_cast<int64_t>((s > 0 ? uint64_t{1} << (s - 1) : 0) + (uint64_t{1} << 63)));
  k.off = _mm512_set1_epi64(static_cast<int64_t>(uint64_t{1} << (63 - s)));
  k.s = _mm_cvtsi32_si128(s);
  k.mul_hi = r.kind == isa::EltwiseKind::kMul && s >= 33;
  k.r32 = _mm512_set1_epi32(k.mul_hi ? 1 << (s - 33) : 0);
  k.sh32 = _mm_cvtsi32_si128(k.mul_hi ? s - 32 : 0);
  k.za = _mm512_set1_epi32(r.za), k.zb = _mm512_set1_epi32(r.zb), k.zo = _mm512_set1_epi32(r.zo);
  k.fmul = r.kind == isa::EltwiseKind::kMul && r.float_mul, k.three = r.flo == 0;
  k.f = {_mm512_set1_ps(r.fhi), _mm512_set1_ps(r.flo)};
  k.lo = _mm512_set1_epi8(static_cast<char>(r.lo)), k.hi = _mm512_set1_epi8(static_cast<char>(r.hi));
  return k;
}

// 64 results from a and b (elements a[j * a_step], b[j * b_step]): four
// 16-lane steps, packs (per 128-bit lane L dwords y0: 4L..4L+3, y1, y2, y3)
// put back in order, clamped.
inline __m512i elt64(const EltwiseRowS8& r, const EltConsts& k, const int8_t* a, const int8_t* b) {
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m512i y[4];
  for (int q = 0; q < 4; ++q)
    y[q] = _mm512_add_epi32(elt16(r, k, a + 16 * q * r.a_step, b + 16 * q * r.b_step), k.zo);
  const __m512i p = _mm512_packs_epi16(_mm512_packs_epi32(y[0], y[1]), _mm512_packs_epi32(y[2], y[3]));
  return _mm512_min_epi8(_mm512_max_epi8(_mm512_permutexvar_epi32(order, p), k.lo), k.hi);
}

int64_t eltwise_row_avx512(const EltwiseRowS8& r) {
  if (r.kind != isa::EltwiseKind::kAdd && r.kind != isa::EltwiseKind::kSub &&
      r.kind != isa::EltwiseKind::kMul)
    return 0;
  const EltConsts k = elt_consts(r);
  int64_t i = 0;
  for (; i + 64 <= r.n; i += 64)
    _mm512_storeu_si512(r.out + i, elt64(r, k, r.a + i * r.a_step, r.b + i * r.b_step));
  if (i < r.n) {  // the last 1-63 from zero-padded copies, stored under a mask
    const size_t m = static_cast<size_t>(r.n - i);
    alignas(64) int8_t ta[64] = {}, tb[64] = {};
    const int8_t* a = r.a + i * r.a_step;
    const int8_t* b = r.b + i * r.b_step;
    if (r.a_step != 0) std::memcpy(ta, a, m), a = ta;
    if (r.b_step != 0) std::memcpy(tb, b, m), b = tb;
    store_prefix(r.out + i, ~uint64_t{0} >> (64 - m), elt64(r, k, a, b));
    i = r.n;
  }
  return i;
}

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
    const __m512i idx = _mm512_xor_si512(load_prefix(m, in + i), flip);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
    store_prefix(out + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
    i = n;
  }
  return i;
}

// Max of int8 rows (max pooling) for a run of npix pixels, 64 bytes per
// store, the last 1-63 masked.
int64_t max_row_avx512(const int8_t* const* rows, int taps, int64_t n, int64_t lo, int64_t hi,
                       int8_t* out, int64_t npix, int64_t in_step, int64_t out_step) {
  const __m512i vlo = _mm512_set1_epi8(static_cast<char>(lo)),
                vhi = _mm512_set1_epi8(static_cast<char>(hi));
  for (int64_t p = 0; p < npix; ++p, out += out_step) {
    const int64_t off = p * in_step;
    for (int64_t i = 0; i < n; i += 64) {
      const __mmask64 m = n - i >= 64 ? ~uint64_t{0} : ~uint64_t{0} >> (64 - (n - i));
      __m512i v = load_prefix(m, rows[0] + off + i);
      for (int t = 1; t < taps; ++t) v = _mm512_max_epi8(v, load_prefix(m, rows[t] + off + i));
      store_prefix(out + i, m, _mm512_min_epi8(_mm512_max_epi8(v, vlo), vhi));
    }
  }
  return n;
}

// Sums of int8 rows (average pooling): 16 channels widened to int32 per
// add, the last 1-15 masked.
int64_t sum_row_avx512(const int8_t* const* rows, int nrows, int64_t ntaps, int64_t step,
                       int64_t n, int32_t* acc) {
  // Whole groups of 32 channels by the AVX2 row's int16 sums (Zen 4: about
  // twice as fast as 16 channels widened to int32 per zmm), the rest here.
  const int64_t done = n >= 32 ? avx2_ops().sum_s8(rows, nrows, ntaps, step, n / 32 * 32, acc) : 0;
  for (int64_t c = done; c < n; c += 16) {
    const int64_t k = n - c < 16 ? n - c : 16;
    const __mmask64 m = ~uint64_t{0} >> (64 - k);
    __m512i v = _mm512_setzero_si512();
    for (int r = 0; r < nrows; ++r) {
      const int8_t* p = rows[r] + c;
      for (int64_t t = 0; t < ntaps; ++t, p += step)
        v = _mm512_add_epi32(v, widen16(_mm512_castsi512_si128(load_prefix(m, p))));
    }
    if (k == 16) {
      _mm512_storeu_si512(acc + c, v);
    } else {
      alignas(64) int32_t b[16];
      _mm512_store_si512(b, v);
      std::memcpy(acc + c, b, static_cast<size_t>(k) * 4);
    }
  }
  return n;
}

}  // namespace

#if defined(OPENBPU_KERNELS_SIMDE)
const OpsIsa& avx512vbmi_emulated_ops() {
#else
const OpsIsa& avx512vbmi_ops() {
#endif
  static const OpsIsa ops = {
      .eltwise_s8 = eltwise_row_avx512,
      .lut_s8 = lut_row_vbmi,
      .max_s8 = max_row_avx512,
      .sum_s8 = sum_row_avx512,
  };
  return ops;
}

}  // namespace openbpu::sim::kern
