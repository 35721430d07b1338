// SPDX-License-Identifier: Apache-2.0
// AVX2 rows of the non-convolution instructions (compiled with -mavx2
// -mfma; reached only through the avx2 / avx512vnni tables). The portable
// drivers (portable/ops_portable.cc) resolve the views and call these for
// contiguous int8 rows; each returns how many leading elements it did and the
// driver finishes the rest with its exact scalar loop. No standard-library
// template is used here (see conv_s8_avx2.cc).
//
// Eltwise add / sub / mul, int8 operands and output (docs/numerics.md):
//   v = a*Ma +- b*Mb  or  v = a*b*Ma, |v| < 2^46, y = floor((v + 2^(S-1)) / 2^S)
// in 64-bit lanes as ((uint64)(v + 2^(S-1) + 2^63) >> S) - 2^(63-S), exact
// because v + 2^(S-1) fits int64 (docs/kernels.md); for mul with S >= 33 the
// high 32 bits h of p*Ma (p = a*b) give y = (h + 2^(S-33)) >> (S-32) in
// 32-bit lanes. A row is done here only when every y fits int32 (the driver
// checks the bound), so the int32 narrowing, the saturating packs and the
// int8 clamp to [lo, hi] equal clamp(y, lo, hi).
// Lut int8 -> int8: the 256-entry table (index i = x + 128) as 16 rows
// T_k of 16 and their differences D_k = T_k ^ T_(k-1) (D_0 = T_0, D_8 =
// T_8). Within a half of 128 entries, with s its index as a signed byte
// (x ^ 0x80 for the low half, x for the high one; negative outside it),
// vpshufb(D_k, s - 16k) (subtraction saturating at -128) is D_k[i & 15]
// where i >> 4 >= k and 0 elsewhere (a negative index byte reads 0), so the
// XOR over k of both halves is T_(i >> 4)[i & 15]: 16 vpshufb, 14
// vpsubsb, 16 vpxor per 32 bytes.
// Max of int8 rows (max pooling): vpmaxsb over the taps, clamp, 32 per store.
// Sums of int8 rows (average pooling): 8 channels widened to int32 per add.
#include <immintrin.h>

#include <cstring>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/kernels/x86/float_rq_avx2.h"

namespace openbpu::sim::kern {
namespace {

inline __m256i load8x8(const int8_t* p) {  // 8 int8 -> 8 int32
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// floor((v + 2^(S-1)) / 2^S) of the even 64-bit lanes of ve and vo, as the
// low int32 of each 64-bit lane, interleaved back into 8 int32 lanes.
inline __m256i round64(__m256i ve, __m256i vo, __m256i c1, __m128i s, __m256i off) {
  const __m256i e = _mm256_sub_epi64(_mm256_srl_epi64(_mm256_add_epi64(ve, c1), s), off);
  const __m256i o = _mm256_sub_epi64(_mm256_srl_epi64(_mm256_add_epi64(vo, c1), s), off);
  return _mm256_blend_epi32(e, _mm256_slli_epi64(o, 32), 0xAA);
}

struct EltConsts {
  __m256i ma, mb, c1, off, r32, za, zb, zo;
  __m128i s, sh32;
  bool mul_hi;  // mul with S >= 33: high-half form
  bool fmul, three;  // EltwiseRowS8::float_mul; flo == 0: the 3-operation form
  __m256 fhi, flo;
};

inline __m256i elt8(const EltwiseRowS8& r, const EltConsts& k, const int8_t* a, const int8_t* b) {
  const __m256i x = _mm256_sub_epi32(r.a_step == 0 ? _mm256_set1_epi32(*a) : load8x8(a), k.za);
  const __m256i z = _mm256_sub_epi32(r.b_step == 0 ? _mm256_set1_epi32(*b) : load8x8(b), k.zb);
  if (r.kind == isa::EltwiseKind::kMul) {
    const __m256i p = _mm256_mullo_epi32(x, z);  // |a'*b'| < 2^16
    if (k.fmul) return k.three ? rq_float3(p, k.fhi) : rq_float(p, k.fhi, k.flo);  // MXCSR rounding down
    const __m256i e = _mm256_mul_epi32(p, k.ma);
    const __m256i o = _mm256_mul_epi32(_mm256_srli_epi64(p, 32), k.ma);
    if (k.mul_hi) {
      const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(e, 32), o, 0xAA);
      return _mm256_sra_epi32(_mm256_add_epi32(h, k.r32), k.sh32);
    }
    return round64(e, o, k.c1, k.s, k.off);
  }
  const __m256i ve = _mm256_add_epi64(_mm256_mul_epi32(x, k.ma), _mm256_mul_epi32(z, k.mb));
  const __m256i vo = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), k.ma),
                                      _mm256_mul_epi32(_mm256_srli_epi64(z, 32), k.mb));
  return round64(ve, vo, k.c1, k.s, k.off);
}

