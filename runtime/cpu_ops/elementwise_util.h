// SPDX-License-Identifier: Apache-2.0
// Iteration over the logical elements of two same-shaped views.
#ifndef OPENBPU_RUNTIME_CPU_OPS_ELEMENTWISE_UTIL_H_
#define OPENBPU_RUNTIME_CPU_OPS_ELEMENTWISE_UTIL_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/core/tensor.h"

namespace openbpu::rt {

// Calls fn(src_offset, dst_offset, index) for every logical element, in
// row-major order; `index` is the logical coordinate vector.
template <class Fn>
void for_each_pair(const LogicalView& a, const LogicalView& b, Fn&& fn) {
  const size_t rank = a.dims.size();
  const int64_t n = a.elements();
  std::vector<int64_t> idx(rank, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t e = 0; e < n; ++e) {
    fn(oa, ob, idx);
    for (size_t k = rank; k-- > 0;) {
      oa += a.strides[k];
      ob += b.strides[k];
      if (++idx[k] < a.dims[k]) break;
      oa -= a.strides[k] * a.dims[k];
      ob -= b.strides[k] * b.dims[k];
      idx[k] = 0;
    }
  }
}

// Logical axis index of an axis given in the tensor's layout order.
inline int logical_axis(const TensorDesc& t, int layout_axis) {
  if (t.layout == kNHWC && t.rank() == 4) {
    static const int map[4] = {0, 2, 3, 1};
    return (layout_axis >= 0 && layout_axis < 4) ? map[layout_axis] : layout_axis;
  }
  return layout_axis;
}

inline bool same_dims(const LogicalView& a, const LogicalView& b) { return a.dims == b.dims; }

// Gives both views the same rank the way the converter sees a float tensor
// as its native 4-D BPU form (converter/codegen/lowering.h, logical4):
// [N, C] and [N, C, H] get trailing size-1 dimensions, a rank-1 [K] is
// (1, K, 1, 1).
inline void match_rank(LogicalView* a, LogicalView* b) {
  for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
    if (x->dims.size() == 1 && y->dims.size() > 1) {
      x->dims.insert(x->dims.begin(), 1);
      x->strides.insert(x->strides.begin(), 0);
    }
  while (a->dims.size() < b->dims.size()) a->dims.push_back(1), a->strides.push_back(0);
  while (b->dims.size() < a->dims.size()) b->dims.push_back(1), b->strides.push_back(0);
}

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CPU_OPS_ELEMENTWISE_UTIL_H_
