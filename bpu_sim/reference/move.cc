// SPDX-License-Identifier: Apache-2.0
// Strided N-D copy with optional requantization (kMove) and fill (kFill).
//   move: y = requantize ? clamp(requant(x, M, S)) : saturate(x), clamped to the
//         output type's range; in and out share dims, types may differ.
//   fill: every element of the view = value saturated to the view's type.
// Move reads each element before writing it, so out may be the same view as in;
// other overlaps of in and out are not defined.
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {

void move(const isa::Move& m, const Memory& mem) {
  const detail::View in(mem, m.in), out(mem, m.out);
  const int s = detail::sanitize_shift(m.shift);
  int64_t dims[isa::kMaxRank];
  for (int k = 0; k < isa::kMaxRank; ++k) dims[k] = m.out.dims[k];

  detail::for_each_index(
      dims, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t i4, int64_t i5) {
        const int64_t x = in.get(i0, i1, i2, i3, i4, i5);
        const int64_t y = m.requantize ? detail::saturate64(detail::round_shift(
                                             static_cast<detail::int128>(x) * m.multiplier, s))
                                       : x;
        out.set(y, i0, i1, i2, i3, i4, i5);  // set() saturates to the output type
      });
}

void fill(const isa::Fill& f, const Memory& mem) {
  const detail::View out(mem, f.out);
  int64_t dims[isa::kMaxRank];
  for (int k = 0; k < isa::kMaxRank; ++k) dims[k] = f.out.dims[k];
  detail::for_each_index(dims, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t i4,
                                   int64_t i5) { out.set(f.value, i0, i1, i2, i3, i4, i5); });
}

}  // namespace openbpu::sim::ref