// The 32-element steps of a row (not inlined: with k.fmul it runs between
// the caller's MXCSR writes, which the compiler does not order against the
// float operations it could see).
__attribute__((noinline)) int64_t eltwise_steps(const EltwiseRowS8& row, const EltConsts& consts) {
  // Local copies: the int8 stores may alias the arguments, which would
  // force their fields to be reloaded (and the branches on them re-taken)
  // in every step.
  const EltwiseRowS8 r = row;
  const EltConsts k = consts;
  const __m256i lo = _mm256_set1_epi8(static_cast<char>(r.lo)),
                hi = _mm256_set1_epi8(static_cast<char>(r.hi));
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  for (; i + 32 <= r.n; i += 32) {
    __m256i y[4];
    for (int q = 0; q < 4; ++q)
      y[q] = _mm256_add_epi32(elt8(r, k, r.a + (i + 8 * q) * r.a_step, r.b + (i + 8 * q) * r.b_step), k.zo);
    const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(y[0], y[1]),
                                         _mm256_packs_epi32(y[2], y[3]));
    const __m256i v = _mm256_permutevar8x32_epi32(p, order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(r.out + i),
                        _mm256_min_epi8(_mm256_max_epi8(v, lo), hi));
  }
  return i;
}

int64_t eltwise_row_avx2(const EltwiseRowS8& r) {
  if (r.kind != isa::EltwiseKind::kAdd && r.kind != isa::EltwiseKind::kSub &&
      r.kind != isa::EltwiseKind::kMul)
    return 0;
  EltConsts k;
  const int s = r.shift;
  k.ma = _mm256_set1_epi64x(r.ma);
  k.mb = _mm256_set1_epi64x(r.kind == isa::EltwiseKind::kSub ? -int64_t{r.mb} : r.mb);
  k.c1 = _mm256_set1_epi64x(
      static_cast<int64_t>((s > 0 ? uint64_t{1} << (s - 1) : 0) + (uint64_t{1} << 63)));
  k.off = _mm256_set1_epi64x(static_cast<int64_t>(uint64_t{1} << (63 - s)));
  k.s = _mm_cvtsi32_si128(s);
  k.mul_hi = r.kind == isa::EltwiseKind::kMul && s >= 33;
  k.r32 = _mm256_set1_epi32(k.mul_hi ? 1 << (s - 33) : 0);
  k.sh32 = _mm_cvtsi32_si128(k.mul_hi ? s - 32 : 0);
  k.za = _mm256_set1_epi32(r.za), k.zb = _mm256_set1_epi32(r.zb), k.zo = _mm256_set1_epi32(r.zo);
  k.fmul = r.kind == isa::EltwiseKind::kMul && r.float_mul, k.three = r.flo == 0;
  k.fhi = _mm256_set1_ps(r.fhi), k.flo = _mm256_set1_ps(r.flo);
  if (!k.fmul) return eltwise_steps(r, k);
  const unsigned csr = _mm_getcsr();
  _mm_setcsr((csr & ~0x6000u) | 0x2000u);  // rounding toward -infinity
  const int64_t done = eltwise_steps(r, k);
  _mm_setcsr(csr);
  return done;
}

