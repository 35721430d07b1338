// SPDX-License-Identifier: Apache-2.0
// Element-wise binary operations (kEltwise) over the 6-D index space of out;
// a and b have the same dims, broadcast operands use stride 0; a and b are
// the operands minus their zero points, zo the output's zero point.
//   add: y = clamp(floor((a*Ma + b*Mb + 2^(S-1)) / 2^S) + zo)
//   sub: y = clamp(floor((a*Ma - b*Mb + 2^(S-1)) / 2^S) + zo)
//   mul: y = clamp(floor((a*b*Ma + 2^(S-1)) / 2^S) + zo)
//   max/min: y = clamp(max/min(requant(a, Ma, S), requant(b, Mb, S)) + zo)
// Each element is read before it is written, so out may be the same view as
// a or b (element-wise in place).
#include <algorithm>

#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {

void eltwise(const isa::Eltwise& e, const Memory& mem) {
  using detail::int128;
  const detail::View a(mem, e.a), b(mem, e.b), out(mem, e.out);
  const int s = detail::sanitize_shift(e.shift);
  const detail::Range range = detail::out_range(e.out.dtype, e.act_min, e.act_max);
  const int128 ma = e.multiplier_a, mb = e.multiplier_b;
  int64_t dims[isa::kMaxRank];
  for (int k = 0; k < isa::kMaxRank; ++k) dims[k] = e.out.dims[k];

  detail::for_each_index(dims, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t i4,
                                   int64_t i5) {
    const int128 x = a.get(i0, i1, i2, i3, i4, i5) - e.zero_a;
    const int128 z = b.get(i0, i1, i2, i3, i4, i5) - e.zero_b;
    int128 y = 0;
    switch (e.kind) {
      case isa::EltwiseKind::kAdd:
        y = detail::round_shift(x * ma + z * mb, s);
        break;
      case isa::EltwiseKind::kSub:
        y = detail::round_shift(x * ma - z * mb, s);
        break;
      case isa::EltwiseKind::kMul:
        y = detail::round_shift(x * z * ma, s);
        break;
      case isa::EltwiseKind::kMax:
      case isa::EltwiseKind::kMin: {
        const int128 ra = detail::round_shift(x * ma, s), rb = detail::round_shift(z * mb, s);
        y = e.kind == isa::EltwiseKind::kMax ? std::max(ra, rb) : std::min(ra, rb);
        break;
      }
    }
    y += e.zero_out;
    out.set(detail::saturate64(detail::clamp128(y, range.lo, range.hi)), i0, i1, i2, i3, i4, i5);
  });
}

}  // namespace openbpu::sim::ref
