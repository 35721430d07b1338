// SPDX-License-Identifier: Apache-2.0
// Softmax, LogSoftmax and Hardmax.
//
// Opset 13+ (and when the __opset attribute is absent): the operation runs
// along one axis (default -1). Before opset 13 the input is viewed as a 2-D
// matrix [prod(dims[:axis]), prod(dims[axis:])] (default axis 1) and the
// operation runs over each row - the two differ whenever axis is not the
// last dimension. The converter passes the model's opset as `__opset`.
// Softmax/LogSoftmax subtract the maximum and accumulate in double; Hardmax
// marks the first maximum of each row.
#include <cmath>
#include <vector>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class Kind { kSoftmax, kLogSoftmax, kHardmax };

// Rows of `len` elements spaced `stride` apart: outer x inner rows.
class SoftmaxKernel final : public CpuKernel {
 public:
  Kind kind = Kind::kSoftmax;
  int64_t outer = 1, len = 1, inner = 1;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    visit_float(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.as<T>();
      T* yp = y.as<T>();
      std::vector<double> row(static_cast<size_t>(len));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T* v = xp + o * len * inner + i;
          T* r = yp + o * len * inner + i;
          double mx = -INFINITY;
          int64_t arg = 0;
          for (int64_t k = 0; k < len; ++k) {
            row[k] = static_cast<double>(v[k * inner]);
            if (row[k] > mx) mx = row[k], arg = k;
          }
          if (kind == Kind::kHardmax) {
            for (int64_t k = 0; k < len; ++k) r[k * inner] = static_cast<T>(k == arg ? 1 : 0);
            continue;
          }
          double sum = 0.0;
          for (int64_t k = 0; k < len; ++k) sum += std::exp(row[k] - mx);
          if (kind == Kind::kSoftmax) {
            const double inv = 1.0 / sum;
            for (int64_t k = 0; k < len; ++k)
              r[k * inner] = static_cast<T>(std::exp(row[k] - mx) * inv);
          } else {
            const double ls = std::log(sum);
            for (int64_t k = 0; k < len; ++k) r[k * inner] = static_cast<T>(row[k] - mx - ls);
          }
        }
    });
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_softmax(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                      const std::vector<const TensorDesc*>& out,
                      std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs 1 input and 1 output");
  const Dims x = dims_of(*in[0]);
  if (x != dims_of(*out[0])) return op_error(def, "input and output shapes differ");
  auto k = std::make_unique<SoftmaxKernel>();
  k->type = compute_type(in[0]->data_type);
  if ((k->type != kF32 && k->type != kF64) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, "float tensors expected");
  k->kind = def.op_type == "Softmax"      ? Kind::kSoftmax
            : def.op_type == "LogSoftmax" ? Kind::kLogSoftmax
                                          : Kind::kHardmax;
  const int64_t rank = static_cast<int64_t>(x.size());
  const bool legacy = opset_of(def) < 13;
  int64_t axis;
  if (rank == 0) {
    k->outer = k->len = k->inner = 1;
  } else {
    if (!norm_axis(def.attrs.get_int("axis", legacy ? 1 : -1), rank, &axis))
      return op_error(def, "axis out of range");
    k->outer = count_of(Dims(x.begin(), x.begin() + axis));
    if (legacy) {
      k->len = count_of(Dims(x.begin() + axis, x.end()));
      k->inner = 1;
    } else {
      k->len = x[axis];
      k->inner = count_of(Dims(x.begin() + axis + 1, x.end()));
    }
  }
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
