// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the operator units (ops/*.cc): placement checks of
// common operand shapes, and emission helpers (views, ONNX windows,
// activation bounds, requantizing copies, weight quantization).
#ifndef OPENBPU_CONVERTER_OPS_OP_UTIL_H_
#define OPENBPU_CONVERTER_OPS_OP_UTIL_H_

#include <array>
#include <string>
#include <vector>

#include "bpu_sim/isa/march.h"
#include "converter/codegen/lowering.h"
#include "converter/ir/graph.h"

namespace openbpu::cvt::ops {

// ---- placement ----------------------------------------------------------------

inline bool fail(std::string* why, const std::string& msg) {
  *why = msg;
  return false;
}
// Input i of a node (nullptr when absent).
const Value* in_value(const Graph& g, const Node& n, size_t i);
// The first input is a float activation of rank 4 (NCHW).
bool activation4d(const Graph& g, const Node& n, std::string* why);
// The first input is a float activation of rank 1..4.
bool activation(const Graph& g, const Node& n, std::string* why);
// Inputs 1.. (when present) are constants; `what` names them in the reason.
bool constant_params(const Graph& g, const Node& n, const char* what, std::string* why);
// kernel_shape / strides / dilations / auto_pad against the march's limits;
// pooling kernels are not limited by the march.
bool window_ok(const Node& n, const isa::OpLimits& l, std::string* why, bool pool);
// Every output has rank 1..4.
bool outputs_rank4(const Graph& g, const Node& n, std::string* why);

// ---- emission -----------------------------------------------------------------

// A view with logical (N, C, H, W) dims and strides.
isa::TensorRef with_logical(isa::TensorRef base, const Dims4& d, const std::array<int64_t, 4>& st);
std::array<int64_t, 4> logical_strides(const isa::TensorRef& r);
Dims4 logical_dims(const isa::TensorRef& r);

// An ints attribute, or the constant input that replaced it in later opsets.
std::vector<int64_t> ints_attr_or_input(const LoweringContext& ctx, const Node& n, const char* attr, size_t input);

// ONNX 2-D window attributes resolved against the input size.
struct Window {
  int kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
};
Window window_of(const Node& n, int64_t h, int64_t w, int64_t kh, int64_t kw);
// Extends the bottom/right padding so the window arithmetic gives the output
// size of the graph (ceil_mode pooling).
void fit_output(Window* w, int64_t h, int64_t wd, int64_t oh, int64_t ow);

// Activation bounds (fused Relu / Clip node, or none) in the output's
// quantized domain.
void act_bounds(const LoweringContext& ctx, int act_node, const QParams& out, int32_t* lo, int32_t* hi);

// A requantizing copy between two views of identical logical dims.
void emit_move(LoweringContext& ctx, const isa::TensorRef& in, const isa::TensorRef& out, double in_scale,
               double out_scale);

// Depthwise 1x1 convolution y = x * a[c] + b[c] with real-valued a, b
// (input scale in_scale, output quantization qo, optional fused activation
// node): BatchNormalization, the preprocess's mean/scale.
void emit_affine(LoweringContext& ctx, const isa::TensorRef& in, const isa::TensorRef& out, double in_scale,
                 const QParams& qo, const std::vector<double>& a, const std::vector<double>& b, int act_node);

// The scale of a weight channel whose largest magnitude needs `max_scale`
// (max |w| / 127) and whose bias b, at the accumulator scale in_scale * s_w,
// must fit the int32 bias (|b_q| < kMaxBias): the larger of the two. With
// int16 inputs (scales ~256x finer than int8's) a channel with tiny weights
// and a large bias (a folded BatchNorm of a nearly constant channel) would
// otherwise have its bias clipped; its weights lose a few levels instead.
double bias_fitting_scale(double max_scale, double b, double in_scale);

// int8 weight of a real weight with scale s (symmetric, [-127, 127]).
int8_t quantize_weight(float w, float s);
// int32 bias of a real bias at the accumulator's scale, within +-kMaxBias.
int32_t quantize_bias(double b, double scale);

}  // namespace openbpu::cvt::ops

#endif  // OPENBPU_CONVERTER_OPS_OP_UTIL_H_
