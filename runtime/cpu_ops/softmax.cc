// SPDX-License-Identifier: Apache-2.0
// Softmax over one axis (ONNX opset 13 semantics; the converter rewrites the
// older "flatten from axis" form into this one), computed in double.
#include <cmath>
#include <vector>

#include "runtime/cpu_ops/cpu_op.h"
#include "runtime/cpu_ops/elementwise_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class SoftmaxKernel final : public CpuKernel {
 public:
  int axis = 0;  // logical
  bool log = false;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const LogicalView src = logical_view(*in[0].desc);
    const LogicalView dst = logical_view(*out[0].desc);
    const size_t rank = src.dims.size();
    const int64_t len = src.dims[static_cast<size_t>(axis)];
    // Iterate over all positions with index[axis] == 0.
    LogicalView outer_src = src, outer_dst = dst;
    outer_src.dims[static_cast<size_t>(axis)] = 1;
    outer_dst.dims[static_cast<size_t>(axis)] = 1;
    std::vector<double> row(static_cast<size_t>(len));
    const int64_t ss = src.strides[static_cast<size_t>(axis)];
    const int64_t ds = dst.strides[static_cast<size_t>(axis)];
    (void)rank;
    for_each_pair(outer_src, outer_dst, [&](int64_t so, int64_t dof, const std::vector<int64_t>&) {
      double mx = -INFINITY;
      for (int64_t i = 0; i < len; ++i) {
        row[static_cast<size_t>(i)] = load_as_double(src.data_type, in[0].data + so + i * ss);
        mx = std::max(mx, row[static_cast<size_t>(i)]);
      }
      double sum = 0.0;
      for (double& v : row) sum += std::exp(v - mx);
      for (int64_t i = 0; i < len; ++i) {
        const double x = row[static_cast<size_t>(i)] - mx;
        const double y = log ? x - std::log(sum) : std::exp(x) / sum;
        store_from_double(dst.data_type, y, out[0].data + dof + i * ds);
      }
    });
    return Status::Ok();
  }
};

}  // namespace

Status create_softmax(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                      const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || out.size() != 1)
    return error(kInvalidModel, "node '" + def.name + "' (Softmax) needs 1 input and 1 output");
  const LogicalView src = logical_view(*in[0]);
  if (src.dims != logical_view(*out[0]).dims)
    return error(kInvalidModel, "node '" + def.name + "' (Softmax): input and output shapes differ");
  if (in[0]->data_type != kF32 || out[0]->data_type != kF32)
    return error(kInvalidModel, "node '" + def.name + "' (Softmax): float32 tensors expected");
  const int64_t rank = static_cast<int64_t>(src.dims.size());
  int64_t axis = def.attrs.get_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return error(kInvalidModel, "node '" + def.name + "' (Softmax): axis out of range");
  auto k = std::make_unique<SoftmaxKernel>();
  k->axis = static_cast<int>(axis);
  k->log = def.op_type == "LogSoftmax";
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
