// SPDX-License-Identifier: Apache-2.0
// MatMul of two activations (attention's Q*K^T and P*V): the kMatMul
// instruction over strided views, so batch broadcasting and a transposed
// operand cost no copy. A MatMul with a constant weight on a 2-D input is a
// convolution (the gemm_to_conv pass); on 3-D/4-D tokens (a transformer's
// Linear layers) it is a kMatMul whose second operand is the int8 weight in
// the program's constants (one symmetric scale per tensor).
#include <algorithm>
#include <cmath>
#include <vector>

#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"

namespace openbpu::cvt {

namespace {

using isa::TensorRef;
using ops::fail;

// Float operands of rank 2..4 (at most one constant) whose batch axes
// broadcast (numpy) to the output's, depth within the instruction's limit.
bool place_matmul(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!march.limits.matmul)
    return fail(why, "products of two activations run on the CPU on this march (no activation x activation datapath)");
  if (n.inputs.size() != 2) return fail(why, "needs two inputs");
  const Value* a = ops::in_value(g, n, 0);
  const Value* b = ops::in_value(g, n, 1);
  const Value* y = g.value(n.outputs[0]);
  if (!a || !b || !y || !a->shape_known() || !b->shape_known() || !y->shape_known())
    return fail(why, "operand shapes are unknown");
  if (a->is_constant() && b->is_constant()) return fail(why, "both operands are constant");
  if (a->elem_type != kFloat || b->elem_type != kFloat) return fail(why, "operands are not float32");
  const size_t ra = a->shape.size(), rb = b->shape.size(), ry = y->shape.size();
  if (ra < 2 || rb < 2 || ry > 4) return fail(why, "operands of rank 2..4 only (no 1-D operand)");
  if (a->shape[ra - 1] != b->shape[rb - 2]) return fail(why, "inner dimensions differ");
  if (a->shape[ra - 1] > isa::kMaxMatMulDepth) return fail(why, "inner dimension exceeds the matmul depth limit");
  for (const Value* v : {a, b})
    for (size_t d = 0; d + 2 < v->shape.size(); ++d) {
      const int64_t yd = y->shape[ry - v->shape.size() + d];
      if (v->shape[d] != 1 && v->shape[d] != yd) return fail(why, "batch dimensions do not broadcast");
    }
  return true;
}

// A constant second operand quantized per column (its last axis, the
// output's columns): int8 with the scale max|column| / 127, stored in the
// native layout of its shape. One outlier weight then costs only its column.
// With weights rounded for the output error (rank 2, int16 first operand;
// RoundedWeights rows = columns), those are stored instead of the nearest.
TensorRef const_columns(LoweringContext& ctx, const Node& n, const std::string& v, std::vector<double>* scales) {
  const std::vector<int64_t>& s = ctx.value(v).shape;
  const Dims4 d = logical4(s);
  const int col = static_cast<int>(s.size()) - 1;  // rank >= 2: logical axis = ONNX axis
  const std::vector<float> data = ctx.floats(v);
  const auto ncol = static_cast<size_t>(s.back());
  scales->assign(ncol, 0.0);
  for (size_t i = 0; i < data.size(); ++i) (*scales)[i % ncol] = std::max<double>((*scales)[i % ncol], std::fabs(data[i]));
  for (double& x : *scales) x = x > 0 ? x / 127.0 : 1.0;
  const RoundedWeights* rw =
      s.size() == 2 && ctx.qp(n.inputs[0]).dtype == isa::DType::kInt16 ? ctx.rounded(n.name, ncol) : nullptr;
  std::vector<int8_t> buf(native_bytes(d, isa::DType::kInt8, ctx.align()), 0);
  const auto st = native_strides(d, ctx.align());
  size_t i = 0;
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t c = 0; c < d[2]; ++c)
        for (int64_t e = 0; e < d[3]; ++e) {
          const int64_t idx[4] = {a, b, c, e};
          const float sc = static_cast<float>((*scales)[static_cast<size_t>(idx[col])]);
          // data[i] is row k = i / ncol, column i % ncol; rounded weights are [column][k]
          buf[static_cast<size_t>(a * st[0] + b * st[1] + c * st[2] + e * st[3])] =
              LoweringContext::row_rounded_at(rw, i % ncol, sc) ? rw->q[i % ncol * (data.size() / ncol) + i / ncol]
                            : static_cast<int8_t>(quantize(data[i], sc, isa::DType::kInt8));
          ++i;
        }
  const isa::ConstRef k = ctx.pb.add_const(buf.data(), buf.size(), static_cast<uint32_t>(buf.size()));
  return native_ref(isa::Region::kConst, 0, k.offset, d, isa::DType::kInt8, ctx.align());
}

