// SPDX-License-Identifier: Apache-2.0
// AVX-512 VNNI convolution GEMM (compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni; reached only when the CPU and the OS support it).
//
// GEMM: int8 data, k-group 4, MR = 14 pixels x NR = 32 channels, 28 zmm
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
// Depthwise: the dw4 kernel (dw4_x86.h) with vpdpbusd (zmm blocks of 64
// channels, ymm / xmm for the last ones; exact: no saturation) instead of vpmaddubsw + vpmaddwd; the flat depthwise and the
// epilogue are the AVX2 ones.
//
// Built a second time against SIMDe's portable AVX-512 implementation
// (OPENBPU_KERNELS_SIMDE) so that the tests exercise this code on CPUs
// without AVX-512 as avx512vnni_emulated_isa().
#include <cfenv>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/kernels/x86/avx512_intrin.h"
#define OPENBPU_DW4_ZMM 1  // 64-channel dw4 blocks in zmm
#include "bpu_sim/kernels/x86/dw4_x86.h"
#include "bpu_sim/kernels/x86/float_rq_avx512.h"

namespace openbpu::sim::kern {
namespace {

// 14 pixels x 32 channels: 28 zmm accumulators, two weight vectors and the
// broadcast input fill the 32 registers. Against 8 x 32, each weight load
// feeds 14 vpdpbusd instead of 8. 14 = 2 * 7: maps of 7 x 7 (49 pixels)
// take the 7-pixel tile (ConvIsa::mr2) without a padded row.
// Below K = kSmallK (taps * cin_pad) the 8 x 32 tile (ConvIsa::mr3): there
// the 14-pixel tile's fused requantization (more constants than free
// registers) costs more than the weight loads it saves (MobileNetV2's
// 1x1 of 16-32 input channels were 3-10 % slower).
constexpr int kMr = 14, kNr = 32, kSmallK = 64;

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

// The first `valid` (<= 16) of 16 int8 residuals as int32, zero past them.
inline __m512i load_res16(const int8_t* p, int valid) {
#if defined(OPENBPU_KERNELS_SIMDE)  // Debian's SIMDe has neither intrinsic below
  alignas(64) int32_t t[16];
  for (int i = 0; i < 16; ++i) t[i] = i < valid ? p[i] : 0;
  return _mm512_load_si512(t);
#else
  return _mm512_cvtepi8_epi32(
      _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << valid) - 1), p));
#endif
}

// floor((acc*M + 2^(S-1)) / 2^S) for 16 channels from co, every S >= 33:
// the high halves of the even and odd products merged by one vpermt2d, and
// the odd lanes moved down by vpermd, both on the shuffle port, which the
// multiplies and the shift (port 0 for 512-bit) leave free.
inline __m512i rq_ge33(__m512i acc, const RequantParams& q, int co) {
  const __m512i hi_halves = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
  const __m512i odd_down = _mm512_setr_epi32(1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15);
  const __m512i e = _mm512_mul_epi32(acc, ld16(q.mult + co));
  const __m512i o = _mm512_mul_epi32(_mm512_permutexvar_epi32(odd_down, acc), ld16(q.m_odd + co));
  const __m512i h = _mm512_permutex2var_epi32(e, hi_halves, o);
  return srav16(_mm512_add_epi32(h, ld16(q.r32 + co)), ld16(q.sh32 + co));
}

// The constants are loaded once per tile (FloatRq, float_rq_avx512.h): the
// int8 stores between two pixels' requantizations could alias them and
// force reloads.
inline FloatRq float_rq_at(const RequantParams& q, int co) {
  if (!q.float_rq) return {_mm512_setzero_ps(), _mm512_setzero_ps()};
  return {_mm512_loadu_ps(q.fhi + co), _mm512_loadu_ps(q.flo + co)};
}
// Requantization kinds of a fused tile: every S >= 33, float_requant (no
// residual), RequantParams::hi32 (with or without residual), the
// 3-operation float_requant (float3).
enum RqKind { kRqGe33 = 0, kRqFloat = 1, kRqHi32 = 2, kRqFloat3 = 3 };
// The int32 requantization of a fused tile without residual (kKind
// kRqGe33, kRqFloat or kRqFloat3).
template <int kKind>
__attribute__((always_inline)) inline __m512i rq32(__m512i acc, const RequantParams& q, int co,
                                                   FloatRq f) {
  if constexpr (kKind == kRqFloat3)
    return rq_float3(acc, f);
  else if constexpr (kKind == kRqFloat)
    return rq_float(acc, f);
  else
    return rq_ge33(acc, q, co);
}
// Calls f with the kind rq32 takes for q, as std::integral_constant<int,
// RqKind> (the choice every fused store without a residual makes).
template <class F>
__attribute__((always_inline)) inline void with_rq32_kind(const RequantParams& q, F&& f) {
  if (q.float3)
    f(std::integral_constant<int, kRqFloat3>{});
  else if (q.float_rq)
    f(std::integral_constant<int, kRqFloat>{});
  else
    f(std::integral_constant<int, kRqGe33>{});
}

