// SPDX-License-Identifier: Apache-2.0
// Optimized portable kernels of the non-convolution instructions: the same
// integer formulas as bpu_sim/reference, restructured for speed: views are
// resolved to raw pointers once, the innermost dimension runs as a typed row
// loop (the compiler vectorizes the contiguous cases), and the arithmetic uses
// int64 wherever docs/numerics.md section 14 bounds the intermediates
// (int128 only where it does not: average pooling with large shifts).
//
// Exact rounding shift without the int64 overflow of v + 2^(S-1):
//   floor((v + 2^(S-1)) / 2^S) = ((v >> (S-1)) + 1) >> 1   for S >= 1.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/reference/kernels.h"

namespace openbpu::sim::kern {
namespace {

__extension__ typedef __int128 int128;
using isa::DType;

inline int64_t rshift_round(int64_t v, int s) { return s == 0 ? v : ((v >> (s - 1)) + 1) >> 1; }
inline int sane_shift(int64_t s) { return s < 0 ? 0 : (s > 63 ? 63 : static_cast<int>(s)); }
inline int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}
inline int64_t tmin(DType t) {
  switch (t) {
    case DType::kInt8:
      return -128;
    case DType::kInt16:
      return -32768;
    case DType::kInt32:
      return INT32_MIN;
    case DType::kUInt8:
      return 0;
  }
  return 0;
}
inline int64_t tmax(DType t) {
  switch (t) {
    case DType::kInt8:
      return 127;
    case DType::kInt16:
      return 32767;
    case DType::kInt32:
      return INT32_MAX;
    case DType::kUInt8:
      return 255;
  }
  return 0;
}

template <class T>
inline int64_t ld(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void st(uint8_t* p, int64_t v) {
  const T x = static_cast<T>(v);
  std::memcpy(p, &x, sizeof x);
}

inline int64_t load_any(const uint8_t* p, DType t) {
  switch (t) {
    case DType::kInt8:
      return static_cast<int8_t>(*p);
    case DType::kUInt8:
      return *p;
    case DType::kInt16:
      return ld<int16_t>(p);
    case DType::kInt32:
      return ld<int32_t>(p);
  }
  return 0;
}

// Byte strides of a view.
struct Strided {
  uint8_t* base;
  int64_t s[isa::kMaxRank];  // bytes
};
Strided strided(const Memory& mem, const isa::TensorRef& t) {
  Strided v;
  v.base = mem.ptr(t);
  const int64_t es = isa::dtype_size(t.dtype);
  for (int k = 0; k < isa::kMaxRank; ++k) v.s[k] = t.strides[k] * es;
  return v;
}

// Calls row(offsets of each view for index (i0..i4, 0), count) over the outer
// five dimensions of dims; the row covers the last dimension. Trailing
// dimensions of size 1 (a rank-4 NHWC view has two) are rotated to the front
// first, in the dims and in every view alike, so that the row is the
// innermost real dimension; every element is still visited once.
template <int NV, class F>
void for_rows(const int32_t* dims_in, const Strided* const (&views_in)[NV], F&& row) {
  int32_t dims[isa::kMaxRank];
  Strided vs[NV];
  const Strided* views[NV];
  int t = 0;
  while (t < isa::kMaxRank - 1 && dims_in[isa::kMaxRank - 1 - t] == 1) ++t;
  for (int k = 0; k < isa::kMaxRank; ++k) {
    const int from = (k - t + isa::kMaxRank) % isa::kMaxRank;
    dims[k] = dims_in[from];
    for (int v = 0; v < NV; ++v) vs[v].s[k] = views_in[v]->s[from];
  }
  for (int v = 0; v < NV; ++v) {
    vs[v].base = views_in[v]->base;
    views[v] = &vs[v];
  }
  // Outer dimensions contiguous with the row in every view join the row.
  for (int j = isa::kMaxRank - 2; j >= 0; --j) {
    if (dims[j] == 1) continue;
    bool joins = true;
    for (int v = 0; v < NV; ++v) joins = joins && vs[v].s[j] == dims[5] * vs[v].s[5];
    if (!joins) break;
    dims[5] *= dims[j];
    dims[j] = 1;
  }
  int64_t off[NV], inner[NV];
  for (int v = 0; v < NV; ++v) inner[v] = vs[v].s[5];
  for (int64_t i0 = 0; i0 < dims[0]; ++i0)
    for (int64_t i1 = 0; i1 < dims[1]; ++i1)
      for (int64_t i2 = 0; i2 < dims[2]; ++i2)
        for (int64_t i3 = 0; i3 < dims[3]; ++i3)
          for (int64_t i4 = 0; i4 < dims[4]; ++i4) {
            for (int v = 0; v < NV; ++v) {
              const int64_t* s = views[v]->s;
              off[v] = i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4];
            }
            row(off, static_cast<int64_t>(dims[5]), inner);
          }
}

// ---------------------------------------------------------------------------
// Move.

// requant(x, M, S) clamped to [lo, hi] for every 8-bit x: a requantizing
// copy of 8-bit data becomes a table lookup (index x + 128, or x for uint8).
struct Table8 {
  int32_t v[256];
};
template <class TI>
void requant_table(int64_t mult, int s, int64_t lo, int64_t hi, Table8* t) {
  for (int i = 0; i < 256; ++i) {
    const int64_t x = static_cast<TI>(-1) < 0 ? i - 128 : i;
    t->v[i] = static_cast<int32_t>(clamp(rshift_round(x * mult, s), lo, hi));
  }
}
template <class TI>
inline int table_index(const uint8_t* p) {
  return static_cast<TI>(-1) < 0 ? static_cast<int>(static_cast<int8_t>(*p)) + 128 : *p;
}

template <class TI, class TO>
void move_rows(const isa::Move& m, const Memory& mem) {
  const Strided in = strided(mem, m.in), out = strided(mem, m.out);
  const Strided* const views[2] = {&in, &out};
  const int s = sane_shift(m.shift);
  const int64_t mult = m.multiplier;
  const int64_t lo = tmin(m.out.dtype), hi = tmax(m.out.dtype);
  if (m.requantize && sizeof(TI) == 1) {
    Table8 tab;
    requant_table<TI>(mult, s, lo, hi, &tab);
    for_rows<2>(m.out.dims, views, [&](const int64_t* off, int64_t n, const int64_t* inner) {
      const int64_t is = inner[0], os = inner[1];
      const uint8_t* ip = in.base + off[0];
      uint8_t* op = out.base + off[1];
      if (sizeof(TO) == 1 && is == 1 && os == 1) {
        for (int64_t i = 0; i < n; ++i)
          op[i] = static_cast<uint8_t>(tab.v[table_index<TI>(ip + i)]);
        return;
      }
      for (int64_t i = 0; i < n; ++i) st<TO>(op + i * os, tab.v[table_index<TI>(ip + i * is)]);
    });
    return;
  }
  const bool same =
      sizeof(TI) == sizeof(TO) && ((static_cast<TI>(-1) < 0) == (static_cast<TO>(-1) < 0));
  for_rows<2>(m.out.dims, views, [&](const int64_t* off, int64_t n, const int64_t* inner) {
    const int64_t is = inner[0], os = inner[1];
    const uint8_t* ip = in.base + off[0];
    uint8_t* op = out.base + off[1];
    if (!m.requantize && same && is == static_cast<int64_t>(sizeof(TI)) && os == is) {
      std::memmove(op, ip, static_cast<size_t>(n) * sizeof(TI));
      return;
    }
    if (!m.requantize) {
      for (int64_t i = 0; i < n; ++i) st<TO>(op + i * os, clamp(ld<TI>(ip + i * is), lo, hi));
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t x = ld<TI>(ip + i * is);  // |x * M| < 2^62
      st<TO>(op + i * os, clamp(rshift_round(x * mult, s), lo, hi));
    }
  });
}

template <class TI>
void move_in(const isa::Move& m, const Memory& mem) {
  switch (m.out.dtype) {
    case DType::kInt8:
      return move_rows<TI, int8_t>(m, mem);
    case DType::kInt16:
      return move_rows<TI, int16_t>(m, mem);
    case DType::kInt32:
      return move_rows<TI, int32_t>(m, mem);
    case DType::kUInt8:
      return ref::move(m, mem);
  }
}

// ---------------------------------------------------------------------------
// Eltwise.

// The zero points of an eltwise's operands and output.
struct EltwiseZeros {
  int64_t a = 0, b = 0, out = 0;
};

// One row of n elements (element strides in bytes), exact int64 formulas.
template <class TA, class TB, class TO>
void eltwise_scalar(isa::EltwiseKind kind, const uint8_t* ap, int64_t as, const uint8_t* bp,
                    int64_t bs, uint8_t* op, int64_t os, int64_t n, int64_t ma, int64_t mb, int s,
                    int64_t lo, int64_t hi, EltwiseZeros z = {}) {
  auto a = [&](int64_t i) { return ld<TA>(ap + i * as) - z.a; };
  auto b = [&](int64_t i) { return ld<TB>(bp + i * bs) - z.b; };
  auto put = [&](int64_t i, int64_t y) { st<TO>(op + i * os, clamp(y + z.out, lo, hi)); };
  switch (kind) {
    case isa::EltwiseKind::kAdd:
      for (int64_t i = 0; i < n; ++i) put(i, rshift_round(a(i) * ma + b(i) * mb, s));
      break;
    case isa::EltwiseKind::kSub:
      for (int64_t i = 0; i < n; ++i) put(i, rshift_round(a(i) * ma - b(i) * mb, s));
      break;
    case isa::EltwiseKind::kMul:
      for (int64_t i = 0; i < n; ++i) put(i, rshift_round(a(i) * b(i) * ma, s));
      break;
    case isa::EltwiseKind::kMax:
    case isa::EltwiseKind::kMin:
      for (int64_t i = 0; i < n; ++i) {
        const int64_t ra = rshift_round(a(i) * ma, s), rb = rshift_round(b(i) * mb, s);
        put(i, kind == isa::EltwiseKind::kMax ? std::max(ra, rb) : std::min(ra, rb));
      }
      break;
  }
}

// An int8 row through the instruction set's row function, the rest scalar.
void eltwise_s8_row(const OpsIsa& ops, EltwiseRowS8 r) {
  const int64_t done = ops.eltwise_s8(r);
  eltwise_scalar<int8_t, int8_t, int8_t>(
      r.kind, reinterpret_cast<const uint8_t*>(r.a + done * r.a_step), r.a_step,
      reinterpret_cast<const uint8_t*>(r.b + done * r.b_step), r.b_step,
      reinterpret_cast<uint8_t*>(r.out + done), 1, r.n - done, r.ma, r.mb, r.shift, r.lo, r.hi,
      EltwiseZeros{r.za, r.zb, r.zo});
}

// True when v is an NHWC feature map (rank 4) contiguous over H, W, C.
bool dense_nhwc(const isa::TensorRef& v) {
  return v.dims[4] == 1 && v.dims[5] == 1 && v.strides[3] == 1 && v.strides[2] == v.dims[3] &&
         v.strides[1] == int64_t{v.dims[2]} * v.dims[3];
}
// True when v holds one value per channel (broadcast over H and W).
bool per_channel(const isa::TensorRef& v) {
  return v.dims[4] == 1 && v.dims[5] == 1 && v.strides[3] == 1 && v.strides[2] == 0 &&
         v.strides[1] == 0;
}

// A dense NHWC output of a dense map and a per-channel operand (either
// side), run in whole periods of the channel values (>= 1024 values).
struct ChannelOperand {
  bool a_per_channel;
  const isa::TensorRef* pv;  // the per-channel operand
  const isa::TensorRef* fv;  // the map
  int64_t C, map, per;       // channels, values per image, period
};
bool channel_operand(const isa::Eltwise& e, ChannelOperand* co) {
  const bool pa = per_channel(e.a) && dense_nhwc(e.b), pb = per_channel(e.b) && dense_nhwc(e.a);
  if ((!pa && !pb) || !dense_nhwc(e.out)) return false;
  const int64_t C = e.out.dims[3];
  *co = {pa, pa ? &e.a : &e.b, pa ? &e.b : &e.a, C, int64_t{e.out.dims[1]} * e.out.dims[2] * C,
         C * ((1024 + C - 1) / C)};
  return true;
}

// int8 eltwise over dense NHWC maps with a per-channel operand and fewer
// than 256 channels (squeeze-excitation scales, per-channel biases): the
// channel rows are too short for the vector rows, so the per-channel values
// are repeated into whole periods of a buffer and the maps run as long rows.
bool eltwise_periodic(const isa::Eltwise& e, const Memory& mem, const OpsIsa& ops,
                      EltwiseRowS8 base) {
  ChannelOperand co;
  if (!channel_operand(e, &co) || co.C >= 256) return false;
  thread_local std::vector<int8_t> rep;
  if (rep.size() < static_cast<size_t>(co.per)) rep.resize(static_cast<size_t>(co.per));
  for (int64_t n = 0; n < e.out.dims[0]; ++n) {
    const int8_t* pc = reinterpret_cast<const int8_t*>(mem.ptr(*co.pv)) + n * co.pv->strides[0];
    for (int64_t i = 0; i < co.per; i += co.C)  // (per is a multiple of C)
      std::memcpy(rep.data() + i, pc, static_cast<size_t>(co.C));
    const int8_t* full = reinterpret_cast<const int8_t*>(mem.ptr(*co.fv)) + n * co.fv->strides[0];
    int8_t* out = reinterpret_cast<int8_t*>(mem.ptr(e.out)) + n * e.out.strides[0];
    for (int64_t off = 0; off < co.map; off += co.per) {
      EltwiseRowS8 r = base;
      r.a = co.a_per_channel ? rep.data() : full + off;
      r.b = co.a_per_channel ? full + off : rep.data();
      r.out = out + off;
      r.n = std::min(co.per, co.map - off);
      r.a_step = r.b_step = 1;
      eltwise_s8_row(ops, r);
    }
  }
  return true;
}

// int8 Mul of a dense NHWC map by a per-channel operand with zero points
// (asymmetric squeeze-excitation scales) on tables without eltwise rows
// (NEON, portable): (x - zx) * ((c - zc) * ma) with the per-channel factor
// formed once per image, the same integers as eltwise_scalar (|product| <
// 2^48).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))  // 64-bit lanes without AVX-512 are slower than scalar
#endif
bool eltwise_channel_mul_zp(const isa::Eltwise& e, const Memory& mem, int s, int64_t lo, int64_t hi) {
  ChannelOperand co;
  if (e.kind != isa::EltwiseKind::kMul || !channel_operand(e, &co) || e.a.dtype != DType::kInt8 ||
      e.b.dtype != DType::kInt8 || e.out.dtype != DType::kInt8)
    return false;
  const int64_t zp = co.a_per_channel ? e.zero_a : e.zero_b, zf = co.a_per_channel ? e.zero_b : e.zero_a;
  const int64_t zo = e.zero_out;
  thread_local std::vector<int64_t> rep;
  if (rep.size() < static_cast<size_t>(co.per)) rep.resize(static_cast<size_t>(co.per));
  int64_t* k = rep.data();
  const int64_t half = s > 0 ? int64_t{1} << (s - 1) : 0;
  for (int64_t n = 0; n < e.out.dims[0]; ++n) {
    const int8_t* pc = reinterpret_cast<const int8_t*>(mem.ptr(*co.pv)) + n * co.pv->strides[0];
    for (int64_t c = 0; c < co.C; ++c) k[c] = (pc[c] - zp) * int64_t{e.multiplier_a};
    for (int64_t i = co.C; i < co.per; ++i) k[i] = k[i - co.C];
    const int8_t* x = reinterpret_cast<const int8_t*>(mem.ptr(*co.fv)) + n * co.fv->strides[0];
    int8_t* y = reinterpret_cast<int8_t*>(mem.ptr(e.out)) + n * e.out.strides[0];
    for (int64_t off = 0; off < co.map; off += co.per) {
      const int64_t m = std::min(co.per, co.map - off);
      for (int64_t i = 0; i < m; ++i) {  // rshift_round as one add and shift (|v| < 2^48)
        const int64_t v = (((x[off + i] - zf) * k[i] + half) >> s) + zo;
        y[off + i] = static_cast<int8_t>(v < lo ? lo : (v > hi ? hi : v));
      }
    }
  }
  return true;
}

template <class TA, class TB, class TO>
void eltwise_rows(const isa::Eltwise& e, const Memory& mem, const OpsIsa* ops) {
  const Strided a = strided(mem, e.a), b = strided(mem, e.b), out = strided(mem, e.out);
  const Strided* const views[3] = {&a, &b, &out};
  const int s = sane_shift(e.shift);
  const int64_t ma = e.multiplier_a, mb = e.multiplier_b;
  const int64_t lo = std::max<int64_t>(e.act_min, tmin(e.out.dtype));
  int64_t hi = std::min<int64_t>(e.act_max, tmax(e.out.dtype));
  const int64_t lo2 = lo > hi ? hi : lo;
  const isa::EltwiseKind kind = e.kind;
  // The instruction set's rows for int8 operands and output when every
  // result fits int32 (|v| < 2^(30 + S)).
  const EltwiseZeros z{e.zero_a, e.zero_b, e.zero_out};
  const int64_t am = 128 + std::abs(z.a), bm = 128 + std::abs(z.b);  // |a - za|, |b - zb| bounds
  const int128 vmax = kind == isa::EltwiseKind::kMul ? int128{am * bm} * std::abs(ma)
                                                     : int128{am} * std::abs(ma) + int128{bm} * std::abs(mb);
  const bool fast = ops != nullptr && ops->eltwise_s8 != nullptr && sizeof(TA) == 1 &&
                    sizeof(TB) == 1 && sizeof(TO) == 1 && vmax < (int128{1} << (30 + s));
  EltwiseRowS8 base{nullptr, nullptr, nullptr, 0, 1, 1, kind, static_cast<int32_t>(ma),
                    static_cast<int32_t>(mb), s, static_cast<int32_t>(lo2), static_cast<int32_t>(hi),
                    static_cast<int32_t>(z.a), static_cast<int32_t>(z.b), static_cast<int32_t>(z.out)};
  FloatRequant f;
  if (kind == isa::EltwiseKind::kMul && float_requant_channel(am * bm, static_cast<int32_t>(ma), s, &f))
    base.float_mul = true, base.fhi = f.hi, base.flo = f.lo;
  if (fast && eltwise_periodic(e, mem, *ops, base)) return;
  if (!fast && eltwise_channel_mul_zp(e, mem, s, lo2, hi)) return;
  for_rows<3>(e.out.dims, views, [&](const int64_t* off, int64_t n, const int64_t* inner) {
    const int64_t as = inner[0], bs = inner[1], os = inner[2];
    const uint8_t* ap = a.base + off[0];
    const uint8_t* bp = b.base + off[1];
    uint8_t* op = out.base + off[2];
    if (fast && os == 1 && (as == 0 || as == 1) && (bs == 0 || bs == 1)) {
      EltwiseRowS8 r = base;
      r.a = reinterpret_cast<const int8_t*>(ap);
      r.b = reinterpret_cast<const int8_t*>(bp);
      r.out = reinterpret_cast<int8_t*>(op);
      r.n = n, r.a_step = as, r.b_step = bs;
      eltwise_s8_row(*ops, r);
      return;
    }
    eltwise_scalar<TA, TB, TO>(kind, ap, as, bp, bs, op, os, n, ma, mb, s, lo2, hi, z);
  });
}

template <class TA, class TB>
void eltwise_out(const isa::Eltwise& e, const Memory& mem, const OpsIsa* ops) {
  if (e.out.dtype == DType::kInt8) return eltwise_rows<TA, TB, int8_t>(e, mem, ops);
  if (e.out.dtype == DType::kInt16) return eltwise_rows<TA, TB, int16_t>(e, mem, ops);
  ref::eltwise(e, mem);
}
template <class TA>
void eltwise_b(const isa::Eltwise& e, const Memory& mem, const OpsIsa* ops) {
  if (e.b.dtype == DType::kInt8) return eltwise_out<TA, int8_t>(e, mem, ops);
  if (e.b.dtype == DType::kInt16) return eltwise_out<TA, int16_t>(e, mem, ops);
  ref::eltwise(e, mem);
}

// ---------------------------------------------------------------------------
// Lut.

template <class TI, class TO>
void lut_rows(const isa::Lut& l, const Memory& mem, const OpsIsa* ops) {
  const Strided in = strided(mem, l.in), out = strided(mem, l.out);
  const Strided* const views[2] = {&in, &out};
  const uint8_t* table = mem.ptr(l.table);
  TO tab[513];
  const int entries = sizeof(TI) == 1 ? 256 : 513;
  for (int i = 0; i < entries; ++i) std::memcpy(&tab[i], table + i * sizeof(TO), sizeof(TO));
  const bool fast = ops != nullptr && ops->lut_s8 != nullptr && sizeof(TI) == 1 && sizeof(TO) == 1;
  for_rows<2>(l.out.dims, views, [&](const int64_t* off, int64_t n, const int64_t* inner) {
    const int64_t is = inner[0], os = inner[1];
    const uint8_t* ip = in.base + off[0];
    uint8_t* op = out.base + off[1];
    if (sizeof(TI) == 1 && sizeof(TO) == 1 && is == 1 && os == 1) {
      int64_t i = 0;
      if (fast)
        i = ops->lut_s8(reinterpret_cast<const int8_t*>(ip), reinterpret_cast<int8_t*>(op), n,
                        reinterpret_cast<const int8_t*>(tab));
      for (; i < n; ++i) op[i] = static_cast<uint8_t>(tab[static_cast<int8_t>(ip[i]) + 128]);
    } else if (sizeof(TI) == 1) {
      for (int64_t i = 0; i < n; ++i) st<TO>(op + i * os, tab[ld<TI>(ip + i * is) + 128]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t u = ld<TI>(ip + i * is) + 32768;
        const int64_t k = u >> 7, f = u & 127;
        const int64_t t0 = tab[k], t1 = tab[k + 1];
        st<TO>(op + i * os, t0 + (((t1 - t0) * f + 64) >> 7));
      }
    }
  });
}

// ---------------------------------------------------------------------------
// Pool (NHWC, vectors over channels).

// Calls f(first channel of the tap) for every tap of output pixel
// (n, oh, ow) inside the image, in kernel order; returns how many.
template <class F>
int64_t for_taps(const isa::Pool& p, const Strided& in, int64_t n, int64_t oh, int64_t ow,
                 F&& f) {
  int64_t taps = 0;
  for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
    const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
    if (ih < 0 || ih >= p.in.dims[1]) continue;
    for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
      const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
      if (iw < 0 || iw >= p.in.dims[2]) continue;
      f(in.base + n * in.s[0] + ih * in.s[1] + iw * in.s[2], taps++);
    }
  }
  return taps;
}

