// SPDX-License-Identifier: Apache-2.0
// Element-wise binary operators with numpy broadcasting: Add, Sub, Mul, Max,
// Min, and Div by a scalar constant (a requantized copy).
#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

using isa::TensorRef;
using ops::fail;

// Both operands broadcastable to the output, the output 1..4-D. A constant
// operand is stored in the program.
bool place_binary(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  if (n.inputs.size() != 2) return fail(why, "needs two inputs");
  const Value* a = ops::in_value(g, n, 0);
  const Value* b = ops::in_value(g, n, 1);
  const Value* y = g.value(n.outputs[0]);
  if (!a || !b || !y || !y->shape_known() || y->shape.empty() || y->shape.size() > 4) return fail(why, "output rank is not 1..4");
  if (a->is_constant() && b->is_constant()) return fail(why, "both inputs are constant");
  if (a->elem_type != kFloat || b->elem_type != kFloat) return fail(why, "operands are not float32");
  for (const Value* v : {a, b}) {
    if (!v->shape_known() || v->shape.size() > y->shape.size()) return fail(why, "operand rank exceeds the output rank");
    // numpy broadcasting: each operand dim equals the output's or is 1
    const size_t off = y->shape.size() - v->shape.size();
    for (size_t d = 0; d < v->shape.size(); ++d)
      if (v->shape[d] != 1 && v->shape[d] != y->shape[off + d]) return fail(why, "operands do not broadcast");
  }
  return true;
}

bool place_div(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  double c;
  if (n.inputs.size() != 2 || !const_scalar(g, n.inputs[1], &c) || c == 0.0)
    return fail(why, "only division by a non-zero scalar constant");
  return ops::activation(g, n, why);
}

// Operand view broadcast to the output's logical dims. ONNX aligns the
// operand's axes to the output's trailing axes; an activation is stored with
// the logical dims of its own rank (rank 2 [a, b] as (a, b, 1, 1)), so its
// strides move to the logical positions of the aligned output axes. A
// constant is stored with the aligned shape. Broadcast axes get stride 0.
TensorRef broadcast(LoweringContext& ctx, const std::string& v, float* scale, const Dims4& out_dims, int out_rank) {
  const Value& val = ctx.value(v);
  std::vector<int64_t> s = val.shape;
  while (static_cast<int>(s.size()) < out_rank) s.insert(s.begin(), 1);
  TensorRef r;
  std::array<int64_t, 4> own_st;
  int own_rank = out_rank;
  if (val.is_constant()) {
    r = ctx.const_tensor(v, logical4(s), scale);
    own_st = native_strides(logical4(s), ctx.align());
  } else {
    r = ctx.ref(v);
    *scale = ctx.qp(v).scale;
    own_st = ops::logical_strides(r);
    own_rank = static_cast<int>(val.shape.size());
  }
  std::array<int64_t, 4> st = {0, 0, 0, 0};
  const int lead = out_rank - own_rank;
  for (int i = 0; i < own_rank; ++i) {
    const size_t to = static_cast<size_t>(logical_axis4(out_rank, lead + i));
    if (s[static_cast<size_t>(lead + i)] == out_dims[to])
      st[to] = own_st[static_cast<size_t>(logical_axis4(own_rank, i))];
  }
  return ops::with_logical(r, out_dims, st);
}

// x / c == x * (1/c): a requantized move when c is positive, else an
// element-wise product with the scalar constant 1/c (stored as -127 with the
// scale |1/c| / 127, exact).
bool emit_div(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& y = op.outputs[0];
  double c = 1;
  const_scalar(ctx.graph, n.inputs[1], &c);
  const Dims4 od = ctx.dims(y);
  float sa = 1;
  const TensorRef in = broadcast(ctx, n.inputs[0], &sa, od, static_cast<int>(ctx.value(y).shape.size()));
  if (!(c != 0.0)) return fail(e, "node '" + n.name + "': division by zero");
  if (c > 0) {
    isa::Move m;
    m.in = in;
    m.out = ctx.ref(y);
    m.requantize = 1;
    isa::requant_multiplier(sa / c / ctx.qp(y).scale, &m.multiplier, &m.shift);
    ctx.pb.emit(isa::Opcode::kMove, m);
    return true;
  }
  const int8_t q = -127;
  const isa::ConstRef k = ctx.pb.add_const(&q, 1, 1);
  isa::Eltwise el;
  el.kind = isa::EltwiseKind::kMul;
  el.a = in;
  el.b = ops::with_logical(native_ref(isa::Region::kConst, 0, k.offset, {1, 1, 1, 1}, isa::DType::kInt8, ctx.align()),
                           od, {0, 0, 0, 0});
  el.out = ctx.ref(y);
  const QParams& qo = ctx.qp(y);
  isa::quantize_multiplier(sa * (-1.0 / c / 127.0) / qo.scale, &el.multiplier_a, &el.shift);
  el.act_min = qmin(qo.dtype), el.act_max = qmax(qo.dtype);
  ctx.pb.emit(isa::Opcode::kEltwise, el);
  return true;
}

