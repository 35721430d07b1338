// SPDX-License-Identifier: Apache-2.0
// Per-operator emitters: float operator (+ fused activation / residual) with
// quantization parameters -> BPU instructions (docs/numerics.md formulas).
#include <algorithm>
#include <cmath>
#include <functional>

#include "converter/codegen/lowering.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

using isa::DType;
using isa::Opcode;
using isa::TensorRef;

bool fail(std::string* e, const std::string& m) {
  *e = m;
  return false;
}

// A view with logical (N, C, H, W) dims and strides.
TensorRef with_logical(TensorRef base, const Dims4& d, const std::array<int64_t, 4>& st) {
  base.dims[0] = static_cast<int32_t>(d[0]), base.dims[1] = static_cast<int32_t>(d[2]);
  base.dims[2] = static_cast<int32_t>(d[3]), base.dims[3] = static_cast<int32_t>(d[1]);
  base.strides[0] = st[0], base.strides[1] = st[2], base.strides[2] = st[3], base.strides[3] = st[1];
  base.dims[4] = base.dims[5] = 1;
  base.strides[4] = base.strides[5] = 0;
  return base;
}

std::array<int64_t, 4> logical_strides(const TensorRef& r) {
  return {r.strides[0], r.strides[3], r.strides[1], r.strides[2]};
}
Dims4 logical_dims(const TensorRef& r) { return {r.dims[0], r.dims[3], r.dims[1], r.dims[2]}; }

// Requantization multiplier/shift for a ratio (identity when 1).
void ratio_ms(double r, int32_t* m, int32_t* s) {
  if (std::fabs(r - 1.0) < 1e-9) {
    *m = 1 << 30, *s = 30;
    return;
  }
  isa::quantize_multiplier(r, m, s);
}

// Two multipliers sharing one shift (residual adds, eltwise add/sub).
void shared_shift(double r1, double r2, int32_t* m1, int32_t* m2, int32_t* s) {
  int shift = 62;
  auto fits = [](double r, int sh) { return std::ldexp(r, sh) < 2147483647.5; };
  while (shift > 0 && (!fits(r1, shift) || !fits(r2, shift))) --shift;
  *s = shift;
  *m1 = static_cast<int32_t>(std::max<int64_t>(1, std::llround(std::ldexp(r1, shift))));
  *m2 = static_cast<int32_t>(std::max<int64_t>(1, std::llround(std::ldexp(r2, shift))));
}

std::vector<int64_t> ints_attr_or_input(const LoweringContext& ctx, const Node& n, const char* attr, size_t input) {
  if (n.attrs.has(attr)) return n.attrs.get_ints(attr);
  if (input < n.inputs.size() && !n.inputs[input].empty()) {
    const Value* v = ctx.graph.value(n.inputs[input]);
    if (v && v->is_constant()) return v->to_ints();
  }
  return {};
}

// ONNX 2-D window attributes resolved against the input size.
struct Window {
  int kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
};

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

// Extends the bottom/right padding so the window arithmetic gives the output
// size of the graph (ceil_mode pooling).
void fit_output(Window* w, int64_t h, int64_t wd, int64_t oh, int64_t ow) {
  const int64_t need_h = (oh - 1) * w->sh + (w->kh - 1) * w->dh + 1 - h - w->pt;
  const int64_t need_w = (ow - 1) * w->sw + (w->kw - 1) * w->dw + 1 - wd - w->pl;
  w->pb = static_cast<int>(std::max<int64_t>(w->pb, need_h));
  w->pr = static_cast<int>(std::max<int64_t>(w->pr, need_w));
  // Too much bottom padding would add an output row: trim it.
  while (w->pb > 0 && (h + w->pt + w->pb - ((w->kh - 1) * w->dh + 1)) / w->sh + 1 > oh) --w->pb;
  while (w->pr > 0 && (wd + w->pl + w->pr - ((w->kw - 1) * w->dw + 1)) / w->sw + 1 > ow) --w->pr;
}

