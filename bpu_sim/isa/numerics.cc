// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/isa/numerics.h"

#include <cmath>

namespace openbpu::isa {

void quantize_multipliers(const double* r, int n, int max_shift, int32_t* m, int32_t* shift) {
  // Compare in floating point: r * 2^63 can exceed the int64 range.
  const double bound = std::ldexp(1.0, kMultiplierBits) - 0.5;
  auto fits = [&](int s) {
    for (int i = 0; i < n; ++i)
      if (std::ldexp(r[i], s) >= bound) return false;
    return true;
  };
  int s = max_shift;
  while (s > 0 && !fits(s)) --s;
  for (int i = 0; i < n; ++i) {
    int64_t v = std::llround(std::ldexp(r[i], s));
    if (v >= (int64_t{1} << 31)) v = (int64_t{1} << 31) - 1;  // r >= 2^31: saturate
    if (v < 1) v = 1;
    m[i] = static_cast<int32_t>(v);
  }
  *shift = s;
}

void requant_multiplier(double r, int32_t* m, int32_t* shift, int max_shift) {
  if (std::fabs(r - 1.0) < 1e-9) {
    *m = 1 << 30, *shift = 30;
    return;
  }
  quantize_multiplier(r, m, shift, max_shift);
}

std::vector<int32_t> softmax_exp_table(double s_in, int32_t* table_shift) {
  int sh = 0;
  while (sh < 8 && 256.0 * std::ldexp(1.0, sh) * s_in < 12.0) ++sh;
  *table_shift = sh;
  std::vector<int32_t> t(kSoftmaxTableSize);
  for (int j = 0; j < kSoftmaxTableSize; ++j)
    t[static_cast<size_t>(j)] = static_cast<int32_t>(std::lround(32768.0 * std::exp(-j * std::ldexp(1.0, sh) * s_in)));
  return t;
}

}  // namespace openbpu::isa
