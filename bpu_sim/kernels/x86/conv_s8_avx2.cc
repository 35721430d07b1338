// SPDX-License-Identifier: Apache-2.0
// AVX2 convolution parts (this file is compiled with -mavx2 -mfma; nothing in
// it may be reached on a CPU without AVX2, so it uses no inline templates
// from the standard library that another translation unit could share).
//
// GEMM: int16 data, k-group 2, MR = 6 pixels x NR = 16 channels.
//   Packed weights of one block: [tap][cin_pad/2][16 channels][2] int16, i.e.
//   per input-channel pair two ymm of 8 channels x 2 taps each. Each row
//   pointer addresses cin_pad int16 input values; one pair (32 bits) is
//   broadcast and _mm256_madd_epi16 forms 8 exact int32 sums of two products
//   (|x*w| <= 2^15, so a pair never saturates). 12 ymm accumulators.
//   vpmaddubsw (u8 x s8 -> saturating s16) is not used: it is not exact.
// Depthwise: 16 channels per block; two taps are interleaved (unpacklo/hi of
//   the sign-extended int16 inputs) so that one madd adds both taps' products
//   for 8 channels. Weights per block and tap pair: [lo 16][hi 16] int16 in the
//   order of the unpack (channels 0-3, 8-11 | 4-7, 12-15), undone by one
//   permute2x128 pair at the end.
// Epilogue: per 8 channels, exact requantization with 64-bit lanes:
//   v = acc*M (+ R*Mr); q = ((uint64)(v + c1) >> S) - off with c1 = 2^(S-1) +
//   2^63 and off = 2^(63-S) (docs/kernels.md), clamped to [lo, hi].
#include <immintrin.h>

#include <cstring>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/kernels/x86/dw4_x86.h"

