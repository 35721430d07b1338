// SPDX-License-Identifier: Apache-2.0
// Convolution family: Conv, ConvTranspose and BatchNormalization (a
// depthwise 1x1 convolution). Weights int8 per output channel, bias int32 at
// the accumulator's scale, requantized per channel (docs/numerics.md).
#include <algorithm>
#include <cmath>
#include <limits>

#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

using isa::DType;
using ops::fail;

// ---- placement -------------------------------------------------------------

bool place_conv(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  const isa::OpLimits& l = march.limits;
  if (!ops::activation4d(g, n, why)) return false;
  const Value* w = ops::in_value(g, n, 1);
  if (w == nullptr || !w->is_constant()) return fail(why, "weights are not constant");
  if (w->shape.size() != 4) return fail(why, "only 2-D convolution");
  const Value* b = ops::in_value(g, n, 2);
  if (b != nullptr && !b->is_constant()) return fail(why, "bias is not constant");
  const int64_t cin = g.value(n.inputs[0])->shape[1], cout = w->shape[0];
  if (cin > l.max_channels || cout > l.max_channels)
    return fail(why, "channels " + std::to_string(std::max(cin, cout)) + " exceed " + std::to_string(l.max_channels));
  const int64_t taps = w->shape[1] * w->shape[2] * w->shape[3];
  if (!isa::int8_reduction_fits(taps)) return fail(why, "reduction of " + std::to_string(taps) + " taps is too long");
  return ops::window_ok(n, l, why, false);
}

bool place_deconv(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  const isa::OpLimits& l = march.limits;
  if (!ops::activation4d(g, n, why)) return false;
  const Value* w = ops::in_value(g, n, 1);
  if (w == nullptr || !w->is_constant() || w->shape.size() != 4) return fail(why, "weights are not constant 2-D");
  for (int64_t v : n.attrs.get_ints("kernel_shape"))
    if (v > l.max_deconv_kernel) return fail(why, "kernel size exceeds " + std::to_string(l.max_deconv_kernel));
  for (int64_t v : n.attrs.get_ints("strides"))
    if (v > l.max_stride) return fail(why, "stride exceeds " + std::to_string(l.max_stride));
  for (int64_t v : n.attrs.get_ints("dilations"))
    if (v > l.max_dilation) return fail(why, "dilation exceeds " + std::to_string(l.max_dilation));
  const int64_t cin = w->shape[0], cout = w->shape[1] * n.attrs.get_int("group", 1);
  if (cin > l.max_channels || cout > l.max_channels)
    return fail(why, "channels " + std::to_string(std::max(cin, cout)) + " exceed " + std::to_string(l.max_channels));
  if (n.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return fail(why, "auto_pad is not supported");
  return true;
}

bool place_batchnorm(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why) {
  if (!ops::activation4d(g, n, why) || !ops::constant_params(g, n, "parameters", why)) return false;
  const int64_t c = g.value(n.inputs[0])->shape[1];
  if (c > march.limits.max_channels)
    return fail(why, "channels " + std::to_string(c) + " exceed " + std::to_string(march.limits.max_channels));
  return true;
}

// ---- weights -----------------------------------------------------------------

// Per-output-channel weight scales: max |w| / 127 over each channel's
// values, widened where the channel's bias would not fit the int32 bias at
// the accumulator scale in_scale * s_w (ops::bias_fitting_scale).
std::vector<float> channel_scales(const std::vector<float>& w, int64_t cout, const std::vector<float>& bias,
                                  double in_scale) {
  const size_t per = w.size() / static_cast<size_t>(cout);
  std::vector<float> s(static_cast<size_t>(cout));
  for (int64_t c = 0; c < cout; ++c) {
    float mx = 0.0f;
    for (size_t k = 0; k < per; ++k) mx = std::max(mx, std::fabs(w[c * per + k]));
    s[static_cast<size_t>(c)] = static_cast<float>(ops::bias_fitting_scale(mx / 127.0f, bias[static_cast<size_t>(c)], in_scale));
  }
  return s;
}

std::vector<float> bias_of(const Graph& g, const Node& n, int64_t cout) {
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) return const_floats(g, n.inputs[2]);
  return std::vector<float>(static_cast<size_t>(cout), 0.0f);
}

