// SPDX-License-Identifier: Apache-2.0
// Pad (any data type): modes constant, reflect, edge and wrap. Opset < 11:
// `pads` and `value` attributes; opset 11+: pads input (int64) and optional
// constant_value input; opset 18+: optional axes input. Negative pads crop.
// reflect mirrors without repeating the edge element (numpy 'reflect').
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class Mode { kConstant, kReflect, kEdge, kWrap };

class PadKernel final : public CpuKernel {
 public:
  Mode mode = Mode::kConstant;
  bool attr_form = false;
  std::vector<int64_t> pads;  // attribute form
  double value = 0.0;         // attribute form
  int32_t type = kF32;
  CpuOpDef id;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const Dims x = dims_of(*in[0].desc), y = dims_of(*out[0].desc);
    const size_t r = x.size();
    std::vector<int64_t> p = pads;
    uint64_t fill = 0;
    uint8_t* fp = reinterpret_cast<uint8_t*>(&fill);
    store_from_double(type, value, fp);
    if (!attr_form) {
      const std::vector<int64_t> given = read_ints(in[1]);
      if (has_input(in, 2) && count_of(dims_of(*in[2].desc)) > 0) {
        InBuf v(in[2], type);
        std::memcpy(fp, v.data(), static_cast<size_t>(element_size(type)));
      }
      if (has_input(in, 3)) {
        const std::vector<int64_t> axes = read_ints(in[3]);
        if (given.size() != 2 * axes.size())
          return op_error(id, "pads must have 2 entries per axis");
        p.assign(2 * r, 0);
        for (size_t i = 0; i < axes.size(); ++i) {
          int64_t a;
          if (!norm_axis(axes[i], static_cast<int64_t>(r), &a))
            return op_error(id, "axis out of range");
          p[a] = given[i];
          p[a + r] = given[i + axes.size()];
        }
      } else {
        p = given;
      }
    }
    if (p.size() != 2 * r) return op_error(id, "pads must have 2 * rank entries");
    std::vector<std::vector<int64_t>> maps(r);
    for (size_t a = 0; a < r; ++a) {
      const int64_t d = x[a], b = p[a];
      if (d + b + p[a + r] != y[a])
        return op_error(id, "output shape " + dims_str(y) + " does not match the pads");
      for (int64_t o = 0; o < y[a]; ++o) {
        int64_t i = o - b;
        if (i < 0 || i >= d) {
          if (mode == Mode::kConstant || d == 0) {
            if (d == 0 && mode != Mode::kConstant)
              return op_error(id, "cannot " + std::string("reflect/edge-pad an empty axis"));
            i = -1;
          } else if (mode == Mode::kEdge) {
            i = i < 0 ? 0 : d - 1;
          } else if (mode == Mode::kWrap) {
            i = ((i % d) + d) % d;
          } else if (d == 1) {
            i = 0;
          } else {
            const int64_t period = 2 * (d - 1);
            i = ((i % period) + period) % period;
            if (i >= d) i = period - i;
          }
        }
        maps[a].push_back(i);
      }
    }
    InBuf xb(in[0], type);
    OutBuf yb(out[0], type);
    map_copy(x, y, maps, element_size(type), xb.data(), yb.data(), fp);
    yb.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_pad(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                  const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs data and 1 output");
  auto k = std::make_unique<PadKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  if (element_size(k->type) == 0 || out[0]->data_type != k->type)
    return op_error(def, "output must have the input's data type");
  const std::string mode = def.attrs.get_string("mode", "constant");
  if (mode == "constant")
    k->mode = Mode::kConstant;
  else if (mode == "reflect")
    k->mode = Mode::kReflect;
  else if (mode == "edge")
    k->mode = Mode::kEdge;
  else if (mode == "wrap")
    k->mode = Mode::kWrap;
  else
    return op_error(def, "unknown mode '" + mode + "'");
  if (def.attrs.has("pads") || (opset_of(def) < 11 && present_count(in) == 1)) {
    k->attr_form = true;
    k->pads = def.attrs.get_ints("pads");
    k->value = def.attrs.get_float("value", 0.0f);
    if (present_count(in) != 1) return op_error(def, "attribute form takes 1 input");
  } else {
    if (!has_input(in, 1) || present_count(in) > 4)
      return op_error(def, "needs inputs data, pads (, constant_value, axes)");
    if (in[1]->data_type != kS64) return op_error(def, "pads must be int64");
    if (has_input(in, 2) && in[2]->data_type != k->type)
      return op_error(def, "constant_value must have the data's type");
  }
  if (dims_of(*out[0]).size() != dims_of(*in[0]).size())
    return op_error(def, "output rank differs from the input's");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