namespace openbpu::sim::kern {
namespace {

constexpr int kNr = 16;

// Requantizes the MR x 16 accumulators of a tile (bias included) in
// registers: the S >= 33 form of requant8 below, then saturating packs of
// two pixels at a time into 32 bytes (one permute restores the channel
// order), the int8 clamp to [lo, hi], and 16 bytes (or n) per pixel.
inline __m256i ld8(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m256i rq_ge33(__m256i acc, const RequantParams& q, int co) {
  const __m256i e = _mm256_mul_epi32(acc, ld8(q.mult + co));
  const __m256i o = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), ld8(q.m_odd + co));
  const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(e, 32), o, 0xAA);
  return _mm256_srav_epi32(_mm256_add_epi32(h, ld8(q.r32 + co)), ld8(q.sh32 + co));
}
inline __m256i clamp64(__m256i v, __m256i lo, __m256i hi) {
  v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
  return _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
}
// v = acc*M (+ R*Mr with res) in the 64-bit lanes of the even (*e) and odd
// (*o) channels of the 8 from co.
inline void products64(__m256i acc, const RequantParams& q, int co, const __m256i* res, __m256i* e,
                       __m256i* o) {
  *e = _mm256_mul_epi32(acc, ld8(q.mult + co));
  *o = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), ld8(q.m_odd + co));
  if (res != nullptr) {
    *e = _mm256_add_epi64(*e, _mm256_mul_epi32(*res, ld8(q.rmult + co)));
    *o = _mm256_add_epi64(*o, _mm256_mul_epi32(_mm256_srli_epi64(*res, 32), ld8(q.rm_odd + co)));
  }
}
// RequantParams::hi32 for the 8 channels from co: h = the low halves of v
// >> (32 - k) (the odd ones as the high halves of v << k), then the S >= 33
// form (h + 2^(S'-33)) >> (S' - 32) in 32-bit lanes (the packs and the
// store's clamp saturate).
inline __m256i rq_hi32(__m256i acc, const RequantParams& q, int co, const __m256i* res) {
  __m256i e, o;
  products64(acc, q, co, res, &e, &o);
  const __m256i h = _mm256_blend_epi32(_mm256_srl_epi64(e, _mm_cvtsi32_si128(q.hi32_srl)),
                                       _mm256_sll_epi64(o, _mm_cvtsi32_si128(32 - q.hi32_srl)), 0xAA);
  return _mm256_srav_epi32(_mm256_add_epi32(h, ld8(q.hi32_r + co)), ld8(q.hi32_sh + co));
}
// RequantParams::fused64 without hi32, any co: per 64-bit lane
// floor((v + 2^(S-1)) / 2^S) = (((uint64)(v + 2^(S-1)) ^ 2^63) >> S) -
// 2^(63-S) (v + 2^(S-1) fits int64: docs/kernels.md), clamped in 64 bits.
inline __m256i rq64(__m256i acc, const RequantParams& q, int co, const __m256i* res) {
  __m256i e, o;
  products64(acc, q, co, res, &e, &o);
  const __m256i s = ld8(q.s32 + co), one = _mm256_set1_epi64x(1),
                top = _mm256_set1_epi64x(INT64_MIN);
  const __m256i lo = _mm256_set1_epi64x(q.lo), hi = _mm256_set1_epi64x(q.hi);
  auto round = [&](__m256i v, __m256i sh) __attribute__((always_inline)) {
    const __m256i half = _mm256_srli_epi64(_mm256_sllv_epi64(one, sh), 1);
    const __m256i u = _mm256_xor_si256(_mm256_add_epi64(v, half), top);
    return clamp64(_mm256_sub_epi64(_mm256_srlv_epi64(u, sh), _mm256_srlv_epi64(top, sh)), lo, hi);
  };
  const __m256i ye = round(e, _mm256_and_si256(s, _mm256_set1_epi64x(0xFFFFFFFF)));
  const __m256i yo = round(o, _mm256_srli_epi64(s, 32));
  return _mm256_blend_epi32(ye, _mm256_slli_epi64(yo, 32), 0xAA);
}
// The residual of channels [c, c + 8) of the pixel whose output is o, as
// int32 (RequantParams::res_delta); only the first `valid` are read.
inline __m256i load_res8(const int8_t* o, const RequantParams& q, int c, int valid) {
  const int8_t* r = reinterpret_cast<const int8_t*>(reinterpret_cast<uintptr_t>(o + c) +
                                                    static_cast<uintptr_t>(q.res_delta));
  if (valid >= 8) return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r)));
  int64_t t = 0;
  if (valid > 0) copy_small(&t, r, static_cast<size_t>(valid));
  return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(t));
}
// Requantization of store_q: every S >= 33, float_requant, its 3-operation
// form, RequantParams::fused64 (hi32 or 64-bit rounding, with the residual
// when rmult).
enum RqKind { kRqGe33, kRqFloat, kRqFloat3, kRq64 };
// NV = 2: 16 channels per pixel, two pixels per 32-byte result; NV = 1: 8
// channels, two pixels per 16 bytes. The float constants are loaded once
// per tile.
template <int MR, int NV, int kKind>
inline void store_q(__m256i (&acc)[MR][NV], const GemmArgs& a) {
  const RequantParams& q = *a.rq;
  const int co = a.co0;
  constexpr bool kFloat = kKind != kRqGe33;
  __m256 fh[NV], fl[NV];
  for (int v = 0; v < NV; ++v) {
    fh[v] = kFloat ? _mm256_loadu_ps(q.fhi + co + 8 * v) : _mm256_setzero_ps();
    fl[v] = kKind == kRqFloat ? _mm256_loadu_ps(q.flo + co + 8 * v) : _mm256_setzero_ps();
  }
  int m_now = 0;  // the pixel rq works on (its residual)
  auto rq = [&](__m256i x, int v) __attribute__((always_inline)) {
    if constexpr (kKind == kRqFloat3) return rq_float3(x, fh[v]);
    if constexpr (kKind == kRq64) {
      __m256i r;
      if (q.rmult != nullptr) r = load_res8(a.out[m_now], q, co + 8 * v, a.n - 8 * v);
      const __m256i* rp = q.rmult != nullptr ? &r : nullptr;
      return q.hi32 ? rq_hi32(x, q, co + 8 * v, rp) : rq64(x, q, co + 8 * v, rp);
    }
    return kFloat ? rq_float(x, fh[v], fl[v]) : rq_ge33(x, q, co + 8 * v);
  };
  // rq of pixel m's vector v
  auto rqm = [&](int m, int v) __attribute__((always_inline)) {
    m_now = m;
    return rq(acc[m][v], v);
  };
  const __m256i lo = _mm256_set1_epi8(static_cast<char>(q.lo)),
                hi = _mm256_set1_epi8(static_cast<char>(q.hi));
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  constexpr int kW = 8 * NV;  // channels per pixel
  for (int m = 0; m < MR; m += 2) {
    const int m1 = m + 1 < MR ? m + 1 : m;
    __m256i b;
    if (NV == 2) {
      const __m256i pa = _mm256_packs_epi32(rqm(m, 0), rqm(m, NV - 1));
      const __m256i pb = m1 == m ? pa : _mm256_packs_epi32(rqm(m1, 0), rqm(m1, NV - 1));
      b = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(pa, pb), order);
    } else {
      // [a0-3, b0-3 | a4-7, b4-7] int16, then bytes; dwords 0, 4, 1, 5 are
      // a0-3, a4-7, b0-3, b4-7.
      const __m256i ya = rqm(m, 0);
      const __m256i p = _mm256_packs_epi32(ya, m1 == m ? ya : rqm(m1, 0));
      b = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p, p), order);
    }
    b = _mm256_min_epi8(_mm256_max_epi8(b, lo), hi);
    alignas(32) int8_t t[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), b);
    const size_t n = static_cast<size_t>(a.n) & (kW - 1);  // a partial block: 0 < n < kW
    const int second = NV == 2 ? 16 : 8;
    if (a.n == kW) {
      std::memcpy(a.out[m] + co, t, kW);
      if (m1 != m) std::memcpy(a.out[m1] + co, t + second, kW);
    } else {
      copy_small(a.out[m] + co, t, n);
      if (m1 != m) copy_small(a.out[m1] + co, t + second, n);
    }
  }
}