// The output columns [a, b) whose kernel_w taps all lie inside the image
// (a contiguous range: both bounds are linear in ow).
std::pair<int64_t, int64_t> interior_cols(const isa::Pool& p) {
  auto inside = [&](int64_t ow) {
    const int64_t iw = ow * p.stride_w - p.pad_left;
    return iw >= 0 && iw + (p.kernel_w - 1) * p.dilation_w < p.in.dims[2];
  };
  int64_t a = 0, b = p.out.dims[2];
  while (a < b && !inside(a)) ++a;
  while (b > a && !inside(b - 1)) --b;
  return {a, b};
}

// Max pooling of the npix output pixels from (n, oh, ow), whose taps are
// those of pixel ow shifted by stride_w columns each (npix == 1, or all
// inside the image horizontally): the ISA's rows, the scalar loop for the
// channels they leave.
struct MaxRun {
  const isa::Pool& p;
  Strided in, out;
  const OpsIsa& ops;
  int64_t lo, hi, empty;  // empty: the value of a window without taps in the image
  void operator()(int64_t n, int64_t oh, int64_t ow, int64_t npix) const {
    constexpr int64_t kMaxTaps = 64;
    const int8_t* rows[kMaxTaps];
    auto keep = [&](const uint8_t* px, int64_t t) { rows[t] = reinterpret_cast<const int8_t*>(px); };
    const int taps = static_cast<int>(for_taps(p, in, n, oh, ow, keep));
    int8_t* op =
        reinterpret_cast<int8_t*>(out.base + n * out.s[0] + oh * out.s[1] + ow * out.s[2]);
    const int64_t C = p.out.dims[3], in_step = p.stride_w * in.s[2];
    const int64_t done =
        taps == 0 ? 0 : ops.max_s8(rows, taps, C, lo, hi, op, npix, in_step, out.s[2]);
    for (int64_t q = 0; q < npix && done < C; ++q) {
      for (int64_t c = done; c < C; ++c) {
        int64_t v = empty;  // no tap inside the image: the zero point, as the reference
        for (int t = 0; t < taps; ++t) {
          const int8_t x = rows[t][q * in_step + c];
          v = t == 0 || x > v ? x : v;
        }
        op[q * out.s[2] + c] = static_cast<int8_t>(v < lo ? lo : (v > hi ? hi : v));
      }
    }
  }
};

