// SPDX-License-Identifier: Apache-2.0
// Slice (any data type). Opset < 10: starts/ends/axes attributes; opset 10+:
// inputs starts, ends, optional axes and steps (read at run time).
// Negative starts/ends count from the end; starts are clamped to [0, dim]
// ([0, dim-1] for negative steps) and ends to [0, dim] ([-1, dim-1]), so
// INT64_MAX / INT64_MIN mean "to the end".
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class SliceKernel final : public CpuKernel {
 public:
  bool attr_form = false;
  std::vector<int64_t> starts, ends, axes, steps;  // attribute form
  int32_t type = kF32;
  CpuOpDef id;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    std::vector<int64_t> st = starts, en = ends, ax = axes, sp = steps;
    if (!attr_form) {
      st = read_ints(in[1]);
      en = read_ints(in[2]);
      ax = has_input(in, 3) ? read_ints(in[3]) : std::vector<int64_t>{};
      sp = has_input(in, 4) ? read_ints(in[4]) : std::vector<int64_t>{};
    }
    const Dims x = dims_of(*in[0].desc), y = dims_of(*out[0].desc);
    const int64_t rank = static_cast<int64_t>(x.size());
    if (ax.empty())
      for (size_t i = 0; i < st.size(); ++i) ax.push_back(static_cast<int64_t>(i));
    if (sp.empty()) sp.assign(st.size(), 1);
    if (en.size() != st.size() || ax.size() != st.size() || sp.size() != st.size())
      return op_error(id, "starts, ends, axes and steps must have the same length");
    std::vector<int64_t> first(x.size(), 0), step(x.size(), 1);
    Dims expect = x;
    std::vector<bool> seen(x.size(), false);
    for (size_t i = 0; i < st.size(); ++i) {
      int64_t a;
      if (!norm_axis(ax[i], rank, &a) || seen[a]) return op_error(id, "bad or repeated axis");
      seen[a] = true;
      const int64_t d = x[a], s = sp[i];
      if (s == 0) return op_error(id, "steps must not be 0");
      int64_t b = st[i], e = en[i];
      if (b < 0) b += d;
      if (e < 0) e += d;
      if (s > 0) {
        b = std::max<int64_t>(0, std::min(b, d));
        e = std::max<int64_t>(0, std::min(e, d));
        expect[a] = e > b ? (e - b + s - 1) / s : 0;
      } else {
        b = std::max<int64_t>(0, std::min(b, d - 1));
        e = std::max<int64_t>(-1, std::min(e, d - 1));
        expect[a] = b > e ? (b - e + (-s) - 1) / (-s) : 0;
      }
      first[a] = b;
      step[a] = s;
    }
    if (expect != y)
      return op_error(
          id, "output shape " + dims_str(y) + " differs from the slice " + dims_str(expect));
    InBuf xb(in[0], type);
    OutBuf yb(out[0], type);
    std::vector<std::vector<int64_t>> maps(x.size());
    for (size_t a = 0; a < x.size(); ++a)
      for (int64_t o = 0; o < y[a]; ++o) maps[a].push_back(first[a] + o * step[a]);
    uint64_t fill = 0;
    map_copy(x, y, maps, element_size(type), xb.data(), yb.data(),
             reinterpret_cast<const uint8_t*>(&fill));
    yb.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_slice(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                    const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs data and 1 output");
  auto k = std::make_unique<SliceKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  if (element_size(k->type) == 0 || out[0]->data_type != k->type)
    return op_error(def, "output must have the input's data type");
  if (def.attrs.has("starts")) {
    k->attr_form = true;
    k->starts = def.attrs.get_ints("starts");
    k->ends = def.attrs.get_ints("ends");
    k->axes = def.attrs.get_ints("axes");
    if (present_count(in) != 1) return op_error(def, "attribute form takes 1 input");
  } else {
    if (present_count(in) < 3 || !in[1] || !in[2] || present_count(in) > 5)
      return op_error(def, "needs inputs data, starts, ends (, axes, steps)");
    for (size_t i = 1; i < in.size(); ++i)
      if (has_input(in, i) && in[i]->data_type != kS32 && in[i]->data_type != kS64)
        return op_error(def, "starts/ends/axes/steps must be int32 or int64");
  }
  if (dims_of(*out[0]).size() != dims_of(*in[0]).size())
    return op_error(def, "output rank differs from the input's");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
