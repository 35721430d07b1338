// SPDX-License-Identifier: Apache-2.0
// Data movement as strided copies (Move, Fill): Concat, Split, Slice, Pad,
// the Reshape family (views when the layouts agree), Transpose and
// DepthToSpace / SpaceToDepth.
#include <cmath>

#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

using isa::TensorRef;
using ops::fail;

// ---- placement -------------------------------------------------------------

bool place_concat(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  const Value* y = g.value(n.outputs[0]);
  if (!y || !y->shape_known() || y->shape.empty() || y->shape.size() > 4) return fail(why, "output rank is not 1..4");
  if (y->elem_type != kFloat) return fail(why, "not float32");
  for (const auto& in : n.inputs)
    if (g.value(in) && g.value(in)->is_constant()) return fail(why, "constant inputs");
  return true;
}

bool place_slice_like(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  if (!ops::activation(g, n, why) || !ops::constant_params(g, n, "parameters", why) ||
      !ops::outputs_rank4(g, n, why))
    return false;
  if (n.op_type == "Slice" && n.inputs.size() > 4 && !n.inputs[4].empty())
    for (int64_t s : g.value(n.inputs[4])->to_ints())
      if (s <= 0) return fail(why, "only positive slice steps");
  return true;
}

bool place_reshape(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!march.limits.reshape) return fail(why, "Reshape-type operators run on the CPU on this march");
  return place_slice_like(g, n, march, why);
}

bool place_transpose(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!march.limits.transpose) return fail(why, "layout transforms run on the CPU on this march");
  return ops::activation4d(g, n, why);
}

// Transpose of a rank 2..4 activation (a strided copy).
bool place_transpose_nd(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!march.limits.transpose) return fail(why, "layout transforms run on the CPU on this march");
  if (!ops::activation(g, n, why)) return false;
  const size_t rank = ops::in_value(g, n, 0)->shape.size();
  if (rank < 2) return fail(why, "input is not 2-D..4-D");
  const std::vector<int64_t> perm = n.attrs.get_ints("perm");
  if (!perm.empty() && perm.size() != rank) return fail(why, "perm does not match the input rank");
  return true;
}

bool place_pad(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  if (!ops::activation4d(g, n, why)) return false;
  if (n.attrs.get_string("mode", "constant") != "constant") return fail(why, "only constant padding");
  return ops::constant_params(g, n, "pads", why);
}

// ---- emission ------------------------------------------------------------------

bool emit_concat_split(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const bool concat = n.op_type == "Concat";
  const std::string& big = concat ? op.outputs[0] : n.inputs[0];
  const int rank = static_cast<int>(ctx.value(big).shape.size());
  const int axis = logical_axis4(rank, n.attrs.get_int("axis", 0));
  const TensorRef bref = ctx.ref(big);
  const auto bst = ops::logical_strides(bref);
  const std::vector<std::string> parts = concat ? n.inputs : op.outputs;
  int64_t pos = 0;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    const Dims4 pd = ctx.dims(p);
    TensorRef sub = ops::with_logical(bref, pd, bst);
    sub.offset += static_cast<uint64_t>(pos * bst[static_cast<size_t>(axis)] * isa::dtype_size(bref.dtype));
    const TensorRef pref = ops::with_logical(ctx.ref(p), pd, ops::logical_strides(ctx.ref(p)));
    if (concat) {
      ops::emit_move(ctx, pref, sub, ctx.qp(p).scale, ctx.qp(big).scale);
    } else {
      ops::emit_move(ctx, sub, pref, ctx.qp(big).scale, ctx.qp(p).scale);
    }
    pos += pd[static_cast<size_t>(axis)];
  }
  return true;
}