// v = acc*M (+ R*Mr with res, of which the first `valid` channels are
// read) in the 64-bit lanes of the even (*e) and odd (*o) channels of the
// 16 from co.
__attribute__((always_inline)) inline void products64(__m512i acc, const RequantParams& q, int co,
                                                      const int8_t* res, int valid, __m512i* e,
                                                      __m512i* o) {
  const __m512i odd_down = _mm512_setr_epi32(1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15);
  *e = _mm512_mul_epi32(acc, ld16(q.mult + co));
  *o = _mm512_mul_epi32(_mm512_permutexvar_epi32(odd_down, acc), ld16(q.m_odd + co));
  if (res != nullptr) {
    const __m512i r = load_res16(res + co, valid);
    *e = _mm512_add_epi64(*e, _mm512_mul_epi32(r, ld16(q.rmult + co)));
    *o = _mm512_add_epi64(
        *o, _mm512_mul_epi32(_mm512_permutexvar_epi32(odd_down, r), ld16(q.rm_odd + co)));
  }
}

// The vpermt2d index of the low halves of two vectors of 64-bit lanes (a
// function, not a namespace-scope constant: its dynamic initialization would
// run AVX-512 code on every CPU).
inline __m512i lo_halves() {
  return _mm512_setr_epi32(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
}

// RequantParams::fused64 for 16 channels from co: v (products64), (v +
// 2^(S-1)) >> S (vpsravq), the clamp in 64 bits, the low halves merged by
// one vpermt2d.
inline __m512i rq64(__m512i acc, const RequantParams& q, int co, const int8_t* res, int valid) {
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF), one = _mm512_set1_epi64(1);
  __m512i e, o;
  products64(acc, q, co, res, valid, &e, &o);
  const __m512i s = ld16(q.s32 + co);
  const __m512i se = _mm512_and_si512(s, low32), so = _mm512_srli_epi64(s, 32);
  const __m512i lo = _mm512_set1_epi64(q.lo), hi = _mm512_set1_epi64(q.hi);
  auto round = [&](__m512i v, __m512i sh) __attribute__((always_inline)) {  // 2^(S-1) = (1 << S) >> 1
#if defined(OPENBPU_KERNELS_SIMDE)  // Debian's SIMDe lacks the 64-bit shifts by lane
    alignas(64) int64_t tv[8], ts[8];
    _mm512_store_si512(tv, v);
    _mm512_store_si512(ts, sh);
    for (int i = 0; i < 8; ++i) {
      const int64_t y = (tv[i] + ((int64_t{1} << ts[i]) >> 1)) >> ts[i];
      tv[i] = y < q.lo ? q.lo : (y > q.hi ? q.hi : y);
    }
    (void)one, (void)lo, (void)hi;
    return _mm512_load_si512(tv);
#else
    v = _mm512_add_epi64(v, _mm512_srli_epi64(_mm512_sllv_epi64(one, sh), 1));
    return _mm512_min_epi64(_mm512_max_epi64(_mm512_srav_epi64(v, sh), lo), hi);
#endif
  };
  return _mm512_permutex2var_epi32(round(e, se), lo_halves(), round(o, so));
}

// RequantParams::hi32 for 16 channels from co: h = the low halves of
// v >> (32 - k) (products64), then the S >= 33 form (h + 2^(S'-33)) >>
// (S' - 32) in 32-bit lanes; the packs and the store's clamp saturate.
inline __m512i rq_hi32(__m512i acc, const RequantParams& q, int co, const int8_t* res,
                       int valid) {
  __m512i e, o;
  products64(acc, q, co, res, valid, &e, &o);
  const __m128i n = _mm_cvtsi32_si128(q.hi32_srl);
  const __m512i h =
      _mm512_permutex2var_epi32(_mm512_srl_epi64(e, n), lo_halves(), _mm512_srl_epi64(o, n));
  return srav16(_mm512_add_epi32(h, ld16(q.hi32_r + co)), ld16(q.hi32_sh + co));
}