// Activation bounds in the output's quantized domain.
void act_bounds(const LoweringContext& ctx, int act_node, const QParams& out, int32_t* lo, int32_t* hi) {
  *lo = qmin(out.dtype);
  *hi = qmax(out.dtype);
  if (act_node < 0) return;
  const Node& a = ctx.graph.nodes[static_cast<size_t>(act_node)];
  double l = -INFINITY, h = INFINITY;
  if (a.op_type == "Relu") l = 0.0;
  if (a.op_type == "Clip") clip_bounds(ctx.graph, a, &l, &h);
  if (out.dtype == DType::kInt32) {
    if (l >= 0) *lo = 0;  // only a relu-like bound is exact per channel
    return;
  }
  if (std::isfinite(l)) *lo = std::max(*lo, quantize(l, out.scale, out.dtype));
  if (std::isfinite(h)) *hi = std::min(*hi, quantize(h, out.scale, out.dtype));
  if (*lo > *hi) *lo = *hi;
}

}  // namespace

// Quantizes weights per output channel: w[co] over `per` values.
std::vector<float> channel_scales(const std::vector<float>& w, int64_t cout) {
  const size_t per = w.size() / static_cast<size_t>(cout);
  std::vector<float> s(static_cast<size_t>(cout));
  for (int64_t c = 0; c < cout; ++c) {
    float mx = 0.0f;
    for (size_t k = 0; k < per; ++k) mx = std::max(mx, std::fabs(w[c * per + k]));
    s[static_cast<size_t>(c)] = mx > 0 ? mx / 127.0f : 1e-8f;
  }
  return s;
}

namespace {

int8_t qw(float w, float s) {
  return static_cast<int8_t>(std::max(-127.0, std::min(127.0, std::round(static_cast<double>(w) / s))));
}

int32_t qbias(double b, double scale) {
  const double r = std::round(b / scale);
  return static_cast<int32_t>(std::max(-1073741824.0, std::min(1073741823.0, r)));
}

// Fills the requantization constants of a conv whose int32 accumulator has
// per-channel scale acc_scale[c] (and residual operand scale, if any).
void conv_requant(LoweringContext& ctx, isa::Conv* c, const std::vector<double>& acc_scale, const QParams& out,
                  double residual_scale) {
  if (out.dtype == DType::kInt32) return;
  std::vector<int32_t> m(acc_scale.size()), mr(acc_scale.size());
  std::vector<int8_t> s(acc_scale.size());
  for (size_t k = 0; k < acc_scale.size(); ++k) {
    int32_t mm, ss, rr = 0;
    if (residual_scale > 0) {
      shared_shift(acc_scale[k] / out.scale, residual_scale / out.scale, &mm, &rr, &ss);
    } else {
      isa::quantize_multiplier(acc_scale[k] / out.scale, &mm, &ss);
    }
    m[k] = mm, s[k] = static_cast<int8_t>(ss), mr[k] = rr;
  }
  c->multiplier = ctx.pb.add_const(m);
  c->shift = ctx.pb.add_const(s);
  if (residual_scale > 0) c->residual_multiplier = ctx.pb.add_const(mr);
}

bool emit_conv(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const Value& wv = ctx.value(n.inputs[1]);
  const std::vector<float> w = ctx.floats(n.inputs[1]);
  const int64_t cout = wv.shape[0], cin_g = wv.shape[1], kh = wv.shape[2], kw = wv.shape[3];
  std::vector<float> bias(static_cast<size_t>(cout), 0.0f);
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) bias = ctx.floats(n.inputs[2]);
  const Dims4 in = ctx.dims(x), out = ctx.dims(y);
  const QParams& qi = ctx.qp(x);
  const QParams& qo = ctx.qp(y);
  const std::vector<float> sw = channel_scales(w, cout);
  std::vector<int8_t> wq(static_cast<size_t>(cout * kh * kw * cin_g));
  for (int64_t co = 0; co < cout; ++co)
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b)
          wq[static_cast<size_t>(((co * kh + a) * kw + b) * cin_g + ci)] =
              qw(w[static_cast<size_t>(((co * cin_g + ci) * kh + a) * kw + b)], sw[static_cast<size_t>(co)]);
  // Empirical bias correction: remove the expected error of the rounded
  // weights given the input's per-channel mean.
  if (ctx.channel_means != nullptr) {
    auto it = ctx.channel_means->find(x);
    const int64_t groups = n.attrs.get_int("group", 1);
    if (it != ctx.channel_means->end() && static_cast<int64_t>(it->second.size()) == cin_g * groups) {
      for (int64_t co = 0; co < cout; ++co) {
        const int64_t g0 = co / (cout / groups) * cin_g;
        double corr = 0;
        for (int64_t ci = 0; ci < cin_g; ++ci)
          for (int64_t a = 0; a < kh * kw; ++a) {
            const float wf = w[static_cast<size_t>((co * cin_g + ci) * kh * kw + a)];
            const double wd = qw(wf, sw[static_cast<size_t>(co)]) * static_cast<double>(sw[static_cast<size_t>(co)]);
            corr += (wd - wf) * it->second[static_cast<size_t>(g0 + ci)];
          }
        bias[static_cast<size_t>(co)] = static_cast<float>(bias[static_cast<size_t>(co)] - corr);
      }
    }
  }
  std::vector<double> acc_scale(static_cast<size_t>(cout));
  std::vector<int32_t> bq(static_cast<size_t>(cout));
  for (int64_t c = 0; c < cout; ++c) {
    acc_scale[static_cast<size_t>(c)] = static_cast<double>(qi.scale) * sw[static_cast<size_t>(c)];
    bq[static_cast<size_t>(c)] = qbias(bias[static_cast<size_t>(c)], acc_scale[static_cast<size_t>(c)]);
  }
  isa::Conv c;
  c.in = ctx.ref(x);
  c.out = ctx.ref(y);
  Window win = window_of(n, in[2], in[3], kh, kw);
  c.kernel_h = win.kh, c.kernel_w = win.kw, c.stride_h = win.sh, c.stride_w = win.sw;
  c.dilation_h = win.dh, c.dilation_w = win.dw;
  c.pad_top = win.pt, c.pad_left = win.pl, c.pad_bottom = win.pb, c.pad_right = win.pr;
  c.groups = static_cast<int32_t>(n.attrs.get_int("group", 1));
  c.weight = ctx.pb.add_const(wq);
  c.bias = ctx.pb.add_const(bq);
  double rscale = 0;
  if (!op.residual.empty()) {
    c.has_residual = 1;
    c.residual = ctx.ref(op.residual);
    rscale = ctx.qp(op.residual).scale;
  }
  conv_requant(ctx, &c, acc_scale, qo, rscale);
  act_bounds(ctx, op.act_min_node, qo, &c.act_min, &c.act_max);
  (void)out;
  ctx.pb.emit(Opcode::kConv, c);
  return true;
}

