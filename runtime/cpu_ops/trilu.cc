// SPDX-License-Identifier: Apache-2.0
// Trilu: keeps the upper (upper=1, j - i >= k) or lower (j - i <= k)
// triangle of the last two dimensions, zeroing the rest; k is the optional
// second input (int64 scalar, default 0). Any data type.
#include <cstring>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class TriluKernel final : public CpuKernel {
 public:
  bool upper = true;
  int64_t mats = 1, rows = 1, cols = 1;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const int64_t k = has_input(in, 1) ? read_ints(in[1])[0] : 0;
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    const int es = element_size(type);
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t off = ((m * rows + i) * cols + j) * es;
          const bool keep = upper ? j - i >= k : j - i <= k;
          if (keep)
            std::memcpy(y.data() + off, x.data() + off, static_cast<size_t>(es));
          else
            std::memset(y.data() + off, 0, static_cast<size_t>(es));
        }
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_trilu(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                    const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !in[0] || present_count(in) > 2 || out.size() != 1 || !out[0])
    return op_error(def, "needs input (, k) and 1 output");
  const Dims x = dims_of(*in[0]);
  if (x.size() < 2 || dims_of(*out[0]) != x)
    return op_error(def, "input must have rank >= 2, output its shape");
  if (in[0]->data_type != out[0]->data_type || element_size(in[0]->data_type) == 0)
    return op_error(def, "output must have the input's data type");
  if (has_input(in, 1) && (in[1]->data_type != kS64 || count_of(dims_of(*in[1])) != 1))
    return op_error(def, "k must be an int64 scalar");
  auto k = std::make_unique<TriluKernel>();
  k->type = in[0]->data_type;
  k->upper = def.attrs.get_int("upper", 1) != 0;
  k->rows = x[x.size() - 2];
  k->cols = x[x.size() - 1];
  k->mats = count_of(Dims(x.begin(), x.end() - 2));
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
