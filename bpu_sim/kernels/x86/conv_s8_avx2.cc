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

namespace openbpu::sim::kern {
namespace {

constexpr int kNr = 16;

template <int MR>
void gemm_k2(const GemmArgs& a) {
  __m256i acc[MR][2];
  for (int m = 0; m < MR; ++m) acc[m][0] = acc[m][1] = _mm256_setzero_si256();
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
  for (int m = 0; m < MR; ++m) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.acc + m * a.acc_stride), acc[m][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.acc + m * a.acc_stride + 8), acc[m][1]);
  }
}

// GEMM for inputs without negative values: int8 data, k-group 4, MR x 16.
// vpmaddubsw multiplies the unsigned input bytes (0 <= x <= 127) by the
// signed weights and adds pairs to int16: |x0*w0 + x1*w1| <= 2*127*128 =
// 32512 < 2^15, so it never saturates and is exact here (it would not be
// for negative inputs read as 128..255); vpmaddwd with ones then adds the
// two pairs of each channel to int32. One 32-bit broadcast carries 4 taps.
// Packed weights of one block: [tap][cin_pad/4][16 channels][4] int8.
template <int MR>
void gemm_k4_u8(const GemmArgs& a) {
  __m256i acc[MR][2];
  for (int m = 0; m < MR; ++m) acc[m][0] = acc[m][1] = _mm256_setzero_si256();
  const __m256i* w = static_cast<const __m256i*>(a.w);
  const __m256i ones = _mm256_set1_epi16(1);
  const int k4n = a.cin_pad / 4;
  for (int t = 0; t < a.taps; ++t) {
    const uint8_t* r[MR];
    for (int m = 0; m < MR; ++m) r[m] = static_cast<const uint8_t*>(a.rows[t * MR + m]);
    for (int k = 0; k < k4n; ++k) {
      const __m256i w0 = _mm256_load_si256(w), w1 = _mm256_load_si256(w + 1);
      w += 2;
      for (int m = 0; m < MR; ++m) {
        int32_t x;
        std::memcpy(&x, r[m] + 4 * k, 4);
        const __m256i b = _mm256_set1_epi32(x);
        acc[m][0] =
            _mm256_add_epi32(acc[m][0], _mm256_madd_epi16(_mm256_maddubs_epi16(b, w0), ones));
        acc[m][1] =
            _mm256_add_epi32(acc[m][1], _mm256_madd_epi16(_mm256_maddubs_epi16(b, w1), ones));
      }
    }
  }
  for (int m = 0; m < MR; ++m) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.acc + m * a.acc_stride), acc[m][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.acc + m * a.acc_stride + 8), acc[m][1]);
  }
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

inline __m256i clamp64(__m256i v, __m256i lo, __m256i hi) {
  v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
  return _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
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
  const __m256i e = _mm256_mul_epi32(acc, ld(q.mult + co));
  const __m256i o = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), ld(q.m_odd + co));
  if (q.shift_ge33) {
    // High halves of the products in channel order, then one 32-bit shift.
    const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(e, 32), o, 0xAA);
    const __m256i y = _mm256_srav_epi32(_mm256_add_epi32(h, ld(q.r32 + co)), ld(q.sh32 + co));
    return _mm256_min_epi32(_mm256_max_epi32(y, lo), hi);
  }
  __m256i ve = e, vo = o;
  if (res != nullptr) {
    ve = _mm256_add_epi64(ve, _mm256_mul_epi32(*res, ld(q.rmult + co)));
    vo = _mm256_add_epi64(vo, _mm256_mul_epi32(_mm256_srli_epi64(*res, 32), ld(q.rm_odd + co)));
  }
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
      std::memcpy(a.out + i, b, static_cast<size_t>(left));
    } else if (ot == isa::DType::kInt16) {
      int16_t h[8];
      for (int k = 0; k < left; ++k) h[k] = static_cast<int16_t>(v[k]);
      std::memcpy(a.out + 2 * i, h, static_cast<size_t>(left) * 2);
    } else {
      std::memcpy(a.out + 4 * i, v, static_cast<size_t>(left) * 4);
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

}  // namespace

const ConvIsa& avx2_isa() {
  static const ConvIsa nonneg = {
      "avx2-u8",     6, kNr,           /*kg=*/4, /*kpad=*/4,   /*esize=*/1,   InputFormat::kS8,
      gemm_k4_u8<6>, 5, gemm_k4_u8<5>, dw_avx2,  dw_pack_avx2, epilogue_avx2, nullptr,
  };
  static const ConvIsa isa = {
      "avx2",     6, kNr,        /*kg=*/2, /*kpad=*/2,   /*esize=*/2,   InputFormat::kS16,
      gemm_k2<6>, 5, gemm_k2<5>, dw_avx2,  dw_pack_avx2, epilogue_avx2, &nonneg,
  };
  return isa;
}

// Variants for the microbenchmarks (same layout, other tile heights).
void avx2_gemm_mr4(const GemmArgs& a) { gemm_k2<4>(a); }
void avx2_gemm_mr6(const GemmArgs& a) { gemm_k2<6>(a); }

}  // namespace openbpu::sim::kern
