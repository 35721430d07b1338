// SPDX-License-Identifier: Apache-2.0
// Expand (broadcast the input to the output shape; the shape input is
// checked at run time) and Tile (repeats input, or the opset 1-5 tiles/axis
// inputs, checked at run time), any data type.
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class ExpandKernel final : public CpuKernel {
 public:
  BroadcastLoop<2> loop;
  int32_t type = kF32;
  Dims in_dims, out_dims;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    if (has_input(in, 1)) {
      Dims b;
      if (!broadcast_shape({in_dims, read_ints(in[1])}, &b) || b != out_dims)
        return op_error(id, "output shape " + dims_str(out_dims) +
                                " is not the broadcast of the input and shape");
    }
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    strided_copy(loop, element_size(type), x.data(), y.data());
    y.commit();
    return Status::Ok();
  }
};

class TileKernel final : public CpuKernel {
 public:
  int32_t type = kF32;
  Dims in_dims, out_dims;
  std::vector<std::vector<int64_t>> maps;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    if (has_input(in, 1) && !has_input(in, 2)) {
      const std::vector<int64_t> rep = read_ints(in[1]);
      bool ok = rep.size() == in_dims.size();
      for (size_t i = 0; ok && i < rep.size(); ++i) ok = in_dims[i] * rep[i] == out_dims[i];
      if (!ok)
        return op_error(id, "output shape " + dims_str(out_dims) + " does not match the repeats");
    }
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    uint64_t fill = 0;
    map_copy(in_dims, out_dims, maps, element_size(type), x.data(), y.data(),
             reinterpret_cast<const uint8_t*>(&fill));
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_expand(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !in[0] || present_count(in) > 2 || out.size() != 1 || !out[0])
    return op_error(def, "needs input (, shape) and 1 output");
  auto k = std::make_unique<ExpandKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  if (element_size(k->type) == 0 || out[0]->data_type != k->type)
    return op_error(def, "output must have the input's data type");
  k->in_dims = dims_of(*in[0]);
  k->out_dims = dims_of(*out[0]);
  Dims s;
  if (!broadcast_strides(k->in_dims, k->out_dims, &s))
    return op_error(
        def, "input " + dims_str(k->in_dims) + " does not broadcast to " + dims_str(k->out_dims));
  k->loop.init(k->out_dims, {elem_strides(k->out_dims), s});
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_tile(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !in[0] || present_count(in) > 3 || out.size() != 1 || !out[0])
    return op_error(def, "needs input, repeats and 1 output");
  auto k = std::make_unique<TileKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  if (element_size(k->type) == 0 || out[0]->data_type != k->type)
    return op_error(def, "output must have the input's data type");
  k->in_dims = dims_of(*in[0]);
  k->out_dims = dims_of(*out[0]);
  if (k->in_dims.size() != k->out_dims.size())
    return op_error(def, "output rank differs from the input's");
  k->maps.resize(k->in_dims.size());
  for (size_t a = 0; a < k->in_dims.size(); ++a) {
    const int64_t d = k->in_dims[a];
    if (d == 0 ? k->out_dims[a] != 0 : k->out_dims[a] % d != 0)
      return op_error(def, "output dims must be multiples of the input dims");
    for (int64_t o = 0; o < k->out_dims[a]; ++o) k->maps[a].push_back(o % d);
  }
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
