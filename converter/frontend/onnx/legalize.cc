// SPDX-License-Identifier: Apache-2.0
// Rewrites the converter's own float operators into standard ONNX operators
// valid at the graph's opset, so the intermediate models run in any ONNX
// runtime: openbpu::Preprocess, Swish, Gelu; HardSwish before opset 14;
// LayerNormalization before opset 17.
#include <cmath>
#include <cstring>
#include <set>

#include "converter/frontend/onnx/legalize.h"
#include "converter/ir/local_ops.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

// Emits the standard nodes replacing one node. Node names are unique in the
// graph (ONNX Runtime refuses a model with two nodes of one name): the
// replaced node's name plus the operator, numbered when taken (the last
// node then takes the replaced node's name, legalize_for_onnx).
class Builder {
 public:
  Builder(Graph* g, const std::string& prefix, std::set<std::string>* node_names)
      : g_(g), prefix_(prefix), node_names_(node_names) {}
  std::string scalar(float v) {
    return g_->add_constant(prefix_ + "_c", kFloat, {}, float_bytes({v}));
  }
  std::string tensor(const std::vector<float>& v, const std::vector<int64_t>& shape) {
    return g_->add_constant(prefix_ + "_c", kFloat, shape, float_bytes(v));
  }
  std::string node(const std::string& op, std::vector<std::string> inputs, const std::vector<int64_t>& shape,
                   const std::string& out = "", rt::Attrs attrs = {}) {
    Node n;
    n.name = prefix_ + "_" + op;
    for (int i = 1; node_names_->count(n.name); ++i) n.name = prefix_ + "_" + op + "_" + std::to_string(i);
    node_names_->insert(n.name);
    n.op_type = op;
    n.inputs = std::move(inputs);
    const std::string o = out.empty() ? g_->unique_name(prefix_ + "_" + op + "_out") : out;
    n.outputs = {o};
    n.attrs = std::move(attrs);
    Value v;
    v.name = o;
    v.elem_type = kFloat;
    v.has_shape = true;
    v.shape = shape;
    if (!g_->values.count(o)) g_->values[o] = v;
    nodes.push_back(n);
    return o;
  }
  std::vector<Node> nodes;

 private:
  Graph* g_;
  std::string prefix_;
  std::set<std::string>* node_names_;
};

rt::Attrs int_attr(const char* name, int64_t v) {
  rt::Attrs a;
  rt::AttrValue x;
  x.type = rt::AttrValue::kInt;
  x.i = v;
  a.set(name, x);
  return a;
}

rt::Attrs float_attrs(std::initializer_list<std::pair<const char*, float>> kv) {
  rt::Attrs a;
  for (const auto& [k, v] : kv) {
    rt::AttrValue x;
    x.type = rt::AttrValue::kFloat;
    x.f = v;
    a.set(k, x);
  }
  return a;
}

// Clip with constant bounds in the form the opset wants.
std::string clip(Builder& b, Graph* g, const std::string& x, float lo, float hi, const std::vector<int64_t>& shape) {
  if (g->opset < 11) return b.node("Clip", {x}, shape, "", float_attrs({{"min", lo}, {"max", hi}}));
  return b.node("Clip", {x, b.scalar(lo), b.scalar(hi)}, shape);
}

void expand_preprocess(Graph* g, const Node& n, Builder& b) {
  const Value& in = *g->value(n.inputs[0]);
  const Value& out = *g->value(n.outputs[0]);
  const std::vector<int64_t> nchw = out.shape;
  const int64_t c = nchw[1];
  std::string x = b.node("Cast", {n.inputs[0]}, in.shape, "", int_attr("to", kFloat));
  if (n.attrs.get_string("layout", "NCHW") == "NHWC") {
    rt::Attrs perm;
    rt::AttrValue p;
    p.type = rt::AttrValue::kInts;
    p.ints = {0, 3, 1, 2};
    perm.set("perm", p);
    x = b.node("Transpose", {x}, nchw, "", perm);
  }
  x = b.node("Add", {x, b.scalar(128.0f)}, nchw);
  const std::string src = n.attrs.get_string("src", "bgr"), dst = n.attrs.get_string("dst", "bgr");
  const bool video = n.attrs.get_string("range", "regular") == "bt601_video";
  // Colour conversion as a 1x1 convolution: out = M * in + bias, clamped.
  std::vector<float> m(static_cast<size_t>(c * c), 0.0f), bias(static_cast<size_t>(c), 0.0f);
  bool convert = false;
  if (src == "yuv444" && (dst == "rgb" || dst == "bgr") && c == 3) {
    // Columns are the partial derivatives of yuv_to_rgb; offsets from (0,0,0).
    double r0, g0, b0;
    yuv_to_rgb(0, 0, 0, video, &r0, &g0, &b0);
    for (int k = 0; k < 3; ++k) {
      double in3[3] = {0, 0, 0};
      in3[k] = 1.0;
      double r, gg, bb;
      yuv_to_rgb(in3[0], in3[1], in3[2], video, &r, &gg, &bb);
      const double rgb[3] = {r - r0, gg - g0, bb - b0};
      for (int o = 0; o < 3; ++o) {
        const int row = dst == "rgb" ? o : 2 - o;
        m[static_cast<size_t>(row * 3 + k)] = static_cast<float>(rgb[o]);
      }
    }
    const double off[3] = {r0, g0, b0};
    for (int o = 0; o < 3; ++o) bias[static_cast<size_t>(dst == "rgb" ? o : 2 - o)] = static_cast<float>(off[o]);
    convert = true;
  } else if ((src == "rgb" && dst == "bgr") || (src == "bgr" && dst == "rgb")) {
    m = {0, 0, 1, 0, 1, 0, 1, 0, 0};
    convert = true;
  } else if (video && (src == "yuv444" || src == "gray")) {
    for (int64_t k = 0; k < c; ++k) {
      const bool luma = k == 0;
      const float s = luma ? 255.0f / 219.0f : 255.0f / 224.0f;
      m[static_cast<size_t>(k * c + k)] = s;
      bias[static_cast<size_t>(k)] = luma ? -16.0f * s : 128.0f - 128.0f * s;
    }
    convert = true;
  }
  if (convert) {
    x = b.node("Conv", {x, b.tensor(m, {c, c, 1, 1}), b.tensor(bias, {c})}, nchw);
    x = clip(b, g, x, 0.0f, 255.0f, nchw);
  }
  std::vector<float> mean = n.attrs.get_floats("mean"), scale = n.attrs.get_floats("scale");
  if (!mean.empty()) {
    if (mean.size() == 1) mean.assign(static_cast<size_t>(c), mean[0]);
    x = b.node("Sub", {x, b.tensor(mean, {1, c, 1, 1})}, nchw);
  }
  if (!scale.empty()) {
    if (scale.size() == 1) scale.assign(static_cast<size_t>(c), scale[0]);
    x = b.node("Mul", {x, b.tensor(scale, {1, c, 1, 1})}, nchw);
  }
  // The last node writes the preprocess output name.
  if (b.nodes.empty() || b.nodes.back().outputs[0] != x) x = b.node("Identity", {x}, nchw);
  b.nodes.back().outputs[0] = n.outputs[0];
}

}  // namespace