bool emit_eltwise(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& y = op.outputs[0];
  const Dims4 od = ctx.dims(y);
  const int rank = static_cast<int>(ctx.value(y).shape.size());
  const QParams& qo = ctx.qp(y);
  isa::Eltwise el;
  float sa = 1, sb = 1;
  el.out = ctx.ref(y);
  el.a = broadcast(ctx, n.inputs[0], &sa, od, rank);
  el.b = broadcast(ctx, n.inputs[1], &sb, od, rank);
  if (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Max" || n.op_type == "Min") {
    el.kind = n.op_type == "Add" ? isa::EltwiseKind::kAdd
              : n.op_type == "Sub" ? isa::EltwiseKind::kSub
              : n.op_type == "Max" ? isa::EltwiseKind::kMax
                                   : isa::EltwiseKind::kMin;
    isa::quantize_multiplier_pair(sa / qo.scale, sb / qo.scale, &el.multiplier_a, &el.multiplier_b, &el.shift);
  } else if (n.op_type == "Mul") {
    el.kind = isa::EltwiseKind::kMul;
    isa::quantize_multiplier(static_cast<double>(sa) * sb / qo.scale, &el.multiplier_a, &el.shift);
  } else {
    return fail(e, "node '" + n.name + "': unsupported element-wise operator " + n.op_type);
  }
  auto zero = [&](const std::string& v) { return ctx.value(v).is_constant() ? 0 : ctx.qp(v).zero_point; };
  el.zero_a = zero(n.inputs[0]), el.zero_b = zero(n.inputs[1]), el.zero_out = qo.zero_point;
  ops::act_bounds(ctx, op.act_min_node, qo, &el.act_min, &el.act_max);
  ctx.pb.emit(isa::Opcode::kEltwise, el);
  return true;
}

constexpr const char* kBroadcast = "numpy broadcasting, rank <= 4";
constexpr const char* kTwoInputs = "two inputs, numpy broadcasting";

}  // namespace

const OpUnit kAddUnit = {
    .id = OpId::kAdd, .domain = "", .op_type = "Add", .place = place_binary, .table_type = "HzSElementwiseAdd",
    .limits = kBroadcast, .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr,
    .fusion = Fusion::kTakesActivation, .passive = false, .view = false, .emit = emit_eltwise,
    .zero_points = ZeroPoints::kAll};

const OpUnit kSubUnit = {
    .id = OpId::kSub, .domain = "", .op_type = "Sub", .place = place_binary, .table_type = "HzSElementwiseSub",
    .limits = kBroadcast, .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr,
    .fusion = Fusion::kTakesActivation, .passive = false, .view = false, .emit = emit_eltwise,
    .zero_points = ZeroPoints::kAll};

const OpUnit kMulUnit = {
    .id = OpId::kMul, .domain = "", .op_type = "Mul", .place = place_binary, .table_type = "HzSElementwiseMul",
    .limits = kBroadcast, .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr,
    .fusion = Fusion::kTakesActivation, .passive = false, .view = false, .emit = emit_eltwise,
    .zero_points = ZeroPoints::kAll};

const OpUnit kDivUnit = {
    .id = OpId::kDiv, .domain = "", .op_type = "Div", .place = place_div, .table_type = "HzSElementwiseMul",
    .limits = "division by a scalar constant", .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr,
    .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_div};

const OpUnit kMaxUnit = {
    .id = OpId::kMax, .domain = "", .op_type = "Max", .place = place_binary, .table_type = "HzSElementwiseMax",
    .limits = kTwoInputs, .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr,
    .fusion = Fusion::kTakesActivation, .passive = false, .view = false, .emit = emit_eltwise,
    .zero_points = ZeroPoints::kAll};

const OpUnit kMinUnit = {
    .id = OpId::kMin, .domain = "", .op_type = "Min", .place = place_binary, .table_type = "HzSElementwiseMin",
    .limits = kTwoInputs, .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr,
    .fusion = Fusion::kTakesActivation, .passive = false, .view = false, .emit = emit_eltwise,
    .zero_points = ZeroPoints::kAll};

}  // namespace openbpu::cvt