// ConvTranspose weights ONNX [Cin, Cout/g, KH, KW] -> the ISA's [Cout][KH][KW][Cin/g].
std::vector<float> deconv_weights(const Graph& g, const Node& n) {
  const Value& wv = *g.value(n.inputs[1]);
  const std::vector<float> w = const_floats(g, n.inputs[1]);
  const int64_t group = n.attrs.get_int("group", 1);
  const int64_t cin = wv.shape[0], cout_g = wv.shape[1], kh = wv.shape[2], kw = wv.shape[3];
  const int64_t cin_g = cin / group;
  std::vector<float> wt(static_cast<size_t>(cout_g * group * kh * kw * cin_g));
  for (int64_t gi = 0; gi < group; ++gi)
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t co = 0; co < cout_g; ++co)
        for (int64_t a = 0; a < kh; ++a)
          for (int64_t b = 0; b < kw; ++b)
            wt[static_cast<size_t>((((gi * cout_g + co) * kh + a) * kw + b) * cin_g + ci)] =
                w[static_cast<size_t>((((gi * cin_g + ci) * cout_g + co) * kh + a) * kw + b)];
  return wt;
}

std::vector<float> conv_weight_scales(const Graph& g, const Node& n, double in_scale) {
  const int64_t cout = g.value(n.inputs[1])->shape[0];
  return channel_scales(const_floats(g, n.inputs[1]), cout, bias_of(g, n, cout), in_scale);
}

std::vector<float> deconv_weight_scales(const Graph& g, const Node& n, double in_scale) {
  const int64_t cout = g.value(n.inputs[1])->shape[1] * n.attrs.get_int("group", 1);
  return channel_scales(deconv_weights(g, n), cout, bias_of(g, n, cout), in_scale);
}

// ---- emission ------------------------------------------------------------------

// Requantization constants per output channel: M, S and the residual's M
// (empty for int32 outputs).
struct ConvRequant {
  std::vector<int32_t> m, mr;
  std::vector<int8_t> s;
};

// For an int32 accumulator of per-channel scale acc_scale[c] (and
// per-channel residual operand scale residual_scale[c], if any: empty = no
// residual).
ConvRequant requant_of(const std::vector<double>& acc_scale, const QParams& out,
                       const std::vector<double>& residual_scale) {
  ConvRequant r;
  if (out.dtype == DType::kInt32) return r;
  r.m.resize(acc_scale.size()), r.mr.resize(acc_scale.size()), r.s.resize(acc_scale.size());
  for (size_t k = 0; k < acc_scale.size(); ++k) {
    int32_t mm, ss, rr = 0;
    if (!residual_scale.empty()) {
      isa::quantize_multiplier_pair(acc_scale[k] / out.scale, residual_scale[k] / out.scale, &mm, &rr, &ss);
    } else {
      isa::quantize_multiplier(acc_scale[k] / out.scale, &mm, &ss);
    }
    r.m[k] = mm, r.s[k] = static_cast<int8_t>(ss), r.mr[k] = rr;
  }
  return r;
}

void set_requant(LoweringContext& ctx, isa::Conv* c, const ConvRequant& r, bool residual) {
  if (r.m.empty()) return;
  c->multiplier = ctx.pb.add_const(r.m);
  c->shift = ctx.pb.add_const(r.s);
  if (residual) c->residual_multiplier = ctx.pb.add_const(r.mr);
}

void conv_requant(LoweringContext& ctx, isa::Conv* c, const std::vector<double>& acc_scale, const QParams& out,
                  const std::vector<double>& residual_scale = {}) {
  set_requant(ctx, c, requant_of(acc_scale, out, residual_scale), !residual_scale.empty());
}

// Zero points (docs/numerics.md "Asymmetric activations"): with the input's
// zero point z_in (read by out-of-image taps, Conv::pad_value) the bias
// takes -z_in * sum(w[co]); the output's z_out enters as round(z_out * 2^S /
// M) accumulator units, off by at most half the requantization ratio M / 2^S
// of an output step. w: cout rows of k weights. False when the bias leaves
// the int32 accumulator's bound (validate.cc).
bool fold_zero_points(const std::vector<int8_t>& w, int64_t k, int32_t z_in, int32_t z_out, const ConvRequant& r,
                      std::vector<int32_t>* bq) {
  if (z_in == 0 && z_out == 0) return true;
  const int64_t bound = std::numeric_limits<int32_t>::max() - k * 128 * 128;
  for (size_t co = 0; co < bq->size(); ++co) {
    int64_t sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += w[co * static_cast<size_t>(k) + static_cast<size_t>(i)];
    double b = static_cast<double>((*bq)[co]) - static_cast<double>(z_in) * static_cast<double>(sum);
    if (z_out != 0 && !r.m.empty()) b += std::round(std::ldexp(static_cast<double>(z_out), r.s[co]) / r.m[co]);
    if (std::fabs(b) > static_cast<double>(bound)) return false;
    (*bq)[co] = static_cast<int32_t>(b);
  }
  return true;
}