bool emit_slice(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const std::vector<int64_t> xs = ctx.value(x).shape;
  const int rank = static_cast<int>(xs.size());
  std::vector<int64_t> starts = ops::ints_attr_or_input(ctx, n, "starts", 1),
                       axes = ops::ints_attr_or_input(ctx, n, "axes", 3),
                       steps = ops::ints_attr_or_input(ctx, n, "steps", 4);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  TensorRef in = ctx.ref(x);
  auto st = ops::logical_strides(in);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    const int64_t len = xs[static_cast<size_t>(a)];
    int64_t s = starts[i] < 0 ? starts[i] + len : starts[i];
    s = std::max<int64_t>(0, std::min(s, len - 1));
    const int la = logical_axis4(rank, a);
    in.offset += static_cast<uint64_t>(s * st[static_cast<size_t>(la)] * isa::dtype_size(in.dtype));
    if (steps[i] <= 0) return fail(e, "node '" + n.name + "': negative slice steps are not supported on the BPU");
    st[static_cast<size_t>(la)] *= steps[i];
  }
  in = ops::with_logical(in, ctx.dims(y), st);
  ops::emit_move(ctx, in, ctx.ref(y), ctx.qp(x).scale, ctx.qp(y).scale);
  return true;
}

// One dimension of a reshape's strided copy: size, input and output stride.
struct StridedDim {
  int64_t size, si, so;
};

// The common refinement of the input and output logical shapes, innermost
// first, contiguous neighbours merged; false when a dimension does not split.
bool refine_shapes(const TensorRef& in, const TensorRef& out, std::vector<StridedDim>* merged) {
  const Dims4 id = ops::logical_dims(in), od = ops::logical_dims(out);
  const auto ist = ops::logical_strides(in), ost = ops::logical_strides(out);
  std::vector<StridedDim> dims;
  // Walk both shapes from the innermost dimension outwards.
  int a = 3, b = 3;
  int64_t ra = id[3], rb = od[3];          // remaining size of the current dims
  int64_t sa = ist[3], sb = ost[3];        // stride of the next element of the current dims
  while (a >= 0 && b >= 0) {
    if (ra == 1) { --a; if (a >= 0) ra = id[static_cast<size_t>(a)], sa = ist[static_cast<size_t>(a)]; continue; }
    if (rb == 1) { --b; if (b >= 0) rb = od[static_cast<size_t>(b)], sb = ost[static_cast<size_t>(b)]; continue; }
    int64_t g = std::min(ra, rb);
    if (ra % g != 0 || rb % g != 0) {
      // Non-nested factors: split by the gcd.
      int64_t x1 = ra, x2 = rb;
      while (x2) { const int64_t t = x1 % x2; x1 = x2; x2 = t; }
      if (x1 == 1) return false;
      g = x1;
    }
    dims.push_back({g, sa, sb});
    sa *= g, sb *= g, ra /= g, rb /= g;
  }
  for (const StridedDim& d : dims) {
    if (!merged->empty() && merged->back().si * merged->back().size == d.si &&
        merged->back().so * merged->back().size == d.so) {
      merged->back().size *= d.size;
      continue;
    }
    merged->push_back(d);
  }
  return true;
}

// Row-major reshape as one strided copy: the common refinement of the input
// and output logical shapes, each refined dim with its stride on both sides.
bool emit_reshape(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const TensorRef in = ctx.ref(x), out = ctx.ref(y);
  std::vector<StridedDim> merged;
  if (!refine_shapes(in, out, &merged))
    return fail(e, "node '" + n.name + "': reshape cannot be expressed as a strided copy");
  if (merged.size() > 6) return fail(e, "node '" + n.name + "': reshape needs more than 6 strided dimensions");
  isa::Move m;
  m.in = in;
  m.out = out;
  for (int k = 0; k < 6; ++k) {
    m.in.dims[k] = m.out.dims[k] = 1;
    m.in.strides[k] = m.out.strides[k] = 0;
  }
  const size_t nd = merged.size();
  for (size_t k = 0; k < nd; ++k) {  // outermost first
    const StridedDim& d = merged[nd - 1 - k];
    m.in.dims[k] = m.out.dims[k] = static_cast<int32_t>(d.size);
    m.in.strides[k] = d.si;
    m.out.strides[k] = d.so;
  }
  const double r = ctx.qp(x).scale / static_cast<double>(ctx.qp(y).scale);
  if (std::fabs(r - 1.0) > 1e-9 || in.dtype != out.dtype) {
    m.requantize = 1;
    isa::requant_multiplier(r, &m.multiplier, &m.shift);
  }
  ctx.pb.emit(isa::Opcode::kMove, m);
  return true;
}

