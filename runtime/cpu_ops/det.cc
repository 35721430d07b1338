// SPDX-License-Identifier: Apache-2.0
// Det: determinants of the trailing [M, M] matrices (LU with partial
// pivoting, in double).
#include <cmath>
#include <utility>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class DetKernel final : public CpuKernel {
 public:
  int64_t mats = 1, m = 1;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const std::vector<double> x = read_doubles(in[0]);
    OutBuf y(out[0], type);
    const int es = element_size(type);
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t i = 0; i < mats; ++i) {
      std::copy(x.begin() + i * m * m, x.begin() + (i + 1) * m * m, a.begin());
      double det = 1.0;
      for (int64_t c = 0; c < m && det != 0.0; ++c) {
        int64_t p = c;
        for (int64_t r = c + 1; r < m; ++r)
          if (std::abs(a[r * m + c]) > std::abs(a[p * m + c])) p = r;
        if (a[p * m + c] == 0.0) {
          det = 0.0;
          break;
        }
        if (p != c) {
          for (int64_t k = 0; k < m; ++k) std::swap(a[p * m + k], a[c * m + k]);
          det = -det;
        }
        det *= a[c * m + c];
        for (int64_t r = c + 1; r < m; ++r) {
          const double f = a[r * m + c] / a[c * m + c];
          for (int64_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
        }
      }
      store_from_double(type, det, y.data() + i * es);
    }
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_det(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                  const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs 1 input and 1 output");
  auto k = std::make_unique<DetKernel>();
  k->type = compute_type(in[0]->data_type);
  if (!is_float_type(in[0]->data_type) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, "float tensors expected");
  const Dims x = dims_of(*in[0]);
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    return op_error(def, "input must be [..., M, M]");
  const Dims y(x.begin(), x.end() - 2);
  if (dims_of(*out[0]) != y) return op_error(def, "output shape must be " + dims_str(y));
  k->m = x.back();
  k->mats = count_of(y);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