bool emit_deconv(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const Value& wv = ctx.value(n.inputs[1]);
  const std::vector<float> w = ctx.floats(n.inputs[1]);
  const int64_t group = n.attrs.get_int("group", 1);
  const int64_t cin = wv.shape[0], cout_g = wv.shape[1], kh = wv.shape[2], kw = wv.shape[3];
  const int64_t cout = cout_g * group, cin_g = cin / group;
  std::vector<float> bias(static_cast<size_t>(cout), 0.0f);
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) bias = ctx.floats(n.inputs[2]);
  // ONNX [Cin, Cout/g, KH, KW] -> ISA [Cout][KH][KW][Cin/g]
  std::vector<float> wt(static_cast<size_t>(cout * kh * kw * cin_g));
  for (int64_t g = 0; g < group; ++g)
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t co = 0; co < cout_g; ++co)
        for (int64_t a = 0; a < kh; ++a)
          for (int64_t b = 0; b < kw; ++b)
            wt[static_cast<size_t>((((g * cout_g + co) * kh + a) * kw + b) * cin_g + ci)] =
                w[static_cast<size_t>((((g * cin_g + ci) * cout_g + co) * kh + a) * kw + b)];
  const std::vector<float> sw = channel_scales(wt, cout);
  std::vector<int8_t> wq(wt.size());
  const size_t per = wt.size() / static_cast<size_t>(cout);
  for (size_t i = 0; i < wt.size(); ++i) wq[i] = qw(wt[i], sw[i / per]);
  const QParams& qi = ctx.qp(x);
  const QParams& qo = ctx.qp(y);
  std::vector<double> acc_scale(static_cast<size_t>(cout));
  std::vector<int32_t> bq(static_cast<size_t>(cout));
  for (int64_t c = 0; c < cout; ++c) {
    acc_scale[static_cast<size_t>(c)] = static_cast<double>(qi.scale) * sw[static_cast<size_t>(c)];
    bq[static_cast<size_t>(c)] = qbias(bias[static_cast<size_t>(c)], acc_scale[static_cast<size_t>(c)]);
  }
  const Dims4 in = ctx.dims(x), out = ctx.dims(y);
  isa::Conv c;
  c.in = ctx.ref(x);
  c.out = ctx.ref(y);
  Window win = window_of(n, in[2], in[3], kh, kw);
  c.kernel_h = win.kh, c.kernel_w = win.kw, c.stride_h = win.sh, c.stride_w = win.sw;
  c.dilation_h = win.dh, c.dilation_w = win.dw;
  c.pad_top = win.pt, c.pad_left = win.pl;
  // Output padding / output_shape: take the bottom/right padding that gives
  // the graph's output size.
  c.pad_bottom = static_cast<int32_t>((in[2] - 1) * win.sh + (kh - 1) * win.dh + 1 - win.pt - out[2]);
  c.pad_right = static_cast<int32_t>((in[3] - 1) * win.sw + (kw - 1) * win.dw + 1 - win.pl - out[3]);
  if (c.pad_bottom < -(win.sh - 1) || c.pad_right < -(win.sw - 1))
    return fail(e, "node '" + n.name + "': ConvTranspose output padding exceeds stride - 1");
  c.groups = static_cast<int32_t>(group);
  c.weight = ctx.pb.add_const(wq);
  c.bias = ctx.pb.add_const(bq);
  conv_requant(ctx, &c, acc_scale, qo, 0);
  act_bounds(ctx, op.act_min_node, qo, &c.act_min, &c.act_max);
  ctx.pb.emit(Opcode::kDeconv, c);
  return true;
}

}  // namespace

