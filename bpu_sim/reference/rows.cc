// SPDX-License-Identifier: Apache-2.0
// Row instructions along dim 3 of [D0, D1, D2, L] views (docs/numerics.md
// sections 17 and 18):
// kSoftmax:  t = min(max_row(x) - x, 2^16 - 1), e = the interpolated table
//            value at t, y = clamp(floor((e*M + floor(sum*2^S/2)) / (sum*2^S)))
// kLayerNorm: s1 = sum x, s2 = sum x^2, d = L*s2 - s1^2 + eps,
//            r = max(1, isqrt(d*2^32)), n = floor(((L*x - s1)*2^28 + floor(r/2)) / r),
//            y = clamp(floor(((n*gamma + beta)*M + 2^(S-1)) / 2^S))
// Every row is read completely before it is written (out may equal in).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <vector>

#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {

namespace {

using detail::int128;

// Calls f(i0, i1, i2) for every row of a [D0, D1, D2, L] view.
template <class F>
void for_each_row(const isa::TensorRef& t, F&& f) {
  for (int64_t i0 = 0; i0 < t.dims[0]; ++i0)
    for (int64_t i1 = 0; i1 < t.dims[1]; ++i1)
      for (int64_t i2 = 0; i2 < t.dims[2]; ++i2) f(i0, i1, i2);
}

// floor(sqrt(v)) for v >= 0, exact.
int64_t isqrt(int128 v) {
  if (v <= 0) return 0;
  int64_t r = static_cast<int64_t>(std::sqrt(static_cast<long double>(v)));
  while (r > 0 && static_cast<int128>(r) * r > v) --r;
  while (static_cast<int128>(r + 1) * (r + 1) <= v) ++r;
  return r;
}

// The table exponent e(t) of kSoftmax.
int64_t softmax_exp(const isa::Softmax& s, const Memory& mem, int64_t t) {
  const int sh = static_cast<int>(detail::clamp(s.table_shift, 0, 8));
  const int64_t i = t >> sh, f = t & ((int64_t{1} << sh) - 1);
  const isa::DType tt = isa::DType::kInt32;
  if (i >= isa::kSoftmaxTableSize - 1) return detail::const_at(mem, s.table, tt, isa::kSoftmaxTableSize - 1);
  const int64_t lo = detail::const_at(mem, s.table, tt, i), hi = detail::const_at(mem, s.table, tt, i + 1);
  return lo + static_cast<int64_t>(detail::round_shift((hi - lo) * f, sh));
}

}  // namespace

void softmax(const isa::Softmax& s, const Memory& mem) {
  const detail::View in(mem, s.in), out(mem, s.out);
  const int sh = static_cast<int>(detail::clamp(s.shift, 0, 31));
  const detail::Range range = detail::out_range(s.out.dtype, s.act_min, s.act_max);
  const int64_t len = s.in.dims[3];
  std::vector<int64_t> x(static_cast<size_t>(len)), e(x.size());
  for_each_row(s.in, [&](int64_t i0, int64_t i1, int64_t i2) {
    int64_t mx = INT64_MIN, sum = 0;
    for (int64_t l = 0; l < len; ++l) mx = std::max(mx, x[l] = in.get(i0, i1, i2, l));
    for (int64_t l = 0; l < len; ++l) sum += e[l] = softmax_exp(s, mem, std::min<int64_t>(mx - x[l], 65535));
    const int128 den = static_cast<int128>(sum > 0 ? sum : 1) << sh;
    for (int64_t l = 0; l < len; ++l) {
      const int128 num = static_cast<int128>(e[l]) * s.multiplier + den / 2;
      const int128 q = num >= 0 ? num / den : -((-num + den - 1) / den);  // floor
      out.set(detail::saturate64(detail::clamp128(q, range.lo, range.hi)), i0, i1, i2, l);
    }
  });
}

void layernorm(const isa::LayerNorm& n, const Memory& mem) {
  const detail::View in(mem, n.in), out(mem, n.out);
  const int sh = detail::sanitize_shift(n.shift);
  const detail::Range range = detail::out_range(n.out.dtype, n.act_min, n.act_max);
  const int64_t len = n.in.dims[3];
  std::vector<int64_t> x(static_cast<size_t>(len));
  for_each_row(n.in, [&](int64_t i0, int64_t i1, int64_t i2) {
    int128 s1 = 0, s2 = 0;
    for (int64_t l = 0; l < len; ++l) {
      x[l] = in.get(i0, i1, i2, l);
      s1 += x[l], s2 += static_cast<int128>(x[l]) * x[l];
    }
    const int128 r = std::max<int64_t>(1, isqrt((len * s2 - s1 * s1 + n.eps) << 32));
    for (int64_t l = 0; l < len; ++l) {
      const int128 num = (len * static_cast<int128>(x[l]) - s1) * (int64_t{1} << 28) + r / 2;
      const int128 q = num >= 0 ? num / r : -((-num + r - 1) / r);  // floor
      int128 acc = q * detail::const_at(mem, n.gamma, isa::DType::kInt32, l);
      if (n.beta.count) {
        int64_t b;
        std::memcpy(&b, mem.ptr(n.beta) + 8 * l, 8);
        acc += b;
      }
      const int128 y = detail::round_shift(acc * n.multiplier, sh);
      out.set(detail::saturate64(detail::clamp128(y, range.lo, range.hi)), i0, i1, i2, l);
    }
  });
}

}  // namespace openbpu::sim::ref
