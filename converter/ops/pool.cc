// SPDX-License-Identifier: Apache-2.0
// Pooling: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool and
// ReduceMean and ReduceSum over any one or two axes (an average pooling over a
// strided view; the sum's multiplier carries the count).
#include <algorithm>
#include <array>

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

// The ONNX axes a ReduceMean/ReduceSum reduces (non-negative, sorted); false
// when they are not constant.
bool reduce_axes(const Graph& g, const Node& n, std::vector<int64_t>* axes) {
  const int64_t rank = static_cast<int64_t>(ops::in_value(g, n, 0)->shape.size());
  *axes = n.attrs.get_ints("axes");
  if (!n.attrs.has("axes") && n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const Value* a = ops::in_value(g, n, 1);
    if (a == nullptr || !a->is_constant()) return false;
    *axes = a->to_ints();
  }
  if (axes->empty() && n.attrs.get_int("noop_with_empty_axes", 0) == 0)
    for (int64_t k = 0; k < rank; ++k) axes->push_back(k);
  for (auto& a : *axes) a = a < 0 ? a + rank : a;
  std::sort(axes->begin(), axes->end());
  axes->erase(std::unique(axes->begin(), axes->end()), axes->end());
  return true;
}

// The logical axes (lowering.h) of size > 1 that are averaged.
std::vector<int> logical_reduced(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
  const Dims4 d = logical4(shape);
  std::vector<int> out;
  for (int64_t a : axes) {
    const int la = logical_axis4(static_cast<int>(shape.size()), a);
    if (d[static_cast<size_t>(la)] > 1) out.push_back(la);
  }
  return out;
}

// A mean (sum) over at most two logical axes is one average pooling over a
// view that puts them where the window slides (H, W); the others are kept.
bool place_reduce(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  if (!ops::activation(g, n, why) || !ops::outputs_rank4(g, n, why)) return false;
  std::vector<int64_t> axes;
  if (!reduce_axes(g, n, &axes)) return fail(why, "axes are not constant");
  const std::vector<int64_t>& shape = ops::in_value(g, n, 0)->shape;
  for (int64_t a : axes)
    if (a < 0 || a >= static_cast<int64_t>(shape.size())) return fail(why, "axis out of range");
  const std::vector<int> red = logical_reduced(shape, axes);
  if (red.size() > 2) return fail(why, "more than two axes of size > 1 reduced");
  const Dims4 d = logical4(shape);
  for (int a : red)
    if (d[static_cast<size_t>(a)] > 4096) return fail(why, "a reduced axis is longer than 4096");
  return true;
}