bool emit_transpose(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const auto rank = static_cast<int64_t>(ctx.value(x).shape.size());
  std::vector<int64_t> perm = n.attrs.get_ints("perm");
  if (perm.empty())
    for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
  if (rank < 2 || rank > 4 || static_cast<int64_t>(perm.size()) != rank)
    return fail(e, "node '" + n.name + "': only 2-D..4-D transposes");
  const TensorRef in = ctx.ref(x);
  const auto ist = ops::logical_strides(in);
  // ONNX axis k of a rank >= 2 value is its logical axis k (lowering.h).
  std::array<int64_t, 4> st{};
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t from = perm[static_cast<size_t>(k)];
    if (from < 0 || from >= rank) return fail(e, "node '" + n.name + "': perm out of range");
    st[static_cast<size_t>(k)] = ist[static_cast<size_t>(from)];
  }
  ops::emit_move(ctx, ops::with_logical(in, ctx.dims(y), st), ctx.ref(y), ctx.qp(x).scale, ctx.qp(y).scale);
  return true;
}

bool emit_depth_space(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const bool d2s = n.op_type == "DepthToSpace";
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const int64_t bs = n.attrs.get_int("blocksize", 2);
  const bool crd = n.attrs.get_string("mode", "DCR") == "CRD";
  // Space side (large H, W) and depth side (C * bs * bs).
  const TensorRef sp = ctx.ref(d2s ? y : x), dp = ctx.ref(d2s ? x : y);
  const Dims4 sd = ops::logical_dims(sp);
  const auto ss = ops::logical_strides(sp), ds = ops::logical_strides(dp);
  const int64_t c = sd[1], h = sd[2] / bs, w = sd[3] / bs;
  // Index space (n, c, h, i, w, j): space (n, c, h*bs+i, w*bs+j) <-> depth
  // (n, DCR: (i*bs+j)*C + c | CRD: c*bs*bs + i*bs + j, h, w).
  isa::Move m;
  TensorRef s6 = sp, d6 = dp;
  const int64_t dims[6] = {sd[0], c, h, bs, w, bs};
  const int64_t s_str[6] = {ss[0], ss[1], ss[2] * bs, ss[2], ss[3] * bs, ss[3]};
  const int64_t d_str[6] = {ds[0], crd ? ds[1] * bs * bs : ds[1], ds[2], crd ? ds[1] * bs : ds[1] * bs * c, ds[3],
                            crd ? ds[1] : ds[1] * c};
  for (int k = 0; k < 6; ++k) {
    s6.dims[k] = d6.dims[k] = static_cast<int32_t>(dims[k]);
    s6.strides[k] = s_str[k];
    d6.strides[k] = d_str[k];
  }
  m.in = d2s ? d6 : s6;
  m.out = d2s ? s6 : d6;
  const double r = ctx.qp(x).scale / static_cast<double>(ctx.qp(y).scale);
  if (std::fabs(r - 1.0) > 1e-9) {
    m.requantize = 1;
    isa::requant_multiplier(r, &m.multiplier, &m.shift);
  }
  ctx.pb.emit(isa::Opcode::kMove, m);
  return true;
}

bool emit_pad(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  std::vector<int64_t> pads = n.attrs.has("pads") ? n.attrs.get_ints("pads") : ops::ints_attr_or_input(ctx, n, "", 1);
  if (pads.size() != 8) return fail(e, "node '" + n.name + "': pads must have 8 values");
  for (int64_t p : pads)
    if (p < 0) return fail(e, "node '" + n.name + "': negative pads are not supported on the BPU");
  double value = n.attrs.get_float("value", 0.0f);
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) const_scalar(ctx.graph, n.inputs[2], &value);
  const QParams& qo = ctx.qp(y);
  isa::Fill f;
  f.out = ctx.ref(y);
  f.value = quantize(value, qo.scale, qo.dtype);
  ctx.pb.emit(isa::Opcode::kFill, f);
  TensorRef inner = ctx.ref(y);
  const auto st = ops::logical_strides(inner);
  for (int k = 0; k < 4; ++k)
    inner.offset += static_cast<uint64_t>(pads[static_cast<size_t>(k)] * st[static_cast<size_t>(k)] * isa::dtype_size(inner.dtype));
  inner = ops::with_logical(inner, ctx.dims(x), st);
  ops::emit_move(ctx, ctx.ref(x), inner, ctx.qp(x).scale, qo.scale);
  return true;
}