// int8 weights of a convolution, ONNX order [Cout][Cin/g][taps]: rounded to
// nearest; with keep_sums an (output, input) channel pair whose nearest
// rounding loses its flat response (the sum of its taps, the response to a
// flat input, moved by more than its own magnitude) gets its taps' sum back
// to the integer closest to the real sum. Reparameterized depthwise kernels
// (MobileOne, RepVGG, PP-LCNetV3) hold large taps that nearly cancel:
// rounding each to nearest moved PP-OCRv4 rec's first depthwise kernel's
// sum from 0.004 to 0.065, an offset on every flat region the rest of the
// network amplified. Pairs whose flat response nearest rounding keeps stay
// nearest: restoring every pair's sum measured worse on held-out data (the
// rec: 181 instead of 184 of 200 lines decoded as in float; the PP-OCR
// classifier's accuracy-budget case: 97.8 % instead of 98.8 % agreement on
// 1000 lines; docs/converter.md "int16 and the weights"). The taps whose
// rounding costs least flip direction, each still within one step.
std::vector<int8_t> round_weights(const std::vector<float>& w, const std::vector<float>& sw, int64_t cout,
                                  int64_t cin_g, int64_t taps, bool keep_sums) {
  std::vector<int8_t> q(w.size());
  std::vector<double> x(static_cast<size_t>(taps));
  for (int64_t pair = 0; pair < cout * cin_g; ++pair) {
    const size_t base = static_cast<size_t>(pair * taps);
    const double s = sw[static_cast<size_t>(pair / cin_g)];
    double sum_x = 0;
    int64_t sum_q = 0;
    for (int64_t k = 0; k < taps; ++k) {
      x[static_cast<size_t>(k)] = w[base + static_cast<size_t>(k)] / s;
      q[base + static_cast<size_t>(k)] = ops::quantize_weight(w[base + static_cast<size_t>(k)], static_cast<float>(s));
      sum_x += x[static_cast<size_t>(k)];
      sum_q += q[base + static_cast<size_t>(k)];
    }
    const bool lost = std::fabs(static_cast<double>(sum_q) - sum_x) > std::fabs(sum_x);
    for (int64_t d = keep_sums && lost ? std::llround(sum_x) - sum_q : 0; d != 0;) {
      const int step = d > 0 ? 1 : -1;
      int64_t best = -1;
      double best_cost = INFINITY;
      for (int64_t k = 0; k < taps; ++k) {
        const int v = q[base + static_cast<size_t>(k)] + step;
        const double e = x[static_cast<size_t>(k)], cost = (v - e) * (v - e) - (v - step - e) * (v - step - e);
        if (v >= -127 && v <= 127 && cost < best_cost) best_cost = cost, best = k;
      }
      if (best < 0) break;
      q[base + static_cast<size_t>(best)] = static_cast<int8_t>(q[base + static_cast<size_t>(best)] + step);
      d -= step;
    }
  }
  return q;
}

// Replaces the rows of q (rows = output channels, each in RoundedWeights
// order) that were rounded for the output error at the same scale.
void overlay_rounded(const RoundedWeights* rw, const std::vector<float>& sw, std::vector<int8_t>* q) {
  if (rw == nullptr || rw->q.size() != q->size()) return;
  const size_t len = q->size() / sw.size();
  for (size_t r = 0; r < sw.size(); ++r)
    if (LoweringContext::row_rounded_at(rw, r, sw[r]))
      std::copy_n(rw->q.begin() + static_cast<std::ptrdiff_t>(r * len), len, q->begin() + static_cast<std::ptrdiff_t>(r * len));
}

