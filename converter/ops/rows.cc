// SPDX-License-Identifier: Apache-2.0
// Row reductions: Softmax (table-lookup exponent) and LayerNormalization
// over the last axis (the converter's fused form of the decomposed
// ReduceMean/Sub/Pow/Sqrt/Div pattern, or the ONNX operator), as the
// kSoftmax / kLayerNorm instructions along dim 3 of a strided view.
#include <algorithm>
#include <cmath>

#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

using isa::TensorRef;
using ops::fail;

// The normalized axis of a node (axis attribute, default -1) for rank r.
int64_t row_axis(const Node& n, size_t rank) {
  int64_t a = n.attrs.get_int("axis", -1);
  return a < 0 ? a + static_cast<int64_t>(rank) : a;
}

bool place_rows_common(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!march.limits.rows) return fail(why, "row reductions run on the CPU on this march");
  if (!ops::activation(g, n, why)) return false;
  const Value* x = ops::in_value(g, n, 0);
  if (x->shape.back() > isa::kMaxRowLength) return fail(why, "the row is longer than 65536");
  return true;
}

// Softmax along one axis (opset >= 13), or the last axis (any opset).
bool place_softmax(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!place_rows_common(g, n, march, why)) return false;
  const size_t rank = ops::in_value(g, n, 0)->shape.size();
  const int64_t axis = row_axis(n, rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return fail(why, "axis out of range");
  if (g.opset < 13 && axis != static_cast<int64_t>(rank) - 1)
    return fail(why, "before opset 13 only along the last axis (the 2-D coercion otherwise)");
  return true;
}

// Normalization over the last axis with constant scale and bias of its length.
bool place_layernorm(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!place_rows_common(g, n, march, why)) return false;
  const Value* x = ops::in_value(g, n, 0);
  if (row_axis(n, x->shape.size()) != static_cast<int64_t>(x->shape.size()) - 1)
    return fail(why, "only over the last axis");
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty() && !g.consumers(n.outputs[i]).empty()) return fail(why, "the Mean/InvStdDev outputs are used");
  if (!ops::constant_params(g, n, "scale and bias", why)) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && static_cast<int64_t>(const_floats(g, n.inputs[i]).size()) != x->shape.back())
      return fail(why, "scale or bias is not a vector of the normalized length");
  return true;
}

// The [D0, D1, D2, L] view of a value with ONNX axis `axis` as the row.
TensorRef row_view(const LoweringContext& ctx, const std::string& v, int64_t axis) {
  const TensorRef base = ctx.ref(v);
  const Dims4 d = ops::logical_dims(base);
  const std::array<int64_t, 4> st = ops::logical_strides(base);
  const int row = logical_axis4(static_cast<int>(ctx.value(v).shape.size()), axis);
  TensorRef r = base;
  for (int k = 0; k < isa::kMaxRank; ++k) r.dims[k] = 1, r.strides[k] = 0;
  int at = 0;
  for (int k = 0; k < 4; ++k) {
    const int to = k == row ? 3 : at++;
    r.dims[to] = static_cast<int32_t>(d[static_cast<size_t>(k)]), r.strides[to] = st[static_cast<size_t>(k)];
  }
  return r;
}

bool emit_softmax(LoweringContext& ctx, const Op& op, std::string*) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const int64_t axis = row_axis(n, ctx.value(x).shape.size());
  isa::Softmax s;
  s.in = row_view(ctx, x, axis);
  s.out = row_view(ctx, y, axis);
  const std::vector<int32_t> table = isa::softmax_exp_table(ctx.qp(x).scale, &s.table_shift);
  s.table = ctx.pb.add_const(table.data(), table.size() * sizeof(int32_t), static_cast<uint32_t>(table.size()));
  const QParams& qo = ctx.qp(y);
  isa::quantize_multiplier(1.0 / qo.scale, &s.multiplier, &s.shift, 31);
  s.act_min = qmin(qo.dtype), s.act_max = qmax(qo.dtype);
  ctx.pb.emit(isa::Opcode::kSoftmax, s);
  return true;
}

// n = Q12 normalized value; y = (n * gamma_q + beta_q) * s_g / 4096, with
// gamma_q = gamma / s_g in int16 range and beta at the accumulator's scale.
bool emit_layernorm(LoweringContext& ctx, const Op& op, std::string*) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const auto rank = static_cast<int64_t>(ctx.value(x).shape.size());
  const int64_t len = ctx.value(x).shape.back();
  std::vector<float> gamma(static_cast<size_t>(len), 1.0f), beta(static_cast<size_t>(len), 0.0f);
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) gamma = ctx.floats(n.inputs[1]);
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) beta = ctx.floats(n.inputs[2]);
  float gmax = 0;
  for (float g : gamma) gmax = std::max(gmax, std::fabs(g));
  const double sg = gmax > 0 ? gmax / 32767.0 : 1.0, acc_scale = sg / 4096.0;
  std::vector<int32_t> gq(gamma.size());
  std::vector<int64_t> bq(beta.size());
  const double bmax = std::ldexp(1.0, 40) - 1;
  for (size_t i = 0; i < gamma.size(); ++i) {
    gq[i] = static_cast<int32_t>(std::lround(gamma[i] / sg));
    bq[i] = static_cast<int64_t>(std::llround(std::clamp(beta[i] / acc_scale, -bmax, bmax)));
  }
  isa::LayerNorm l;
  l.in = row_view(ctx, x, rank - 1);
  l.out = row_view(ctx, y, rank - 1);
  l.gamma = ctx.pb.add_const(gq.data(), gq.size() * sizeof(int32_t), static_cast<uint32_t>(gq.size()));
  l.beta = ctx.pb.add_const(bq.data(), bq.size() * sizeof(int64_t), static_cast<uint32_t>(bq.size()));
  const double s_in = ctx.qp(x).scale;
  const double eps = n.attrs.get_float("epsilon", 1e-5f) * static_cast<double>(len) * len / (s_in * s_in);
  l.eps = static_cast<int64_t>(std::llround(std::min(eps, std::ldexp(1.0, 62) - 1)));
  const QParams& qo = ctx.qp(y);
  isa::quantize_multiplier(acc_scale / qo.scale, &l.multiplier, &l.shift);
  ops::act_bounds(ctx, op.act_min_node, qo, &l.act_min, &l.act_max);
  ctx.pb.emit(isa::Opcode::kLayerNorm, l);
  return true;
}

}  // namespace

const OpUnit kSoftmaxUnit = {
    .id = OpId::kSoftmax, .domain = "", .op_type = "Softmax", .place = place_softmax,
    .table_type = "HzSoftmax",
    .limits = "one axis (the last before opset 13), table-lookup exponent; at the model's head or tail on the CPU; "
              "bayes, bayes-e, nash only",
    .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kNone,
    .passive = true, .view = false, .emit = emit_softmax};

const OpUnit kLayerNormalizationUnit = {
    .id = OpId::kLayerNormalization, .domain = "", .op_type = "LayerNormalization", .place = place_layernorm,
    .table_type = "HzLayerNorm",
    .limits = "last axis, constant scale and bias (also the decomposed ReduceMean/Sub/Pow/Sqrt/Div form); "
              "bayes, bayes-e, nash only",
    .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kTakesActivation,
    .passive = false, .view = false, .emit = emit_layernorm};

}  // namespace openbpu::cvt
