// SPDX-License-Identifier: Apache-2.0
// TopK: k from the K input (opset 10+) or the `k` attribute (opset 1-9),
// which must equal the outputs' size along the axis; largest (default) or
// smallest; ties keep the lower index first. The outputs are always sorted
// (sorted=0 allows any order). Values keep the input's type, Indices int64.
#include <algorithm>
#include <numeric>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class TopKKernel final : public CpuKernel {
 public:
  int64_t outer = 1, len = 1, inner = 1, k = 1;
  bool largest = true;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    if (has_input(in, 1) && read_ints(in[1])[0] != k)
      return op_error(id, "K differs from the outputs' size");
    InBuf x(in[0], type);
    OutBuf v(out[0], type);
    OutBuf ix(out[1], kS64);
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.as<T>();
      T* vp = v.as<T>();
      int64_t* ip = ix.as<int64_t>();
      std::vector<int64_t> order(static_cast<size_t>(len));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T* row = xp + o * len * inner + i;
          std::iota(order.begin(), order.end(), 0);
          auto cmp = [&](int64_t a, int64_t b) {
            const T va = row[a * inner], vb = row[b * inner];
            if (va != vb) return largest ? va > vb : va < vb;
            return a < b;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
          for (int64_t j = 0; j < k; ++j) {
            vp[(o * k + j) * inner + i] = row[order[j] * inner];
            ip[(o * k + j) * inner + i] = order[j];
          }
        }
    });
    v.commit();
    ix.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_topk(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !in[0] || present_count(in) > 2 || out.size() != 2 || !out[0] || !out[1])
    return op_error(def, "needs X (, K) and outputs Values, Indices");
  auto k = std::make_unique<TopKKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = compute_type(in[0]->data_type);
  if (!is_numeric_type(k->type) || compute_type(out[0]->data_type) != k->type ||
      out[1]->data_type != kS64)
    return op_error(def, "numeric X/Values and int64 Indices expected");
  const Dims x = dims_of(*in[0]), y = dims_of(*out[0]);
  int64_t axis;
  if (!norm_axis(def.attrs.get_int("axis", -1), static_cast<int64_t>(x.size()), &axis))
    return op_error(def, "axis out of range");
  if (y.size() != x.size() || dims_of(*out[1]) != y)
    return op_error(def, "Values and Indices must have X's rank and one shape");
  for (size_t a = 0; a < x.size(); ++a)
    if (static_cast<int64_t>(a) != axis && x[a] != y[a])
      return op_error(def, "outputs differ from X off the axis");
  k->k = y[axis];
  if (k->k > x[axis]) return op_error(def, "k is larger than the axis");
  if (def.attrs.has("k") && def.attrs.get_int("k", 0) != k->k)
    return op_error(def, "k differs from the outputs' size");
  k->largest = def.attrs.get_int("largest", 1) != 0;
  k->outer = count_of(Dims(x.begin(), x.begin() + axis));
  k->len = x[axis];
  k->inner = count_of(Dims(x.begin() + axis + 1, x.end()));
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
