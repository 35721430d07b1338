// SPDX-License-Identifier: Apache-2.0
// Pooling: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool and
// ReduceMean over H and W (a global average).
#include <algorithm>

#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"

namespace openbpu::cvt {

namespace {

using ops::fail;

bool place_pool(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!ops::activation4d(g, n, why)) return false;
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) return fail(why, "MaxPool indices output is not supported");
  return ops::window_ok(n, march.limits, why, true);
}

bool place_global_pool(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  return ops::activation4d(g, n, why);
}

bool place_reduce_mean(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  if (!ops::activation4d(g, n, why)) return false;
  std::vector<int64_t> axes = n.attrs.get_ints("axes");
  if (axes.empty() && n.inputs.size() > 1 && ops::in_value(g, n, 1)) axes = ops::in_value(g, n, 1)->to_ints();
  for (auto& a : axes)
    if (a < 0) a += 4;
  std::sort(axes.begin(), axes.end());
  if (axes != std::vector<int64_t>{2, 3} || n.attrs.get_int("keepdims", 1) != 1)
    return fail(why, "only the mean over H and W with keepdims");
  return true;
}

bool emit_pool(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const Dims4 in = ctx.dims(x), out = ctx.dims(y);
  isa::Pool p;
  p.in = ctx.ref(x);
  p.out = ctx.ref(y);
  const bool global = n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool" || n.op_type == "ReduceMean";
  p.kind = (n.op_type == "MaxPool" || n.op_type == "GlobalMaxPool") ? isa::PoolKind::kMax : isa::PoolKind::kAvg;
  if (global) {
    p.kernel_h = static_cast<int32_t>(in[2]), p.kernel_w = static_cast<int32_t>(in[3]);
  } else {
    const auto k = n.attrs.get_ints("kernel_shape");
    ops::Window w = ops::window_of(n, in[2], in[3], k[0], k[1]);
    ops::fit_output(&w, in[2], in[3], out[2], out[3]);
    p.kernel_h = w.kh, p.kernel_w = w.kw, p.stride_h = w.sh, p.stride_w = w.sw, p.dilation_h = w.dh, p.dilation_w = w.dw;
    p.pad_top = w.pt, p.pad_left = w.pl, p.pad_bottom = w.pb, p.pad_right = w.pr;
    p.count_include_pad = static_cast<uint8_t>(n.attrs.get_int("count_include_pad", 0));
  }
  const QParams& qo = ctx.qp(y);
  // The average's divisor needs headroom: a smaller shift cap.
  isa::requant_multiplier(ctx.qp(x).scale / static_cast<double>(qo.scale), &p.multiplier, &p.shift,
                          p.kind == isa::PoolKind::kAvg ? isa::kMaxAvgPoolShift : isa::kMaxShift);
  p.act_min = qmin(qo.dtype), p.act_max = qmax(qo.dtype);
  ctx.pb.emit(isa::Opcode::kPool, p);
  return true;
}

}  // namespace

const OpUnit kMaxPoolUnit = {
    .id = OpId::kMaxPool, .domain = "", .op_type = "MaxPool", .place = place_pool,
    .table_type = "HzQuantizedMaxPool", .limits = "2-D, no indices output", .output_scale = OutputScale::kInput,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_pool};

const OpUnit kAveragePoolUnit = {
    .id = OpId::kAveragePool, .domain = "", .op_type = "AveragePool", .place = place_pool,
    .table_type = "HzSQuantizedAvgPool", .limits = "2-D", .output_scale = OutputScale::kCalibrated,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_pool};

const OpUnit kGlobalAveragePoolUnit = {
    .id = OpId::kGlobalAveragePool, .domain = "", .op_type = "GlobalAveragePool", .place = place_global_pool,
    .table_type = "HzSQuantizedGlobalAveragePool", .limits = "4-D", .output_scale = OutputScale::kCalibrated,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_pool};

const OpUnit kGlobalMaxPoolUnit = {
    .id = OpId::kGlobalMaxPool, .domain = "", .op_type = "GlobalMaxPool", .place = place_global_pool,
    .table_type = "HzQuantizedGlobalMaxPool", .limits = "4-D", .output_scale = OutputScale::kInput,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_pool};

const OpUnit kReduceMeanUnit = {
    .id = OpId::kReduceMean, .domain = "", .op_type = "ReduceMean", .place = place_reduce_mean,
    .table_type = "HzSQuantizedGlobalAveragePool", .limits = "mean over H and W (keepdims)",
    .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false,
    .view = false, .emit = emit_pool};

}  // namespace openbpu::cvt
