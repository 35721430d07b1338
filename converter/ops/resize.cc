// SPDX-License-Identifier: Apache-2.0
// Resize / Upsample over H and W: nearest (keeps the input's scale) or
// bilinear, with the ONNX coordinate transformation modes as Q16 starts and
// steps.
#include <cmath>

#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"

namespace openbpu::cvt {

namespace {

using ops::fail;

bool place_resize(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  if (!ops::activation4d(g, n, why)) return false;
  const std::string mode = n.attrs.get_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear") return fail(why, "mode '" + mode + "' is not supported");
  const Value* x = g.value(n.inputs[0]);
  const Value* y = g.value(n.outputs[0]);
  if (!y || !y->shape_known() || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1])
    return fail(why, "only spatial (H, W) resizing");
  const std::string ctm = n.attrs.get_string("coordinate_transformation_mode", "half_pixel");
  if (ctm == "tf_crop_and_resize") return fail(why, "tf_crop_and_resize is not supported");
  return true;
}

// Source coordinate start and step (Q16) of one axis.
void coords(const std::string& ctm, int64_t in_len, int64_t out_len, double scale, int64_t* start, int64_t* step) {
  if (ctm == "align_corners") {
    *step = out_len > 1 ? std::llround(65536.0 * (in_len - 1) / (out_len - 1)) : 0;
    *start = 0;
  } else if (ctm == "asymmetric") {
    *step = std::llround(65536.0 / scale);
    *start = 0;
  } else if (ctm == "pytorch_half_pixel" && out_len == 1) {
    *step = 0;
    *start = 0;
  } else {  // half_pixel (and pytorch_half_pixel with out_len > 1)
    *step = std::llround(65536.0 / scale);
    *start = std::llround(65536.0 * (0.5 / scale - 0.5));
  }
}

bool emit_resize(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const Dims4 in = ctx.dims(x), out = ctx.dims(y);
  isa::Resize r;
  r.in = ctx.ref(x);
  r.out = ctx.ref(y);
  const std::string mode = n.attrs.get_string("mode", "nearest");
  r.mode = mode == "nearest" ? isa::ResizeMode::kNearest : isa::ResizeMode::kBilinear;
  // Scales: explicit (Upsample input/attr, Resize scales input) or out/in.
  std::vector<float> sc;
  if (n.op_type == "Upsample") {
    sc = n.attrs.get_floats("scales");
    if (sc.empty() && n.inputs.size() > 1) sc = ctx.floats(n.inputs[1]);
  } else if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    sc = ctx.floats(n.inputs[2]);
  }
  double scale_h = static_cast<double>(out[2]) / in[2], scale_w = static_cast<double>(out[3]) / in[3];
  if (sc.size() == 4 && sc[2] > 0 && sc[3] > 0) scale_h = sc[2], scale_w = sc[3];
  const bool legacy = n.op_type == "Upsample" || ctx.graph.opset < 11;
  const std::string ctm = legacy ? "asymmetric" : n.attrs.get_string("coordinate_transformation_mode", "half_pixel");
  coords(ctm, in[2], out[2], scale_h, &r.y_start, &r.y_step);
  coords(ctm, in[3], out[3], scale_w, &r.x_start, &r.x_step);
  const std::string nm = legacy ? "floor" : n.attrs.get_string("nearest_mode", "round_prefer_floor");
  r.round_bias = nm == "floor" ? 0 : nm == "ceil" ? 65535 : nm == "round_prefer_ceil" ? 32768 : 32767;
  isa::requant_multiplier(ctx.qp(x).scale / static_cast<double>(ctx.qp(y).scale), &r.multiplier, &r.shift,
                          r.mode == isa::ResizeMode::kBilinear ? isa::kMaxBilinearShift : isa::kMaxShift);
  ctx.pb.emit(isa::Opcode::kResize, r);
  return true;
}

constexpr const char* kLimits = "nearest/bilinear over H and W";

}  // namespace

const OpUnit kResizeUnit = {
    .id = OpId::kResize, .domain = "", .op_type = "Resize", .place = place_resize,
    .table_type = "HzQuantizedResizeUpsample", .limits = kLimits, .output_scale = OutputScale::kInputIfNearest,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_resize};

const OpUnit kUpsampleUnit = {
    .id = OpId::kUpsample, .domain = "", .op_type = "Upsample", .place = place_resize,
    .table_type = "HzQuantizedResizeUpsample", .limits = kLimits, .output_scale = OutputScale::kInputIfNearest,
    .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_resize};

}  // namespace openbpu::cvt
