// SPDX-License-Identifier: Apache-2.0
// Data movement on the CPU: layout conversion (NHWC <-> NCHW, padding in and
// out), reshape-like operators (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity: the logical row-major order is kept; their shape/axes inputs or
// attributes are already reflected in the output description), Dropout
// (inference: identity, optional all-true mask), Transpose, DepthToSpace
// and SpaceToDepth.
#include <cstring>

#include "runtime/cpu_ops/cpu_op.h"
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class CopyKernel final : public CpuKernel {
 public:
  bool mask = false;  // Dropout: second output, all true
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    // Dropout (opset 12+): a true training_mode input would need random masks.
    // (ratio 0 keeps everything, so that case is still deterministic.)
    if (mask && has_input(in, 2) && read_ints(in[2])[0] != 0 &&
        !(has_input(in, 1) && read_doubles(in[1])[0] == 0.0))
      return op_error(id, "training_mode=true with ratio > 0 is not supported (inference only)");
    const TensorDesc& s = *in[0].desc;
    const TensorDesc& d = *out[0].desc;
    if (s.data_type == d.data_type && is_dense(s) && is_dense(d)) {
      if (in[0].data != out[0].data)
        std::memmove(out[0].data, in[0].data,
                     static_cast<size_t>(s.valid_elements() * element_size(s.data_type)));
    } else {
      copy_elements(logical_view(s), in[0].data, logical_view(d), out[0].data);
    }
    if (mask && has_input(out, 1)) {
      OutBuf m(out[1], kBool8);
      std::memset(m.data(), 1, static_cast<size_t>(count_of(dims_of(*out[1].desc))));
      m.commit();
    }
    return Status::Ok();
  }
};

// out (dense) = permuted strided view of the (dense) input.
class PermuteKernel final : public CpuKernel {
 public:
  BroadcastLoop<2> loop;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    strided_copy(loop, element_size(type), x.data(), y.data());
    y.commit();
    return Status::Ok();
  }
};

// Permuted copy of `in_dims` (dense) by `perm` into out dims; false if the
// output shape does not match.
bool make_permute(const Dims& in_dims, const std::vector<int64_t>& perm, PermuteKernel* k,
                  Dims* out_dims) {
  const Dims s = elem_strides(in_dims);
  Dims od, os;
  for (int64_t p : perm) {
    od.push_back(in_dims[static_cast<size_t>(p)]);
    os.push_back(s[static_cast<size_t>(p)]);
  }
  *out_dims = od;
  k->loop.init(od, {elem_strides(od), os});
  return true;
}

}  // namespace

Status create_layout_convert(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                             const std::vector<const TensorDesc*>& out,
                             std::unique_ptr<CpuKernel>* kernel) {
  // Reshape/Squeeze/Unsqueeze may carry their shape as a second input; the
  // output description already holds the result shape.
  const bool dropout = def.op_type == "Dropout";
  if (in.empty() || !in[0] || out.empty() || !out[0] || present_count(out) > (dropout ? 2u : 1u))
    return error(kInvalidModel,
                 "node '" + def.name + "' (" + def.op_type + ") needs 1 input and 1 output");
  if (in[0]->valid_elements() != out[0]->valid_elements())
    return error(kInvalidModel, "node '" + def.name + "' (" + def.op_type +
                                    "): input and output element counts differ");
  if (element_size(in[0]->data_type) == 0 || element_size(out[0]->data_type) == 0)
    return error(kInvalidModel, "node '" + def.name + "': unsupported data type");
  auto k = std::make_unique<CopyKernel>();
  if (dropout) {
    if (def.attrs.get_int("training_mode", 0) != 0)
      return op_error(def, "training_mode is not supported");
    k->mask = true;
    k->id.name = def.name;
    k->id.op_type = def.op_type;
    if (has_input(out, 1) && (out[1]->data_type != kBool8 || dims_of(*out[1]) != dims_of(*in[0])))
      return op_error(def, "mask must be bool with the input's shape");
  }
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_transpose(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                        const std::vector<const TensorDesc*>& out,
                        std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.size() != 1 || !out[0])
    return error(kInvalidModel, "node '" + def.name + "' (Transpose) needs 1 input and 1 output");
  const Dims src = dims_of(*in[0]);
  const Dims dst = dims_of(*out[0]);
  std::vector<int64_t> perm = def.attrs.get_ints("perm");
  if (perm.empty())  // ONNX default: reverse the dimensions
    for (size_t i = src.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != src.size() || dst.size() != src.size())
    return error(kInvalidModel,
                 "node '" + def.name + "' (Transpose): perm does not match the rank");
  std::vector<bool> seen(src.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(src.size()) || seen[static_cast<size_t>(p)])
      return error(kInvalidModel, "node '" + def.name + "' (Transpose): perm is not a permutation");
    seen[static_cast<size_t>(p)] = true;
    if (dst[i] != src[static_cast<size_t>(p)])
      return error(kInvalidModel,
                   "node '" + def.name + "' (Transpose): output shape does not match perm");
  }
  if (in[0]->data_type != out[0]->data_type || element_size(in[0]->data_type) == 0)
    return op_error(def, "output must have the input's data type");
  auto k = std::make_unique<PermuteKernel>();
  k->type = in[0]->data_type;
  Dims od;
  make_permute(src, perm, k.get(), &od);
  *kernel = std::move(k);
  return Status::Ok();
}

// DepthToSpace: DCR views X as [N, b, b, C/b^2, H, W] and permutes to
// [N, C/b^2, H, b, W, b]; CRD views it as [N, C/b^2, b, b, H, W].
// SpaceToDepth views X as [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b].
Status create_depth_space(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                          const std::vector<const TensorDesc*>& out,
                          std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs 1 input and 1 output");
  if (in[0]->data_type != out[0]->data_type || element_size(in[0]->data_type) == 0)
    return op_error(def, "output must have the input's data type");
  const Dims x = dims_of(*in[0]);
  const int64_t b = def.attrs.get_int("blocksize", 0);
  if (x.size() != 4 || b < 1) return op_error(def, "needs a 4-D input and blocksize >= 1");
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  Dims view, expect;
  std::vector<int64_t> perm;
  if (def.op_type == "DepthToSpace") {
    if (c % (b * b) != 0) return op_error(def, "channels must be a multiple of blocksize^2");
    const std::string mode = def.attrs.get_string("mode", "DCR");
    if (mode == "DCR") {
      view = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      view = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return op_error(def, "mode must be DCR or CRD");
    }
    expect = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) return op_error(def, "H and W must be multiples of blocksize");
    view = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    expect = {n, c * b * b, h / b, w / b};
  }
  if (dims_of(*out[0]) != expect) return op_error(def, "output shape must be " + dims_str(expect));
  auto k = std::make_unique<PermuteKernel>();
  k->type = in[0]->data_type;
  Dims od;
  make_permute(view, perm, k.get(), &od);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