// Accumulators start at zero, or at the bias when requantizing in place.
template <int MR, int NV, bool kFused>
inline void init_acc(__m256i (&acc)[MR][NV], const GemmArgs& a) {
  for (int v = 0; v < NV; ++v) {
    const __m256i b = kFused ? ld8(a.rq->bias + a.co0 + 8 * v) : _mm256_setzero_si256();
    for (int m = 0; m < MR; ++m) acc[m][v] = b;
  }
}
template <int MR, int NV, bool kFused>
inline void finish(__m256i (&acc)[MR][NV], const GemmArgs& a) {
  if (kFused) {
    if (a.rq->fused64)
      store_q<MR, NV, kRq64>(acc, a);
    else if (a.rq->float3)
      store_q<MR, NV, kRqFloat3>(acc, a);
    else if (a.rq->float_rq)
      store_q<MR, NV, kRqFloat>(acc, a);
    else
      store_q<MR, NV, kRqGe33>(acc, a);
    return;
  }
  for (int m = 0; m < MR; ++m)
    for (int v = 0; v < NV; ++v)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.acc + m * a.acc_stride + 8 * v), acc[m][v]);
}

template <int MR, bool kFused = false>
void gemm_k2(const GemmArgs& a) {
  __m256i acc[MR][2];
  init_acc<MR, 2, kFused>(acc, a);
  const __m256i* w = static_cast<const __m256i*>(a.w);
  const int k2n = a.cin_pad / 2;
  for (int t = 0; t < a.taps; ++t) {
    const uint8_t* r[MR];
    for (int m = 0; m < MR; ++m) r[m] = static_cast<const uint8_t*>(a.rows[t * MR + m]);
    for (int k = 0; k < k2n; ++k) {
      const __m256i w0 = _mm256_load_si256(w), w1 = _mm256_load_si256(w + 1);
      w += 2;
      for (int m = 0; m < MR; ++m) {
        int32_t x;
        std::memcpy(&x, r[m] + 4 * k, 4);
        const __m256i b = _mm256_set1_epi32(x);
        acc[m][0] = _mm256_add_epi32(acc[m][0], _mm256_madd_epi16(b, w0));
        acc[m][1] = _mm256_add_epi32(acc[m][1], _mm256_madd_epi16(b, w1));
      }
    }
  }
  finish<MR, 2, kFused>(acc, a);
}

