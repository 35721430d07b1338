// SPDX-License-Identifier: Apache-2.0
#include "converter/ops/op_util.h"

#include <algorithm>
#include <cmath>

#include "bpu_sim/isa/numerics.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt::ops {

using isa::TensorRef;

const Value* in_value(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && !n.inputs[i].empty() ? g.value(n.inputs[i]) : nullptr;
}

bool activation4d(const Graph& g, const Node& n, std::string* why) {
  const Value* x = in_value(g, n, 0);
  if (x == nullptr || x->is_constant()) return fail(why, "input is a constant");
  if (x->elem_type != kFloat) return fail(why, std::string("input type ") + elem_name(x->elem_type) + " is not float32");
  if (!x->shape_known() || x->shape.size() != 4) return fail(why, "input is not 4-D");
  return true;
}

bool activation(const Graph& g, const Node& n, std::string* why) {
  const Value* x = in_value(g, n, 0);
  if (x == nullptr || x->is_constant()) return fail(why, "input is a constant");
  if (x->elem_type != kFloat) return fail(why, std::string("input type ") + elem_name(x->elem_type) + " is not float32");
  if (!x->shape_known() || x->shape.empty() || x->shape.size() > 4) return fail(why, "input rank is not 1..4");
  return true;
}

bool constant_params(const Graph& g, const Node& n, const char* what, std::string* why) {
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !in_value(g, n, i)->is_constant()) return fail(why, std::string(what) + " are not constant");
  return true;
}

bool window_ok(const Node& n, const isa::OpLimits& l, std::string* why, bool pool) {
  const auto k = n.attrs.get_ints("kernel_shape");
  for (int64_t v : k)
    if (v > (pool ? 4096 : l.max_kernel)) return fail(why, "kernel size " + std::to_string(v) + " exceeds " + std::to_string(l.max_kernel));
  for (int64_t v : n.attrs.get_ints("strides"))
    if (v > l.max_stride) return fail(why, "stride " + std::to_string(v) + " exceeds " + std::to_string(l.max_stride));
  for (int64_t v : n.attrs.get_ints("dilations"))
    if (v > l.max_dilation) return fail(why, "dilation " + std::to_string(v) + " exceeds " + std::to_string(l.max_dilation));
  const std::string ap = n.attrs.get_string("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER") return fail(why, "unknown auto_pad");
  return true;
}

bool outputs_rank4(const Graph& g, const Node& n, std::string* why) {
  for (const auto& o : n.outputs) {
    const Value* v = g.value(o);
    if (!v || !v->shape_known() || v->shape.empty() || v->shape.size() > 4) return fail(why, "output rank is not 1..4");
  }
  return true;
}

TensorRef with_logical(TensorRef base, const Dims4& d, const std::array<int64_t, 4>& st) {
  base.dims[0] = static_cast<int32_t>(d[0]), base.dims[1] = static_cast<int32_t>(d[2]);
  base.dims[2] = static_cast<int32_t>(d[3]), base.dims[3] = static_cast<int32_t>(d[1]);
  base.strides[0] = st[0], base.strides[1] = st[2], base.strides[2] = st[3], base.strides[3] = st[1];
  base.dims[4] = base.dims[5] = 1;
  base.strides[4] = base.strides[5] = 0;
  return base;
}

std::array<int64_t, 4> logical_strides(const TensorRef& r) { return {r.strides[0], r.strides[3], r.strides[1], r.strides[2]}; }
Dims4 logical_dims(const TensorRef& r) { return {r.dims[0], r.dims[3], r.dims[1], r.dims[2]}; }

std::vector<int64_t> ints_attr_or_input(const LoweringContext& ctx, const Node& n, const char* attr, size_t input) {
  if (n.attrs.has(attr)) return n.attrs.get_ints(attr);
  if (input < n.inputs.size() && !n.inputs[input].empty()) {
    const Value* v = ctx.graph.value(n.inputs[input]);
    if (v && v->is_constant()) return v->to_ints();
  }
  return {};
}