// ReduceMean over one or two logical axes as one average pooling: the input
// viewed as (N, H, W, C) with the averaged axes in H (and W) and the kept
// axes in C, N, W, H; the output as the same view with the averaged
// dimensions 1, each kept input axis matched to the output axis it becomes.
bool emit_reduce(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const std::vector<int64_t>& shape = ctx.value(x).shape;
  std::vector<int64_t> axes;
  reduce_axes(ctx.graph, n, &axes);
  const std::vector<int> red = logical_reduced(shape, axes);
  const bool keep = n.attrs.get_int("keepdims", 1) != 0;
  const int in_rank = static_cast<int>(shape.size()), out_rank = static_cast<int>(ctx.value(y).shape.size());
  std::array<int, 4> to_out{-1, -1, -1, -1};  // input logical axis -> output logical axis
  for (int k = 0, j = 0; k < in_rank; ++k) {
    const bool averaged = std::find(axes.begin(), axes.end(), k) != axes.end();
    if (averaged && !keep) continue;
    const int oj = j++;
    if (!averaged) to_out[static_cast<size_t>(logical_axis4(in_rank, k))] = logical_axis4(out_rank, oj);
  }
  const isa::TensorRef in = ctx.ref(x), out = ctx.ref(y);
  const Dims4 id = ops::logical_dims(in), od = ops::logical_dims(out);
  const auto ist = ops::logical_strides(in), ost = ops::logical_strides(out);
  std::array<int, 4> slot{-1, -1, -1, -1};  // view slot (N, H, W, C) -> input logical axis
  for (size_t r = 0; r < red.size(); ++r) slot[1 + r] = red[r];
  const int fill[4] = {3, 0, 2, 1};
  size_t f = 0;
  for (int a = 0; a < 4; ++a) {
    if (id[static_cast<size_t>(a)] == 1 || std::find(red.begin(), red.end(), a) != red.end()) continue;
    while (slot[static_cast<size_t>(fill[f])] >= 0) ++f;
    slot[static_cast<size_t>(fill[f])] = a;
  }
  isa::Pool p;
  p.in = in, p.out = out;
  for (size_t s = 0; s < 4; ++s) {
    const int a = slot[s];
    const bool averaged = a >= 0 && std::find(red.begin(), red.end(), a) != red.end();
    const int oa = a < 0 || averaged ? -1 : to_out[static_cast<size_t>(a)];
    p.in.dims[s] = a < 0 ? 1 : static_cast<int32_t>(id[static_cast<size_t>(a)]);
    p.in.strides[s] = a < 0 ? 0 : ist[static_cast<size_t>(a)];
    p.out.dims[s] = oa < 0 ? 1 : static_cast<int32_t>(od[static_cast<size_t>(oa)]);
    p.out.strides[s] = oa < 0 ? 0 : ost[static_cast<size_t>(oa)];
  }
  p.kind = isa::PoolKind::kAvg;
  p.kernel_h = red.size() > 0 ? p.in.dims[1] : 1;
  p.kernel_w = red.size() > 1 ? p.in.dims[2] : 1;
  const QParams& qo = ctx.qp(y);
  // A sum is the average times the count (c = kernel_h * kernel_w, no padding).
  const double count = n.op_type == "ReduceSum" ? static_cast<double>(p.kernel_h) * p.kernel_w : 1.0;
  // The average's divisor needs headroom: a smaller shift cap.
  isa::requant_multiplier(count * ctx.qp(x).scale / static_cast<double>(qo.scale), &p.multiplier, &p.shift,
                          isa::kMaxAvgPoolShift);
  p.act_min = qmin(qo.dtype), p.act_max = qmax(qo.dtype);
  p.zero_in = ctx.qp(x).zero_point, p.zero_out = qo.zero_point;
  ctx.pb.emit(isa::Opcode::kPool, p);
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
  const bool global = n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool";
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
  p.zero_in = ctx.qp(x).zero_point, p.zero_out = qo.zero_point;
  ctx.pb.emit(isa::Opcode::kPool, p);
  return true;
}

}  // namespace

const OpUnit kMaxPoolUnit = {
    .id = OpId::kMaxPool, .domain = "", .op_type = "MaxPool", .place = place_pool,
    .table_type = "HzQuantizedMaxPool", .limits = "2-D, no indices output", .output_scale = OutputScale::kInput,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_pool,
    .zero_points = ZeroPoints::kAll};

const OpUnit kAveragePoolUnit = {
    .id = OpId::kAveragePool, .domain = "", .op_type = "AveragePool", .place = place_pool,
    .table_type = "HzSQuantizedAvgPool", .limits = "2-D", .output_scale = OutputScale::kCalibrated,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_pool,
    .zero_points = ZeroPoints::kAll};

const OpUnit kGlobalAveragePoolUnit = {
    .id = OpId::kGlobalAveragePool, .domain = "", .op_type = "GlobalAveragePool", .place = place_global_pool,
    .table_type = "HzSQuantizedGlobalAveragePool", .limits = "4-D", .output_scale = OutputScale::kCalibrated,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_pool,
    .zero_points = ZeroPoints::kAll};

const OpUnit kGlobalMaxPoolUnit = {
    .id = OpId::kGlobalMaxPool, .domain = "", .op_type = "GlobalMaxPool", .place = place_global_pool,
    .table_type = "HzQuantizedGlobalMaxPool", .limits = "4-D", .output_scale = OutputScale::kInput,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_pool,
    .zero_points = ZeroPoints::kAll};

const OpUnit kReduceMeanUnit = {
    .id = OpId::kReduceMean, .domain = "", .op_type = "ReduceMean", .place = place_reduce,
    .table_type = "HzSQuantizedReduceMean", .limits = "at most two axes of size > 1 averaged, each <= 4096",
    .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false,
    .view = false, .emit = emit_reduce, .zero_points = ZeroPoints::kAll};

const OpUnit kReduceSumUnit = {
    .id = OpId::kReduceSum, .domain = "", .op_type = "ReduceSum", .place = place_reduce,
    .table_type = "HzSQuantizedReduceSum", .limits = "at most two axes of size > 1 summed, each <= 4096",
    .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false,
    .view = false, .emit = emit_reduce, .zero_points = ZeroPoints::kAll};

}  // namespace openbpu::cvt