// GEMM on int8 data, k-group 4, MR pixels x 8*NV channels. One 32-bit
// broadcast carries 4 taps of a pixel; vpmaddubsw multiplies them (as
// unsigned bytes) by the signed weights and adds pairs to int16, vpmaddwd
// with ones adds the two pairs of a channel to int32.
//   kSign = false: inputs without negative values: |x0*w0 + x1*w1| <=
//     2*127*128 = 32512 < 2^15, never saturating (it would for negative
//     inputs read as 128..255).
//   kSign = true: any input, weights without -128: the unsigned operand is
//     |x| (128 for -128) and the weights are sign(w, x) (negated where x < 0,
//     zero where x == 0), so each product is x*w and a pair is at most
//     2*128*127 < 2^15.
// Packed weights of one block: [tap][cin_pad/4][8*NV channels][4] int8.
template <int MR, int NV, bool kSign, bool kFused = false>
void gemm_k4_s8(const GemmArgs& a) {
  __m256i acc[MR][NV];
  init_acc<MR, NV, kFused>(acc, a);
  const __m256i* w = static_cast<const __m256i*>(a.w);
  const __m256i ones = _mm256_set1_epi16(1);
  const int k4n = a.cin_pad / 4;
  for (int t = 0; t < a.taps; ++t) {
    const uint8_t* r[MR];
    for (int m = 0; m < MR; ++m) r[m] = static_cast<const uint8_t*>(a.rows[t * MR + m]);
    for (int k = 0; k < k4n; ++k) {
      __m256i wv[NV];
      for (int v = 0; v < NV; ++v) wv[v] = _mm256_load_si256(w + v);
      w += NV;
      for (int m = 0; m < MR; ++m) {
        int32_t x;
        std::memcpy(&x, r[m] + 4 * k, 4);
        const __m256i b = _mm256_set1_epi32(x);
        const __m256i u = kSign ? _mm256_abs_epi8(b) : b;
        for (int v = 0; v < NV; ++v) {
          const __m256i ws = kSign ? _mm256_sign_epi8(wv[v], b) : wv[v];
          acc[m][v] =
              _mm256_add_epi32(acc[m][v], _mm256_madd_epi16(_mm256_maddubs_epi16(u, ws), ones));
        }
      }
    }
  }
  finish<MR, NV, kFused>(acc, a);
}

size_t dw_pack_avx2(const int8_t* src, int c_full, int taps, void* dst) {
  const int pairs = (taps + 1) / 2;
  const size_t bytes = static_cast<size_t>(c_full / 16) * pairs * 32 * 2;
  if (dst == nullptr) return bytes;
  int16_t* d = static_cast<int16_t*>(dst);
  // Order of unpacklo/hi within the two 128-bit lanes.
  static const int kLo[8] = {0, 1, 2, 3, 8, 9, 10, 11};
  static const int kHi[8] = {4, 5, 6, 7, 12, 13, 14, 15};
  for (int cb = 0; cb < c_full / 16; ++cb) {
    for (int p = 0; p < pairs; ++p) {
      int16_t* o = d + (static_cast<size_t>(cb) * pairs + p) * 32;
      for (int half = 0; half < 2; ++half) {
        const int* order = half == 0 ? kLo : kHi;
        for (int i = 0; i < 8; ++i) {
          const int ch = cb * 16 + order[i];
          const int t0 = 2 * p, t1 = 2 * p + 1;
          o[half * 16 + 2 * i] = src[ch * taps + t0];
          o[half * 16 + 2 * i + 1] = t1 < taps ? src[ch * taps + t1] : 0;
        }
      }
    }
  }
  return bytes;
}

// Depthwise rows; TAPS > 0 fixes the tap count at compile time so that the
// weights of a channel block stay in registers across the pixels.
template <int TAPS>
void dw_rows(const DwArgs& a) {
  const int taps = TAPS > 0 ? TAPS : a.taps;
  const int pairs = (taps + 1) / 2;
  const __m256i* w = static_cast<const __m256i*>(a.w);
  for (int cb = 0; cb < a.c_full / 16; ++cb) {
    const __m256i* wb = w + static_cast<size_t>(cb) * pairs * 2;
    __m256i wr[TAPS > 0 ? 2 * ((TAPS + 1) / 2) : 1];
    if (TAPS > 0)
      for (int q = 0; q < 2 * pairs; ++q) wr[q] = _mm256_load_si256(wb + q);
    for (int p = 0; p < a.npix; ++p) {
      const int8_t* const* px = a.px + static_cast<size_t>(p) * taps;
      __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
      for (int q = 0; q < pairs; ++q) {
        const int t0 = 2 * q, t1 = 2 * q + 1;
        const __m256i x0 = _mm256_cvtepi8_epi16(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(px[t0] + cb * 16)));
        const __m256i x1 = t1 < taps ? _mm256_cvtepi8_epi16(_mm_loadu_si128(
                                           reinterpret_cast<const __m128i*>(px[t1] + cb * 16)))
                                     : _mm256_setzero_si256();
        const __m256i w0 = TAPS > 0 ? wr[2 * q] : _mm256_load_si256(wb + 2 * q);
        const __m256i w1 = TAPS > 0 ? wr[2 * q + 1] : _mm256_load_si256(wb + 2 * q + 1);
        lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), w0));
        hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), w1));
      }
      int32_t* acc = a.acc + static_cast<size_t>(p) * a.acc_stride + cb * 16;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), _mm256_permute2x128_si256(lo, hi, 0x20));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 8),
                          _mm256_permute2x128_si256(lo, hi, 0x31));
    }
  }
}