// Depthwise 1x1 conv computing y = x * a[c] + b[c] (BatchNormalization,
// per-channel affine) from real-valued a, b.
void emit_affine(LoweringContext& ctx, const TensorRef& in, const TensorRef& out, double in_scale,
                 const QParams& qo, const std::vector<double>& a, const std::vector<double>& b, int act_node) {
  const size_t ch = a.size();
  std::vector<int8_t> wq(ch);
  std::vector<double> acc(ch);
  std::vector<int32_t> bq(ch);
  for (size_t c = 0; c < ch; ++c) {
    const double sw = std::fabs(a[c]) > 0 ? std::fabs(a[c]) / 127.0 : 1e-8;
    wq[c] = static_cast<int8_t>(a[c] >= 0 ? (a[c] == 0 ? 0 : 127) : -127);
    acc[c] = in_scale * sw;
    bq[c] = qbias(b[c], acc[c]);
  }
  isa::Conv c;
  c.in = in;
  c.out = out;
  c.groups = static_cast<int32_t>(ch);
  c.weight = ctx.pb.add_const(wq);
  c.bias = ctx.pb.add_const(bq);
  conv_requant(ctx, &c, acc, qo, 0);
  act_bounds(ctx, act_node, qo, &c.act_min, &c.act_max);
  ctx.pb.emit(Opcode::kConv, c);
}

namespace {

bool emit_batchnorm(LoweringContext& ctx, const Op& op, std::string* e) {
  (void)e;
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const auto gamma = ctx.floats(n.inputs[1]), beta = ctx.floats(n.inputs[2]), mean = ctx.floats(n.inputs[3]),
             var = ctx.floats(n.inputs[4]);
  const double eps = n.attrs.get_float("epsilon", 1e-5f);
  std::vector<double> a(gamma.size()), b(gamma.size());
  for (size_t c = 0; c < gamma.size(); ++c) {
    a[c] = gamma[c] / std::sqrt(static_cast<double>(var[c]) + eps);
    b[c] = beta[c] - mean[c] * a[c];
  }
  emit_affine(ctx, ctx.ref(n.inputs[0]), ctx.ref(op.outputs[0]), ctx.qp(n.inputs[0]).scale, ctx.qp(op.outputs[0]), a, b,
              op.act_min_node);
  return true;
}

bool emit_pool(LoweringContext& ctx, const Op& op, std::string* e) {
  (void)e;
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
    Window w = window_of(n, in[2], in[3], k[0], k[1]);
    fit_output(&w, in[2], in[3], out[2], out[3]);
    p.kernel_h = w.kh, p.kernel_w = w.kw, p.stride_h = w.sh, p.stride_w = w.sw, p.dilation_h = w.dh, p.dilation_w = w.dw;
    p.pad_top = w.pt, p.pad_left = w.pl, p.pad_bottom = w.pb, p.pad_right = w.pr;
    p.count_include_pad = static_cast<uint8_t>(n.attrs.get_int("count_include_pad", 0));
  }
  const QParams& qo = ctx.qp(y);
  ratio_ms(ctx.qp(x).scale / static_cast<double>(qo.scale), &p.multiplier, &p.shift);
  if (p.kind == isa::PoolKind::kAvg && p.shift > 40) {
    // The average's divisor needs headroom: re-derive with a smaller shift.
    const double r = ctx.qp(x).scale / static_cast<double>(qo.scale);
    p.shift = 40;
    p.multiplier = static_cast<int32_t>(std::max<int64_t>(1, std::llround(std::ldexp(r, 40))));
  }
  p.act_min = qmin(qo.dtype), p.act_max = qmax(qo.dtype);
  ctx.pb.emit(Opcode::kPool, p);
  return true;
}