// Empirical bias correction: removes the expected error of the rounded
// weights given the input's per-channel mean (optimization bias_correction).
void correct_bias(const LoweringContext& ctx, const Node& n, const std::vector<float>& w, const std::vector<int8_t>& q,
                  const std::vector<float>& sw, int64_t cout, int64_t cin_g, int64_t taps, std::vector<float>* bias) {
  if (ctx.channel_means == nullptr) return;
  auto it = ctx.channel_means->find(n.inputs[0]);
  const int64_t groups = n.attrs.get_int("group", 1);
  if (it == ctx.channel_means->end() || static_cast<int64_t>(it->second.size()) != cin_g * groups) return;
  for (int64_t co = 0; co < cout; ++co) {
    const int64_t g0 = co / (cout / groups) * cin_g;
    double corr = 0;
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t a = 0; a < taps; ++a) {
        const size_t i = static_cast<size_t>((co * cin_g + ci) * taps + a);
        const float wf = w[i];
        const double wd = q[i] * static_cast<double>(sw[static_cast<size_t>(co)]);
        corr += (wd - wf) * it->second[static_cast<size_t>(g0 + ci)];
      }
    (*bias)[static_cast<size_t>(co)] = static_cast<float>((*bias)[static_cast<size_t>(co)] - corr);
  }
}

// Accumulator scales s_in * s_w[c] and the int32 bias at them.
void bias_and_scales(const std::vector<float>& bias, float in_scale, const std::vector<float>& sw,
                     std::vector<double>* acc_scale, std::vector<int32_t>* bq) {
  acc_scale->resize(sw.size());
  bq->resize(sw.size());
  for (size_t c = 0; c < sw.size(); ++c) {
    (*acc_scale)[c] = static_cast<double>(in_scale) * sw[c];
    (*bq)[c] = ops::quantize_bias(bias[c], (*acc_scale)[c]);
  }
}

void set_window(isa::Conv* c, const ops::Window& win) {
  c->kernel_h = win.kh, c->kernel_w = win.kw, c->stride_h = win.sh, c->stride_w = win.sw;
  c->dilation_h = win.dh, c->dilation_w = win.dw;
  c->pad_top = win.pt, c->pad_left = win.pl, c->pad_bottom = win.pb, c->pad_right = win.pr;
}

// A conv's weights: float and int8 in ONNX order [Cout][Cin/g][KH][KW],
// per-output-channel scales.
struct ConvWeights {
  std::vector<float> w, scales;
  std::vector<int8_t> q;
  int64_t cout = 0, cin_g = 0, kh = 0, kw = 0;
  int64_t taps() const { return kh * kw; }
};

ConvWeights conv_weights(const LoweringContext& ctx, const Node& n) {
  ConvWeights cw;
  const Value& wv = ctx.value(n.inputs[1]);
  cw.w = ctx.floats(n.inputs[1]);
  cw.cout = wv.shape[0], cw.cin_g = wv.shape[1], cw.kh = wv.shape[2], cw.kw = wv.shape[3];
  cw.scales = conv_weight_scales(ctx.graph, n, ctx.qp(n.inputs[0]).scale);
  // int16 inputs (the weights' rounding is then the larger error): 1x1
  // weights rounded for the output error, others keeping their tap sums.
  const bool wide = ctx.qp(n.inputs[0]).dtype == DType::kInt16;
  cw.q = round_weights(cw.w, cw.scales, cw.cout, cw.cin_g, cw.taps(), wide);
  if (wide) overlay_rounded(ctx.rounded(n.name, cw.scales.size()), cw.scales, &cw.q);
  return cw;
}

// A conv instruction of node n reading x into out with int8 weights q (ONNX
// order, stored in the ISA's [Cout][KH][KW][Cin/g]) and int32 bias bq.
isa::Conv conv_instruction(LoweringContext& ctx, const Node& n, const isa::TensorRef& out, const ConvWeights& cw,
                           const std::vector<int8_t>& q, const std::vector<int32_t>& bq) {
  std::vector<int8_t> wq(q.size());
  for (int64_t co = 0; co < cw.cout; ++co)
    for (int64_t ci = 0; ci < cw.cin_g; ++ci)
      for (int64_t t = 0; t < cw.taps(); ++t)
        wq[static_cast<size_t>((co * cw.taps() + t) * cw.cin_g + ci)] = q[static_cast<size_t>((co * cw.cin_g + ci) * cw.taps() + t)];
  const std::string& x = n.inputs[0];
  const Dims4 in = ctx.dims(x);
  isa::Conv c;
  c.in = ctx.ref(x);
  c.out = out;
  set_window(&c, ops::window_of(n, in[2], in[3], cw.kh, cw.kw));
  c.groups = static_cast<int32_t>(n.attrs.get_int("group", 1));
  c.weight = ctx.pb.add_const(wq);
  c.bias = ctx.pb.add_const(bq);
  return c;
}