// Two pixels per 64-byte result: per 128-bit lane L the packs give dwords
// (a: ch 4L..4L+3, a: 16+4L.., b: 4L.., b: 16+4L..), reordered to a 0..31
// then b 0..31. m1 == m: a single pixel.
struct StoreQ {
  const RequantParams& q;
  int co, n;
  int8_t* const* out;
  __m512i lo, hi, order;
  FloatRq f0, f1;  // float_requant constants of channels co, co + 16
  explicit StoreQ(const GemmArgs& a)
      : q(*a.rq),
        co(a.co0),
        n(a.n),
        out(a.out),
        lo(_mm512_set1_epi8(static_cast<char>(a.rq->lo))),
        hi(_mm512_set1_epi8(static_cast<char>(a.rq->hi))),
        order(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)),
        f0(float_rq_at(*a.rq, a.co0)),
        f1(float_rq_at(*a.rq, a.co0 + 16)) {}
  // The residual of pixel m's channel 0, or nullptr.
  const int8_t* res(int m) const {
    if (q.rmult == nullptr) return nullptr;
    return reinterpret_cast<const int8_t*>(reinterpret_cast<uintptr_t>(out[m]) +
                                           static_cast<uintptr_t>(q.res_delta));
  }
  // RequantParams::fused64 for two pixels (inside tile64 only), by
  // rq_hi32 (kHi32) or rq64.
  template <bool kHi32>
  __attribute__((always_inline)) void pair64(int m, int m1, __m512i a0, __m512i a1, __m512i b0,
                                             __m512i b1) const {
    // Residual bytes of channels [co, co + n) only (a partial block ends the region).
    const int v0 = n < 16 ? n : 16, v1 = n < 16 ? 0 : (n < 32 ? n - 16 : 16);
    auto rq = [&](__m512i acc, int c, const int8_t* r, int valid) __attribute__((always_inline)) {
      return kHi32 ? rq_hi32(acc, q, c, r, valid) : rq64(acc, q, c, r, valid);
    };
    const int8_t* ra = res(m);
    const __m512i pa = _mm512_packs_epi32(rq(a0, co, ra, v0), rq(a1, co + 16, ra, v1));
    const int8_t* rb = res(m1);
    const __m512i pb =
        m1 == m ? pa : _mm512_packs_epi32(rq(b0, co, rb, v0), rq(b1, co + 16, rb, v1));
    store(m, m1, pa, pb);
  }
  // RequantParams::fused64 for a tile of mr pixels, t[2m] and t[2m + 1] the
  // 32 accumulators of pixel m: out of line, one call per tile after the
  // tile stored its accumulators (calls per pixel pair, which clobber every
  // zmm, cost the residual layers 30 %). The inlined parts (pair, store,
  // the tile's lambdas) are always_inline: where GCC 12 outlined any of
  // them the tiles ran up to 2x slower, and with the S >= 33 pair alone
  // it copied all 16 accumulators between registers in every K iteration
  // (and stored two to the stack); the K loop is now 16 vpdpbusd, 8
  // broadcasts, 2 weight loads and the loop counter.
  __attribute__((noinline)) void tile64(const __m512i* t, int mr) const {
    for (int m = 0; m < mr; m += 2) {
      const int m1 = m + 1 < mr ? m + 1 : m;
      if (q.hi32)
        pair64<true>(m, m1, t[2 * m], t[2 * m + 1], t[2 * m1], t[2 * m1 + 1]);
      else
        pair64<false>(m, m1, t[2 * m], t[2 * m + 1], t[2 * m1], t[2 * m1 + 1]);
    }
  }
  // In registers, by kind (RqKind).
  template <int kKind>
  __attribute__((always_inline)) void pair(int m, int m1, __m512i a0, __m512i a1, __m512i b0,
                                          __m512i b1) const {
    const int v0 = n < 16 ? n : 16, v1 = n < 16 ? 0 : (n < 32 ? n - 16 : 16);
    auto rq = [&](__m512i acc, int c, FloatRq f, const int8_t* r, int valid)
                  __attribute__((always_inline)) {
                    if constexpr (kKind == kRqHi32)
                      return rq_hi32(acc, q, c, r, valid);
                    else
                      return rq32<kKind>(acc, q, c, f);
                  };
    const int8_t* ra = kKind == kRqHi32 ? res(m) : nullptr;
    const __m512i pa = _mm512_packs_epi32(rq(a0, co, f0, ra, v0), rq(a1, co + 16, f1, ra, v1));
    const int8_t* rb = kKind == kRqHi32 ? res(m1) : nullptr;
    const __m512i pb =
        m1 == m ? pa
                : _mm512_packs_epi32(rq(b0, co, f0, rb, v0), rq(b1, co + 16, f1, rb, v1));
    store(m, m1, pa, pb);
  }
  __attribute__((always_inline)) void store(int m, int m1, __m512i pa, __m512i pb) const {
    __m512i b = _mm512_permutexvar_epi32(order, _mm512_packs_epi16(pa, pb));
    b = _mm512_min_epi8(_mm512_max_epi8(b, lo), hi);
    if (n == kNr) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[m] + co), _mm512_castsi512_si256(b));
      if (m1 != m)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[m1] + co),
                            _mm512_extracti64x4_epi64(b, 1));
    } else {  // a partial block, 0 < n < 32: masked stores (no call, no stack copy)
      const unsigned k = static_cast<unsigned>(n) & (kNr - 1);
      store_first_bytes(out[m] + co, _mm512_castsi512_si256(b), k);
      if (m1 != m) store_first_bytes(out[m1] + co, _mm512_extracti64x4_epi64(b, 1), k);
    }
  }
};

// The end of an MR x 32 tile (acc0 / acc1: channels 0-15 / 16-31 of each
// pixel, the bias included when kFused): requantized into a.out, or stored
// to a.acc.
template <bool kFused, int... M>
__attribute__((always_inline)) inline void finish_tile(const GemmArgs& a, __m512i (&acc0)[sizeof...(M)],
                                                       __m512i (&acc1)[sizeof...(M)],
                                                       std::integer_sequence<int, M...>) {
  constexpr int MR = sizeof...(M);
  if (kFused && a.rq->fused64 && !a.rq->hi32) {  // the accumulators through memory, one call per tile
    alignas(64) __m512i t[2 * MR];
    auto keep = [&](int m) { t[2 * m] = acc0[m], t[2 * m + 1] = acc1[m]; };
    (keep(M), ...);
    StoreQ(a).tile64(t, MR);
    return;
  }
  if (kFused) {
    const StoreQ st(a);
    auto pairs = [&](auto kind) __attribute__((always_inline)) {
      auto pair = [&](int m) __attribute__((always_inline)) {
        const int m1 = m + 1 < MR ? m + 1 : m;
        if (m % 2 == 0)
          st.template pair<decltype(kind)::value>(m, m1, acc0[m], acc1[m], acc0[m1], acc1[m1]);
      };
      (pair(M), ...);
    };
    if (a.rq->fused64)
      pairs(std::integral_constant<int, kRqHi32>{});
    else
      with_rq32_kind(*a.rq, pairs);
    return;
  }
  int32_t* out = a.acc;  // (stores through it could alias a's fields)
  const int stride = a.acc_stride;
  auto store = [&](int m) {
    _mm512_storeu_si512(out + m * stride, acc0[m]);
    _mm512_storeu_si512(out + m * stride + 16, acc1[m]);
  };
  (store(M), ...);
}

