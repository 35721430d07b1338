// SPDX-License-Identifier: Apache-2.0
// Concat and Split (any data type; block copies along the axis).
// Split's part sizes are the output descriptions' sizes along the axis; the
// `split` attribute (opset < 13) or second input (opset 13+) are checked
// against them when known (the input at run time).
#include <cstring>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class ConcatKernel final : public CpuKernel {
 public:
  int64_t outer = 1, inner_bytes = 0;  // inner_bytes: bytes per unit of the axis
  std::vector<int64_t> lens;           // per input, along the axis
  int32_t type = kF32;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    OutBuf y(out[0], type);
    std::vector<InBuf> xs;
    xs.reserve(in.size());
    for (const auto& t : in) xs.emplace_back(t, type);
    int64_t total = 0;
    for (int64_t l : lens) total += l;
    const int64_t row = total * inner_bytes;
    int64_t col = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const int64_t blk = lens[i] * inner_bytes;
      const uint8_t* src = xs[i].data();
      uint8_t* dst = y.data() + col;
      for (int64_t o = 0; o < outer && blk > 0; ++o)
        std::memcpy(dst + o * row, src + o * blk, static_cast<size_t>(blk));
      col += blk;
    }
    y.commit();
    return Status::Ok();
  }
};

class SplitKernel final : public CpuKernel {
 public:
  int64_t outer = 1, inner_bytes = 0, total = 0;
  std::vector<int64_t> lens;  // per output
  int32_t type = kF32;
  CpuOpDef id;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    if (has_input(in, 1)) {
      const std::vector<int64_t> split = read_ints(in[1]);
      if (split != lens) return op_error(id, "split sizes differ from the output shapes");
    }
    InBuf x(in[0], type);
    const int64_t row = total * inner_bytes;
    int64_t col = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t blk = lens[i] * inner_bytes;
      if (has_input(out, i)) {
        OutBuf y(out[i], type);
        for (int64_t o = 0; o < outer && blk > 0; ++o)
          std::memcpy(y.data() + o * blk, x.data() + o * row + col, static_cast<size_t>(blk));
        y.commit();
      }
      col += blk;
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_concat(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || out.size() != 1 || !out[0]) return op_error(def, "needs inputs and 1 output");
  const Dims y = dims_of(*out[0]);
  int64_t axis;
  if (!def.attrs.has("axis") && opset_of(def) >= 4) return op_error(def, "axis is required");
  if (!norm_axis(def.attrs.get_int("axis", 1), static_cast<int64_t>(y.size()), &axis))
    return op_error(def, "axis out of range");
  auto k = std::make_unique<ConcatKernel>();
  k->type = out[0]->data_type;
  if (element_size(k->type) == 0) return op_error(def, "unsupported data type");
  int64_t total = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i]) return op_error(def, "input " + std::to_string(i) + " is missing");
    if (in[i]->data_type != k->type)
      return op_error(def, "inputs and output must have the same data type");
    Dims d = dims_of(*in[i]);
    if (d.size() != y.size()) return op_error(def, "inputs must have the output's rank");
    for (size_t a = 0; a < d.size(); ++a)
      if (static_cast<int64_t>(a) != axis && d[a] != y[a])
        return op_error(def, "input " + std::to_string(i) + " of shape " + dims_str(d) +
                                 " does not match the output " + dims_str(y) + " off the axis");
    k->lens.push_back(d[axis]);
    total += d[axis];
  }
  if (total != y[axis])
    return op_error(def, "input sizes along the axis do not add up to the output's");
  k->outer = count_of(Dims(y.begin(), y.begin() + axis));
  k->inner_bytes = count_of(Dims(y.begin() + axis + 1, y.end())) * element_size(k->type);
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_split(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                    const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !in[0] || present_count(in) > 2 || out.empty())
    return op_error(def, "needs input (, split) and outputs");
  const Dims x = dims_of(*in[0]);
  int64_t axis;
  if (!norm_axis(def.attrs.get_int("axis", 0), static_cast<int64_t>(x.size()), &axis))
    return op_error(def, "axis out of range");
  auto k = std::make_unique<SplitKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  if (element_size(k->type) == 0) return op_error(def, "unsupported data type");
  int64_t total = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i])
      return op_error(
          def, "absent outputs need a known size; output " + std::to_string(i) + " is absent");
    if (out[i]->data_type != k->type)
      return op_error(def, "outputs must have the input's data type");
    const Dims d = dims_of(*out[i]);
    if (d.size() != x.size()) return op_error(def, "outputs must have the input's rank");
    for (size_t a = 0; a < d.size(); ++a)
      if (static_cast<int64_t>(a) != axis && d[a] != x[a])
        return op_error(def, "output shapes differ off the axis");
    k->lens.push_back(d[axis]);
    total += d[axis];
  }
  if (total != x[axis])
    return op_error(def, "output sizes along the axis do not add up to the input's");
  if (def.attrs.has("split") && def.attrs.get_ints("split") != k->lens)
    return op_error(def, "the split attribute differs from the output shapes");
  k->total = total;
  k->outer = count_of(Dims(x.begin(), x.begin() + axis));
  k->inner_bytes = count_of(Dims(x.begin() + axis + 1, x.end())) * element_size(k->type);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
