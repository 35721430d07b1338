// SPDX-License-Identifier: Apache-2.0
// requant(v, M, S) = floor((v*M + 2^(S-1)) / 2^S), the rounding step shared by
// every requantizing instruction (docs/numerics.md, "Requantization").
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {

int64_t requantize(int64_t v, int32_t multiplier, int32_t shift) {
  // |v * M| < 2^94 fits in int128 exactly; the result is saturated to int64,
  // which never matters after the final clamp to an output range.
  const detail::int128 p = static_cast<detail::int128>(v) * multiplier;
  return detail::saturate64(detail::round_shift(p, detail::sanitize_shift(shift)));
}

int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return detail::clamp(v, lo, hi); }

}  // namespace openbpu::sim::ref