// The MR x 32 tile. The pixel index of every accumulator is a constant of a
// fold expression (no loop over pixels): GCC then keeps all 2 * MR
// accumulators in registers; with loops over an accumulator array it
// zeroed, spilled and reloaded them through the stack around the K loop
// (about 45 cycles of a 8 x 32 tile of K = 24, whose multiply-adds take 48).
template <bool kFused, int... M>
inline void gemm_tile(const GemmArgs& a, std::integer_sequence<int, M...>) {
  constexpr int MR = sizeof...(M);
  const __m512i b0 = kFused ? ld16(a.rq->bias + a.co0) : _mm512_setzero_si512();
  const __m512i b1 = kFused ? ld16(a.rq->bias + a.co0 + 16) : _mm512_setzero_si512();
  __m512i acc0[MR] = {(static_cast<void>(M), b0)...};
  __m512i acc1[MR] = {(static_cast<void>(M), b1)...};
  const __m512i* w = static_cast<const __m512i*>(a.w);
  const int k4n = a.cin_pad / 4, taps = a.taps;
  const void* const* rows = a.rows;
  for (int t = 0; t < taps; ++t, rows += MR) {
    const uint8_t* r[MR] = {static_cast<const uint8_t*>(rows[M])...};
    for (int k = 0; k < k4n; ++k, w += 2) {
      const __m512i w0 = _mm512_load_si512(w), w1 = _mm512_load_si512(w + 1);
      auto mac = [&](int m) {
        int32_t x;
        std::memcpy(&x, r[m] + 4 * k, 4);
        const __m512i b = _mm512_set1_epi32(x);
        acc0[m] = _mm512_dpbusd_epi32(acc0[m], b, w0);
        acc1[m] = _mm512_dpbusd_epi32(acc1[m], b, w1);
      };
      (mac(M), ...);
    }
  }
  finish_tile<kFused>(a, acc0, acc1, std::integer_sequence<int, M...>{});
}

template <int MR, bool kFused = false>
void gemm_k4_vnni(const GemmArgs& a) {
  gemm_tile<kFused>(a, std::make_integer_sequence<int, MR>{});
}

#if !defined(OPENBPU_KERNELS_SIMDE)
// AMX (the "amx" table): the same 32-channel weight blocks ([K / 4][32][4],
// a 16-row B tile is 16 k-groups of 16 channels at a row stride of 128
// bytes), 32-pixel tiles. The A operands (x + 128 as for vpdpbusd) are
// prepared per tap and 16-pixel half (amx_prepare), and each 64-byte chunk
// is two A tiles (pixels 0-15, 16-31) times two B tiles (channels 0-15,
// 16-31): tdpbusd into four 16 x 16 int32 C tiles, exact int32 sums as
// vpdpbusd's. Each B tile load then feeds two products.
constexpr int kAmxMr = 32;

struct alignas(64) AmxConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
// Tiles 0-3: C (pixels 0-15 x channels 0-15, 0-15 x 16-31, 16-31 x 0-15,
// 16-31 x 16-31); 4, 5: A (pixels 0-15, 16-31); 6, 7: B (channels 0-15,
// 16-31). Every tile is 16 rows of 64 bytes. Loaded at the first channel
// block of every tile (GemmArgs::same_rows false): other code on the thread
// between two of our tiles (another AMX library in the process) may have
// loaded its own configuration.
inline void amx_configure() {
  static const AmxConfig config = [] {
    AmxConfig c;
    for (int t = 0; t < 8; ++t) c.rows[t] = 16, c.colsb[t] = 64;
    return c;
  }();
  _tile_loadconfig(&config);
}

// Four products of one 64-byte chunk: A tiles from a0 / a1 (row strides
// s0 / s1), B tiles from b.
inline void amx_chunk(const uint8_t* a0, int s0, const uint8_t* a1, int s1, const uint8_t* b) {
  _tile_loadd(4, a0, s0);
  _tile_loadd(5, a1, s1);
  _tile_loadd(6, b, 128);
  _tile_loadd(7, b + 64, 128);
  _tile_dpbusd(0, 4, 6);
  _tile_dpbusd(1, 4, 7);
  _tile_dpbusd(2, 5, 6);
  _tile_dpbusd(3, 5, 7);
}

// The 16 row pointers r[0..15] at one fixed step (returned; 0: not).
inline int64_t uniform_step(const void* const* r) {
  const auto at = [&](int m) { return reinterpret_cast<intptr_t>(r[m]); };
  const int64_t step = at(1) - at(0);
  if (step <= 0 || step > (int64_t{1} << 30)) return 0;
  for (int m = 2; m < 16; ++m)
    if (at(m) - at(0) != m * step) return 0;
  return step;
}

