// SPDX-License-Identifier: Apache-2.0
// Data movement on the CPU: layout conversion (NHWC <-> NCHW, padding in and
// out), reshape-like operators (the logical row-major order is kept) and
// Transpose.
#include "runtime/cpu_ops/cpu_op.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class CopyKernel final : public CpuKernel {
 public:
  std::vector<int64_t> perm;  // empty = identity (Transpose otherwise)
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    LogicalView src = logical_view(*in[0].desc);
    if (!perm.empty()) {
      LogicalView p = src;
      for (size_t i = 0; i < perm.size(); ++i) {
        p.dims[i] = src.dims[static_cast<size_t>(perm[i])];
        p.strides[i] = src.strides[static_cast<size_t>(perm[i])];
      }
      src = p;
    }
    copy_elements(src, in[0].data, logical_view(*out[0].desc), out[0].data);
    return Status::Ok();
  }
};

}  // namespace

Status create_layout_convert(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                             const std::vector<const TensorDesc*>& out,
                             std::unique_ptr<CpuKernel>* kernel) {
  // Reshape/Squeeze/Unsqueeze may carry their shape as a second input; the
  // output description already holds the result shape.
  if (in.empty() || out.size() != 1)
    return error(kInvalidModel, "node '" + def.name + "' (" + def.op_type + ") needs 1 input and 1 output");
  if (in[0]->valid_elements() != out[0]->valid_elements())
    return error(kInvalidModel, "node '" + def.name + "' (" + def.op_type +
                                    "): input and output element counts differ");
  if (element_size(in[0]->data_type) == 0 || element_size(out[0]->data_type) == 0)
    return error(kInvalidModel, "node '" + def.name + "': unsupported data type");
  *kernel = std::make_unique<CopyKernel>();
  return Status::Ok();
}

Status create_transpose(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                        const std::vector<const TensorDesc*>& out,
                        std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || out.size() != 1)
    return error(kInvalidModel, "node '" + def.name + "' (Transpose) needs 1 input and 1 output");
  const LogicalView src = logical_view(*in[0]);
  const LogicalView dst = logical_view(*out[0]);
  auto k = std::make_unique<CopyKernel>();
  k->perm = def.attrs.get_ints("perm");
  if (k->perm.empty())  // ONNX default: reverse the dimensions
    for (size_t i = src.dims.size(); i-- > 0;) k->perm.push_back(static_cast<int64_t>(i));
  if (k->perm.size() != src.dims.size() || dst.dims.size() != src.dims.size())
    return error(kInvalidModel, "node '" + def.name + "' (Transpose): perm does not match the rank");
  std::vector<bool> seen(src.dims.size(), false);
  for (size_t i = 0; i < k->perm.size(); ++i) {
    const int64_t p = k->perm[i];
    if (p < 0 || p >= static_cast<int64_t>(src.dims.size()) || seen[static_cast<size_t>(p)])
      return error(kInvalidModel, "node '" + def.name + "' (Transpose): perm is not a permutation");
    seen[static_cast<size_t>(p)] = true;
    if (dst.dims[i] != src.dims[static_cast<size_t>(p)])
      return error(kInvalidModel, "node '" + def.name + "' (Transpose): output shape does not match perm");
  }
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