// int8 -> int8 max pooling with M = 2^S (the identity) into channels of
// stride 1: per output row, the pixels whose taps all lie inside the image
// horizontally as one run of the ISA's row (no per-pixel tap setup), the
// border pixels one at a time. Returns false (nothing written) where it
// does not apply.
bool max_pool_rows_s8(const isa::Pool& p, const Memory& mem, int64_t lo, int64_t hi,
                      const OpsIsa* ops) {
  const Strided in = strided(mem, p.in), out = strided(mem, p.out);
  if (ops == nullptr || ops->max_s8 == nullptr || in.s[3] != 1 || out.s[3] != 1 ||
      int64_t{p.kernel_h} * p.kernel_w > 64)
    return false;
  const MaxRun run{p, in, out, *ops, lo, hi, p.zero_out};
  const auto [a, b] = interior_cols(p);
  for (int64_t n = 0; n < p.out.dims[0]; ++n) {
    for (int64_t oh = 0; oh < p.out.dims[1]; ++oh) {
      for (int64_t ow = 0; ow < a; ++ow) run(n, oh, ow, 1);
      if (a < b) run(n, oh, a, b - a);
      for (int64_t ow = b; ow < p.out.dims[2]; ++ow) run(n, oh, ow, 1);
    }
  }
  return true;
}