// 16-bit weights (Op::int16_weights): w = s[c] q[c] + l[c] q_lo[c] with
// l[c] = max |w - s[c] q[c]| / 127 over the channel. The low plane's conv
// writes its accumulator to the int16 scratch at scale
// s_x l[c] sum |q_lo[c]| (|x_q| <= 32768 on int16 inputs: it cannot
// saturate); the high plane's conv adds that as its residual. Returns the
// scratch's per-channel scales.
std::vector<double> emit_low_plane(LoweringContext& ctx, const Op& op, const Node& n, const ConvWeights& cw,
                                   isa::TensorRef* scratch) {
  const size_t per = cw.q.size() / static_cast<size_t>(cw.cout);
  std::vector<int8_t> lo(cw.q.size());
  // out_scale: the scratch's; ratio: the low accumulator's scale over it
  std::vector<double> out_scale(static_cast<size_t>(cw.cout)), ratio(out_scale.size());
  const double sx = ctx.qp(n.inputs[0]).scale;
  for (size_t c = 0; c < out_scale.size(); ++c) {
    double mx = 0, sum = 0;
    auto rest = [&](size_t k) { return cw.w[k] - static_cast<double>(cw.q[k]) * cw.scales[c]; };
    for (size_t k = c * per; k < (c + 1) * per; ++k) mx = std::max(mx, std::fabs(rest(k)));
    const double l = mx > 0 ? mx / 127.0 : 1.0;
    for (size_t k = c * per; k < (c + 1) * per; ++k) {
      lo[k] = ops::quantize_weight(static_cast<float>(rest(k)), static_cast<float>(l));
      sum += std::abs(lo[k]);
    }
    const double acc_scale = sx * l;
    out_scale[c] = acc_scale * std::max(sum, 1.0) * (32768.0 / 32767.0);
    ratio[c] = acc_scale / out_scale[c];
  }
  *scratch = native_ref(isa::Region::kScratch, 0, op.scratch_offset, ctx.dims(op.outputs[0]), DType::kInt16, ctx.align());
  isa::Conv c = conv_instruction(ctx, n, *scratch, cw, lo, std::vector<int32_t>(out_scale.size(), 0));
  QParams unit;  // requantized at unit scale: acc * ratio[c]
  unit.dtype = DType::kInt16;
  conv_requant(ctx, &c, ratio, unit);
  c.act_min = -32768, c.act_max = 32767;
  ctx.pb.emit(isa::Opcode::kConv, c);
  return out_scale;
}

// An output zero point enters the bias as z_out / (M / 2^S) accumulator
// units: a channel whose ratio s_in * s_w / s_out is too small for that to
// fit a quarter of the int32 bias's room (near-zero weights) gets the
// coarser weight scale that fits (its weights rounded to nearest again).
void fit_output_zero_point(const LoweringContext& ctx, const Node& n, const QParams& qo, ConvWeights* cw) {
  if (qo.zero_point == 0 || qo.dtype == DType::kInt32) return;
  const double s_in = ctx.qp(n.inputs[0]).scale;
  const double room = (std::numeric_limits<int32_t>::max() - cw->cin_g * cw->taps() * 128.0 * 128.0) / 4;
  const double min_ratio = std::abs(qo.zero_point) / room;
  const size_t per = cw->q.size() / cw->scales.size();
  for (size_t c = 0; c < cw->scales.size(); ++c) {
    if (s_in * cw->scales[c] / qo.scale >= min_ratio) continue;
    cw->scales[c] = static_cast<float>(min_ratio * qo.scale / s_in);
    for (size_t k = c * per; k < (c + 1) * per; ++k) cw->q[k] = ops::quantize_weight(cw->w[k], cw->scales[c]);
  }
}