constexpr const char* kReshapeMarches = "bayes, bayes-e, nash only";
constexpr const char* kLayoutMarches = "4-D; bayes, bayes-e, nash only";

}  // namespace

const OpUnit kConcatUnit = {
    .id = OpId::kConcat, .domain = "", .op_type = "Concat", .place = place_concat, .table_type = "HzQuantizedConcat",
    .limits = "rank <= 4, no constant inputs", .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr,
    .fusion = Fusion::kNone, .passive = true, .view = false, .emit = emit_concat_split};

const OpUnit kSplitUnit = {
    .id = OpId::kSplit, .domain = "", .op_type = "Split", .place = place_slice_like, .table_type = "HzSplit",
    .limits = "rank <= 4", .output_scale = OutputScale::kInput, .int32_tail = nullptr, .fusion = Fusion::kNone,
    .passive = true, .view = false, .emit = emit_concat_split};

const OpUnit kSliceUnit = {
    .id = OpId::kSlice, .domain = "", .op_type = "Slice", .place = place_slice_like, .table_type = "HzSlice",
    .limits = "rank <= 4, positive steps", .output_scale = OutputScale::kInput, .int32_tail = nullptr,
    .fusion = Fusion::kNone, .passive = true, .view = false, .emit = emit_slice};

const OpUnit kPadUnit = {
    .id = OpId::kPad, .domain = "", .op_type = "Pad", .place = place_pad, .table_type = "HzPad",
    .limits = "constant mode, 4-D", .output_scale = OutputScale::kInput, .int32_tail = nullptr,
    .fusion = Fusion::kNone, .passive = true, .view = false, .emit = emit_pad};

#define OPENBPU_RESHAPE_UNIT(Name)                                                                                 \
  const OpUnit k##Name##Unit = {.id = OpId::k##Name, .domain = "", .op_type = #Name, .place = place_reshape,       \
                                .table_type = "HzReshape", .limits = kReshapeMarches,                              \
                                .output_scale = OutputScale::kInput, .int32_tail = nullptr, .fusion = Fusion::kNone, \
                                .passive = true, .view = true, .emit = emit_reshape}
OPENBPU_RESHAPE_UNIT(Reshape);
OPENBPU_RESHAPE_UNIT(Flatten);
OPENBPU_RESHAPE_UNIT(Squeeze);
OPENBPU_RESHAPE_UNIT(Unsqueeze);
#undef OPENBPU_RESHAPE_UNIT

const OpUnit kTransposeUnit = {
    .id = OpId::kTranspose, .domain = "", .op_type = "Transpose", .place = place_transpose_nd,
    .table_type = "HzTranspose", .limits = "rank 2..4; bayes, bayes-e, nash only", .output_scale = OutputScale::kInput,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = true, .view = false, .emit = emit_transpose};

const OpUnit kDepthToSpaceUnit = {
    .id = OpId::kDepthToSpace, .domain = "", .op_type = "DepthToSpace", .place = place_transpose,
    .table_type = "HzDepthToSpace", .limits = kLayoutMarches, .output_scale = OutputScale::kInput,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = true, .view = false, .emit = emit_depth_space};

const OpUnit kSpaceToDepthUnit = {
    .id = OpId::kSpaceToDepth, .domain = "", .op_type = "SpaceToDepth", .place = place_transpose,
    .table_type = "HzSpaceToDepth", .limits = kLayoutMarches, .output_scale = OutputScale::kInput,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = true, .view = false, .emit = emit_depth_space};

}  // namespace openbpu::cvt