// Sums over the in-image taps of output pixel (n, oh, ow) of int8 channels
// of stride 1 into acc32[0, C) (the ISA's row per kernel row of taps, the
// channels it leaves by the scalar loop); returns the number of taps.
int64_t sum_taps_s8(const isa::Pool& p, const Strided& in, int64_t n, int64_t oh, int64_t ow,
                    int64_t C, const OpsIsa& ops, int32_t* acc32,
                    std::vector<const int8_t*>& rows) {
  int64_t kw0 = -1, kw1 = 0;  // the taps inside the image: kw in [kw0, kw1)
  for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
    const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
    if (iw < 0 || iw >= p.in.dims[2]) continue;
    if (kw0 < 0) kw0 = kw;
    kw1 = kw + 1;
  }
  rows.clear();
  for (int64_t kh = 0; kh < p.kernel_h && kw0 >= 0; ++kh) {
    const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
    if (ih < 0 || ih >= p.in.dims[1]) continue;
    const int64_t iw0 = ow * p.stride_w - p.pad_left + kw0 * p.dilation_w;
    rows.push_back(reinterpret_cast<const int8_t*>(in.base + n * in.s[0] + ih * in.s[1] +
                                                   iw0 * in.s[2]));
  }
  const int64_t nt = kw1 - kw0, step = p.dilation_w * in.s[2];
  if (rows.empty()) return 0;
  const int64_t done = ops.sum_s8(rows.data(), static_cast<int>(rows.size()), nt, step, C, acc32);
  for (int64_t c = done; c < C; ++c) {
    int32_t v = 0;
    for (const int8_t* r : rows)
      for (int64_t t = 0; t < nt; ++t) v += r[t * step + c];
    acc32[c] = v;
  }
  return static_cast<int64_t>(rows.size()) * nt;
}