// Real-valued function of a unary operator (for table lookups).
std::function<double(double)> unary_fn(const LoweringContext& ctx, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Relu") return [](double x) { return x > 0 ? x : 0; };
  if (op == "Clip") {
    double lo, hi;
    clip_bounds(ctx.graph, n, &lo, &hi);
    return [lo, hi](double x) { return std::min(hi, std::max(lo, x)); };
  }
  if (op == "LeakyRelu") {
    const double a = n.attrs.get_float("alpha", 0.01f);
    return [a](double x) { return x >= 0 ? x : a * x; };
  }
  if (op == "PRelu") {
    double a = 0;
    const_scalar(ctx.graph, n.inputs[1], &a);
    return [a](double x) { return x >= 0 ? x : a * x; };
  }
  if (op == "Sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (op == "Tanh") return [](double x) { return std::tanh(x); };
  if (op == "HardSigmoid") {
    const double a = n.attrs.get_float("alpha", 0.2f), b = n.attrs.get_float("beta", 0.5f);
    return [a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); };
  }
  if (op == "HardSwish") return [](double x) { return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5)); };
  if (op == "Swish") return [](double x) { return x / (1.0 + std::exp(-x)); };
  if (op == "Gelu") return [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
  if (op == "Elu") {
    const double a = n.attrs.get_float("alpha", 1.0f);
    return [a](double x) { return x >= 0 ? x : a * (std::exp(x) - 1.0); };
  }
  if (op == "Selu") {
    const double a = n.attrs.get_float("alpha", 1.67326319f), g = n.attrs.get_float("gamma", 1.05070102f);
    return [a, g](double x) { return g * (x > 0 ? x : a * (std::exp(x) - 1.0)); };
  }
  if (op == "Softplus") return [](double x) { return std::log1p(std::exp(x)); };
  if (op == "Exp") return [](double x) { return std::exp(x); };
  if (op == "Erf") return [](double x) { return std::erf(x); };
  if (op == "Abs") return [](double x) { return std::fabs(x); };
  if (op == "Neg") return [](double x) { return -x; };
  return nullptr;
}

bool emit_lut(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const auto f = unary_fn(ctx, n);
  if (!f) return fail(e, "node '" + n.name + "': no table for " + n.op_type);
  const QParams& qi = ctx.qp(n.inputs[0]);
  const QParams& qo = ctx.qp(op.outputs[0]);
  isa::Lut l;
  l.in = ctx.ref(n.inputs[0]);
  l.out = ctx.ref(op.outputs[0]);
  if (qi.dtype == DType::kInt8) {
    std::vector<int8_t> t(256);
    for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = static_cast<int8_t>(quantize(f((i - 128) * static_cast<double>(qi.scale)), qo.scale, qo.dtype));
    l.table = ctx.pb.add_const(t);
  } else {
    std::vector<int16_t> t(513);
    for (int i = 0; i < 513; ++i)
      t[static_cast<size_t>(i)] = static_cast<int16_t>(quantize(f((i * 128 - 32768) * static_cast<double>(qi.scale)), qo.scale, qo.dtype));
    l.table = ctx.pb.add_const(t);
  }
  ctx.pb.emit(Opcode::kLut, l);
  return true;
}

