// SPDX-License-Identifier: Apache-2.0
// CumSum along the axis given by the second input (scalar int32/int64, read
// at run time), with exclusive and reverse. Float sums accumulate in the
// element type like numpy.cumsum.
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class CumSumKernel final : public CpuKernel {
 public:
  bool exclusive = false, reverse = false;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const Dims x = dims_of(*in[0].desc);
    int64_t axis;
    if (!norm_axis(read_ints(in[1])[0], static_cast<int64_t>(x.size()), &axis))
      return op_error(id, "axis out of range");
    const int64_t outer = count_of(Dims(x.begin(), x.begin() + axis)), len = x[axis];
    const int64_t inner = count_of(Dims(x.begin() + axis + 1, x.end()));
    InBuf xb(in[0], type);
    OutBuf yb(out[0], type);
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = xb.as<T>();
      T* yp = yb.as<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          T acc = T(0);
          for (int64_t s = 0; s < len; ++s) {
            const int64_t k = reverse ? len - 1 - s : s;
            const int64_t off = (o * len + k) * inner + i;
            if (exclusive) {
              yp[off] = acc;
              acc = static_cast<T>(acc + xp[off]);
            } else {
              acc = static_cast<T>(acc + xp[off]);
              yp[off] = acc;
            }
          }
        }
    });
    yb.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_cumsum(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 2 || !in[0] || !in[1] || out.size() != 1 || !out[0])
    return op_error(def, "needs x, axis and 1 output");
  auto k = std::make_unique<CumSumKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = compute_type(in[0]->data_type);
  if (!is_numeric_type(k->type) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, "numeric tensors of one type expected");
  if ((in[1]->data_type != kS32 && in[1]->data_type != kS64) || count_of(dims_of(*in[1])) != 1)
    return op_error(def, "axis must be an int32/int64 scalar");
  if (dims_of(*in[0]) != dims_of(*out[0])) return op_error(def, "input and output shapes differ");
  k->exclusive = def.attrs.get_int("exclusive", 0) != 0;
  k->reverse = def.attrs.get_int("reverse", 0) != 0;
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
