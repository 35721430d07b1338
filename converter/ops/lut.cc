// SPDX-License-Identifier: Apache-2.0
// Table lookups: element-wise nonlinear functions as a 256-entry (int8) or
// 513-entry interpolated (int16) table of the output type. Each unit names
// its real function; the functions themselves are bpu_sim/isa/nonlinear.h's,
// the same the CPU operators compute.
#include <cmath>

#include "bpu_sim/isa/nonlinear.h"
#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

using ops::fail;
using Fn = std::function<double(double)>;
namespace fn = isa::fn;

bool place_unary(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  return ops::activation(g, n, why);
}

bool place_prelu(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  if (!ops::activation(g, n, why)) return false;
  const Value* s = ops::in_value(g, n, 1);
  if (s == nullptr || !s->is_constant() || s->elements() != 1) return fail(why, "only a scalar slope (per-channel slopes run on the CPU)");
  return true;
}

bool place_clip(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  return ops::activation(g, n, why) && ops::constant_params(g, n, "bounds", why);
}

// Entry i: the output's quantization of f at the real value of the input
// entry (zero points included).
template <class T>
std::vector<T> table(const Fn& f, const QParams& qi, const QParams& qo) {
  std::vector<T> t(static_cast<size_t>(isa::lut_entries(qi.dtype)));
  for (int i = 0; i < static_cast<int>(t.size()); ++i) {
    const double x = static_cast<double>(isa::lut_entry_input(qi.dtype, i) - qi.zero_point) * qi.scale;
    t[static_cast<size_t>(i)] = static_cast<T>(quantize(f(x), qo));
  }
  return t;
}

bool emit_lut(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const Fn f = op_table_function(ctx.graph, op);
  if (!f) return fail(e, "node '" + n.name + "': no table for " + n.op_type);
  const QParams& qi = ctx.qp(n.inputs[0]);
  const QParams& qo = ctx.qp(op.outputs[0]);
  isa::Lut l;
  l.in = ctx.ref(n.inputs[0]);
  l.out = ctx.ref(op.outputs[0]);
  l.table = qo.dtype == isa::DType::kInt8 ? ctx.pb.add_const(table<int8_t>(f, qi, qo))
                                          : ctx.pb.add_const(table<int16_t>(f, qi, qo));
  ctx.pb.emit(isa::Opcode::kLut, l);
  return true;
}

// ---- the functions -------------------------------------------------------------

float attr(const Node& n, const char* name, float dflt) { return n.attrs.get_float(name, dflt); }

Fn relu(const Graph&, const Node&) { return fn::relu<double>; }
Fn clip(const Graph& g, const Node& n) {
  double lo, hi;
  clip_bounds(g, n, &lo, &hi);
  return [lo, hi](double x) { return fn::clip(x, lo, hi); };
}
Fn leaky_relu(const Graph&, const Node& n) {
  const double a = attr(n, "alpha", 0.01f);
  return [a](double x) { return fn::leaky_relu(x, a); };
}
Fn prelu(const Graph& g, const Node& n) {
  double a = 0;
  const_scalar(g, n.inputs[1], &a);
  return [a](double x) { return fn::leaky_relu(x, a); };
}
Fn sigmoid(const Graph&, const Node&) { return fn::sigmoid<double>; }
Fn tanh_(const Graph&, const Node&) { return [](double x) { return std::tanh(x); }; }
Fn hard_sigmoid(const Graph&, const Node& n) {
  const double a = attr(n, "alpha", 0.2f), b = attr(n, "beta", 0.5f);
  return [a, b](double x) { return fn::hard_sigmoid(x, a, b); };
}
Fn hard_swish(const Graph&, const Node&) { return fn::hard_swish<double>; }
Fn swish(const Graph&, const Node&) { return fn::swish<double>; }
Fn gelu(const Graph&, const Node&) { return fn::gelu<double>; }
Fn elu(const Graph&, const Node& n) {
  const double a = attr(n, "alpha", 1.0f);
  return [a](double x) { return fn::elu(x, a); };
}
Fn selu(const Graph&, const Node& n) {
  const double a = attr(n, "alpha", 1.67326319f), g = attr(n, "gamma", 1.05070102f);
  return [a, g](double x) { return fn::selu(x, a, g); };
}
Fn softplus(const Graph&, const Node&) { return fn::softplus<double>; }
Fn exp_(const Graph&, const Node&) { return [](double x) { return std::exp(x); }; }
Fn erf_(const Graph&, const Node&) { return [](double x) { return std::erf(x); }; }
Fn abs_(const Graph&, const Node&) { return [](double x) { return std::fabs(x); }; }
Fn neg(const Graph&, const Node&) { return [](double x) { return -x; }; }
Fn reciprocal(const Graph&, const Node&) { return fn::reciprocal<double>; }
Fn sqrt_(const Graph&, const Node&) { return [](double x) { return std::sqrt(x); }; }