// 16 rows of n < 64 bytes (rows r[0..15] + off) into dst (rows of 64
// bytes, zero past n).
inline void amx_rows64(const void* const* r, int off, int n, uint8_t* dst) {
  const __mmask64 mk = (__mmask64{1} << n) - 1;
  for (int m = 0; m < 16; ++m)
    _mm512_store_si512(dst + 64 * m, _mm512_maskz_loadu_epi8(mk, static_cast<const uint8_t*>(r[m]) + off));
}

// The A operand of one tap's 16-pixel half: rows at src, `stride` apart
// (in place, or gathered into the thread's scratch), and the tap's last partial
// chunk (cin_pad not a multiple of 64) as 16 rows of 64 bytes, zero past
// cin_pad.
struct AmxHalf {
  const uint8_t* src;
  int stride;
  const uint8_t* tail;
};
// A thread's prepared A operands of its last tile, kept in GemmArgs::scratch
// while the driver runs the tile's other channel blocks (same_rows): the
// 2 * taps halves, then per half 16 gathered rows of cin_pad rounded up to
// 64 and the 16 x 64-byte tail (amx_scratch bytes).
struct AmxLayout {
  AmxHalf* halves;
  uint8_t* data;
  size_t per_half;
};
inline size_t amx_halves_bytes(int taps) { return (sizeof(AmxHalf) * 2 * taps + 63) / 64 * 64; }
inline size_t amx_per_half(int cin_pad) { return size_t{16} * ((cin_pad + 63) / 64 * 64 + 64); }
inline AmxLayout amx_layout(uint8_t* scratch, int taps, int cin_pad) {
  return {reinterpret_cast<AmxHalf*>(scratch), scratch + amx_halves_bytes(taps), amx_per_half(cin_pad)};
}
size_t amx_scratch(int taps, int cin_pad) {
  return amx_halves_bytes(taps) + amx_per_half(cin_pad) * 2 * static_cast<size_t>(taps);
}

// Prepares every tap's two halves (cin_pad a multiple of 4): a half whose
// rows lie at one step (pixels of one output row, or dense 1x1 pixels) is
// read in place (tileloadd with that step), other halves are gathered (16
// rows of cin_pad rounded up to 64, zero past cin_pad). A tap's last
// partial chunk reads a zero-padded copy; its A bytes past cin_pad are
// zero, so the weight rows past the tap (the next tap's) add nothing.
void amx_prepare(const GemmArgs& a, const AmxLayout& c) {
  const int cp = a.cin_pad, full = cp / 64 * 64, cp64 = (cp + 63) / 64 * 64;
  for (int t = 0; t < a.taps; ++t)
    for (int h = 0; h < 2; ++h) {
      const void* const* r = a.rows + t * kAmxMr + 16 * h;
      uint8_t* d = c.data + c.per_half * (2 * t + h);
      uint8_t* tail = d + 16 * cp64;
      AmxHalf& o = c.halves[2 * t + h];
      const int64_t step = uniform_step(r);
      if (step > 0) {
        o = {static_cast<const uint8_t*>(r[0]), static_cast<int>(step), tail};
      } else {
        for (int m = 0; m < 16; ++m) {
          const uint8_t* sr = static_cast<const uint8_t*>(r[m]);
          for (int k = 0; k < full; k += 64) _mm512_storeu_si512(d + m * cp64 + k, _mm512_loadu_si512(sr + k));
        }
        o = {d, cp64, tail};
      }
      if (full < cp) amx_rows64(r, full, cp - full, tail);
    }
}

// The products of every tap from the prepared halves; the weight rows past
// K (after the last tap's partial chunk) from a zeroed copy, never past the
// block.
void amx_taps(const GemmArgs& a, const AmxLayout& c) {
  const int cp = a.cin_pad, full = cp / 64 * 64;
  const uint8_t* w = static_cast<const uint8_t*>(a.w);
  alignas(64) uint8_t btail[16 * 128];
  for (int t = 0; t < a.taps; ++t) {
    const AmxHalf& h0 = c.halves[2 * t];
    const AmxHalf& h1 = c.halves[2 * t + 1];
    const uint8_t* b = w + static_cast<size_t>(t) * cp / 4 * 128;
    for (int k = 0; k < full; k += 64, b += 16 * 128) amx_chunk(h0.src + k, h0.stride, h1.src + k, h1.stride, b);
    if (full == cp) continue;
    if (t + 1 == a.taps) {
      const int valid = (cp - full) / 4 * 128;
      std::memcpy(btail, b, static_cast<size_t>(valid));
      std::memset(btail + valid, 0, sizeof btail - static_cast<size_t>(valid));
      b = btail;
    }
    amx_chunk(h0.tail, 64, h1.tail, 64, b);
  }
}