bool legalize_for_onnx(Graph* g, std::string* error) {
  std::vector<Node> out;
  std::set<std::string> node_names;
  for (const Node& n : g->nodes) node_names.insert(n.name);
  for (const Node& n : g->nodes) {
    const Value* yv = n.outputs.empty() ? nullptr : g->value(n.outputs[0]);
    const std::vector<int64_t> shape = yv ? yv->shape : std::vector<int64_t>{};
    Builder b(g, n.name, &node_names);
    if (n.domain == "openbpu" && n.op_type == "Preprocess") {
      expand_preprocess(g, n, b);
    } else if ((n.domain == "openbpu" && n.op_type == "Swish") || (n.op_type == "HardSwish" && g->opset < 14)) {
      std::string gate = n.op_type == "Swish" ? b.node("Sigmoid", {n.inputs[0]}, shape)
                                              : b.node("HardSigmoid", {n.inputs[0]}, shape, "",
                                                       float_attrs({{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}}));
      b.node("Mul", {n.inputs[0], gate}, shape, n.outputs[0]);
    } else if (n.domain == "openbpu" && n.op_type == "Gelu") {
      std::string t = b.node("Mul", {n.inputs[0], b.scalar(static_cast<float>(1.0 / std::sqrt(2.0)))}, shape);
      t = b.node("Erf", {t}, shape);
      t = b.node("Add", {t, b.scalar(1.0f)}, shape);
      t = b.node("Mul", {n.inputs[0], t}, shape);
      b.node("Mul", {t, b.scalar(0.5f)}, shape, n.outputs[0]);
    } else if (n.op_type == "LayerNormalization" && n.domain.empty() && g->opset < 17) {
      const int64_t rank = static_cast<int64_t>(shape.size());
      rt::Attrs axes;
      rt::AttrValue av;
      av.type = rt::AttrValue::kInts;
      av.ints = {rank - 1};
      axes.set("axes", av);
      std::vector<int64_t> red = shape;
      red.back() = 1;
      const std::string mean = b.node("ReduceMean", {n.inputs[0]}, red, "", axes);
      const std::string d = b.node("Sub", {n.inputs[0], mean}, shape);
      const std::string sq = b.node("Mul", {d, d}, shape);
      const std::string var = b.node("ReduceMean", {sq}, red, "", axes);
      const std::string ve = b.node("Add", {var, b.scalar(n.attrs.get_float("epsilon", 1e-5f))}, red);
      const std::string sd = b.node("Sqrt", {ve}, red);
      std::string y = b.node("Div", {d, sd}, shape);
      if (n.inputs.size() > 1 && !n.inputs[1].empty()) y = b.node("Mul", {y, n.inputs[1]}, shape);
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) y = b.node("Add", {y, n.inputs[2]}, shape);
      b.nodes.back().outputs[0] = n.outputs[0];
    } else {
      out.push_back(n);
      continue;
    }
    // The node computing the replaced node's output keeps its name, so that
    // per-node dumps (hb_mapper infer) pair with the .bin's per-layer dumps.
    b.nodes.back().name = n.name;
    out.insert(out.end(), b.nodes.begin(), b.nodes.end());
  }
  g->nodes = std::move(out);
  g->remove_dead();
  return g->topo_sort(error);
}

}  // namespace openbpu::cvt