void dw_avx2(const DwArgs& a) {
  if (a.taps == 9)
    dw_rows<9>(a);
  else
    dw_rows<0>(a);
}

// q = floor((v + 2^(S-1)) / 2^S) for the four int64 lanes of v.
inline __m256i round_shift(__m256i v, const int64_t* c1, const int64_t* s, const int64_t* off) {
  const __m256i u = _mm256_add_epi64(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c1)));
  const __m256i sh = _mm256_srlv_epi64(u, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
  return _mm256_sub_epi64(sh, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(off)));
}

inline __m256i ld(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Requantized int32 values of the 8 channels [co, co + 8) (co % 8 == 0),
// clamped to [lo, hi]; res: their residual values or nullptr.
inline __m256i requant8(__m256i acc, const RequantParams& q, int co, const __m256i* res, __m256i lo,
                        __m256i hi, __m256i lo64, __m256i hi64) {
  // (shift_ge33 means no residual)
  if (q.shift_ge33) return _mm256_min_epi32(_mm256_max_epi32(rq_ge33(acc, q, co), lo), hi);
  __m256i ve, vo;
  products64(acc, q, co, res, &ve, &vo);
  ve = round_shift(ve, q.c1 + co, q.s64 + co, q.off + co);
  vo = round_shift(vo, q.c1 + co + 4, q.s64 + co + 4, q.off + co + 4);
  if (!q.fits32) {
    ve = clamp64(ve, lo64, hi64);
    vo = clamp64(vo, lo64, hi64);
  }
  const __m256i y = _mm256_blend_epi32(ve, _mm256_slli_epi64(vo, 32), 0xAA);
  return _mm256_min_epi32(_mm256_max_epi32(y, lo), hi);
}

inline void avx2_one(const EpilogueArgs& a) {
  const RequantParams& q = *a.rq;
  if (!q.vector_safe || (a.co0 & 7) != 0 || a.out_cstride != 1 ||
      (a.residual != nullptr && a.res_cstride != 1)) {
    epilogue_scalar(a);
    return;
  }
  const __m256i lo = _mm256_set1_epi32(q.lo), hi = _mm256_set1_epi32(q.hi);
  const __m256i lo64 = _mm256_set1_epi64x(q.lo), hi64 = _mm256_set1_epi64x(q.hi);
  const isa::DType ot = a.out_type;
  int i = 0;
  if (ot == isa::DType::kInt32) {
    for (; i + 8 <= a.n; i += 8) {
      const __m256i acc = _mm256_add_epi32(ld(a.acc + i), ld(q.bias + a.co0 + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.out + 4 * i),
                          _mm256_min_epi32(_mm256_max_epi32(acc, lo), hi));
    }
  } else if (ot == isa::DType::kInt8 && a.residual == nullptr) {
    // 32 channels per store: two packs and one cross-lane permute.
    for (; i + 32 <= a.n; i += 32) {
      const int co = a.co0 + i;
      __m256i y[4];
      for (int k = 0; k < 4; ++k)
        y[k] = requant8(_mm256_add_epi32(ld(a.acc + i + 8 * k), ld(q.bias + co + 8 * k)), q,
                        co + 8 * k, nullptr, lo, hi, lo64, hi64);
      const __m256i p01 = _mm256_packs_epi32(y[0], y[1]), p23 = _mm256_packs_epi32(y[2], y[3]);
      const __m256i b = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p01, p23),
                                                    _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.out + i), b);
    }
  }
  if (ot != isa::DType::kInt32) {
    for (; i + 8 <= a.n; i += 8) {
      const int co = a.co0 + i;
      const __m256i acc = _mm256_add_epi32(ld(a.acc + i), ld(q.bias + co));
      __m256i r;
      if (a.residual != nullptr) {
        r = a.res_type == isa::DType::kInt8
                ? _mm256_cvtepi8_epi32(
                      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a.residual + i)))
                : _mm256_cvtepi16_epi32(
                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.residual + 2 * i)));
      }
      const __m256i y =
          requant8(acc, q, co, a.residual != nullptr ? &r : nullptr, lo, hi, lo64, hi64);
      const __m128i p16 =
          _mm_packs_epi32(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
      if (ot == isa::DType::kInt8) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(a.out + i), _mm_packs_epi16(p16, p16));
      } else {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(a.out + 2 * i), p16);
      }
    }
  }
  if (i < a.n && a.residual == nullptr) {
    // Fewer than 8 channels left: all 8 lanes are computed (the parameter
    // arrays are padded and an accumulator row holds at least 16 values) and
    // only the valid ones are stored.
    const int co = a.co0 + i;
    const __m256i acc = _mm256_add_epi32(ld(a.acc + i), ld(q.bias + co));
    const __m256i y = ot == isa::DType::kInt32 ? _mm256_min_epi32(_mm256_max_epi32(acc, lo), hi)
                                               : requant8(acc, q, co, nullptr, lo, hi, lo64, hi64);
    alignas(32) int32_t v[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), y);
    const int left = a.n - i;
    if (ot == isa::DType::kInt8) {
      int8_t b[8];
      for (int k = 0; k < left; ++k) b[k] = static_cast<int8_t>(v[k]);
      copy_small(a.out + i, b, static_cast<size_t>(left));
    } else if (ot == isa::DType::kInt16) {
      int16_t h[8];
      for (int k = 0; k < left; ++k) h[k] = static_cast<int16_t>(v[k]);
      copy_small(a.out + 2 * i, h, static_cast<size_t>(left) * 2);
    } else {
      copy_small(a.out + 4 * i, v, static_cast<size_t>(left) * 4);
    }
  } else if (i < a.n) {
    EpilogueArgs t = a;
    t.acc += i;
    t.n -= i;
    t.co0 += i;
    t.out += static_cast<int64_t>(i) * isa::dtype_size(ot);
    if (t.residual != nullptr) t.residual += static_cast<int64_t>(i) * isa::dtype_size(a.res_type);
    epilogue_scalar(t);
  }
}