template <bool kFused>
void gemm_amx(const GemmArgs& a) {
  if (!a.same_rows) amx_configure();
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const AmxLayout prepared = amx_layout(a.scratch, a.taps, a.cin_pad);
  if (!a.same_rows) amx_prepare(a, prepared);
  amx_taps(a, prepared);
  if (!kFused) {
    const int stride = a.acc_stride * 4;
    _tile_stored(0, a.acc, stride);
    _tile_stored(1, a.acc + 16, stride);
    _tile_stored(2, a.acc + 16 * a.acc_stride, stride);
    _tile_stored(3, a.acc + 16 * a.acc_stride + 16, stride);
    return;
  }
  alignas(64) int32_t c[kAmxMr * 32];
  _tile_stored(0, c, 128);
  _tile_stored(1, c + 16, 128);
  _tile_stored(2, c + 16 * 32, 128);
  _tile_stored(3, c + 16 * 32 + 16, 128);
  const __m512i b0 = ld16(a.rq->bias + a.co0), b1 = ld16(a.rq->bias + a.co0 + 16);
  for (int h = 0; h < kAmxMr; h += 8) {  // 8 pixels at a time (their accumulators fit the registers)
    __m512i acc0[8], acc1[8];
    for (int m = 0; m < 8; ++m)
      acc0[m] = _mm512_add_epi32(b0, ld16(c + (h + m) * 32)), acc1[m] = _mm512_add_epi32(b1, ld16(c + (h + m) * 32 + 16));
    GemmArgs half = a;
    half.out = a.out + h;
    finish_tile<true>(half, acc0, acc1, std::make_integer_sequence<int, 8>{});
  }
}
#endif

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
  if (kFused && a.rq->fused64) {
    StoreQ(a).tile64(sum[0], 1);
    return;
  }
  if (kFused) {
    const StoreQ st(a);
    with_rq32_kind(*a.rq, [&](auto kind) __attribute__((always_inline)) {
      st.template pair<decltype(kind)::value>(0, 0, sum[0][0], sum[0][1], sum[0][0], sum[0][1]);
    });
    return;
  }
  _mm512_storeu_si512(a.acc, sum[0][0]);
  _mm512_storeu_si512(a.acc + 16, sum[0][1]);
}

// Groups of at most 16 output channels: MR pixels x 16 channels, one zmm
// accumulator per pixel (the 32-channel tile would multiply half or more
// zero weights). Packed weights of one block: [tap][cin_pad/4][16][4].
// Fused requantization: per four pixels two packs and one vpermd give 16
// bytes of each pixel in channel order.
template <bool kFused, int... M>
inline void gemm_tile16(const GemmArgs& a, std::integer_sequence<int, M...>) {
  constexpr int MR = sizeof...(M);
  static_assert(MR % 4 == 0, "pixels are requantized four at a time");
  const __m512i b0 = kFused ? ld16(a.rq->bias + a.co0) : _mm512_setzero_si512();
  __m512i acc[MR] = {(static_cast<void>(M), b0)...};
  const __m512i* w = static_cast<const __m512i*>(a.w);
  const int k4n = a.cin_pad / 4, taps = a.taps;
  const void* const* rows = a.rows;
  for (int t = 0; t < taps; ++t, rows += MR) {
    const uint8_t* r[MR] = {static_cast<const uint8_t*>(rows[M])...};
    for (int k = 0; k < k4n; ++k, ++w) {
      const __m512i w0 = _mm512_load_si512(w);
      auto mac = [&](int m) {
        int32_t x;
        std::memcpy(&x, r[m] + 4 * k, 4);
        acc[m] = _mm512_dpbusd_epi32(acc[m], _mm512_set1_epi32(x), w0);
      };
      (mac(M), ...);
    }
  }
  if (!kFused) {
    int32_t* out = a.acc;  // (stores through it could alias a's fields)
    const int stride = a.acc_stride;
    auto store = [&](int m) { _mm512_storeu_si512(out + m * stride, acc[m]); };
    (store(M), ...);
    return;
  }
  const RequantParams& q = *a.rq;
  const int co = a.co0;
  const __m512i lo = _mm512_set1_epi8(static_cast<char>(q.lo)),
                hi = _mm512_set1_epi8(static_cast<char>(q.hi));
  // Per 128-bit lane L the packs give dwords (p0: ch 4L..4L+3, p1, p2, p3).
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const size_t n = static_cast<size_t>(a.n);  // <= 16
  int8_t* const* out = a.out;
  const FloatRq f = float_rq_at(q, co);
  auto quads = [&](auto kind) __attribute__((always_inline)) {
    constexpr int kKind = decltype(kind)::value;
    auto quad = [&](int m) __attribute__((always_inline)) {
      if (m % 4 != 0) return;
      const __m512i p01 = _mm512_packs_epi32(rq32<kKind>(acc[m], q, co, f),
                                             rq32<kKind>(acc[m + 1], q, co, f));
      const __m512i p23 = _mm512_packs_epi32(rq32<kKind>(acc[m + 2], q, co, f),
                                             rq32<kKind>(acc[m + 3], q, co, f));
      __m512i b = _mm512_permutexvar_epi32(order, _mm512_packs_epi16(p01, p23));
      b = _mm512_min_epi8(_mm512_max_epi8(b, lo), hi);
      if (n == 16) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out[m] + co), _mm512_castsi512_si128(b));
        auto* o1 = reinterpret_cast<__m128i*>(out[m + 1] + co);
        auto* o2 = reinterpret_cast<__m128i*>(out[m + 2] + co);
        auto* o3 = reinterpret_cast<__m128i*>(out[m + 3] + co);
        _mm_storeu_si128(o1, _mm512_extracti32x4_epi32(b, 1));
        _mm_storeu_si128(o2, _mm512_extracti32x4_epi32(b, 2));
        _mm_storeu_si128(o3, _mm512_extracti32x4_epi32(b, 3));
      } else {  // 0 < n < 16: masked stores
        const unsigned k = static_cast<unsigned>(n);
        store_first_bytes(out[m] + co, _mm512_castsi512_si128(b), k);
        store_first_bytes(out[m + 1] + co, _mm512_extracti32x4_epi32(b, 1), k);
        store_first_bytes(out[m + 2] + co, _mm512_extracti32x4_epi32(b, 2), k);
        store_first_bytes(out[m + 3] + co, _mm512_extracti32x4_epi32(b, 3), k);
      }
    };
    (quad(M), ...);
  };
  with_rq32_kind(q, quads);
}
template <int MR, bool kFused = false>
void gemm16_k4_vnni(const GemmArgs& a) {
  gemm_tile16<kFused>(a, std::make_integer_sequence<int, MR>{});
}