bool emit_conv(LoweringContext& ctx, const Op& op, std::string* error) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  ConvWeights cw = conv_weights(ctx, n);
  fit_output_zero_point(ctx, n, ctx.qp(y), &cw);
  std::vector<float> bias = bias_of(ctx.graph, n, cw.cout);
  // (the low plane leaves too small an error for the bias correction's estimate)
  if (!op.int16_weights) correct_bias(ctx, n, cw.w, cw.q, cw.scales, cw.cout, cw.cin_g, cw.taps(), &bias);
  std::vector<double> acc_scale, rscale;
  std::vector<int32_t> bq;
  bias_and_scales(bias, ctx.qp(x).scale, cw.scales, &acc_scale, &bq);
  isa::TensorRef low;
  if (op.int16_weights) rscale = emit_low_plane(ctx, op, n, cw, &low);
  if (!op.int16_weights && !op.residual.empty()) rscale.assign(acc_scale.size(), ctx.qp(op.residual).scale);
  const QParams& qo = ctx.qp(y);
  const ConvRequant rq = requant_of(acc_scale, qo, rscale);
  const int32_t z_in = ctx.qp(x).zero_point;
  if (!fold_zero_points(cw.q, cw.cin_g * cw.taps(), z_in, qo.zero_point, rq, &bq))
    return fail(error, "node '" + n.name + "': the zero points do not fit the int32 bias (optimization asymmetric)");
  isa::Conv c = conv_instruction(ctx, n, ctx.ref(y), cw, cw.q, bq);
  c.pad_value = z_in;
  if (op.int16_weights) {
    c.has_residual = 1;
    c.residual = low;
  } else if (!op.residual.empty()) {
    c.has_residual = 1;
    c.residual = ctx.ref(op.residual);
  }
  set_requant(ctx, &c, rq, !rscale.empty());
  ops::act_bounds(ctx, op.act_min_node, qo, &c.act_min, &c.act_max);
  ctx.pb.emit(isa::Opcode::kConv, c);
  return true;
}

// Scratch of a conv with 16-bit weights: its low plane's int16 result.
uint64_t conv_scratch(const Graph& g, const Op& op, int align) {
  return op.int16_weights ? native_bytes(logical4(g.value(op.outputs[0])->shape), DType::kInt16, align) : 0;
}

bool emit_deconv(LoweringContext& ctx, const Op& op, std::string* e) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& x = n.inputs[0];
  const std::string& y = op.outputs[0];
  const Value& wv = ctx.value(n.inputs[1]);
  const int64_t group = n.attrs.get_int("group", 1);
  const int64_t kh = wv.shape[2], kw = wv.shape[3];
  const int64_t cout = wv.shape[1] * group;
  const std::vector<float> bias = bias_of(ctx.graph, n, cout);
  const std::vector<float> wt = deconv_weights(ctx.graph, n);
  const std::vector<float> sw = channel_scales(wt, cout, bias, ctx.qp(x).scale);
  std::vector<int8_t> wq(wt.size());
  const size_t per = wt.size() / static_cast<size_t>(cout);
  for (size_t i = 0; i < wt.size(); ++i) wq[i] = ops::quantize_weight(wt[i], sw[i / per]);
  std::vector<double> acc_scale;
  std::vector<int32_t> bq;
  bias_and_scales(bias, ctx.qp(x).scale, sw, &acc_scale, &bq);
  const QParams& qo = ctx.qp(y);
  const ConvRequant rq = requant_of(acc_scale, qo, {});
  if (!fold_zero_points(wq, static_cast<int64_t>(per), 0, qo.zero_point, rq, &bq))
    return fail(e, "node '" + n.name + "': the zero point does not fit the int32 bias (optimization asymmetric)");
  const Dims4 in = ctx.dims(x), out = ctx.dims(y);
  isa::Conv c;
  c.in = ctx.ref(x);
  c.out = ctx.ref(y);
  const ops::Window win = ops::window_of(n, in[2], in[3], kh, kw);
  set_window(&c, win);
  // Output padding / output_shape: take the bottom/right padding that gives
  // the graph's output size.
  c.pad_bottom = static_cast<int32_t>((in[2] - 1) * win.sh + (kh - 1) * win.dh + 1 - win.pt - out[2]);
  c.pad_right = static_cast<int32_t>((in[3] - 1) * win.sw + (kw - 1) * win.dw + 1 - win.pl - out[3]);
  if (c.pad_bottom < -(win.sh - 1) || c.pad_right < -(win.sw - 1))
    return fail(e, "node '" + n.name + "': ConvTranspose output padding exceeds stride - 1");
  c.groups = static_cast<int32_t>(group);
  c.weight = ctx.pb.add_const(wq);
  c.bias = ctx.pb.add_const(bq);
  set_requant(ctx, &c, rq, false);
  ops::act_bounds(ctx, op.act_min_node, qo, &c.act_min, &c.act_max);
  ctx.pb.emit(isa::Opcode::kDeconv, c);
  return true;
}

