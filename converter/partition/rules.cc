// SPDX-License-Identifier: Apache-2.0
// The BPU operator support table: one named predicate per operator, with the
// limits of each march. The reason strings are what `hb_mapper checker`
// prints for CPU nodes.
#include <algorithm>
#include <sstream>

#include "converter/partition/placement.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

struct Limits {
  int max_kernel;       // conv/pool kernel side
  int max_stride;
  int max_dilation;
  int max_channels;     // per conv input/output
  int max_deconv_kernel;
  bool reshape;         // Reshape/Flatten/Squeeze/Unsqueeze on the BPU
  bool transpose;       // Transpose / DepthToSpace / SpaceToDepth on the BPU
  bool int16;
};

Limits limits_of(const isa::MarchInfo& m) {
  switch (m.march) {
    case isa::March::kBernoulli2: return {7, 4, 16, 2048, 14, false, false, false};
    case isa::March::kBayes:
    case isa::March::kBayesE: return {15, 8, 32, 8192, 14, true, true, true};
    default: return {31, 8, 32, 16384, 31, true, true, true};
  }
}

const Value* in_value(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && !n.inputs[i].empty() ? g.value(n.inputs[i]) : nullptr;
}

bool fail(std::string* why, const std::string& msg) {
  *why = msg;
  return false;
}

// The first input is a float activation of rank 4 (NCHW).
bool activation4d(const Graph& g, const Node& n, std::string* why) {
  const Value* x = in_value(g, n, 0);
  if (x == nullptr || x->is_constant()) return fail(why, "input is a constant");
  if (x->elem_type != kFloat) return fail(why, std::string("input type ") + elem_name(x->elem_type) + " is not float32");
  if (!x->shape_known() || x->shape.size() != 4) return fail(why, "input is not 4-D");
  return true;
}

// Any float activation of rank 1..4.
bool activation(const Graph& g, const Node& n, std::string* why) {
  const Value* x = in_value(g, n, 0);
  if (x == nullptr || x->is_constant()) return fail(why, "input is a constant");
  if (x->elem_type != kFloat) return fail(why, std::string("input type ") + elem_name(x->elem_type) + " is not float32");
  if (!x->shape_known() || x->shape.empty() || x->shape.size() > 4) return fail(why, "input rank is not 1..4");
  return true;
}

