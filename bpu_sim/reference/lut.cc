// SPDX-License-Identifier: Apache-2.0
// Table lookup (kLut); the table's element type is the output type.
//   int8 input:  y = table[x + 128]                          (256 entries)
//   int16 input: u = x + 32768, i = u >> 7, f = u & 127      (513 entries)
//                y = table[i] + floor(((table[i+1] - table[i]) * f + 64) / 128)
// The interpolated value lies between table[i] and table[i+1], so it is always
// representable in the output type.
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {

void lut(const isa::Lut& l, const Memory& mem) {
  const detail::View in(mem, l.in), out(mem, l.out);
  const isa::DType tt = l.out.dtype;
  int64_t dims[isa::kMaxRank];
  for (int k = 0; k < isa::kMaxRank; ++k) dims[k] = l.out.dims[k];

  detail::for_each_index(
      dims, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t i4, int64_t i5) {
        const int64_t x = in.get(i0, i1, i2, i3, i4, i5);
        int64_t y;
        if (l.in.dtype == isa::DType::kInt8) {
          y = detail::const_at(mem, l.table, tt, x + 128);
        } else {
          // int16 input (other types are rejected by the validator and clamped to
          // the int16 range here so the table index stays in [0, 512]).
          const int64_t u = detail::clamp(x, detail::dtype_min(isa::DType::kInt16), detail::dtype_max(isa::DType::kInt16)) + 32768;
          const int64_t i = u >> 7, f = u & 127;
          const int64_t t0 = detail::const_at(mem, l.table, tt, i);
          const int64_t t1 = detail::const_at(mem, l.table, tt, i + 1);
          y = t0 + (((t1 - t0) * f + 64) >> 7);
        }
        out.set(y, i0, i1, i2, i3, i4, i5);
      });
}

}  // namespace openbpu::sim::ref