int64_t lut_row_avx2(const int8_t* in, int8_t* out, int64_t n, const int8_t* table) {
  __m256i d[16];
  for (int k = 0; k < 16; ++k)
    d[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  for (int k = 15; k > 0; --k)
    if (k != 8) d[k] = _mm256_xor_si256(d[k], d[k - 1]);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80)), step = _mm256_set1_epi8(16);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    __m256i s_lo = _mm256_xor_si256(x, flip), s_hi = x;
    __m256i r = _mm256_xor_si256(_mm256_shuffle_epi8(d[0], s_lo), _mm256_shuffle_epi8(d[8], s_hi));
    for (int k = 1; k < 8; ++k) {
      s_lo = _mm256_subs_epi8(s_lo, step);
      s_hi = _mm256_subs_epi8(s_hi, step);
      r = _mm256_xor_si256(r, _mm256_xor_si256(_mm256_shuffle_epi8(d[k], s_lo),
                                               _mm256_shuffle_epi8(d[8 + k], s_hi)));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), r);
  }
  return i;
}

int64_t max_row_avx2(const int8_t* const* rows, int taps, int64_t n, int64_t lo, int64_t hi,
                     int8_t* out, int64_t npix, int64_t in_step, int64_t out_step) {
  const __m256i vlo = _mm256_set1_epi8(static_cast<char>(lo)),
                vhi = _mm256_set1_epi8(static_cast<char>(hi));
  auto ld = [](const int8_t* q) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)); };
  const int64_t n32 = n / 32 * 32;
  for (int64_t p = 0; p < npix; ++p, out += out_step) {
    const int64_t off = p * in_step;
    for (int64_t i = 0; i < n32; i += 32) {
      __m256i m = ld(rows[0] + off + i);
      for (int t = 1; t < taps; ++t) m = _mm256_max_epi8(m, ld(rows[t] + off + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                          _mm256_min_epi8(_mm256_max_epi8(m, vlo), vhi));
    }
  }
  return n32;
}

// Adds the int16 sums s of 16 channels into the int32 sums a[0..1].
inline void widen_add(__m256i s, __m256i* a) {
  a[0] = _mm256_add_epi32(a[0], _mm256_cvtepi16_epi32(_mm256_castsi256_si128(s)));
  a[1] = _mm256_add_epi32(a[1], _mm256_cvtepi16_epi32(_mm256_extracti128_si256(s, 1)));
}

int64_t sum_row_avx2(const int8_t* const* rows, int nrows, int64_t ntaps, int64_t step,
                     int64_t n, int32_t* acc) {
  int64_t c = 0;
  // 32 channels: int16 sums of up to 256 taps (within [-32768, 32512]),
  // then added into int32.
  for (; c + 32 <= n; c += 32) {
    __m256i a[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
    int count = 0;
    for (int r = 0; r < nrows; ++r) {
      const int8_t* p = rows[r] + c;
      for (int64_t t = 0; t < ntaps; ++t, p += step) {
        s0 = _mm256_add_epi16(s0, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
        s1 = _mm256_add_epi16(s1, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16))));
        if (++count == 256) {
          widen_add(s0, a), widen_add(s1, a + 2);
          s0 = s1 = _mm256_setzero_si256(), count = 0;
        }
      }
    }
    widen_add(s0, a), widen_add(s1, a + 2);
    for (int q = 0; q < 4; ++q) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c + 8 * q), a[q]);
  }
  for (; c + 8 <= n; c += 8) {
    __m256i v = _mm256_setzero_si256();
    for (int r = 0; r < nrows; ++r) {
      const int8_t* p = rows[r] + c;
      for (int64_t t = 0; t < ntaps; ++t, p += step) v = _mm256_add_epi32(v, load8x8(p));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c), v);
  }
  return c;
}

}  // namespace

const OpsIsa& avx2_ops() {
  static const OpsIsa ops = {
      .eltwise_s8 = eltwise_row_avx2,
      .lut_s8 = lut_row_avx2,
      .max_s8 = max_row_avx2,
      .sum_s8 = sum_row_avx2,
  };
  return ops;
}

}  // namespace openbpu::sim::kern