bool emit_batchnorm(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const auto gamma = ctx.floats(n.inputs[1]), beta = ctx.floats(n.inputs[2]), mean = ctx.floats(n.inputs[3]),
             var = ctx.floats(n.inputs[4]);
  const double eps = n.attrs.get_float("epsilon", 1e-5f);
  std::vector<double> a(gamma.size()), b(gamma.size());
  for (size_t c = 0; c < gamma.size(); ++c) {
    a[c] = gamma[c] / std::sqrt(static_cast<double>(var[c]) + eps);
    b[c] = beta[c] - mean[c] * a[c];
  }
  ops::emit_affine(ctx, ctx.ref(n.inputs[0]), ctx.ref(op.outputs[0]), ctx.qp(n.inputs[0]).scale,
                   ctx.qp(op.outputs[0]), a, b, op.act_min_node);
  return true;
}

}  // namespace

namespace ops {

void emit_affine(LoweringContext& ctx, const isa::TensorRef& in, const isa::TensorRef& out, double in_scale,
                 const QParams& qo, const std::vector<double>& a, const std::vector<double>& b, int act_node) {
  const size_t ch = a.size();
  std::vector<int8_t> wq(ch);
  std::vector<double> acc(ch);
  std::vector<int32_t> bq(ch);
  for (size_t c = 0; c < ch; ++c) {
    const double sw = bias_fitting_scale(std::fabs(a[c]) / 127.0, b[c], in_scale);
    wq[c] = static_cast<int8_t>(std::clamp(std::round(a[c] / sw), -127.0, 127.0));
    acc[c] = in_scale * sw;
    bq[c] = quantize_bias(b[c], acc[c]);
  }
  isa::Conv c;
  c.in = in;
  c.out = out;
  c.groups = static_cast<int32_t>(ch);
  c.weight = ctx.pb.add_const(wq);
  c.bias = ctx.pb.add_const(bq);
  conv_requant(ctx, &c, acc, qo);
  act_bounds(ctx, act_node, qo, &c.act_min, &c.act_max);
  ctx.pb.emit(isa::Opcode::kConv, c);
}

}  // namespace ops

const OpUnit kConvUnit = {
    .id = OpId::kConv, .domain = "", .op_type = "Conv", .place = place_conv, .table_type = "HzSQuantizedConv",
    .limits = "2-D, constant weights, kernel/stride/dilation/channel limits of the march",
    .output_scale = OutputScale::kCalibrated, .int32_tail = conv_weight_scales, .fusion = Fusion::kTakesResidual,
    .passive = false, .view = false, .emit = emit_conv, .scratch = conv_scratch,
    .zero_points = ZeroPoints::kAll};

const OpUnit kConvTransposeUnit = {
    .id = OpId::kConvTranspose, .domain = "", .op_type = "ConvTranspose", .place = place_deconv,
    .table_type = "HzSQuantizedConvTranspose", .limits = "2-D, constant weights, kernel <= deconv limit",
    .output_scale = OutputScale::kCalibrated, .int32_tail = deconv_weight_scales,
    .fusion = Fusion::kTakesActivation, .passive = false, .view = false, .emit = emit_deconv,
    .zero_points = ZeroPoints::kOutput};

const OpUnit kBatchNormalizationUnit = {
    .id = OpId::kBatchNormalization, .domain = "", .op_type = "BatchNormalization", .place = place_batchnorm,
    .table_type = "HzSQuantizedConv",
    .limits = "4-D (folded into the Conv or ConvTranspose before it when that is its only reader; "
              "otherwise computed as a depthwise 1x1 convolution)",
    .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kTakesActivation,
    .passive = false, .view = false, .emit = emit_batchnorm};

}  // namespace openbpu::cvt