// Pixel loop around avx2_one (one call per output row or chunk).
void epilogue_avx2(const EpilogueArgs& a) {
  EpilogueArgs t = a;
  t.npix = 1;
  for (int p = 0; p < a.npix; ++p) {
    t.acc = a.acc + p * a.acc_pstride;
    t.out = a.out + p * a.out_pstride;
    t.residual = a.residual != nullptr ? a.residual + p * a.res_pstride : nullptr;
    avx2_one(t);
  }
}

// Flat depthwise 1x1 (kernels.h, DwFlatArgs). A 32-byte header (byte 0:
// the requantization, FlatKind), then per 32-byte chunk of the period: for
// each of 4 vectors of 8 lanes (bytes 8v..8v+7) 6 arrays of 8 values (kInt:
// the weight, bias, M, M of the next lane, r32 and sh32; kFloat / kFloat3:
// weight, bias, hi and lo of float_requant as floats, two unused); then the
// 32-byte mask of the bytes to write (channel < C).
enum FlatKind : uint8_t { kFlatInt = 0, kFlatFloat = 1, kFlatFloat3 = 2 };
constexpr int kFlatHeader = 32;
constexpr int kFlatChunkInts = 4 * 6 * 8;
constexpr int kFlatChunkBytes = kFlatChunkInts * 4 + 32;
int flat_period(int p) {
  int a = p, b = 32;
  while (b != 0) {
    const int t = a % b;
    a = b;
    b = t;
  }
  return p / a * 32;  // lcm(p, 32)
}
// The 6 x 8 values of lane l of one vector (vq) for channel ch (< 0: padding).
void flat_lane(const DwFlatPackArgs& a, FlatKind kind, int ch, int next, int l, int32_t* vq) {
  const bool in = ch >= 0;
  const int c0 = in ? ch : 0, nc = next >= 0 ? next : 0;
  if (kind == kFlatInt) {
    const int32_t v[6] = {in ? a.w[c0] : 0, a.bias[c0], a.mult[c0], a.mult[nc], a.r32[c0], a.sh32[c0]};
    for (int k = 0; k < 6; ++k) vq[k * 8 + l] = v[k];
    return;
  }
  float* f = reinterpret_cast<float*>(vq);
  const float v[4] = {in ? a.w[c0] : 0.0f, in ? static_cast<float>(a.bias[c0]) : 0.0f,
                      in ? a.fhi[c0] : 0.0f, in ? a.flo[c0] : 0.0f};
  for (int k = 0; k < 4; ++k) f[k * 8 + l] = v[k];
}
size_t dwflat_pack_avx2(const DwFlatPackArgs& a, void* dst) {
  const int period = flat_period(a.p);
  if (period > 2048) return 0;
  const int chunks = period / 32;
  const size_t bytes = kFlatHeader + static_cast<size_t>(chunks) * kFlatChunkBytes;
  const FlatKind kind = a.fhi == nullptr ? kFlatInt : a.float3 ? kFlatFloat3 : kFlatFloat;
  if (kind != kFlatInt && a.float_out != nullptr) *a.float_out = true;
  if (dst == nullptr) return bytes;
  uint8_t* o = static_cast<uint8_t*>(dst);
  std::memset(o, 0, kFlatHeader);
  o[0] = kind;
  o += kFlatHeader;
  for (int j = 0; j < chunks; ++j) {
    int32_t* q = reinterpret_cast<int32_t*>(o);
    std::memset(q, 0, kFlatChunkInts * 4);
    for (int v = 0; v < 4; ++v)
      for (int l = 0; l < 8; ++l) {
        const int ch = (32 * j + 8 * v + l) % a.p;
        const int next = (32 * j + 8 * v + (l < 7 ? l + 1 : l)) % a.p;
        flat_lane(a, kind, ch < a.c ? ch : -1, next < a.c ? next : -1, l, q + v * 48);
      }
    uint8_t* keep = o + kFlatChunkInts * 4;
    for (int i = 0; i < 32; ++i) keep[i] = (32 * j + i) % a.p < a.c ? 0xff : 0;
    o += kFlatChunkBytes;
  }
  return bytes;
}
// 8 requantized int32 of the inputs at in, with vector q's constants.
template <int kKind>
inline __m256i flat8(const int8_t* in, const int32_t* q) {
  const __m256i x = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in)));
  if constexpr (kKind != kFlatInt) {  // float(x) * w + bias is exact (the plan's bound)
    const float* f = reinterpret_cast<const float*>(q);
    const __m256 acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(x), _mm256_loadu_ps(f), _mm256_loadu_ps(f + 8));
    if constexpr (kKind == kFlatFloat3) return rq_float3_ps(acc, _mm256_loadu_ps(f + 16));
    return rq_float_ps(acc, _mm256_loadu_ps(f + 16), _mm256_loadu_ps(f + 24));
  }
  const __m256i acc = _mm256_add_epi32(_mm256_mullo_epi32(x, ld8(q)), ld8(q + 8));
  const __m256i e = _mm256_mul_epi32(acc, ld8(q + 16));
  const __m256i o = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), ld8(q + 24));
  const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(e, 32), o, 0xAA);
  return _mm256_srav_epi32(_mm256_add_epi32(h, ld8(q + 32)), ld8(q + 40));
}
template <int kKind>
int64_t dwflat_rows(const DwFlatArgs& a) {
  const int chunks = flat_period(a.p) / 32;
  const uint8_t* pack = static_cast<const uint8_t*>(a.pack) + kFlatHeader;
  const __m256i lo = _mm256_set1_epi8(static_cast<char>(a.lo)),
                hi = _mm256_set1_epi8(static_cast<char>(a.hi));
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  int j = 0;
  for (; i + 32 <= a.n; i += 32, j = j + 1 == chunks ? 0 : j + 1) {
    const uint8_t* cp = pack + static_cast<size_t>(j) * kFlatChunkBytes;
    __m256i y[4];
    for (int v = 0; v < 4; ++v) y[v] = flat8<kKind>(a.in + i + 8 * v, reinterpret_cast<const int32_t*>(cp) + v * 48);
    __m256i r = _mm256_permutevar8x32_epi32(
        _mm256_packs_epi16(_mm256_packs_epi32(y[0], y[1]), _mm256_packs_epi32(y[2], y[3])), order);
    r = _mm256_min_epi8(_mm256_max_epi8(r, lo), hi);
    __m256i* op = reinterpret_cast<__m256i*>(a.out + i);
    const __m256i keep = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cp + kFlatChunkInts * 4));
    _mm256_storeu_si256(op, _mm256_blendv_epi8(_mm256_loadu_si256(op), r, keep));
  }
  return i;
}
int64_t dwflat_avx2(const DwFlatArgs& a) {
  const uint8_t kind = static_cast<const uint8_t*>(a.pack)[0];
  if (kind == kFlatInt) return dwflat_rows<kFlatInt>(a);
  const unsigned csr = _mm_getcsr();
  _mm_setcsr((csr & ~0x6000u) | 0x2000u);  // float_requant: rounding toward -infinity
  const int64_t done = kind == kFlatFloat3 ? dwflat_rows<kFlatFloat3>(a) : dwflat_rows<kFlatFloat>(a);
  _mm_setcsr(csr);
  return done;
}