Window window_of(const Node& n, int64_t h, int64_t w, int64_t kh, int64_t kw) {
  Window win;
  win.kh = static_cast<int>(kh), win.kw = static_cast<int>(kw);
  const auto s = n.attrs.get_ints("strides");
  if (s.size() == 2) win.sh = static_cast<int>(s[0]), win.sw = static_cast<int>(s[1]);
  const auto d = n.attrs.get_ints("dilations");
  if (d.size() == 2) win.dh = static_cast<int>(d[0]), win.dw = static_cast<int>(d[1]);
  const auto p = n.attrs.get_ints("pads");
  if (p.size() == 4) win.pt = static_cast<int>(p[0]), win.pl = static_cast<int>(p[1]), win.pb = static_cast<int>(p[2]),
                     win.pr = static_cast<int>(p[3]);
  const std::string ap = n.attrs.get_string("auto_pad", "NOTSET");
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    auto same = [&](int64_t in, int k, int st, int dl, int* a, int* b) {
      const int64_t out = (in + st - 1) / st;
      const int64_t total = std::max<int64_t>(0, (out - 1) * st + (k - 1) * dl + 1 - in);
      const int small = static_cast<int>(total / 2), big = static_cast<int>(total - total / 2);
      *a = ap == "SAME_UPPER" ? small : big;
      *b = ap == "SAME_UPPER" ? big : small;
    };
    same(h, win.kh, win.sh, win.dh, &win.pt, &win.pb);
    same(w, win.kw, win.sw, win.dw, &win.pl, &win.pr);
  } else if (ap == "VALID") {
    win.pt = win.pl = win.pb = win.pr = 0;
  }
  return win;
}

void fit_output(Window* w, int64_t h, int64_t wd, int64_t oh, int64_t ow) {
  const int64_t need_h = (oh - 1) * w->sh + (w->kh - 1) * w->dh + 1 - h - w->pt;
  const int64_t need_w = (ow - 1) * w->sw + (w->kw - 1) * w->dw + 1 - wd - w->pl;
  w->pb = static_cast<int>(std::max<int64_t>(w->pb, need_h));
  w->pr = static_cast<int>(std::max<int64_t>(w->pr, need_w));
  // Too much bottom padding would add an output row: trim it.
  while (w->pb > 0 && (h + w->pt + w->pb - ((w->kh - 1) * w->dh + 1)) / w->sh + 1 > oh) --w->pb;
  while (w->pr > 0 && (wd + w->pl + w->pr - ((w->kw - 1) * w->dw + 1)) / w->sw + 1 > ow) --w->pr;
}

void act_bounds(const LoweringContext& ctx, int act_node, const QParams& out, int32_t* lo, int32_t* hi) {
  *lo = qmin(out.dtype);
  *hi = qmax(out.dtype);
  if (act_node < 0) return;
  const Node& a = ctx.graph.nodes[static_cast<size_t>(act_node)];
  double l = -INFINITY, h = INFINITY;
  if (a.op_type == "Relu") l = 0.0;
  if (a.op_type == "Clip") clip_bounds(ctx.graph, a, &l, &h);
  if (out.dtype == isa::DType::kInt32) {
    if (l >= 0) *lo = 0;  // only a relu-like bound is exact per channel
    return;
  }
  if (std::isfinite(l)) *lo = std::max(*lo, quantize(l, out));
  if (std::isfinite(h)) *hi = std::min(*hi, quantize(h, out));
  if (*lo > *hi) *lo = *hi;
}

void emit_move(LoweringContext& ctx, const TensorRef& in, const TensorRef& out, double in_scale, double out_scale) {
  isa::Move m;
  m.in = in;
  m.out = out;
  const double r = in_scale / out_scale;
  if (in.dtype != out.dtype || std::fabs(r - 1.0) > 1e-9) {
    m.requantize = 1;
    isa::requant_multiplier(r, &m.multiplier, &m.shift);
  }
  ctx.pb.emit(isa::Opcode::kMove, m);
}

int8_t quantize_weight(float w, float s) {
  return static_cast<int8_t>(std::max(-127.0, std::min(127.0, std::round(static_cast<double>(w) / s))));
}

double bias_fitting_scale(double max_scale, double b, double in_scale) {
  // 0.999: the float rounding of the scale must not push |b_q| past the limit.
  const double fit = in_scale > 0 ? std::fabs(b) / (in_scale * 0.999 * static_cast<double>(isa::kMaxBias)) : 0.0;
  const double s = std::max(max_scale, fit);
  return s > 0 ? s : 1e-8;
}

int32_t quantize_bias(double b, double scale) {
  const double r = std::round(b / scale);
  const double lim = static_cast<double>(isa::kMaxBias);
  return static_cast<int32_t>(std::max(-lim, std::min(lim - 1.0, r)));
}

}  // namespace openbpu::cvt::ops