// Flat depthwise (kernels.h, DwFlatArgs) with float_requant, 64 bytes per
// step: a 64-byte header (int32 format: 1 float_requant, 2 its 3-operation
// form (DwFlatPackArgs::float3; lo unused), 0 the avx2 integer pack
// follows), then per 64-byte chunk of one period of lcm(P, 64) bytes
// and per 16-byte quarter the lanes' w, bias, hi, lo as floats, then the
// 64-bit mask of the bytes to write (channel < C). float(x) * w + bias is
// an integer of at most 2^24 in magnitude (the plan's bound), so the first
// fma is exact; the rest is float_requant with embedded rounding down.
constexpr size_t kFlatHeader = 64, kFlatChunk = 4 * 4 * 64 + 64;
int flat_period64(int p) {
  int period = 64;
  while (period % p != 0) period += 64;
  return period;
}
size_t dwflat_pack_vnni(const DwFlatPackArgs& a, void* dst) {
  const int period = flat_period64(a.p);
#if defined(OPENBPU_KERNELS_SIMDE)  // no embedded rounding in Debian's SIMDe
  const bool fl = false;
#else
  const bool fl = a.fhi != nullptr && period <= 1024;
#endif
  if (!fl) {
    const size_t inner = avx2_isa().dwflat_pack(a, nullptr);
    if (inner == 0) return 0;
    if (dst != nullptr) {
      std::memset(dst, 0, kFlatHeader);
      avx2_isa().dwflat_pack(a, static_cast<uint8_t*>(dst) + kFlatHeader);
    }
    return kFlatHeader + inner;
  }
  if (a.float_out != nullptr) *a.float_out = true;
  const int chunks = period / 64;
  const size_t bytes = kFlatHeader + chunks * kFlatChunk;
  if (dst == nullptr) return bytes;
  uint8_t* o = static_cast<uint8_t*>(dst);
  std::memset(o, 0, kFlatHeader);
  o[0] = a.float3 ? 2 : 1;
  o += kFlatHeader;
  for (int j = 0; j < chunks; ++j, o += kFlatChunk) {
    float* q = reinterpret_cast<float*>(o);
    uint64_t keep = 0;
    for (int i = 0; i < 64; ++i) {
      const int ch = (64 * j + i) % a.p, v = i / 16, l = i % 16;
      const bool in = ch < a.c;
      q[v * 64 + l] = in ? a.w[ch] : 0.0f;
      q[v * 64 + 16 + l] = in ? static_cast<float>(a.bias[ch]) : 0.0f;
      q[v * 64 + 32 + l] = in ? a.fhi[ch] : 0.0f;
      q[v * 64 + 48 + l] = in ? a.flo[ch] : 0.0f;
      if (in) keep |= uint64_t{1} << i;
    }
    std::memcpy(o + 4 * 4 * 64, &keep, 8);
  }
  return bytes;
}
#if !defined(OPENBPU_KERNELS_SIMDE)
// 16 int8 inputs from in to the requantized int32 of one quarter's lanes
// (q: w, bias, hi, lo): acc = float(x) * w + bias is exact (the plan's
// bound), then float_requant, kF3 its 3-operation form.
template <bool kF3>
inline __m512i flat_quarter(const int8_t* in, const float* q) {
  constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  const __m512i x = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
  const __m512 acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(x), _mm512_loadu_ps(q), _mm512_loadu_ps(q + 16));
  const __m512 half = _mm512_set1_ps(0.5f);
  if constexpr (kF3)
    return _mm512_cvt_roundps_epi32(_mm512_fmadd_round_ps(acc, _mm512_loadu_ps(q + 32), half, kDown),
                                    kDown);
  const __m512 z = _mm512_fmadd_round_ps(acc, _mm512_loadu_ps(q + 32),
                                         _mm512_mul_ps(acc, _mm512_loadu_ps(q + 48)), kDown);
  return _mm512_cvt_roundps_epi32(_mm512_add_round_ps(z, half, kDown), kDown);
}
template <bool kF3>
int64_t dwflat_float(const DwFlatArgs& a, const uint8_t* pack) {
  const int period = flat_period64(a.p), chunks = period / 64;
  const int64_t n = a.n / period * period;  // whole periods: a multiple of P
  const __m512i lo = _mm512_set1_epi8(static_cast<char>(a.lo)),
                hi = _mm512_set1_epi8(static_cast<char>(a.hi));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  int64_t i = 0;
  for (int j = 0; i < n; i += 64, j = j + 1 == chunks ? 0 : j + 1) {
    const uint8_t* cp = pack + kFlatHeader + static_cast<size_t>(j) * kFlatChunk;
    const float* q = reinterpret_cast<const float*>(cp);
    __m512i y[4];
    for (int v = 0; v < 4; ++v) y[v] = flat_quarter<kF3>(a.in + i + 16 * v, q + v * 64);
    __m512i r = _mm512_permutexvar_epi32(
        order, _mm512_packs_epi16(_mm512_packs_epi32(y[0], y[1]), _mm512_packs_epi32(y[2], y[3])));
    r = _mm512_min_epi8(_mm512_max_epi8(r, lo), hi);
    uint64_t keep;
    std::memcpy(&keep, cp + 4 * 4 * 64, 8);
    _mm512_mask_storeu_epi8(a.out + i, keep, r);
  }
  return n;
}
#endif
int64_t dwflat_vnni(const DwFlatArgs& a) {
  const uint8_t* pack = static_cast<const uint8_t*>(a.pack);
  if (pack[0] == 0) {
    DwFlatArgs inner = a;
    inner.pack = pack + kFlatHeader;
    return avx2_isa().dwflat(inner);
  }
#if defined(OPENBPU_KERNELS_SIMDE)
  return 0;
#else
  return pack[0] == 2 ? dwflat_float<true>(a, pack) : dwflat_float<false>(a, pack);
#endif
}