constexpr const char* kTable = "table lookup";

}  // namespace

// Relu and Clip fold into the clamp of the op producing their input when it
// takes an activation (Fusion::kActivation); alone they are tables.
const OpUnit kReluUnit = {
    .id = OpId::kRelu, .domain = "", .op_type = "Relu", .place = place_unary, .table_type = "HzLut",
    .limits = "table lookup (fused into the producing conv when possible)", .output_scale = OutputScale::kCalibrated,
    .int32_tail = nullptr, .fusion = Fusion::kActivation, .passive = false, .view = false, .emit = emit_lut,
    .lut = relu, .zero_points = ZeroPoints::kAll};

const OpUnit kClipUnit = {
    .id = OpId::kClip, .domain = "", .op_type = "Clip", .place = place_clip, .table_type = "HzLut",
    .limits = "constant bounds (fused into the producing conv when possible)", .output_scale = OutputScale::kCalibrated,
    .int32_tail = nullptr, .fusion = Fusion::kActivation, .passive = false, .view = false, .emit = emit_lut,
    .lut = clip, .zero_points = ZeroPoints::kAll};

Fn op_table_function(const Graph& g, const Op& op) {
  Fn f = op.unit->lut != nullptr ? op.unit->lut(g, g.nodes[op.nodes[0]]) : nullptr;
  if (!f) return f;
  std::string x = g.nodes[op.nodes[0]].outputs[0];
  for (size_t i = 1; i < op.nodes.size(); ++i) {
    const Node& n = g.nodes[op.nodes[i]];
    double a, b;
    if (!scalar_affine(g, n, x, &a, &b)) return nullptr;
    f = [f, a, b](double v) { return a * f(v) + b; };
    x = n.outputs[0];
  }
  return f;
}

// A table lookup absorbs the scalar Mul / Add / Sub / Div after it
// (Fusion::kTakesAffine): one rounding instead of one per node.
#define OPENBPU_LUT_UNIT(Name, domain_, place_, limits_, fn_)                                                        \
  const OpUnit k##Name##Unit = {.id = OpId::k##Name, .domain = domain_, .op_type = #Name, .place = place_,          \
                                .table_type = "HzLut", .limits = limits_, .output_scale = OutputScale::kCalibrated, \
                                .int32_tail = nullptr, .fusion = Fusion::kTakesAffine, .passive = false, .view = false, \
                                .emit = emit_lut, .lut = fn_, .zero_points = ZeroPoints::kAll}

OPENBPU_LUT_UNIT(LeakyRelu, "", place_unary, kTable, leaky_relu);
OPENBPU_LUT_UNIT(PRelu, "", place_prelu, "scalar slope", prelu);
OPENBPU_LUT_UNIT(Sigmoid, "", place_unary, kTable, sigmoid);
OPENBPU_LUT_UNIT(Tanh, "", place_unary, kTable, tanh_);
OPENBPU_LUT_UNIT(HardSigmoid, "", place_unary, kTable, hard_sigmoid);
OPENBPU_LUT_UNIT(HardSwish, "", place_unary, kTable, hard_swish);
OPENBPU_LUT_UNIT(Swish, "openbpu", place_unary, kTable, swish);
OPENBPU_LUT_UNIT(Gelu, "openbpu", place_unary, kTable, gelu);
OPENBPU_LUT_UNIT(Elu, "", place_unary, kTable, elu);
OPENBPU_LUT_UNIT(Selu, "", place_unary, kTable, selu);
OPENBPU_LUT_UNIT(Softplus, "", place_unary, kTable, softplus);
OPENBPU_LUT_UNIT(Exp, "", place_unary, kTable, exp_);
OPENBPU_LUT_UNIT(Erf, "", place_unary, kTable, erf_);
OPENBPU_LUT_UNIT(Abs, "", place_unary, kTable, abs_);
OPENBPU_LUT_UNIT(Neg, "", place_unary, kTable, neg);
OPENBPU_LUT_UNIT(Reciprocal, "", place_unary, "table lookup (1/0 saturates to the output range)", reciprocal);
OPENBPU_LUT_UNIT(Sqrt, "", place_unary, "table lookup (negative inputs give 0)", sqrt_);
#undef OPENBPU_LUT_UNIT

}  // namespace openbpu::cvt
