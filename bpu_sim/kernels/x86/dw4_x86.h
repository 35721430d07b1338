// SPDX-License-Identifier: Apache-2.0
// The dw4 depthwise kernel (kernels.h, DwRowArgs) for x86, included by each
// x86 instruction-set file, which compiles it with its own flags and its own
// multiply-accumulate (Mac policy). Everything here has internal linkage, so
// no code built for one instruction set can be shared with another file.
//
// Channel blocks: 32 (ymm) or, for a last block of at most 16, 16 (xmm);
// with OPENBPU_DW4_ZMM (the AVX-512 file) 64 (zmm), a last block of at most
// 32 (16) channels 32 (16), its groups stored R = 2 (4) per zmm (goff) and
// computed 2R pixels per zmm step where the row allows (wide_row).
// Column groups: for every even column x of a zero-padded input row, the
// bytes of columns x..x+3 are interleaved per channel (unpack epi8 of
// (x, x+1), (x+2, x+3), then epi16), which gives four vectors of 4 bytes
// (the 4 columns) per channel:
//   E = channels 0-3 | 16-19, F = 4-7 | 20-23, G = 8-11 | 24-27, H = 12-15 | 28-31
// (xmm: E = 0-3, F = 4-7, G = 8-11, H = 12-15; zmm: four 128-bit segments
// of 16 channels each, E = 0-3 | 16-19 | 32-35 | 48-51, ...). An output pixel whose first
// tap column b is even reads groups b, b + 4, ...; for b odd it reads
// groups b - 1, b + 3, ... with its weights shifted by one slot: two weight
// sets (column parity) per kernel row, zero in the unused slots. (gstep 4,
// stride-2 rows on the zmm table: groups at every fourth column, the
// second weight set shifted by two slots; DwPackArgs::gstep.) Each
// group then is one vpmaddubsw + vpmaddwd per vector, no shuffle. The
// weights and the per-channel requantization constants are packed in the
// E..H lane order, and packs_epi32(E, F), packs_epi32(G, H), packs_epi16
// restore the natural channel order of the int8 result.
//
// Exactness: for inputs >= 0, vpmaddubsw pairs are at most 2*127*128 <
// 2^15; for signed inputs the kernel multiplies |x| (as unsigned, 128 for
// -128) by sign(w, x) (w negated where x < 0, zero where x == 0), which is
// exact because the plan has no weight equal to -128: pairs are at most
// 2*128*127. The int32 sums are exact (validator bound). The fused
// requantization is the S >= 33 form of docs/kernels.md, or float_requant
// (kernels.h) where the plan proved it exact for the layer; saturating packs
// then the int8 clamp to [lo, hi] equal clamp(y, lo, hi).
#ifndef OPENBPU_BPU_SIM_KERNELS_X86_DW4_X86_H_
#define OPENBPU_BPU_SIM_KERNELS_X86_DW4_X86_H_

#include <cstring>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/kernels/x86/float_rq_avx2.h"