bool window_ok(const Node& n, const Limits& l, std::string* why, bool pool) {
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

bool check_conv(const Graph& g, const Node& n, const Limits& l, std::string* why) {
  if (!activation4d(g, n, why)) return false;
  const Value* w = in_value(g, n, 1);
  if (w == nullptr || !w->is_constant()) return fail(why, "weights are not constant");
  if (w->shape.size() != 4) return fail(why, "only 2-D convolution");
  const Value* b = in_value(g, n, 2);
  if (b != nullptr && !b->is_constant()) return fail(why, "bias is not constant");
  const int64_t cin = g.value(n.inputs[0])->shape[1], cout = w->shape[0];
  if (cin > l.max_channels || cout > l.max_channels)
    return fail(why, "channels " + std::to_string(std::max(cin, cout)) + " exceed " + std::to_string(l.max_channels));
  // The int8 accumulator bound of the numerics contract.
  const int64_t taps = w->shape[1] * w->shape[2] * w->shape[3];
  if (taps * 128 * 128 >= (int64_t{1} << 30)) return fail(why, "reduction of " + std::to_string(taps) + " taps is too long");
  return window_ok(n, l, why, false);
}

bool check_deconv(const Graph& g, const Node& n, const Limits& l, std::string* why) {
  if (!activation4d(g, n, why)) return false;
  const Value* w = in_value(g, n, 1);
  if (w == nullptr || !w->is_constant() || w->shape.size() != 4) return fail(why, "weights are not constant 2-D");
  for (int64_t v : n.attrs.get_ints("kernel_shape"))
    if (v > l.max_deconv_kernel) return fail(why, "kernel size exceeds " + std::to_string(l.max_deconv_kernel));
  for (int64_t v : n.attrs.get_ints("strides"))
    if (v > l.max_stride) return fail(why, "stride exceeds " + std::to_string(l.max_stride));
  if (n.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return fail(why, "auto_pad is not supported");
  return true;
}

bool check_pool(const Graph& g, const Node& n, const Limits& l, std::string* why) {
  if (!activation4d(g, n, why)) return false;
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) return fail(why, "MaxPool indices output is not supported");
  return window_ok(n, l, why, true);
}

bool check_global_pool(const Graph& g, const Node& n, const Limits&, std::string* why) {
  return activation4d(g, n, why);
}

// Element-wise binary ops: both operands broadcastable to the output, the
// output 1..4-D. A constant operand is stored in the program.
bool check_binary(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (n.inputs.size() != 2) return fail(why, "needs two inputs");
  const Value* a = in_value(g, n, 0);
  const Value* b = in_value(g, n, 1);
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

bool check_div(const Graph& g, const Node& n, const Limits& l, std::string* why) {
  double c;
  if (n.inputs.size() != 2 || !const_scalar(g, n.inputs[1], &c) || c == 0.0)
    return fail(why, "only division by a non-zero scalar constant");
  return activation(g, n, why) && (void(l), true);
}

bool check_unary(const Graph& g, const Node& n, const Limits&, std::string* why) { return activation(g, n, why); }

bool check_prelu(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (!activation(g, n, why)) return false;
  const Value* s = in_value(g, n, 1);
  if (s == nullptr || !s->is_constant() || s->elements() != 1) return fail(why, "only a scalar slope (per-channel slopes run on the CPU)");
  return true;
}

bool check_clip(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (!activation(g, n, why)) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !in_value(g, n, i)->is_constant()) return fail(why, "bounds are not constant");
  return true;
}

bool check_resize(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (!activation4d(g, n, why)) return false;
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

bool check_concat(const Graph& g, const Node& n, const Limits&, std::string* why) {
  const Value* y = g.value(n.outputs[0]);
  if (!y || !y->shape_known() || y->shape.empty() || y->shape.size() > 4) return fail(why, "output rank is not 1..4");
  if (y->elem_type != kFloat) return fail(why, "not float32");
  for (const auto& in : n.inputs)
    if (g.value(in) && g.value(in)->is_constant()) return fail(why, "constant inputs");
  return true;
}

bool check_slice_like(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (!activation(g, n, why)) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !in_value(g, n, i)->is_constant()) return fail(why, "parameters are not constant");
  for (const auto& o : n.outputs) {
    const Value* v = g.value(o);
    if (!v || !v->shape_known() || v->shape.empty() || v->shape.size() > 4) return fail(why, "output rank is not 1..4");
  }
  if (n.op_type == "Slice" && n.inputs.size() > 4 && !n.inputs[4].empty())
    for (int64_t s : g.value(n.inputs[4])->to_ints())
      if (s <= 0) return fail(why, "only positive slice steps");
  return true;
}

bool check_reshape(const Graph& g, const Node& n, const Limits& l, std::string* why) {
  if (!l.reshape) return fail(why, "Reshape-type operators run on the CPU on this march");
  return check_slice_like(g, n, l, why);
}

bool check_transpose(const Graph& g, const Node& n, const Limits& l, std::string* why) {
  if (!l.transpose) return fail(why, "layout transforms run on the CPU on this march");
  if (!activation4d(g, n, why)) return false;
  return true;
}

bool check_pad(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (!activation4d(g, n, why)) return false;
  if (n.attrs.get_string("mode", "constant") != "constant") return fail(why, "only constant padding");
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !in_value(g, n, i)->is_constant()) return fail(why, "pads are not constant");
  return true;
}

bool check_batchnorm(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (!activation4d(g, n, why)) return false;
  for (size_t i = 1; i < 5 && i < n.inputs.size(); ++i)
    if (!in_value(g, n, i)->is_constant()) return fail(why, "parameters are not constant");
  return true;
}

