// SPDX-License-Identifier: Apache-2.0
// Batched product of two activation matrices (kMatMul):
//   acc = sum_k a[i, j, m, k] * b[i, j, k, n]
//   y[i, j, m, n] = clamp(floor((acc*M[n] + 2^(S-1)) / 2^S), act_min, act_max)
// (M[n] = multipliers[n] when present, else multiplier)
// The validator keeps out apart from a and b.
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {

void matmul(const isa::MatMul& m, const Memory& mem) {
  using detail::int128;
  const detail::View a(mem, m.a), b(mem, m.b), out(mem, m.out);
  const int s = detail::sanitize_shift(m.shift);
  const detail::Range range = detail::out_range(m.out.dtype, m.act_min, m.act_max);
  const int64_t depth = m.a.dims[3];
  int64_t dims[isa::kMaxRank];
  for (int k = 0; k < isa::kMaxRank; ++k) dims[k] = m.out.dims[k];

  detail::for_each_index(dims, [&](int64_t i, int64_t j, int64_t r, int64_t c, int64_t, int64_t) {
    int128 acc = 0;
    for (int64_t k = 0; k < depth; ++k) acc += static_cast<int128>(a.get(i, j, r, k)) * b.get(i, j, k, c);
    const int64_t mult =
        m.multipliers.count ? detail::const_at(mem, m.multipliers, isa::DType::kInt32, c) : m.multiplier;
    const int128 y = detail::round_shift(acc * mult, s);
    out.set(detail::saturate64(detail::clamp128(y, range.lo, range.hi)), i, j, r, c);
  });
}

}  // namespace openbpu::sim::ref
