// SPDX-License-Identifier: Apache-2.0
// OneHot: indices (any numeric type, negative counts from the end, out of
// range -> all "off"), depth (scalar, the output's size along the axis) and
// values [off, on] of the output's type; axis (default -1) is where the new
// dimension goes.
#include <cmath>
#include <cstring>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class OneHotKernel final : public CpuKernel {
 public:
  int64_t outer = 1, depth = 1, inner = 1;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const double d = read_doubles(in[1])[0];
    if (static_cast<int64_t>(d) != depth)
      return op_error(id, "depth differs from the output's size");
    const std::vector<double> idx = read_doubles(in[0]);
    InBuf vals(in[2], type);
    OutBuf y(out[0], type);
    const int es = element_size(type);
    const uint8_t* off = vals.data();
    const uint8_t* on = vals.data() + es;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < depth; ++j)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t v = static_cast<int64_t>(std::trunc(idx[o * inner + i]));
          if (v < 0) v += depth;
          std::memcpy(y.data() + ((o * depth + j) * inner + i) * es, v == j ? on : off,
                      static_cast<size_t>(es));
        }
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_onehot(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 3 || !all_present(in) || out.size() != 1 || !out[0])
    return op_error(def, "needs indices, depth, values and 1 output");
  auto k = std::make_unique<OneHotKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = out[0]->data_type;
  if (in[2]->data_type != k->type || count_of(dims_of(*in[2])) != 2 || element_size(k->type) == 0)
    return op_error(def, "values must be [off, on] of the output's type");
  if (!is_numeric_type(in[0]->data_type) || !is_numeric_type(in[1]->data_type) ||
      count_of(dims_of(*in[1])) != 1)
    return op_error(def, "numeric indices and a scalar depth expected");
  const Dims x = dims_of(*in[0]), y = dims_of(*out[0]);
  int64_t axis;
  if (!norm_axis(def.attrs.get_int("axis", -1), static_cast<int64_t>(x.size()) + 1, &axis))
    return op_error(def, "axis out of range");
  if (y.size() != x.size() + 1) return op_error(def, "output rank must be the indices' rank + 1");
  Dims rest = y;
  rest.erase(rest.begin() + axis);
  if (rest != x) return op_error(def, "output shape does not match the indices");
  k->depth = y[axis];
  k->outer = count_of(Dims(x.begin(), x.begin() + axis));
  k->inner = count_of(Dims(x.begin() + axis, x.end()));
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