bool check_argmax(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (!activation4d(g, n, why)) return false;
  if (n.attrs.get_int("axis", 0) != 1) return fail(why, "only along the channel axis");
  if (n.attrs.get_int("keepdims", 1) != 1) return fail(why, "keepdims must be 1");
  if (n.attrs.get_int("select_last_index", 0) != 0) return fail(why, "select_last_index is not supported");
  if (g.value(n.inputs[0])->shape[1] > 64) return fail(why, "channel count " + std::to_string(g.value(n.inputs[0])->shape[1]) + " exceeds 64");
  return true;
}

bool check_reduce_mean(const Graph& g, const Node& n, const Limits&, std::string* why) {
  if (!activation4d(g, n, why)) return false;
  std::vector<int64_t> axes = n.attrs.get_ints("axes");
  if (axes.empty() && n.inputs.size() > 1 && in_value(g, n, 1)) axes = in_value(g, n, 1)->to_ints();
  for (auto& a : axes)
    if (a < 0) a += 4;
  std::sort(axes.begin(), axes.end());
  if (axes != std::vector<int64_t>{2, 3} || n.attrs.get_int("keepdims", 1) != 1)
    return fail(why, "only the mean over H and W with keepdims");
  return true;
}

bool check_preprocess(const Graph&, const Node&, const Limits&, std::string*) { return true; }

struct Rule {
  const char* domain;
  const char* op;
  const char* type;  // shown in tables
  const char* limits;  // documentation
  bool (*check)(const Graph&, const Node&, const Limits&, std::string*);
};

const Rule kRules[] = {
    {"openbpu", "Preprocess", "HzPreprocess", "image inputs: colour conversion + mean/scale", check_preprocess},
    {"", "Conv", "HzSQuantizedConv", "2-D, constant weights, kernel/stride/dilation/channel limits of the march", check_conv},
    {"", "ConvTranspose", "HzSQuantizedConvTranspose", "2-D, constant weights, kernel <= deconv limit", check_deconv},
    {"", "MaxPool", "HzQuantizedMaxPool", "2-D, no indices output", check_pool},
    {"", "AveragePool", "HzSQuantizedAvgPool", "2-D", check_pool},
    {"", "GlobalAveragePool", "HzSQuantizedGlobalAveragePool", "4-D", check_global_pool},
    {"", "GlobalMaxPool", "HzQuantizedGlobalMaxPool", "4-D", check_global_pool},
    {"", "ReduceMean", "HzSQuantizedGlobalAveragePool", "mean over H and W (keepdims)", check_reduce_mean},
    {"", "Add", "HzSElementwiseAdd", "numpy broadcasting, rank <= 4", check_binary},
    {"", "Sub", "HzSElementwiseSub", "numpy broadcasting, rank <= 4", check_binary},
    {"", "Mul", "HzSElementwiseMul", "numpy broadcasting, rank <= 4", check_binary},
    {"", "Div", "HzSElementwiseMul", "division by a scalar constant", check_div},
    {"", "Max", "HzSElementwiseMax", "two inputs, numpy broadcasting", check_binary},
    {"", "Min", "HzSElementwiseMin", "two inputs, numpy broadcasting", check_binary},
    {"", "Relu", "HzLut", "table lookup (fused into the producing conv when possible)", check_unary},
    {"", "Clip", "HzLut", "constant bounds (fused into the producing conv when possible)", check_clip},
    {"", "LeakyRelu", "HzLut", "table lookup", check_unary},
    {"", "PRelu", "HzLut", "scalar slope", check_prelu},
    {"", "Sigmoid", "HzLut", "table lookup", check_unary},
    {"", "Tanh", "HzLut", "table lookup", check_unary},
    {"", "HardSigmoid", "HzLut", "table lookup", check_unary},
    {"", "HardSwish", "HzLut", "table lookup", check_unary},
    {"openbpu", "Swish", "HzLut", "table lookup", check_unary},
    {"openbpu", "Gelu", "HzLut", "table lookup", check_unary},
    {"", "Elu", "HzLut", "table lookup", check_unary},
    {"", "Selu", "HzLut", "table lookup", check_unary},
    {"", "Softplus", "HzLut", "table lookup", check_unary},
    {"", "Exp", "HzLut", "table lookup", check_unary},
    {"", "Erf", "HzLut", "table lookup", check_unary},
    {"", "Abs", "HzLut", "table lookup", check_unary},
    {"", "Neg", "HzLut", "table lookup", check_unary},
    {"", "Resize", "HzQuantizedResizeUpsample", "nearest/bilinear over H and W", check_resize},
    {"", "Upsample", "HzQuantizedResizeUpsample", "nearest/bilinear over H and W", check_resize},
    {"", "Concat", "HzQuantizedConcat", "rank <= 4, no constant inputs", check_concat},
    {"", "Split", "HzSplit", "rank <= 4", check_slice_like},
    {"", "Slice", "HzSlice", "rank <= 4, positive steps", check_slice_like},
    {"", "Pad", "HzPad", "constant mode, 4-D", check_pad},
    {"", "BatchNormalization", "HzSQuantizedConv", "4-D (computed as a depthwise 1x1 convolution)", check_batchnorm},
    {"", "ArgMax", "HzChannelArgmax", "channel axis, C <= 64", check_argmax},
    {"", "Reshape", "HzReshape", "bayes, bayes-e, nash only", check_reshape},
    {"", "Flatten", "HzReshape", "bayes, bayes-e, nash only", check_reshape},
    {"", "Squeeze", "HzReshape", "bayes, bayes-e, nash only", check_reshape},
    {"", "Unsqueeze", "HzReshape", "bayes, bayes-e, nash only", check_reshape},
    {"", "Transpose", "HzTranspose", "4-D; bayes, bayes-e, nash only", check_transpose},
    {"", "DepthToSpace", "HzDepthToSpace", "4-D; bayes, bayes-e, nash only", check_transpose},
    {"", "SpaceToDepth", "HzSpaceToDepth", "4-D; bayes, bayes-e, nash only", check_transpose},
};

}  // namespace