// Operand view broadcast to the output's logical dims.
TensorRef broadcast(LoweringContext& ctx, const std::string& v, float* scale, const Dims4& out_dims, int out_rank) {
  TensorRef r;
  const Value& val = ctx.value(v);
  if (val.is_constant()) {
    r = ctx.const_tensor(v, scale);
  } else {
    r = ctx.ref(v);
    *scale = ctx.qp(v).scale;
  }
  // Right-align the operand's shape to the output rank before mapping to 4-D.
  std::vector<int64_t> s = val.shape;
  while (static_cast<int>(s.size()) < out_rank) s.insert(s.begin(), 1);
  const Dims4 od = logical4(s);
  if (val.is_constant()) r = native_ref(r.region, r.index, r.offset, od, r.dtype, ctx.align());
  std::array<int64_t, 4> st = native_strides(od, ctx.align());
  if (!val.is_constant()) st = logical_strides(r);
  for (int k = 0; k < 4; ++k)
    if (od[k] == 1 && out_dims[k] != 1) st[k] = 0;
  return with_logical(r, out_dims, st);
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
  if (n.op_type == "Div") {
    double c = 1;
    const_scalar(ctx.graph, n.inputs[1], &c);
    // x / c == x * (1/c): as a requantized move when positive, else a multiply.
    el.a = broadcast(ctx, n.inputs[0], &sa, od, rank);
    const double r = sa / c / qo.scale;
    if (r > 0) {
      isa::Move m;
      m.in = el.a;
      m.out = el.out;
      m.requantize = 1;
      ratio_ms(r, &m.multiplier, &m.shift);
      ctx.pb.emit(Opcode::kMove, m);
      return true;
    }
    // Negative divisor: multiply by a -1 constant operand held in the table path.
    return fail(e, "node '" + n.name + "': division by a negative constant is not supported on the BPU");
  }
  el.a = broadcast(ctx, n.inputs[0], &sa, od, rank);
  el.b = broadcast(ctx, n.inputs[1], &sb, od, rank);
  if (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Max" || n.op_type == "Min") {
    el.kind = n.op_type == "Add" ? isa::EltwiseKind::kAdd
              : n.op_type == "Sub" ? isa::EltwiseKind::kSub
              : n.op_type == "Max" ? isa::EltwiseKind::kMax
                                   : isa::EltwiseKind::kMin;
    shared_shift(sa / qo.scale, sb / qo.scale, &el.multiplier_a, &el.multiplier_b, &el.shift);
  } else if (n.op_type == "Mul") {
    el.kind = isa::EltwiseKind::kMul;
    int32_t m, s;
    isa::quantize_multiplier(static_cast<double>(sa) * sb / qo.scale, &m, &s);
    el.multiplier_a = m, el.shift = s;
  } else {
    return fail(e, "node '" + n.name + "': unsupported element-wise operator " + n.op_type);
  }
  act_bounds(ctx, op.act_min_node, qo, &el.act_min, &el.act_max);
  ctx.pb.emit(Opcode::kEltwise, el);
  return true;
}

bool emit_resize(LoweringContext& ctx, const Op& op, std::string* e) {
  (void)e;
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
  std::string ctm = n.attrs.get_string("coordinate_transformation_mode", "half_pixel");
  if (n.op_type == "Upsample" || ctx.graph.opset < 11) ctm = "asymmetric";
  auto coords = [&](int64_t in_len, int64_t out_len, double scale, int64_t* start, int64_t* step) {
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
  };
  coords(in[2], out[2], scale_h, &r.y_start, &r.y_step);
  coords(in[3], out[3], scale_w, &r.x_start, &r.x_step);
  std::string nm = n.attrs.get_string("nearest_mode", "round_prefer_floor");
  if (n.op_type == "Upsample" || ctx.graph.opset < 11) nm = "floor";
  r.round_bias = nm == "floor" ? 0 : nm == "ceil" ? 65535 : nm == "round_prefer_ceil" ? 32768 : 32767;
  ratio_ms(ctx.qp(x).scale / static_cast<double>(ctx.qp(y).scale), &r.multiplier, &r.shift);
  if (r.mode == isa::ResizeMode::kBilinear && r.shift > 55) {
    const double q = ctx.qp(x).scale / static_cast<double>(ctx.qp(y).scale);
    r.shift = 55;
    r.multiplier = static_cast<int32_t>(std::max<int64_t>(1, std::llround(std::ldexp(q, 55))));
  }
  ctx.pb.emit(Opcode::kResize, r);
  return true;
}

// A requantizing copy between two views of identical logical dims.
void emit_move(LoweringContext& ctx, const TensorRef& in, const TensorRef& out, double in_scale, double out_scale) {
  isa::Move m;
  m.in = in;
  m.out = out;
  const double r = in_scale / out_scale;
  if (in.dtype != out.dtype || std::fabs(r - 1.0) > 1e-9) {
    m.requantize = 1;
    ratio_ms(r, &m.multiplier, &m.shift);
  }
  ctx.pb.emit(Opcode::kMove, m);
}