// dw4 multiply-accumulate: vpdpbusd adds the four unsigned x signed byte
// products of each lane to it, without saturation. The column groups hold
// x + 128 (kFlip: dw4::convert<true>), the kernel starts each pixel at
// -128 * the weight sums of its rows inside the image: no |x|, sign(w, x).
struct MacVnni {
  static constexpr bool kFlip = true;
  static __m256i dp(__m256i acc, __m256i x, __m256i w) { return _mm256_dpbusd_epi32(acc, x, w); }
  static __m128i dp(__m128i acc, __m128i x, __m128i w) { return _mm_dpbusd_epi32(acc, x, w); }
  static __m512i dp(__m512i acc, __m512i x, __m512i w) { return _mm512_dpbusd_epi32(acc, x, w); }
  template <class O>
  static typename O::V dot4(typename O::V acc, typename O::V x, typename O::V w, typename O::V) {
    return dp(acc, x, w);
  }
};
void dw4_row_vnni(const DwRowArgs& a) { dw4::row<MacVnni, 64>(a); }

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
#define OPENBPU_VNNI_OTHERS                                                              \
  .dw = avx2_isa().dw, .dw_pack = avx2_isa().dw_pack, .epilogue = avx2_isa().epilogue,    \
  .dw4_cpad = dw4::cpad<64>, .dw4_pack = dw4::pack<64>, .dw4_convert = dw4::convert<true, 64>,             \
  .dw4_step4 = true, .dw4_row = dw4_row_vnni, .dw4_galign = dw4::galign<64>, .dwflat_pack = dwflat_pack_vnni, .dwflat = dwflat_vnni
  // Groups of at most 16 output channels (16 x 16 tiles; 8 x 16 for maps
  // of few pixels).
  static const ConvIsa n16 = {
      .name = OPENBPU_VNNI_NAME "-n16", .mr = 16, .nr = 16, .kg = 4, .kpad = 4, .esize = 1,
      .fmt = InputFormat::kU8, .gemm = gemm16_k4_vnni<16>, .mr2 = 8,
      .gemm2 = gemm16_k4_vnni<8>, .gemm_q = gemm16_k4_vnni<16, true>,
      .gemm2_q = gemm16_k4_vnni<8, true>, OPENBPU_VNNI_OTHERS, .float_gemm = true,
  };
  static const ConvIsa isa = {
      .name = OPENBPU_VNNI_NAME,
      .mr = kMr,
      .nr = kNr,
      .kg = 4,
      .kpad = 4,
      .esize = 1,
      .fmt = InputFormat::kU8,
      .gemm = gemm_k4_vnni<kMr>,
      .mr2 = 7,
      .gemm2 = gemm_k4_vnni<7>,
      .gemm_q = gemm_k4_vnni<kMr, true>,
      .gemm2_q = gemm_k4_vnni<7, true>,
      .gemv = gemv_k4_vnni<false>,
      .gemv_q = gemv_k4_vnni<true>,
      .small_k = kSmallK,
      .mr3 = 8,
      .gemm3 = gemm_k4_vnni<8>,
      .gemm3_q = gemm_k4_vnni<8, true>,
      OPENBPU_VNNI_OTHERS,
      .narrow16 = &n16,
      .fused64 = true,
      .float_gemm = true,
  };
#undef OPENBPU_VNNI_OTHERS
  return isa;
}
#undef OPENBPU_VNNI_ISA
#undef OPENBPU_VNNI_NAME

#if !defined(OPENBPU_KERNELS_SIMDE)
// The avx512vnni table with AMX tiles for the GEMM of K >= kSmallK (below
// it the 8 x 32 VNNI tile, ConvIsa::small_k); one pixel, and groups of at
// most 16 output channels, as avx512vnni.
const ConvIsa& amx_isa() {
  static const ConvIsa isa = [] {
    ConvIsa i = avx512vnni_isa();
    i.name = "amx";
    i.mr = kAmxMr;
    i.gemm = gemm_amx<false>;
    i.gemm_q = gemm_amx<true>;
    i.mr2 = 0, i.gemm2 = nullptr, i.gemm2_q = nullptr;
    i.tiles_outer = true;
    i.gemm_scratch = amx_scratch;
    return i;
  }();
  return isa;
}
#endif

}  // namespace openbpu::sim::kern