bool bpu_supported(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* type,
                   std::string* reason) {
  for (const Rule& r : kRules) {
    if (n.domain != r.domain || n.op_type != r.op) continue;
    std::string why;
    if (!r.check(g, n, limits_of(march), &why)) {
      *reason = n.op_type + ": " + why;
      *type = n.op_type;
      return false;
    }
    *type = r.type;
    return true;
  }
  *type = n.op_type;
  *reason = n.op_type + " is not supported on the BPU";
  return false;
}

bool is_passive(const Node& n) {
  static const char* const kPassive[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity",
                                         "Concat", "Split", "Slice", "Gather", "Pad", "DepthToSpace",
                                         "SpaceToDepth", "Cast", "Softmax", "LogSoftmax"};
  if (!n.domain.empty()) return false;
  for (const char* p : kPassive)
    if (n.op_type == p) return true;
  return false;
}

std::string supported_ops_markdown() {
  std::ostringstream s;
  s << "| operator | table name | limits |\n|---|---|---|\n";
  for (const Rule& r : kRules)
    s << "| " << (std::string(r.domain).empty() ? "" : std::string(r.domain) + "::") << r.op << " | " << r.type
      << " | " << r.limits << " |\n";
  s << "\nLimits per march:\n\n| march | kernel | stride | dilation | channels | deconv kernel | "
       "Reshape family | Transpose family | int16 |\n|---|---|---|---|---|---|---|---|---|\n";
  int n = 0;
  const isa::MarchInfo* marches = isa::all_marches(&n);
  for (int i = 0; i < n; ++i) {
    const Limits l = limits_of(marches[i]);
    const auto yn = [](bool b) { return b ? "BPU" : "CPU"; };
    s << "| " << marches[i].name << " | " << l.max_kernel << " | " << l.max_stride << " | " << l.max_dilation << " | "
      << l.max_channels << " | " << l.max_deconv_kernel << " | " << yn(l.reshape) << " | " << yn(l.transpose)
      << " | " << (l.int16 ? "yes" : "no") << " |\n";
  }
  return s.str();
}

}  // namespace openbpu::cvt