template <class TI, class TO>
void pool_typed(const isa::Pool& p, const Memory& mem, const OpsIsa* ops) {
  const Strided in = strided(mem, p.in), out = strided(mem, p.out);
  const int64_t ih_n = p.in.dims[1], iw_n = p.in.dims[2], C = p.out.dims[3];
  const int s = sane_shift(p.shift);
  const int64_t lo0 = std::max<int64_t>(p.act_min, tmin(p.out.dtype));
  const int64_t hi = std::min<int64_t>(p.act_max, tmax(p.out.dtype));
  const int64_t lo = lo0 > hi ? hi : lo0;
  const bool is_max = p.kind == isa::PoolKind::kMax;
  const int64_t mult = p.multiplier;
  thread_local std::vector<int64_t> accv;
  if (accv.size() < static_cast<size_t>(C)) accv.resize(static_cast<size_t>(C));
  int64_t* acc = accv.data();
  const int64_t cs = in.s[3];
  // Max pooling over contiguous channels: the maximum in the input type
  // (vectorized), then the requantization; M = 2^S with equal zero points in
  // and out is the identity. (other zero points: the general loop below)
  const int64_t zi = p.zero_in, zo = p.zero_out;
  const bool zp = zi != 0 || zo != 0;
  const bool identity = is_max && s <= 30 && mult == (int64_t{1} << s) && zi == zo;
  if (identity && sizeof(TI) == 1 && sizeof(TO) == 1 && max_pool_rows_s8(p, mem, lo, hi, ops))
    return;
  if (is_max && cs == static_cast<int64_t>(sizeof(TI)) && (!zp || identity)) {
    thread_local std::vector<TI> mv;
    if (mv.size() < static_cast<size_t>(C)) mv.resize(static_cast<size_t>(C));
    TI* mx = mv.data();
    for (int64_t n = 0; n < p.out.dims[0]; ++n) {
      for (int64_t oh = 0; oh < p.out.dims[1]; ++oh) {
        for (int64_t ow = 0; ow < p.out.dims[2]; ++ow) {
          const int64_t taps = for_taps(p, in, n, oh, ow, [&](const uint8_t* px, int64_t t) {
            if (t == 0) {
              std::memcpy(mx, px, static_cast<size_t>(C) * sizeof(TI));
            } else {
              for (int64_t c = 0; c < C; ++c) {
                TI v;
                std::memcpy(&v, px + c * sizeof(TI), sizeof(TI));
                mx[c] = v > mx[c] ? v : mx[c];
              }
            }
          });
          uint8_t* op = out.base + n * out.s[0] + oh * out.s[1] + ow * out.s[2];
          const int64_t ocs = out.s[3];
          if (taps == 0) {
            for (int64_t c = 0; c < C; ++c) st<TO>(op + c * ocs, clamp(zo, lo, hi));
          } else if (identity && ocs == static_cast<int64_t>(sizeof(TO))) {
            for (int64_t c = 0; c < C; ++c) {
              const int64_t v = mx[c];
              st<TO>(op + c * sizeof(TO), v < lo ? lo : (v > hi ? hi : v));
            }
          } else {
            for (int64_t c = 0; c < C; ++c)
              st<TO>(op + c * ocs,
                     clamp(rshift_round(static_cast<int64_t>(mx[c]) * mult, s), lo, hi));
          }
        }
      }
    }
    return;
  }
  // Sums of int8 channels with stride 1 in int32 (|sum| <= 128 * taps < 2^31;
  // the compiler vectorizes the loops), then widened.
  const bool sum32 = !is_max && sizeof(TI) == 1 && cs == 1 &&
                     int64_t{p.kernel_h} * p.kernel_w < (int64_t{1} << 23);
  thread_local std::vector<int32_t> acc32v;
  if (sum32 && acc32v.size() < static_cast<size_t>(C)) acc32v.resize(static_cast<size_t>(C));
  int32_t* acc32 = acc32v.data();
  const bool row_sums = sum32 && ops != nullptr && ops->sum_s8 != nullptr;
  thread_local std::vector<const int8_t*> sum_rows;
  for (int64_t n = 0; n < p.out.dims[0]; ++n) {
    for (int64_t oh = 0; oh < p.out.dims[1]; ++oh) {
      for (int64_t ow = 0; ow < p.out.dims[2]; ++ow) {
        int64_t taps =
            row_sums ? sum_taps_s8(p, in, n, oh, ow, C, *ops, acc32, sum_rows) : 0;
        for (int64_t kh = 0; kh < p.kernel_h && !row_sums; ++kh) {
          const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
          if (ih < 0 || ih >= ih_n) continue;
          for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
            const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
            if (iw < 0 || iw >= iw_n) continue;
            const uint8_t* px = in.base + n * in.s[0] + ih * in.s[1] + iw * in.s[2];
            if (sum32) {
              const int8_t* x = reinterpret_cast<const int8_t*>(px);
              if (taps == 0) {
                for (int64_t c = 0; c < C; ++c) acc32[c] = x[c];
              } else {
                for (int64_t c = 0; c < C; ++c) acc32[c] += x[c];
              }
            } else if (taps == 0) {
              for (int64_t c = 0; c < C; ++c) acc[c] = ld<TI>(px + c * cs);
            } else if (is_max) {
              for (int64_t c = 0; c < C; ++c) acc[c] = std::max(acc[c], ld<TI>(px + c * cs));
            } else {
              for (int64_t c = 0; c < C; ++c) acc[c] += ld<TI>(px + c * cs);
            }
            ++taps;
          }
        }
        if (sum32 && taps > 0)
          for (int64_t c = 0; c < C; ++c) acc[c] = acc32[c];
        const int64_t zsum = is_max ? zi : taps * zi;  // the taps' zero points
        if (zsum != 0)
          for (int64_t c = 0; c < C; ++c) acc[c] -= zsum;
        uint8_t* op = out.base + n * out.s[0] + oh * out.s[1] + ow * out.s[2];
        if (taps == 0) {
          for (int64_t c = 0; c < C; ++c) st<TO>(op + c * out.s[3], clamp(zo, lo, hi));
          continue;
        }
        if (is_max) {
          for (int64_t c = 0; c < C; ++c)
            st<TO>(op + c * out.s[3], clamp(rshift_round(acc[c] * mult, s) + zo, lo, hi));
          continue;
        }
        const int64_t cnt =
            p.count_include_pad ? static_cast<int64_t>(p.kernel_h) * p.kernel_w : taps;
        const int128 den = static_cast<int128>(cnt) << s;
        // |sum| <= 2^20 * 2^15, |sum * M| < 2^66: int64 when both fit.
        const bool fast = den < (static_cast<int128>(1) << 62) && taps <= (int64_t{1} << 15);
        if (fast) {
          const int64_t d = static_cast<int64_t>(den), half = d / 2;
          for (int64_t c = 0; c < C; ++c) {
            const int64_t num = acc[c] * mult + half;
            int64_t q = num / d;
            if (num % d != 0 && num < 0) --q;
            st<TO>(op + c * out.s[3], clamp(q + zo, lo, hi));
          }
        } else {
          for (int64_t c = 0; c < C; ++c) {
            const int128 num = static_cast<int128>(acc[c]) * mult + den / 2;
            int128 q = num / den - ((num % den != 0 && num < 0) ? 1 : 0) + zo;
            q = q < lo ? lo : (q > hi ? hi : q);
            st<TO>(op + c * out.s[3], static_cast<int64_t>(q));
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Resize.

template <class TI, class TO>
void resize_typed(const isa::Resize& r, const Memory& mem) {
  const Strided in = strided(mem, r.in), out = strided(mem, r.out);
  const int64_t ih_n = r.in.dims[1], iw_n = r.in.dims[2], C = r.out.dims[3];
  const int64_t oh_n = r.out.dims[1], ow_n = r.out.dims[2];
  const int s = sane_shift(r.shift);
  const int64_t mult = r.multiplier;
  const int64_t lo = tmin(r.out.dtype), hi = tmax(r.out.dtype);
  const bool nearest = r.mode == isa::ResizeMode::kNearest;
  // Per output column: source columns and weights (int128 coordinates).
  thread_local std::vector<int64_t> xs;
  if (xs.size() < static_cast<size_t>(4 * ow_n)) xs.resize(static_cast<size_t>(4 * ow_n));
  auto taps = [&](int128 sc, int64_t count, int64_t* t) {
    if (nearest) {
      int128 i = (sc + r.round_bias) >> 16;
      i = i < 0 ? 0 : (i > count - 1 ? count - 1 : i);
      t[0] = static_cast<int64_t>(i);
      return;
    }
    const int128 hi_c = static_cast<int128>(count - 1) << 16;
    const int64_t cc = static_cast<int64_t>(sc < 0 ? 0 : (sc > hi_c ? hi_c : sc));
    t[0] = cc >> 16;
    t[1] = t[0] + 1 < count ? t[0] + 1 : count - 1;
    t[3] = (cc & 0xffff) >> 5;
    t[2] = 2048 - t[3];
  };
  for (int64_t ox = 0; ox < ow_n; ++ox)
    taps(static_cast<int128>(r.x_start) + static_cast<int128>(ox) * r.x_step, iw_n, &xs[4 * ox]);
  const int64_t cs = in.s[3], ocs = out.s[3];
  Table8 tab;
  if (nearest && sizeof(TI) == 1) requant_table<TI>(mult, s, lo, hi, &tab);
  for (int64_t n = 0; n < r.out.dims[0]; ++n) {
    for (int64_t oy = 0; oy < oh_n; ++oy) {
      int64_t ty[4] = {0, 0, 0, 0};
      taps(static_cast<int128>(r.y_start) + static_cast<int128>(oy) * r.y_step, ih_n, ty);
      for (int64_t ox = 0; ox < ow_n; ++ox) {
        const int64_t* tx = &xs[4 * ox];
        uint8_t* op = out.base + n * out.s[0] + oy * out.s[1] + ox * out.s[2];
        if (nearest) {
          const uint8_t* ip = in.base + n * in.s[0] + ty[0] * in.s[1] + tx[0] * in.s[2];
          if (sizeof(TI) == 1) {
            for (int64_t c = 0; c < C; ++c)
              st<TO>(op + c * ocs, tab.v[table_index<TI>(ip + c * cs)]);
          } else {
            for (int64_t c = 0; c < C; ++c)
              st<TO>(op + c * ocs, clamp(rshift_round(ld<TI>(ip + c * cs) * mult, s), lo, hi));
          }
          continue;
        }
        const uint8_t* p00 = in.base + n * in.s[0] + ty[0] * in.s[1] + tx[0] * in.s[2];
        const uint8_t* p01 = in.base + n * in.s[0] + ty[0] * in.s[1] + tx[1] * in.s[2];
        const uint8_t* p10 = in.base + n * in.s[0] + ty[1] * in.s[1] + tx[0] * in.s[2];
        const uint8_t* p11 = in.base + n * in.s[0] + ty[1] * in.s[1] + tx[1] * in.s[2];
        const int64_t w00 = ty[2] * tx[2], w01 = ty[2] * tx[3], w10 = ty[3] * tx[2],
                      w11 = ty[3] * tx[3];
        for (int64_t c = 0; c < C; ++c) {
          const int64_t v = ld<TI>(p00 + c * cs) * w00 + ld<TI>(p01 + c * cs) * w01 +
                            ld<TI>(p10 + c * cs) * w10 + ld<TI>(p11 + c * cs) * w11;
          const int64_t t = (v + (1 << 13)) >> 14;
          st<TO>(op + c * ocs, clamp(rshift_round(t * mult, s + 8), lo, hi));
        }
      }
    }
  }
}

template <class TI>
void resize_in(const isa::Resize& r, const Memory& mem) {
  if (r.out.dtype == DType::kInt8) return resize_typed<TI, int8_t>(r, mem);
  if (r.out.dtype == DType::kInt16) return resize_typed<TI, int16_t>(r, mem);
  ref::resize(r, mem);
}

// One batch of kMatMul: a packed row-major [M][K], b packed transposed [N][K],
// so every output is one contiguous dot product. int8 operands pack to int16
// and sum in int32 (|acc| <= 2^14 * kMaxMatMulDepth = 2^30), int16 ones pack
// to int32 and sum in int64.
template <class P, class Acc>
void matmul_batch(const isa::MatMul& m, const int32_t* mults, const uint8_t* a, const int64_t* as, const uint8_t* b, const int64_t* bs,
                  uint8_t* out, const int64_t* os, std::vector<P>* pa, std::vector<P>* pb) {
  const int64_t rows = m.a.dims[2], depth = m.a.dims[3], cols = m.b.dims[3];
  pa->resize(static_cast<size_t>(rows * depth));
  pb->resize(static_cast<size_t>(cols * depth));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < depth; ++k) (*pa)[r * depth + k] = static_cast<P>(load_any(a + r * as[2] + k * as[3], m.a.dtype));
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t k = 0; k < depth; ++k) (*pb)[c * depth + k] = static_cast<P>(load_any(b + k * bs[2] + c * bs[3], m.b.dtype));
  const int sh = sane_shift(m.shift);
  const int64_t lo = std::max<int64_t>(m.act_min, tmin(m.out.dtype)), hi = std::min<int64_t>(m.act_max, tmax(m.out.dtype));
  for (int64_t r = 0; r < rows; ++r) {
    const P* ar = pa->data() + r * depth;
    for (int64_t c = 0; c < cols; ++c) {
      const P* bc = pb->data() + c * depth;
      Acc acc = 0;
      for (int64_t k = 0; k < depth; ++k) acc += static_cast<Acc>(ar[k]) * bc[k];
      const int128 p = static_cast<int128>(acc) * (mults != nullptr ? mults[c] : m.multiplier);
      const int128 y = sh == 0 ? p : (((p >> (sh - 1)) + 1) >> 1);
      const int64_t v = static_cast<int64_t>(y < lo ? lo : (y > hi ? hi : y));
      uint8_t* dst = out + r * os[2] + c * os[3];
      if (m.out.dtype == DType::kInt8) st<int8_t>(dst, v);
      else st<int16_t>(dst, v);
    }
  }
}

}  // namespace

void move(const isa::Move& m, const Memory& mem) {
  switch (m.in.dtype) {
    case DType::kInt8:
      return move_in<int8_t>(m, mem);
    case DType::kUInt8:
      return move_in<uint8_t>(m, mem);
    case DType::kInt16:
      return move_in<int16_t>(m, mem);
    case DType::kInt32:
      return move_in<int32_t>(m, mem);
  }
}

void fill(const isa::Fill& f, const Memory& mem) {
  const Strided out = strided(mem, f.out);
  const Strided* const views[1] = {&out};
  const DType t = f.out.dtype;
  const int64_t v = clamp(f.value, tmin(t), tmax(t));
  const int es = isa::dtype_size(t);
  uint8_t pattern[4];
  if (es == 1) pattern[0] = static_cast<uint8_t>(v);
  if (es == 2) st<int16_t>(pattern, v);
  if (es == 4) st<int32_t>(pattern, v);
  for_rows<1>(f.out.dims, views, [&](const int64_t* off, int64_t n, const int64_t* inner) {
    const int64_t os = inner[0];
    uint8_t* op = out.base + off[0];
    if (es == 1 && os == 1) {
      std::memset(op, pattern[0], static_cast<size_t>(n));
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(op + i * os, pattern, static_cast<size_t>(es));
  });
}

void eltwise(const isa::Eltwise& e, const Memory& mem, const OpsIsa* ops) {
  if (e.a.dtype == DType::kInt8) return eltwise_b<int8_t>(e, mem, ops);
  if (e.a.dtype == DType::kInt16) return eltwise_b<int16_t>(e, mem, ops);
  ref::eltwise(e, mem);
}

void lut(const isa::Lut& l, const Memory& mem, const OpsIsa* ops) {
  if (l.in.dtype == DType::kInt8 && l.out.dtype == DType::kInt8)
    return lut_rows<int8_t, int8_t>(l, mem, ops);
  if (l.in.dtype == DType::kInt8 && l.out.dtype == DType::kInt16)
    return lut_rows<int8_t, int16_t>(l, mem, ops);
  if (l.in.dtype == DType::kInt16 && l.out.dtype == DType::kInt8)
    return lut_rows<int16_t, int8_t>(l, mem, ops);
  if (l.in.dtype == DType::kInt16 && l.out.dtype == DType::kInt16)
    return lut_rows<int16_t, int16_t>(l, mem, ops);
  ref::lut(l, mem);
}

void pool(const isa::Pool& p, const Memory& mem, const OpsIsa* ops) {
  if (p.kernel_h < 1 || p.kernel_w < 1 || p.stride_h < 1 || p.stride_w < 1 || p.dilation_h < 1 ||
      p.dilation_w < 1)
    return;
  const DType i = p.in.dtype, o = p.out.dtype;
  if (i == DType::kInt8 && o == DType::kInt8) return pool_typed<int8_t, int8_t>(p, mem, ops);
  if (i == DType::kInt8 && o == DType::kInt16) return pool_typed<int8_t, int16_t>(p, mem, ops);
  if (i == DType::kInt16 && o == DType::kInt8) return pool_typed<int16_t, int8_t>(p, mem, ops);
  if (i == DType::kInt16 && o == DType::kInt16) return pool_typed<int16_t, int16_t>(p, mem, ops);
  ref::pool(p, mem);
}

void resize(const isa::Resize& r, const Memory& mem) {
  if (r.in.dims[1] < 1 || r.in.dims[2] < 1) return;
  if (r.shift < 0 || r.shift > 55) {  // rejected by the validator for bilinear
    ref::resize(r, mem);
    return;
  }
  if (r.in.dtype == DType::kInt8) return resize_in<int8_t>(r, mem);
  if (r.in.dtype == DType::kInt16) return resize_in<int16_t>(r, mem);
  ref::resize(r, mem);
}

void argmax(const isa::ArgMax& a, const Memory& mem) {
  const Strided in = strided(mem, a.in), out = strided(mem, a.out);
  const DType t = a.in.dtype;
  const int64_t cs = in.s[3];
  for (int64_t n = 0; n < a.in.dims[0]; ++n)
    for (int64_t h = 0; h < a.in.dims[1]; ++h)
      for (int64_t w = 0; w < a.in.dims[2]; ++w) {
        const uint8_t* px = in.base + n * in.s[0] + h * in.s[1] + w * in.s[2];
        int64_t best = 0, best_v = 0;
        for (int64_t c = 0; c < a.in.dims[3]; ++c) {
          const int64_t x = load_any(px + c * cs, t);
          if (c == 0 || x > best_v) best = c, best_v = x;
        }
        st<int32_t>(out.base + n * out.s[0] + h * out.s[1] + w * out.s[2], best);
      }
}

// NV12 -> RGB/BGR (the models' image input) runs as a row loop; every other
// conversion uses the reference kernel (a one-off per inference). The range
// and channel order are template parameters, and the two pixels that share
// a U/V pair share its products.
// The Q14 terms of the reference's conversion: a U, V pair's chroma parts
// (the rounding term 8192 rides on them), a luma, and a channel's int8.
struct Chroma {
  int32_t rv, gu, bu;
};
template <bool kVideo>
inline Chroma chroma(int32_t u, int32_t v) {  // u, v already minus 128
  return {(kVideo ? 26149 * v : 22970 * v) + 8192,
          (kVideo ? -6419 * u - 13320 * v : -5638 * u - 11700 * v) + 8192,
          (kVideo ? 33050 * u : 29032 * u) + 8192};
}
template <bool kVideo>
inline int32_t luma(int32_t yy) {
  return kVideo ? 19077 * (yy - 16) : yy * 16384;
}
inline uint8_t channel_s8(int32_t q14) { return static_cast<uint8_t>(std::clamp(q14 >> 14, 0, 255) - 128); }

template <bool kVideo, bool kBgr>
void nv12_row(const uint8_t* yrow, int64_t ys, const uint8_t* uvrow, uint8_t* orow, int64_t ops,
              int64_t ocs, int64_t w) {
  for (int64_t x = 0; x < w; x += 2) {
    const Chroma ch = chroma<kVideo>(uvrow[x] - 128, uvrow[x + 1] - 128);  // x even: the pair's U, V
    for (int64_t k = x; k < x + 2 && k < w; ++k) {
      const int32_t yv = luma<kVideo>(yrow[k * ys]);
      uint8_t* op = orow + k * ops;
      op[0] = channel_s8(yv + (kBgr ? ch.bu : ch.rv));
      op[ocs] = channel_s8(yv + ch.gu);
      op[2 * ocs] = channel_s8(yv + (kBgr ? ch.rv : ch.bu));
    }
  }
}

// The same for a dense row (Y bytes contiguous, the 3 output channels of a
// pixel adjacent, pixels ops bytes apart, w even): the pixel arithmetic over
// blocks in local arrays the compiler vectorizes, then the interleave.
template <bool kVideo, bool kBgr>
void nv12_row_dense(const uint8_t* yrow, const uint8_t* uvrow, uint8_t* orow, int64_t ops, int64_t w) {
  constexpr int kB = 64;
  for (int64_t x0 = 0; x0 < w; x0 += kB) {
    const int n = static_cast<int>(std::min<int64_t>(kB, w - x0));
    uint8_t c[3][kB];
    for (int j = 0; 2 * j < n; ++j) {  // a pair of pixels shares its U, V
      const Chroma ch = chroma<kVideo>(uvrow[x0 + 2 * j] - 128, uvrow[x0 + 2 * j + 1] - 128);
      for (int h = 0; h < 2; ++h) {
        const int32_t yv = luma<kVideo>(yrow[x0 + 2 * j + h]);
        c[0][2 * j + h] = channel_s8(yv + (kBgr ? ch.bu : ch.rv));
        c[1][2 * j + h] = channel_s8(yv + ch.gu);
        c[2][2 * j + h] = channel_s8(yv + (kBgr ? ch.rv : ch.bu));
      }
    }
    uint8_t* op = orow + ops * x0;
    for (int i = 0; i < n; ++i) op[ops * i] = c[0][i], op[ops * i + 1] = c[1][i], op[ops * i + 2] = c[2][i];
  }
}

void preprocess(const isa::Preprocess& p, const Memory& mem) {
  using F = isa::ImageFormat;
  const bool rgb_dst = p.dst_format == F::kRGB || p.dst_format == F::kBGR;
  if (p.src_format != F::kNV12 || !rgb_dst || p.out.dims[3] != 3) {
    ref::preprocess(p, mem);
    return;
  }
  const uint8_t* base = mem.ptr(p.in);
  const Strided out = strided(mem, p.out);
  const int64_t* is = p.in.strides;  // uint8: elements are bytes
  const bool video = p.range == isa::ColorRange::kVideo;
  const bool bgr = p.dst_format == F::kBGR;
  auto row = video ? (bgr ? nv12_row<true, true> : nv12_row<true, false>)
                   : (bgr ? nv12_row<false, true> : nv12_row<false, false>);
  auto dense = video ? (bgr ? nv12_row_dense<true, true> : nv12_row_dense<true, false>)
                     : (bgr ? nv12_row_dense<false, true> : nv12_row_dense<false, false>);
  const bool is_dense = is[2] == 1 && out.s[3] == 1 && p.out.dims[2] % 2 == 0;  // (whole pairs)
  for (int64_t n = 0; n < p.out.dims[0]; ++n) {
    for (int64_t y = 0; y < p.out.dims[1]; ++y) {
      const uint8_t* yrow = base + n * is[0] + y * is[1];
      const uint8_t* uvrow = base + p.uv_offset + n * is[0] + (y / 2) * p.uv_row_stride;
      uint8_t* orow = out.base + n * out.s[0] + y * out.s[1];
      if (is_dense)
        dense(yrow, uvrow, orow, out.s[2], p.out.dims[2]);
      else
        row(yrow, is[2], uvrow, orow, out.s[2], out.s[3], p.out.dims[2]);
    }
  }
}

void matmul(const isa::MatMul& m, const Memory& mem) {
  const Strided a = strided(mem, m.a), b = strided(mem, m.b), out = strided(mem, m.out);
  const bool narrow = m.a.dtype == DType::kInt8 && m.b.dtype == DType::kInt8;
  std::vector<int32_t> mults(m.multipliers.count);
  if (!mults.empty()) std::memcpy(mults.data(), mem.ptr(m.multipliers), mults.size() * sizeof(int32_t));
  const int32_t* mp = mults.empty() ? nullptr : mults.data();
  std::vector<int16_t> a16, b16;
  std::vector<int32_t> a32, b32;
  for (int64_t i = 0; i < m.out.dims[0]; ++i)
    for (int64_t j = 0; j < m.out.dims[1]; ++j) {
      const uint8_t* pa = a.base + i * a.s[0] + j * a.s[1];
      const uint8_t* pb = b.base + i * b.s[0] + j * b.s[1];
      uint8_t* po = out.base + i * out.s[0] + j * out.s[1];
      if (narrow)
        matmul_batch<int16_t, int32_t>(m, mp, pa, a.s, pb, b.s, po, out.s, &a16, &b16);
      else
        matmul_batch<int32_t, int64_t>(m, mp, pa, a.s, pb, b.s, po, out.s, &a32, &b32);
    }
}

// The row instructions run the reference definition on every table: attention
// rows are short and these are a small part of a model's work (the matmuls
// and convolutions around them dominate).
void softmax(const isa::Softmax& s, const Memory& mem) { ref::softmax(s, mem); }
void layernorm(const isa::LayerNorm& l, const Memory& mem) { ref::layernorm(l, mem); }

}  // namespace openbpu::sim::kern