bool emit_concat_split(LoweringContext& ctx, const Op& op, std::string* e) {
  (void)e;
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const bool concat = n.op_type == "Concat";
  const std::string& big = concat ? op.outputs[0] : n.inputs[0];
  const int rank = static_cast<int>(ctx.value(big).shape.size());
  const int axis = logical_axis4(rank, n.attrs.get_int("axis", 0));
  const TensorRef bref = ctx.ref(big);
  const auto bst = logical_strides(bref);
  const std::vector<std::string> parts = concat ? n.inputs : op.outputs;
  int64_t pos = 0;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    const Dims4 pd = ctx.dims(p);
    TensorRef sub = with_logical(bref, pd, bst);
    sub.offset += static_cast<uint64_t>(pos * bst[static_cast<size_t>(axis)] * isa::dtype_size(bref.dtype));
    const TensorRef pref = with_logical(ctx.ref(p), pd, logical_strides(ctx.ref(p)));
    if (concat) {
      emit_move(ctx, pref, sub, ctx.qp(p).scale, ctx.qp(big).scale);
    } else {
      emit_move(ctx, sub, pref, ctx.qp(big).scale, ctx.qp(p).scale);
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
  std::vector<int64_t> starts = ints_attr_or_input(ctx, n, "starts", 1), ends = ints_attr_or_input(ctx, n, "ends", 2),
                       axes = ints_attr_or_input(ctx, n, "axes", 3), steps = ints_attr_or_input(ctx, n, "steps", 4);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  TensorRef in = ctx.ref(x);
  auto st = logical_strides(in);
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
  in = with_logical(in, ctx.dims(y), st);
  emit_move(ctx, in, ctx.ref(y), ctx.qp(x).scale, ctx.qp(y).scale);
  return true;
}

// Row-major reshape as one strided copy: the common refinement of the input
// and output logical shapes, each refined dim with its stride on both sides.
bool emit_reshape(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const TensorRef in = ctx.ref(x), out = ctx.ref(y);
  const Dims4 id = logical_dims(in), od = logical_dims(out);
  const auto ist = logical_strides(in), ost = logical_strides(out);
  struct D {
    int64_t size, si, so;
  };
  std::vector<D> dims;
  // Walk both shapes from the innermost dimension outwards.
  int a = 3, b = 3;
  int64_t ra = id[3], rb = od[3];          // remaining size of the current dims
  int64_t sa = ist[3], sb = ost[3];        // stride of the next element of the current dims
  while (a >= 0 && b >= 0) {
    if (ra == 1) { --a; if (a >= 0) ra = id[static_cast<size_t>(a)], sa = ist[static_cast<size_t>(a)]; continue; }
    if (rb == 1) { --b; if (b >= 0) rb = od[static_cast<size_t>(b)], sb = ost[static_cast<size_t>(b)]; continue; }
    const int64_t g = std::min(ra, rb);
    if (ra % g != 0 || rb % g != 0) {
      // Non-nested factors: split by the gcd.
      int64_t x1 = ra, x2 = rb;
      while (x2) { const int64_t t = x1 % x2; x1 = x2; x2 = t; }
      if (x1 == 1) return fail(e, "node '" + n.name + "': reshape cannot be expressed as a strided copy");
      dims.push_back({x1, sa, sb});
      sa *= x1, sb *= x1, ra /= x1, rb /= x1;
      continue;
    }
    dims.push_back({g, sa, sb});
    sa *= g, sb *= g, ra /= g, rb /= g;
  }
  // dims are innermost first; merge contiguous neighbours.
  std::vector<D> merged;
  for (const D& d : dims) {
    if (!merged.empty() && merged.back().si * merged.back().size == d.si && merged.back().so * merged.back().size == d.so) {
      merged.back().size *= d.size;
      continue;
    }
    merged.push_back(d);
  }
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
    const D& d = merged[nd - 1 - k];
    m.in.dims[k] = m.out.dims[k] = static_cast<int32_t>(d.size);
    m.in.strides[k] = d.si;
    m.out.strides[k] = d.so;
  }
  const double r = ctx.qp(x).scale / static_cast<double>(ctx.qp(y).scale);
  if (std::fabs(r - 1.0) > 1e-9 || in.dtype != out.dtype) {
    m.requantize = 1;
    ratio_ms(r, &m.multiplier, &m.shift);
  }
  ctx.pb.emit(Opcode::kMove, m);
  return true;
}