// The [B0, B1, rows, cols] view of an operand of the output's batch rank
// and its scale (a constant is stored first): its ONNX axis i has the
// logical stride st[i]; a batch axis of size 1 against a larger output axis
// is broadcast (stride 0).
TensorRef matmul_view(LoweringContext& ctx, const std::string& v, const std::vector<int64_t>& out_shape,
                      float* scale, std::vector<double>* col_scales = nullptr, const Node* node = nullptr) {
  const std::vector<int64_t>& s = ctx.value(v).shape;
  TensorRef base;
  if (ctx.value(v).is_constant() && col_scales != nullptr) {
    base = const_columns(ctx, *node, v, col_scales);
    *scale = 1;
  } else if (ctx.value(v).is_constant()) {
    base = ctx.const_tensor(v, logical4(s), scale);
  } else {
    base = ctx.ref(v);
    *scale = ctx.qp(v).scale;
  }
  const std::array<int64_t, 4> st = ops::logical_strides(base);
  const int rank = static_cast<int>(s.size()), out_rank = static_cast<int>(out_shape.size());
  TensorRef r = base;
  for (int k = 0; k < isa::kMaxRank; ++k) r.dims[k] = 1, r.strides[k] = 0;
  r.dims[2] = static_cast<int32_t>(s[rank - 2]), r.strides[2] = st[rank - 2];
  r.dims[3] = static_cast<int32_t>(s[rank - 1]), r.strides[3] = st[rank - 1];
  // batch axes, right-aligned to the output's and then to [B0, B1]
  for (int i = 0; i < rank - 2; ++i) {
    const int to = 2 - (rank - 2) + i;
    const int64_t od = out_shape[static_cast<size_t>(out_rank - rank + i)];
    r.dims[to] = static_cast<int32_t>(od);
    r.strides[to] = s[static_cast<size_t>(i)] == od ? st[i] : 0;
  }
  for (int to = 0; to < 2 - (rank - 2); ++to) {
    const int oi = out_rank - 2 - (2 - to);
    r.dims[to] = oi >= 0 ? static_cast<int32_t>(out_shape[static_cast<size_t>(oi)]) : 1;
  }
  return r;
}

bool emit_matmul(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& y = op.outputs[0];
  const std::vector<int64_t>& ys = ctx.value(y).shape;
  if (ys.size() < 2 || ys.size() > 4) return fail(e, "node '" + n.name + "': output rank is not 2..4");
  isa::MatMul m;
  float sa = 1, sb = 1, so = 1;
  std::vector<double> cols;  // per-column scales of a constant b
  m.a = matmul_view(ctx, n.inputs[0], ys, &sa);
  m.b = matmul_view(ctx, n.inputs[1], ys, &sb, &cols, &n);
  m.out = matmul_view(ctx, y, ys, &so);
  const QParams& qo = ctx.qp(y);
  if (cols.empty()) {
    isa::quantize_multiplier(static_cast<double>(sa) * sb / qo.scale, &m.multiplier, &m.shift);
  } else {
    std::vector<double> r(cols.size());
    for (size_t c = 0; c < cols.size(); ++c) r[c] = static_cast<double>(sa) * cols[c] / qo.scale;
    std::vector<int32_t> mults(cols.size());
    isa::quantize_multipliers(r.data(), static_cast<int>(r.size()), isa::kMaxShift, mults.data(), &m.shift);
    m.multipliers = ctx.pb.add_const(mults.data(), mults.size() * sizeof(int32_t), static_cast<uint32_t>(mults.size()));
    m.multiplier = *std::max_element(mults.begin(), mults.end());
  }
  ops::act_bounds(ctx, op.act_min_node, qo, &m.act_min, &m.act_max);
  ctx.pb.emit(isa::Opcode::kMatMul, m);
  return true;
}

}  // namespace

const OpUnit kMatMulUnit = {
    .id = OpId::kMatMul, .domain = "", .op_type = "MatMul", .place = place_matmul,
    .table_type = "HzSQuantizedMatmul",
    .limits = "rank 2..4, at most one constant operand, numpy batch broadcasting, inner dimension <= 65536; "
              "bayes, bayes-e, nash only",
    .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kTakesActivation,
    .passive = false, .view = false, .emit = emit_matmul};

}  // namespace openbpu::cvt