namespace openbpu::sim::kern {
namespace {
namespace dw4 {

// Channel of lane l of vector v (E, F, G, H = 0..3) within a block: each
// 128-bit segment holds 16 channels, 4 per vector.
inline int lane_channel(int v, int l) { return l / 4 * 16 + v * 4 + l % 4; }

// Block b's first channel and width: kMax (32: ymm; 64: zmm, with
// OPENBPU_DW4_ZMM), or for a last block of at most 16 (32) channels 16 (32).
struct Block {
  int c0, width;
};
template <int kMax>
inline int block_count(int c) {
  return (c + kMax - 1) / kMax;
}
template <int kMax>
inline Block block(int c, int b) {
  const int rest = c - kMax * b;
  const bool last = b == block_count<kMax>(c) - 1;
  return {kMax * b, !last ? kMax : (rest <= 16 ? 16 : (rest <= 32 ? 32 : kMax))};
}
template <int kMax>
inline int cpad(int c) {
  const Block last = block<kMax>(c, block_count<kMax>(c) - 1);
  return last.c0 + last.width;
}
// Groups per kernel row for first-tap column offset q within a group (0 or
// gstep / 2: DwPackArgs::gstep).
inline int groups(int kw, int q) { return (kw + q + 3) / 4; }

// Groups per vector of 64 bytes (R) of a block of the given width: with
// OPENBPU_DW4_ZMM (kMax 64) a block of 32 (16) channels stores R = 2 (4)
// consecutive groups' E..H vectors side by side, so that one zmm holds the
// same vector of R groups (R pixels, or pixel pairs, per zmm), and its
// weights and constants are packed replicated to 64 lanes; else 1.
template <int kMax>
constexpr int reps(int width) {
  return kMax == 64 ? 64 / width : 1;
}
// The group columns a row's groups must be rounded up to (ConvIsa::dw4_galign).
template <int kMax>
int galign(int c) {
  return reps<kMax>(block<kMax>(c, block_count<kMax>(c) - 1).width);
}
// Offset of vector v (E..H) of group gc of the block at c0 within a ring row
// (gstride bytes per group column): the R groups from gc - gc % R hold their
// vectors in 4 * W-byte chunks of R consecutive group columns, vector v of
// group h at byte 64 v + W h of that run.
template <int kR>
inline int64_t goff(int64_t gc, int v, int c0, int width, int64_t gstride) {
  if constexpr (kR == 1) {
    return gc * gstride + 4 * c0 + v * width;
  } else {
    constexpr int kW = 64 / kR;
    const int h = static_cast<int>(gc % kR), pos = 64 * v + kW * h;
    return (gc - h + pos / (4 * kW)) * gstride + 4 * c0 + pos % (4 * kW);
  }
}

// Packed bytes of one block (pw: width * R lanes): for each kernel row,
// parity 0 then 1, each of its groups: E..H weight vectors (pw bytes each);
// then per vector bias, M, M of the odd lanes (M[l + 1]), r32, sh32 (lanes
// int32 each); then per kernel row and vector 128 * (the sum of the row's
// weights), lanes int32 (what a row of x + 128 adds too much: the Flip
// policy below). Lane l of a replicated block is lane l % (width / 4).
// With gstep 4 "parity 1" is the offset 2 (DwPackArgs::gstep).
inline size_t weight_bytes(int width, int kh, int kw, int gstep) {
  return static_cast<size_t>(kh) * (groups(kw, 0) + groups(kw, gstep / 2)) * 4 * width;
}
inline size_t block_bytes(int width, int kh, int kw, int gstep) {
  return weight_bytes(width, kh, kw, gstep) + (5 + kh) * 4 * static_cast<size_t>(width / 4) * 4;
}

inline uint8_t* pack_weights(const DwPackArgs& a, Block blk, int pw, uint8_t* o) {
  const int lanes = pw / 4, lw = blk.width / 4, taps = a.kh * a.kw;
  for (int kh = 0; kh < a.kh; ++kh)
    for (int q = 0; q <= a.gstep / 2; q += a.gstep / 2)
      for (int g = 0; g < groups(a.kw, q); ++g)
        for (int v = 0; v < 4; ++v)
          for (int l = 0; l < lanes; ++l)
            for (int j = 0; j < 4; ++j) {
              const int ch = blk.c0 + lane_channel(v, l % lw), kw = 4 * g + j - q;
              const bool in = ch < a.c && kw >= 0 && kw < a.kw;
              *o++ = static_cast<uint8_t>(in ? a.w[ch * taps + kh * a.kw + kw] : 0);
            }
  return o;
}

inline int32_t* pack_constants(const DwPackArgs& a, Block blk, int pw, int32_t* p) {
  const int lanes = pw / 4, lw = blk.width / 4, taps = a.kh * a.kw;
  for (int v = 0; v < 4; ++v) {
    for (int l = 0; l < lanes; ++l) {
      const int ll = l % lw;
      const int ch = blk.c0 + lane_channel(v, ll);
      const int odd = blk.c0 + lane_channel(v, ll + 1 < lw ? ll + 1 : ll);
      p[0 * lanes + l] = a.bias[ch];
      p[1 * lanes + l] = a.mult[ch];
      p[2 * lanes + l] = a.mult[odd];
      if (a.fhi != nullptr) {  // float_requant: hi, lo of the lane's own channel
        std::memcpy(&p[1 * lanes + l], &a.fhi[ch], 4);
        std::memcpy(&p[2 * lanes + l], &a.flo[ch], 4);
      }
      p[3 * lanes + l] = a.r32[ch];
      p[4 * lanes + l] = a.sh32[ch];
    }
    p += 5 * lanes;
  }
  for (int kh = 0; kh < a.kh; ++kh)
    for (int v = 0; v < 4; ++v)
      for (int l = 0; l < lanes; ++l) {
        const int ch = blk.c0 + lane_channel(v, l % lw);
        int32_t sum = 0;
        for (int kw = 0; kw < a.kw && ch < a.c; ++kw) sum += a.w[ch * taps + kh * a.kw + kw];
        *p++ = 128 * sum;
      }
  return p;
}

template <int kMax>
size_t pack(const DwPackArgs& a, void* dst) {
  size_t total = 0;
  for (int b = 0; b < block_count<kMax>(a.c); ++b) {
    const int w = block<kMax>(a.c, b).width;
    total += block_bytes(w * reps<kMax>(w), a.kh, a.kw, a.gstep);
  }
  if (dst == nullptr) return total;
  uint8_t* o = static_cast<uint8_t*>(dst);
  for (int b = 0; b < block_count<kMax>(a.c); ++b) {
    const Block blk = block<kMax>(a.c, b);
    const int pw = blk.width * reps<kMax>(blk.width);
    o = pack_weights(a, blk, pw, o);
    o = reinterpret_cast<uint8_t*>(pack_constants(a, blk, pw, reinterpret_cast<int32_t*>(o)));
  }
  return total;
}

// Vector operations of one width. requant_f is the float_requant of
// kernels.h: its float operations round as MXCSR says (row() sets it to
// round down around the kernels that call it).
struct Y {  // 32 channels
  using V = __m256i;
  using F = __m256;
  static F loadf(const void* p) { return _mm256_loadu_ps(static_cast<const float*>(p)); }
  static V requant_f(V acc, F hi, F lo) { return rq_float(acc, hi, lo); }
  static V requant_f3(V acc, F hi) { return rq_float3(acc, hi); }  // every lo == 0 (kernels.h)
  static V load(const void* p) { return _mm256_loadu_si256(static_cast<const V*>(p)); }
  static void store(void* p, V v) { _mm256_storeu_si256(static_cast<V*>(p), v); }
  static V zero() { return _mm256_setzero_si256(); }
  static V ones16() { return _mm256_set1_epi16(1); }
  static V lo8(V a, V b) { return _mm256_unpacklo_epi8(a, b); }
  static V hi8(V a, V b) { return _mm256_unpackhi_epi8(a, b); }
  static V lo16(V a, V b) { return _mm256_unpacklo_epi16(a, b); }
  static V hi16(V a, V b) { return _mm256_unpackhi_epi16(a, b); }
  static V abs8(V a) { return _mm256_abs_epi8(a); }
  static V sign8(V w, V x) { return _mm256_sign_epi8(w, x); }
  static V maddubs(V x, V w) { return _mm256_maddubs_epi16(x, w); }
  static V madd(V a, V b) { return _mm256_madd_epi16(a, b); }
  static V add32(V a, V b) { return _mm256_add_epi32(a, b); }
  static V mul_even(V a, V b) { return _mm256_mul_epi32(a, b); }
  static V srl64_32(V a) { return _mm256_srli_epi64(a, 32); }
  static V blend_odd(V even, V odd) { return _mm256_blend_epi32(even, odd, 0xAA); }
  static V srav(V a, V s) { return _mm256_srav_epi32(a, s); }
  static V packs32(V a, V b) { return _mm256_packs_epi32(a, b); }
  static V packs16(V a, V b) { return _mm256_packs_epi16(a, b); }
  static V set8(int v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static V max8(V a, V b) { return _mm256_max_epi8(a, b); }
  static V min8(V a, V b) { return _mm256_min_epi8(a, b); }
  static V or_(V a, V b) { return _mm256_or_si256(a, b); }
  static V xor_(V a, V b) { return _mm256_xor_si256(a, b); }
  static V sub32(V a, V b) { return _mm256_sub_epi32(a, b); }
  static bool any_neg(V a) { return _mm256_movemask_epi8(a) != 0; }
  // int32 lanes of E..H (channel order above) to natural order.
  static void store_acc(int32_t* acc, const V (&v)[4]) {
    store(acc + 0, _mm256_permute2x128_si256(v[0], v[1], 0x20));
    store(acc + 8, _mm256_permute2x128_si256(v[2], v[3], 0x20));
    store(acc + 16, _mm256_permute2x128_si256(v[0], v[1], 0x31));
    store(acc + 24, _mm256_permute2x128_si256(v[2], v[3], 0x31));
  }
};
struct X {  // 16 channels
  using V = __m128i;
  using F = __m128;
  static F loadf(const void* p) { return _mm_loadu_ps(static_cast<const float*>(p)); }
  static V requant_f(V acc, F hi, F lo) { return rq_float(acc, hi, lo); }
  static V requant_f3(V acc, F hi) { return rq_float3(acc, hi); }
  static V load(const void* p) { return _mm_loadu_si128(static_cast<const V*>(p)); }
  static void store(void* p, V v) { _mm_storeu_si128(static_cast<V*>(p), v); }
  static V zero() { return _mm_setzero_si128(); }
  static V ones16() { return _mm_set1_epi16(1); }
  static V lo8(V a, V b) { return _mm_unpacklo_epi8(a, b); }
  static V hi8(V a, V b) { return _mm_unpackhi_epi8(a, b); }
  static V lo16(V a, V b) { return _mm_unpacklo_epi16(a, b); }
  static V hi16(V a, V b) { return _mm_unpackhi_epi16(a, b); }
  static V abs8(V a) { return _mm_abs_epi8(a); }
  static V sign8(V w, V x) { return _mm_sign_epi8(w, x); }
  static V maddubs(V x, V w) { return _mm_maddubs_epi16(x, w); }
  static V madd(V a, V b) { return _mm_madd_epi16(a, b); }
  static V add32(V a, V b) { return _mm_add_epi32(a, b); }
  static V mul_even(V a, V b) { return _mm_mul_epi32(a, b); }
  static V srl64_32(V a) { return _mm_srli_epi64(a, 32); }
  static V blend_odd(V even, V odd) { return _mm_blend_epi32(even, odd, 0xA); }
  static V srav(V a, V s) { return _mm_srav_epi32(a, s); }
  static V packs32(V a, V b) { return _mm_packs_epi32(a, b); }
  static V packs16(V a, V b) { return _mm_packs_epi16(a, b); }
  static V set8(int v) { return _mm_set1_epi8(static_cast<char>(v)); }
  static V max8(V a, V b) { return _mm_max_epi8(a, b); }
  static V min8(V a, V b) { return _mm_min_epi8(a, b); }
  static V or_(V a, V b) { return _mm_or_si128(a, b); }
  static V xor_(V a, V b) { return _mm_xor_si128(a, b); }
  static V sub32(V a, V b) { return _mm_sub_epi32(a, b); }
  static bool any_neg(V a) { return _mm_movemask_epi8(a) != 0; }
  static void store_acc(int32_t* acc, const V (&v)[4]) {
    for (int k = 0; k < 4; ++k) store(acc + 4 * k, v[k]);
  }
};

#if defined(OPENBPU_DW4_ZMM)
struct Z {  // 64 channels (AVX-512 F/BW)
  using V = __m512i;
  using F = __m512;
  static V load(const void* p) { return _mm512_loadu_si512(p); }
  static void store(void* p, V v) { _mm512_storeu_si512(p, v); }
  static V zero() { return _mm512_setzero_si512(); }
  static V ones16() { return _mm512_set1_epi16(1); }
  static V lo8(V a, V b) { return _mm512_unpacklo_epi8(a, b); }
  static V hi8(V a, V b) { return _mm512_unpackhi_epi8(a, b); }
  static V lo16(V a, V b) { return _mm512_unpacklo_epi16(a, b); }
  static V hi16(V a, V b) { return _mm512_unpackhi_epi16(a, b); }
  static V add32(V a, V b) { return _mm512_add_epi32(a, b); }
  static V mul_even(V a, V b) { return _mm512_mul_epi32(a, b); }
  static V srl64_32(V a) { return _mm512_srli_epi64(a, 32); }
  static V blend_odd(V even, V odd) { return _mm512_mask_blend_epi32(0xAAAA, even, odd); }
  static V packs32(V a, V b) { return _mm512_packs_epi32(a, b); }
  static V packs16(V a, V b) { return _mm512_packs_epi16(a, b); }
  static V set8(int v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static V max8(V a, V b) { return _mm512_max_epi8(a, b); }
  static V min8(V a, V b) { return _mm512_min_epi8(a, b); }
  static V or_(V a, V b) { return _mm512_or_si512(a, b); }
  static V xor_(V a, V b) { return _mm512_xor_si512(a, b); }
  static V sub32(V a, V b) { return _mm512_sub_epi32(a, b); }
  static bool any_neg(V a) { return _mm512_movepi8_mask(a) != 0; }
  static F loadf(const void* p) { return _mm512_loadu_ps(static_cast<const float*>(p)); }
#if defined(OPENBPU_KERNELS_SIMDE)  // Debian's SIMDe lacks these zmm forms: ymm halves
  static V srav(V a, V s) {
    alignas(64) int32_t x[16], y[16];
    _mm512_store_si512(x, a), _mm512_store_si512(y, s);
    for (int h = 0; h < 2; ++h)
      Y::store(x + 8 * h, _mm256_srav_epi32(Y::load(x + 8 * h), Y::load(y + 8 * h)));
    return _mm512_load_si512(x);
  }
  static V requant_f(V acc, F hi, F lo) {
    alignas(64) int32_t x[16];
    alignas(64) float fh[16], fl[16];
    _mm512_store_si512(x, acc), _mm512_store_ps(fh, hi), _mm512_store_ps(fl, lo);
    for (int h = 0; h < 2; ++h)
      Y::store(x + 8 * h, Y::requant_f(Y::load(x + 8 * h), Y::loadf(fh + 8 * h), Y::loadf(fl + 8 * h)));
    return _mm512_load_si512(x);
  }
  static V requant_f3(V acc, F hi) {
    alignas(64) int32_t x[16];
    alignas(64) float fh[16];
    _mm512_store_si512(x, acc), _mm512_store_ps(fh, hi);
    for (int h = 0; h < 2; ++h)
      Y::store(x + 8 * h, Y::requant_f3(Y::load(x + 8 * h), Y::loadf(fh + 8 * h)));
    return _mm512_load_si512(x);
  }
#else
  static V srav(V a, V s) { return _mm512_srav_epi32(a, s); }
  static V requant_f(V acc, F hi, F lo) {
    const F a = _mm512_cvtepi32_ps(acc);
    const F z = _mm512_fmadd_ps(a, hi, _mm512_mul_ps(a, lo));
    return _mm512_cvtps_epi32(_mm512_add_ps(z, _mm512_set1_ps(0.5f)));
  }
  static V requant_f3(V acc, F hi) {
    return _mm512_cvtps_epi32(_mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), hi, _mm512_set1_ps(0.5f)));
  }
#endif
  // int32 lanes of E..H to natural order: segment k of vector v holds
  // channels 16k + 4v .. 16k + 4v + 3.
  static void store_acc(int32_t* acc, const V (&v)[4]) {
    alignas(64) int32_t t[4][16];
    for (int k = 0; k < 4; ++k) _mm512_store_si512(t[k], v[k]);
    for (int seg = 0; seg < 4; ++seg)
      for (int k = 0; k < 4; ++k) std::memcpy(acc + 16 * seg + 4 * k, &t[k][4 * seg], 16);
  }
};
#endif

// Column groups of one block: plain row [columns][cp] -> [ngc][cp * 4]
// (vectors placed by goff<kR>), as x ^ 0x80 = x + 128 (unsigned) with
// kFlip. Returns the OR of every byte read (bit 7 of a byte: a negative
// value).
template <class O, bool kFlip, int kR>
typename O::V convert_block(const int8_t* plain, int ngc, int cp, int c0, int width, int gs,
                            int8_t* dst) {
  using V = typename O::V;
  V any = O::zero();
  const V flip = O::set8(kFlip ? 0x80 : 0);
  const int64_t gstride = static_cast<int64_t>(cp) * 4;
  for (int gc = 0; gc < ngc; ++gc) {
    const int8_t* s = plain + static_cast<int64_t>(gs * gc) * cp + c0;
    const V t0 = O::load(s), t1 = O::load(s + cp), t2 = O::load(s + 2 * cp),
            t3 = O::load(s + 3 * cp);
    any = O::or_(any, O::or_(O::or_(t0, t1), O::or_(t2, t3)));
    const V a = O::lo8(t0, t1), b = O::hi8(t0, t1), c = O::lo8(t2, t3), d = O::hi8(t2, t3);
    const V e[4] = {O::lo16(a, c), O::hi16(a, c), O::lo16(b, d), O::hi16(b, d)};
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      O::store(dst + goff<kR>(gc, v, c0, width, gstride), kFlip ? O::xor_(e[v], flip) : e[v]);
  }
  return any;
}
#if defined(OPENBPU_DW4_ZMM)
// convert_block of a block of 64 / kR channels in zmm: the kR groups from
// kR m (columns 2 kR m .. 2 kR m + 2 kR + 1) at once, lane h of t0..t3
// taken from columns 2 (kR m + h) + 0..3; ngc is a multiple of kR.
template <bool kFlip, int kR>
__m512i convert_wide(const int8_t* plain, int ngc, int cp, int c0, int gs, int8_t* dst) {
  using V = __m512i;
  constexpr int kW = 64 / kR;
  V any = Z::zero();
  const V flip = Z::set8(kFlip ? 0x80 : 0);
  const int64_t gstride = static_cast<int64_t>(cp) * 4;
  for (int gc = 0; gc < ngc; gc += kR) {
    const int8_t* s = plain + static_cast<int64_t>(gs * gc) * cp + c0;
    V t[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      if constexpr (kR == 2) {
        t[k] = _mm512_inserti64x4(_mm512_castsi256_si512(Y::load(s + k * cp)), Y::load(s + (k + gs) * cp), 1);
      } else {
        t[k] = _mm512_castsi128_si512(X::load(s + k * cp));
        t[k] = _mm512_inserti32x4(t[k], X::load(s + (k + gs) * cp), 1);
        t[k] = _mm512_inserti32x4(t[k], X::load(s + (k + 2 * gs) * cp), 2);
        t[k] = _mm512_inserti32x4(t[k], X::load(s + (k + 3 * gs) * cp), 3);
      }
    }
    any = Z::or_(any, Z::or_(Z::or_(t[0], t[1]), Z::or_(t[2], t[3])));
    const V a = Z::lo8(t[0], t[1]), b = Z::hi8(t[0], t[1]), c = Z::lo8(t[2], t[3]), d = Z::hi8(t[2], t[3]);
    const V e[4] = {Z::lo16(a, c), Z::hi16(a, c), Z::lo16(b, d), Z::hi16(b, d)};
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      Z::store(dst + goff<kR>(gc, v, c0, kW, gstride), kFlip ? Z::xor_(e[v], flip) : e[v]);
  }
  return any;
}
#endif
// Every column of the row is read (group gc covers columns gs gc .. gs gc
// + 3, the row has gs (ngc - 1) + 4; gs = gstep, 2 or 4) and every channel
// [0, cp): the answer covers the row. With kFlip the groups hold x + 128
// (unsigned), and the answer is false. ngc is a multiple of galign<kMax>(c).
template <bool kFlip, int kMax>
bool convert(const int8_t* plain, int ngc, int c, int gs, int8_t* dst) {
  const int cp = cpad<kMax>(c);
  bool neg = false;
  for (int b = 0; b < block_count<kMax>(c); ++b) {
    const Block blk = block<kMax>(c, b);
#if defined(OPENBPU_DW4_ZMM)
    if (blk.width == 64) {
      neg = Z::any_neg(convert_block<Z, kFlip, 1>(plain, ngc, cp, blk.c0, 64, gs, dst)) || neg;
      continue;
    }
    if (blk.width == 32) {
      neg = Z::any_neg(convert_wide<kFlip, 2>(plain, ngc, cp, blk.c0, gs, dst)) || neg;
      continue;
    }
    if (blk.width == 16) {
      neg = Z::any_neg(convert_wide<kFlip, 4>(plain, ngc, cp, blk.c0, gs, dst)) || neg;
      continue;
    }
#endif
    if (blk.width == 32)
      neg = Y::any_neg(convert_block<Y, kFlip, reps<kMax>(32)>(plain, ngc, cp, blk.c0, 32, gs, dst)) || neg;
    else
      neg = X::any_neg(convert_block<X, kFlip, reps<kMax>(16)>(plain, ngc, cp, blk.c0, 16, gs, dst)) || neg;
  }
  return neg && !kFlip;
}

// Requantized int8 channels of one block (natural order) for NP pixels at
// once: each per-channel constant is loaded once for all of them. kFloat:
// 0 the S >= 33 form, 1 float_requant (the M slots hold hi and lo), 2 its
// 3-operation form (DwRowArgs::float3).
template <class O, int NP, int kFloat>
__attribute__((always_inline)) inline void requant(const typename O::V (&acc)[NP][4], const int32_t* par, int lanes,
                    typename O::V (&r)[NP]) {
  using V = typename O::V;
  V y[NP][4];
#pragma GCC unroll 16
  for (int v = 0; v < 4; ++v) {
    const int32_t* p = par + v * 5 * lanes;
    if constexpr (kFloat) {
      const typename O::F hi = O::loadf(p + lanes);
      if constexpr (kFloat == 2) {
#pragma GCC unroll 16
        for (int k = 0; k < NP; ++k) y[k][v] = O::requant_f3(acc[k][v], hi);
        continue;
      }
      const typename O::F lo = O::loadf(p + 2 * lanes);
#pragma GCC unroll 16
      for (int k = 0; k < NP; ++k) y[k][v] = O::requant_f(acc[k][v], hi, lo);
      continue;
    }
    const V m = O::load(p + lanes), m_odd = O::load(p + 2 * lanes);
    const V r32 = O::load(p + 3 * lanes), sh32 = O::load(p + 4 * lanes);
  #pragma GCC unroll 16
    for (int k = 0; k < NP; ++k) {
      const V e = O::mul_even(acc[k][v], m);
      const V o = O::mul_even(O::srl64_32(acc[k][v]), m_odd);
      const V h = O::blend_odd(O::srl64_32(e), o);
      y[k][v] = O::srav(O::add32(h, r32), sh32);
    }
  }
#pragma GCC unroll 16
  for (int k = 0; k < NP; ++k)
    r[k] = O::packs16(O::packs32(y[k][0], y[k][1]), O::packs32(y[k][2], y[k][3]));
}

// Loop invariants of a block's stores, read once: DwRowArgs' fields would
// otherwise be reloaded after every int8 store (which may alias them).
template <class O>
struct Sink {
  using V = typename O::V;
  int8_t* out;  // nullptr: raw sums to acc
  int64_t pstride;
  int32_t* acc;
  int64_t acc_stride;
  int n;  // channels of this block to store (<= width)
  V lo, hi;
  Sink(const DwRowArgs& a, int c0, int width)
      : out(a.out != nullptr ? a.out + c0 : nullptr),
        pstride(a.out_pstride),
        acc(a.acc != nullptr ? a.acc + c0 : nullptr),
        acc_stride(a.acc_stride),
        n(a.c - c0 < width ? a.c - c0 : width),
        lo(O::set8(a.lo)),
        hi(O::set8(a.hi)) {}
};

// Stores NP consecutive pixels' block, from pixel p: requantized int8
// (fused) or the raw sums.
template <class O, int NP, int kFloat>
__attribute__((always_inline)) inline void finish(const Sink<O>& s, const typename O::V (&acc)[NP][4], const int32_t* par,
                   int lanes, int p, int width) {
  using V = typename O::V;
  if (s.out == nullptr) {
    for (int k = 0; k < NP; ++k) O::store_acc(s.acc + (p + k) * s.acc_stride, acc[k]);
    return;
  }
  V r[NP];
  requant<O, NP, kFloat>(acc, par, lanes, r);
  // (whole blocks apart: the partial store's buffer made GCC keep r on the
  // stack, and each store's reload waited for its store forwarding)
  if (s.n == width) {
#pragma GCC unroll 16
    for (int k = 0; k < NP; ++k)
      O::store(s.out + (p + k) * s.pstride, O::min8(O::max8(r[k], s.lo), s.hi));
    return;
  }
  for (int k = 0; k < NP; ++k) {
    alignas(64) int8_t tmp[64];
    O::store(tmp, O::min8(O::max8(r[k], s.lo), s.hi));
    copy_bytes(s.out + (p + k) * s.pstride, tmp, static_cast<size_t>(s.n));
  }
}

// Initial accumulators of a block (lanes int32 per packed vector): the
// bias when requantizing here; plus pad * the weight sums of the kernel
// rows outside the image (not computed: DwRowArgs::kh_lo); with Mac::kFlip
// (rows of x + 128) minus 128 * the weight sums of the rows inside.
template <class O, class Mac>
inline void init_acc(const DwRowArgs& a, const int32_t* par, int lanes, int kh_n,
                     typename O::V (&init)[4]) {
  for (int v = 0; v < 4; ++v) {
    init[v] = a.out != nullptr ? O::load(par + v * 5 * lanes) : O::zero();
    for (int kh = 0; kh < kh_n; ++kh) {
      const int32_t* sum128 = par + (20 + (4 * kh + v)) * lanes;
      if (kh >= a.kh_lo && kh < a.kh_hi) {
        if (Mac::kFlip) init[v] = O::sub32(init[v], O::load(sum128));
      } else if (a.pad != 0) {
        alignas(64) int32_t t[16];
        O::store(t, init[v]);
        for (int l = 0; l < lanes; ++l) t[l] += a.pad * (sum128[l] / 128);
        init[v] = O::load(t);
      }
    }
  }
}

#if defined(OPENBPU_DW4_ZMM)
// Chunk h (64 / kR bytes) of a zmm, stored to o: n bytes (n <= 64 / kR).
template <int kR>
__attribute__((always_inline)) inline void put_chunk(int8_t* o, __m512i r, int h, int n) {
  if constexpr (kR == 2) {
    const __m256i y = h == 0 ? _mm512_castsi512_si256(r) : _mm512_extracti64x4_epi64(r, 1);
#if !defined(OPENBPU_KERNELS_SIMDE)
    if (n < 32) return _mm256_mask_storeu_epi8(o, static_cast<__mmask32>((uint64_t{1} << n) - 1), y);
#endif
    if (n == 32) return Y::store(o, y);
    alignas(32) int8_t tmp[32];
    Y::store(tmp, y);
    copy_bytes(o, tmp, static_cast<size_t>(n));
  } else {
    const __m128i x = h == 0 ? _mm512_castsi512_si128(r)
                      : h == 1 ? _mm512_extracti32x4_epi32(r, 1)
                      : h == 2 ? _mm512_extracti32x4_epi32(r, 2)
                               : _mm512_extracti32x4_epi32(r, 3);
#if !defined(OPENBPU_KERNELS_SIMDE)
    if (n < 16) return _mm_mask_storeu_epi8(o, static_cast<__mmask16>((1u << n) - 1), x);
#endif
    if (n == 16) return X::store(o, x);
    alignas(16) int8_t tmp[16];
    X::store(tmp, x);
    copy_bytes(o, tmp, static_cast<size_t>(n));
  }
}

// The chunks (64 / kR bytes) 1 .. kR - 1 of a, then chunk 0 of b (valignd).
template <int kR>
inline __m512i shift_chunk(__m512i a, __m512i b) {
#if defined(OPENBPU_KERNELS_SIMDE)  // Debian's SIMDe lacks valignd
  alignas(64) int8_t t[128];
  _mm512_store_si512(t, a), _mm512_store_si512(t + 64, b);
  return _mm512_loadu_si512(t + 64 / kR);
#else
  return _mm512_alignr_epi32(b, a, 16 / kR);
#endif
}

// One wide_row step of kS 4: pixels 2 (kR i + h) + k from the zmm column
// of groups col = kR i + h and the next one (valignd: groups col + 1).
template <class Mac, int KH, int G0, int G1, int kR>
__attribute__((always_inline)) inline void s4_step(const int8_t* const* rows, const uint8_t* w0,
                                                   const uint8_t* w1, size_t row_w, int kn, int64_t col,
                                                   int c0, int64_t gstride, __m512i (&acc)[2][4]) {
  using V = __m512i;
  const V ones = Z::ones16();
#pragma GCC unroll 16
  for (int kh = 0; kh < KH; ++kh) {
    if (kh == kn) break;
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      V x[2];
      x[0] = Z::load(rows[kh] + goff<kR>(col, v, c0, 64 / kR, gstride));
      const V nx = Z::load(rows[kh] + goff<kR>(col + kR, v, c0, 64 / kR, gstride));
      x[1] = shift_chunk<kR>(x[0], nx);
#pragma GCC unroll 2
      for (int j = 0; j < G0; ++j)
        acc[0][v] = Mac::template dot4<Z>(acc[0][v], x[j], Z::load(w0 + kh * row_w + (4 * j + v) * 64), ones);
#pragma GCC unroll 2
      for (int j = 0; j < G1; ++j)
        acc[1][v] = Mac::template dot4<Z>(acc[1][v], x[j], Z::load(w1 + kh * row_w + (4 * j + v) * 64), ones);
    }
  }
}

// A block of 64 / kR channels (kR groups per zmm, goff), fused output: 2 kR
// pixels per step, from pixel 0 while all 2 kR exist. kS 1 (stride 1): zmm
// column i holds groups kR i + h, read by pixels 2 (kR i + h) + q with the
// weights of parity q; kS 2 (stride 2, gstep 2): columns 2i and 2i + 1,
// pixels kR (2i + k) + h, parity 0; kS 4 (stride 2, gstep 4): column i and
// (valignd with column i + 1) the groups kR i + h + 1, read by pixels
// 2 (kR i + h) + k, k = 0 with G4 groups of offset 0, k = 1 with NG of
// offset 2 (G4, NG <= 2). rows and wp start at the first computed kernel
// row, kn of them. Returns the first pixel left.
template <class Mac, int kFloat, int KH, int NG, int kR, int kS, int G4 = 0>
int wide_row(const DwRowArgs& a, const int8_t* const* rows, const uint8_t* wp, const int32_t* par,
             int kn, int c0) {
  using V = __m512i;
  constexpr int kW = 64 / kR;
  constexpr bool kS1 = kS == 1;
  constexpr int kG0 = kS == 4 ? G4 : NG;  // groups of the first weight set
  const int64_t gstride = static_cast<int64_t>(a.cp) * 4;
  const size_t row_w = static_cast<size_t>(kG0 + NG) * 4 * 64;
  const uint8_t* w1 = kS != 2 ? wp + static_cast<size_t>(kG0) * 4 * 64 : wp;
  const V ones = Z::ones16();
  const Sink<Z> sink(a, c0, kW);
  V init[4];
  init_acc<Z, Mac>(a, par, 16, KH, init);
  int i = 0;
  for (; 2 * kR * (i + 1) <= a.npix; ++i) {
    V acc[2][4];
#pragma GCC unroll 16
    for (int v = 0; v < 4; ++v) acc[0][v] = acc[1][v] = init[v];
    if constexpr (kS == 4) {
      s4_step<Mac, KH, kG0, NG, kR>(rows, wp, w1, row_w, kn, kR * i, c0, gstride, acc);
    } else {
#pragma GCC unroll 16
      for (int kh = 0; kh < KH; ++kh) {
        if (kh == kn) break;
#pragma GCC unroll 16
        for (int j = 0; j < NG; ++j)
#pragma GCC unroll 16
          for (int v = 0; v < 4; ++v) {
            const size_t wo = kh * row_w + (4 * j + v) * size_t{64};
            const int64_t col = kR * ((kS1 ? i : 2 * i) + j);
            const V x0 = Z::load(rows[kh] + goff<kR>(col, v, c0, kW, gstride));
            const V x1 = kS1 ? x0 : Z::load(rows[kh] + goff<kR>(col + kR, v, c0, kW, gstride));
            acc[0][v] = Mac::template dot4<Z>(acc[0][v], x0, Z::load(wp + wo), ones);
            acc[1][v] = Mac::template dot4<Z>(acc[1][v], x1, Z::load(w1 + wo), ones);
          }
      }
    }
    V r[2];
    requant<Z, 2, kFloat>(acc, par, 16, r);
#pragma GCC unroll 2
    for (int k = 0; k < 2; ++k) {
      const V y = Z::min8(Z::max8(r[k], sink.lo), sink.hi);
#pragma GCC unroll 4
      for (int h = 0; h < kR; ++h) {
        const int64_t pix = kS != 2 ? 2 * (kR * i + h) + k : kR * (2 * i + k) + h;
        put_chunk<kR>(sink.out + pix * sink.pstride, y, h, sink.n);
      }
    }
  }
  return 2 * kR * i;
}
#endif

// One block of channels over all pixels of the row. KH, NG > 0 fix the
// kernel height and the groups per kernel row (both parities) at compile
// time; with stride 1 two adjacent pixels (even and odd first column) read
// the same groups, loaded once. kR > 1 (blocks of 64 / kR channels on the
// zmm table, goff): the fused stride 1 and 2 rows start with wide_row.
template <class O, class Mac, bool kSigned, int kFloat, int KH, int NG, int kR, int G4 = 0>
void block_row(const DwRowArgs& a, const uint8_t* wp, int c0, int width) {
  using V = typename O::V;
  const int kh_n = KH > 0 ? KH : a.kh;
  const int pw = width * kR, lanes = pw / 4;  // packed vector bytes, int32 lanes
  const int gs = G4 > 0 ? 4 : NG > 0 ? 2 : a.gstep;  // (block_row_any)
  const int g0 = G4 > 0 ? G4 : NG > 0 ? NG : groups(a.kw, 0), g1 = NG > 0 ? NG : groups(a.kw, gs / 2);
  const int64_t gstride = static_cast<int64_t>(a.cp) * 4;  // bytes per group column
  const size_t row_w = static_cast<size_t>(g0 + g1) * 4 * pw;
  const int32_t* par = reinterpret_cast<const int32_t*>(wp + weight_bytes(pw, kh_n, a.kw, gs));
  const V ones = O::ones16();
  const Sink<O> sink(a, c0, width);
  V init[4];
  init_acc<O, Mac>(a, par, lanes, kh_n, init);
  // Only the kernel rows [kh_lo, kh_hi) are computed: rows and weights from kh_lo.
  const int kn = a.kh_hi - a.kh_lo;
  wp += a.kh_lo * row_w;
  const uint8_t* w1 = wp + static_cast<size_t>(g0) * 4 * pw;  // odd parity (offset gs / 2)
  // The kernel rows' pointers in locals (KH > 0), not reloaded after stores.
  const int8_t* row_ptrs[KH > 0 ? KH : 1];
  const int8_t* const* rows = a.rows + a.kh_lo;
  if (KH > 0) {
    for (int kh = 0; kh < KH; ++kh) row_ptrs[kh] = kh < kn ? rows[kh] : nullptr;
    rows = row_ptrs;
  }
  auto mac = [&](V acc, V x, const uint8_t* w) {
    const V wv = O::load(w);
    if constexpr (kSigned)
      return Mac::template dot4<O>(acc, O::abs8(x), O::sign8(wv, x), ones);
    else
      return Mac::template dot4<O>(acc, x, wv, ones);
  };
  const int stride = a.stride, npix = a.npix;
  int p = 0;
#if defined(OPENBPU_DW4_ZMM)
  if constexpr (kR > 1 && G4 > 0) {
    if (a.out != nullptr) p = wide_row<Mac, kFloat, KH, NG, kR, 4, G4>(a, rows, wp, par, kn, c0);
  } else if constexpr (kR > 1 && NG > 0 && (kR == 2 || NG == 1)) {
    if (a.out != nullptr && stride == 1) p = wide_row<Mac, kFloat, KH, NG, kR, 1>(a, rows, wp, par, kn, c0);
    if (a.out != nullptr && stride == 2) p = wide_row<Mac, kFloat, KH, NG, kR, 2>(a, rows, wp, par, kn, c0);
  }
#endif
  if (G4 > 0) {  // stride 2, gstep 4: pixels p (offset 0), p + 1 (offset 2) from group p / 2
    for (; p + 1 < npix; p += 2) {
      V acc[2][4];
#pragma GCC unroll 16
      for (int v = 0; v < 4; ++v) acc[0][v] = acc[1][v] = init[v];
#pragma GCC unroll 16
      for (int kh = 0; kh < KH; ++kh) {
        if (kh == kn) break;
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
          V x[2];
#pragma GCC unroll 2
          for (int j = 0; j < (G4 > NG ? G4 : NG); ++j)
            x[j] = O::load(rows[kh] + goff<kR>(p / 2 + j, v, c0, width, gstride));
          const size_t wo = kh * row_w + v * static_cast<size_t>(pw);
#pragma GCC unroll 2
          for (int j = 0; j < G4; ++j) acc[0][v] = mac(acc[0][v], x[j], wp + wo + 4 * j * pw);
#pragma GCC unroll 2
          for (int j = 0; j < NG; ++j) acc[1][v] = mac(acc[1][v], x[j], w1 + wo + 4 * j * pw);
        }
      }
      finish<O, 2, kFloat>(sink, acc, par, lanes, p, width);
    }
  }
  if (G4 == 0 && NG > 0 && stride == 1) {  // pairs: pixel p (even column), p + 1 (odd)
    for (; p + 1 < npix; p += 2) {
      V acc[2][4];
#pragma GCC unroll 16
      for (int v = 0; v < 4; ++v)
        acc[0][v] = acc[1][v] = init[v];
#pragma GCC unroll 16
      for (int kh = 0; kh < kh_n; ++kh) {
        if (kh == kn) break;
#pragma GCC unroll 16
        for (int j = 0; j < NG; ++j)
  #pragma GCC unroll 16
          for (int v = 0; v < 4; ++v) {
            const V x = O::load(rows[kh] + goff<kR>(p / 2 + 2 * j, v, c0, width, gstride));
            const size_t wo = kh * row_w + (4 * j + v) * static_cast<size_t>(pw);
            acc[0][v] = mac(acc[0][v], x, wp + wo);
            acc[1][v] = mac(acc[1][v], x, w1 + wo);
          }
      }
      finish<O, 2, kFloat>(sink, acc, par, lanes, p, width);
    }
  }
  // Accumulates pixel p (first tap column b = p * stride, at offset q of
  // group (b - q) / gs; gstep 4 only with stride 2: q is 0 or 2) into acc.
  auto pixel = [&](int pix, V (&acc)[4]) {
    const int b = pix * stride;
    const int q = b % gs;
    const uint8_t* w = q == 0 ? wp : w1;
    const int ng = q == 0 ? g0 : g1;
    for (int v = 0; v < 4; ++v) acc[v] = init[v];
    for (int kh = 0; kh < kn; ++kh)
      for (int j = 0; j < ng; ++j)
        for (int v = 0; v < 4; ++v)
          acc[v] = mac(acc[v], O::load(rows[kh] + goff<kR>((b - q) / gs + 4 / gs * j, v, c0, width, gstride)),
                       w + kh * row_w + (4 * j + v) * static_cast<size_t>(pw));
  };
  if (G4 == 0 && NG > 0 && stride % 2 == 0) {  // pairs of even first columns: one epilogue
    for (; p + 1 < npix; p += 2) {
      V acc[2][4];
      pixel(p, acc[0]);
      pixel(p + 1, acc[1]);
      finish<O, 2, kFloat>(sink, acc, par, lanes, p, width);
    }
  }
  for (; p < npix; ++p) {
    V acc[1][4];
    pixel(p, acc[0]);
    finish<O, 1, kFloat>(sink, acc, par, lanes, p, width);
  }
}

template <class O, class Mac, bool kSigned, int kFloat, int kR>
void block_row_any(const DwRowArgs& a, const uint8_t* wp, int c0, int width) {
  if (a.gstep == 4 && a.kh == 3 && a.kw == 3)  // (stride 2)
    block_row<O, Mac, kSigned, kFloat, 3, 2, kR, 1>(a, wp, c0, width);
  else if (a.gstep == 4 && a.kh == 5 && a.kw == 5)
    block_row<O, Mac, kSigned, kFloat, 5, 2, kR, 2>(a, wp, c0, width);
  else if (a.gstep == 4)
    block_row<O, Mac, kSigned, kFloat, 0, 0, kR>(a, wp, c0, width);
  else if (a.kh == 3 && a.kw == 3)
    block_row<O, Mac, kSigned, kFloat, 3, 1, kR>(a, wp, c0, width);
  else if (a.kh == 5 && a.kw == 5)
    block_row<O, Mac, kSigned, kFloat, 5, 2, kR>(a, wp, c0, width);
  else if (a.kh == 1 && a.kw == 1)
    block_row<O, Mac, kSigned, kFloat, 1, 1, kR>(a, wp, c0, width);
  else
    block_row<O, Mac, kSigned, kFloat, 0, 0, kR>(a, wp, c0, width);
}

// Not inlined: with kFloat it runs between row()'s MXCSR writes, which the
// compiler does not order against vector float operations it could see.
// Mac::kFlip kernels read x + 128 only (DwRowArgs::nonneg is then true).
template <class O, class Mac, int kFloat, int kR>
void block_row_sign(const DwRowArgs& a, const uint8_t* wp, int c0, int width) {
  if (Mac::kFlip || a.nonneg)
    block_row_any<O, Mac, false, kFloat, kR>(a, wp, c0, width);
  else if constexpr (!Mac::kFlip)
    block_row_any<O, Mac, true, kFloat, kR>(a, wp, c0, width);
}

template <class Mac, int kMax, int kFloat>
__attribute__((noinline)) void row_blocks(const DwRowArgs& a) {
  const uint8_t* wp = static_cast<const uint8_t*>(a.pack);
  for (int b = 0; b < block_count<kMax>(a.c); ++b) {
    const Block blk = block<kMax>(a.c, b);
#if defined(OPENBPU_DW4_ZMM)
    if (blk.width == 64) block_row_sign<Z, Mac, kFloat, 1>(a, wp, blk.c0, 64);
#endif
    if (blk.width == 32) block_row_sign<Y, Mac, kFloat, reps<kMax>(32)>(a, wp, blk.c0, 32);
    if (blk.width == 16) block_row_sign<X, Mac, kFloat, reps<kMax>(16)>(a, wp, blk.c0, 16);
    wp += block_bytes(blk.width * reps<kMax>(blk.width), a.kh, a.kw, a.gstep);
  }
}

// float_requant runs with MXCSR rounding toward -infinity (RC = 01), the
// caller's mode restored after.
template <class Mac, int kMax>
void row(const DwRowArgs& a) {
  if (a.out == nullptr || !a.float_requant) {
    row_blocks<Mac, kMax, 0>(a);
    return;
  }
  const unsigned csr = _mm_getcsr();
  _mm_setcsr((csr & ~0x6000u) | 0x2000u);
  if (a.float3)
    row_blocks<Mac, kMax, 2>(a);
  else
    row_blocks<Mac, kMax, 1>(a);
  _mm_setcsr(csr);
}

}  // namespace dw4
}  // namespace
}  // namespace openbpu::sim::kern

#endif  // OPENBPU_BPU_SIM_KERNELS_X86_DW4_X86_H_