bool emit_transpose(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  std::vector<int64_t> perm = n.attrs.get_ints("perm");
  if (perm.empty()) perm = {3, 2, 1, 0};
  if (perm.size() != 4) return fail(e, "node '" + n.name + "': only 4-D transposes");
  const TensorRef in = ctx.ref(x);
  const auto ist = logical_strides(in);
  std::array<int64_t, 4> st{};
  for (int k = 0; k < 4; ++k) st[static_cast<size_t>(k)] = ist[static_cast<size_t>(perm[static_cast<size_t>(k)])];
  emit_move(ctx, with_logical(in, ctx.dims(y), st), ctx.ref(y), ctx.qp(x).scale, ctx.qp(y).scale);
  return true;
}

bool emit_depth_space(LoweringContext& ctx, const Op& op, std::string* e) {
  (void)e;
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const bool d2s = n.op_type == "DepthToSpace";
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const int64_t bs = n.attrs.get_int("blocksize", 2);
  const bool crd = n.attrs.get_string("mode", "DCR") == "CRD";
  // Space side (large H, W) and depth side (C * bs * bs).
  const TensorRef sp = ctx.ref(d2s ? y : x), dp = ctx.ref(d2s ? x : y);
  const Dims4 sd = logical_dims(sp);
  const auto ss = logical_strides(sp), ds = logical_strides(dp);
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
    ratio_ms(r, &m.multiplier, &m.shift);
  }
  ctx.pb.emit(Opcode::kMove, m);
  return true;
}

bool emit_pad(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  std::vector<int64_t> pads = n.attrs.has("pads") ? n.attrs.get_ints("pads") : ints_attr_or_input(ctx, n, "", 1);
  if (pads.size() != 8) return fail(e, "node '" + n.name + "': pads must have 8 values");
  for (int64_t p : pads)
    if (p < 0) return fail(e, "node '" + n.name + "': negative pads are not supported on the BPU");
  double value = n.attrs.get_float("value", 0.0f);
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) const_scalar(ctx.graph, n.inputs[2], &value);
  const QParams& qo = ctx.qp(y);
  isa::Fill f;
  f.out = ctx.ref(y);
  f.value = quantize(value, qo.scale, qo.dtype);
  ctx.pb.emit(Opcode::kFill, f);
  TensorRef inner = ctx.ref(y);
  const auto st = logical_strides(inner);
  for (int k = 0; k < 4; ++k)
    inner.offset += static_cast<uint64_t>(pads[static_cast<size_t>(k)] * st[static_cast<size_t>(k)] * isa::dtype_size(inner.dtype));
  inner = with_logical(inner, ctx.dims(x), st);
  emit_move(ctx, ctx.ref(x), inner, ctx.qp(x).scale, qo.scale);
  return true;
}

bool emit_argmax(LoweringContext& ctx, const Op& op, std::string* e) {
  (void)e;
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  isa::ArgMax a;
  a.in = ctx.ref(n.inputs[0]);
  a.out = ctx.ref(op.outputs[0]);
  ctx.pb.emit(Opcode::kArgMax, a);
  return true;
}

bool emit_copy(LoweringContext& ctx, const Op& op, std::string* e) {
  (void)e;
  emit_move(ctx, ctx.ref(op.inputs[0]), ctx.ref(op.outputs[0]), ctx.qp(op.inputs[0]).scale, ctx.qp(op.outputs[0]).scale);
  return true;
}

}  // namespace

bool emit_op(LoweringContext& ctx, const Op& op, std::string* e) {
  static const std::map<std::string, bool (*)(LoweringContext&, const Op&, std::string*)> kEmitters = {
      {"conv", emit_conv},         {"deconv", emit_deconv},      {"batchnorm", emit_batchnorm},
      {"pool", emit_pool},         {"lut", emit_lut},            {"eltwise", emit_eltwise},
      {"resize", emit_resize},     {"concat", emit_concat_split}, {"split", emit_concat_split},
      {"slice", emit_slice},       {"reshape", emit_reshape},    {"transpose", emit_transpose},
      {"depth_space", emit_depth_space}, {"pad", emit_pad},      {"argmax", emit_argmax},
      {"copy", emit_copy},
  };
  auto it = kEmitters.find(op.kind);
  if (it == kEmitters.end()) return fail(e, "no emitter for '" + op.kind + "'");
  return it->second(ctx, op, e);
}

}  // namespace openbpu::cvt