// dw4 multiply-accumulate: vpmaddubsw (unsigned x signed byte pairs to
// int16, exact here) then vpmaddwd with ones (pairs to int32).
struct MacAvx2 {
  static constexpr bool kFlip = false;
  template <class O>
  static typename O::V dot4(typename O::V acc, typename O::V x, typename O::V w,
                            typename O::V ones) {
    return O::add32(acc, O::madd(O::maddubs(x, w), ones));
  }
};
void dw4_row_avx2(const DwRowArgs& a) { dw4::row<MacAvx2, 32>(a); }

}  // namespace

const ConvIsa& avx2_isa() {
  // Common parts: depthwise, epilogue, dw4 and flat depthwise.
#define OPENBPU_AVX2_DW                                                              \
  .dw = dw_avx2, .dw_pack = dw_pack_avx2, .epilogue = epilogue_avx2, .dw4_cpad = dw4::cpad<32>, \
  .dw4_pack = dw4::pack<32>, .dw4_convert = dw4::convert<false, 32>, .dw4_step4 = true, .dw4_row = dw4_row_avx2, \
  .dwflat_pack = dwflat_pack_avx2, .dwflat = dwflat_avx2
  // int8 GEMMs of 8 channels (output channels per group <= 8): for inputs
  // without negative values, and for any input with |x| and sign(w, x)
  // when no weight is -128 (no input copy; with 16 channels and more the
  // extra vpsignb per product makes the int16 GEMM the faster one).
  static const ConvIsa u8_n8 = {
      .name = "avx2-u8-n8", .mr = 8, .nr = 8, .kg = 4, .kpad = 4, .esize = 1,
      .fmt = InputFormat::kS8, .gemm = gemm_k4_s8<8, 1, false>, .mr2 = 6,
      .gemm2 = gemm_k4_s8<6, 1, false>, .gemm_q = gemm_k4_s8<8, 1, false, true>,
      .gemm2_q = gemm_k4_s8<6, 1, false, true>, OPENBPU_AVX2_DW, .fused64 = true,
      .float_gemm = true, .float_mxcsr = true,
  };
  static const ConvIsa s8_n8 = {
      .name = "avx2-s8-n8", .mr = 8, .nr = 8, .kg = 4, .kpad = 4, .esize = 1,
      .fmt = InputFormat::kS8, .gemm = gemm_k4_s8<8, 1, true>, .mr2 = 6,
      .gemm2 = gemm_k4_s8<6, 1, true>, .gemm_q = gemm_k4_s8<8, 1, true, true>,
      .gemm2_q = gemm_k4_s8<6, 1, true, true>, OPENBPU_AVX2_DW, .sign_abs = true,
      .fused64 = true, .float_gemm = true, .float_mxcsr = true,
  };
  // Inputs without negative values (5 x 16: 10 accumulators + 2 weights +
  // ones + broadcast + temporary, no spill).
  static const ConvIsa u8 = {
      .name = "avx2-u8", .mr = 5, .nr = kNr, .kg = 4, .kpad = 4, .esize = 1,
      .fmt = InputFormat::kS8, .gemm = gemm_k4_s8<5, 2, false>, .mr2 = 4,
      .gemm2 = gemm_k4_s8<4, 2, false>, .gemm_q = gemm_k4_s8<5, 2, false, true>,
      .gemm2_q = gemm_k4_s8<4, 2, false, true>, .gemv = gemm_k4_s8<1, 2, false>,
      .gemv_q = gemm_k4_s8<1, 2, false, true>, OPENBPU_AVX2_DW, .narrow = &u8_n8,
      .fused64 = true, .float_gemm = true, .float_mxcsr = true,
  };
  // Any input and weight: int16 data, vpmaddwd.
  static const ConvIsa isa = {
      .name = "avx2", .mr = 6, .nr = kNr, .kg = 2, .kpad = 2, .esize = 2,
      .fmt = InputFormat::kS16, .gemm = gemm_k2<6>, .mr2 = 5, .gemm2 = gemm_k2<5>,
      .gemm_q = gemm_k2<6, true>, .gemm2_q = gemm_k2<5, true>, .gemv = gemm_k2<1>, .gemv_q = gemm_k2<1, true>,
      OPENBPU_AVX2_DW, .nonneg = &u8,
      .signed8 = &s8_n8, .fused64 = true, .float_gemm = true, .float_mxcsr = true,
  };
#undef OPENBPU_AVX2_DW
  return isa;
}

}  // namespace openbpu::sim::kern
