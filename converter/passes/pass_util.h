// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the graph passes.
#ifndef OPENBPU_CONVERTER_PASSES_PASS_UTIL_H_
#define OPENBPU_CONVERTER_PASSES_PASS_UTIL_H_

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "converter/ir/graph.h"

namespace openbpu::cvt {

// The node producing `value` (index into g.nodes), or -1.
inline int producer_index(const Graph& g, const std::string& value) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (o == value) return static_cast<int>(i);
  return -1;
}

// True when `value` feeds exactly one node and is not a graph output.
inline bool single_use(const Graph& g, const std::string& value) {
  return g.consumers(value).size() == 1 && !g.is_graph_output(value);
}

// Float contents of a constant (empty if not a constant float tensor).
inline std::vector<float> const_floats(const Graph& g, const std::string& name) {
  const Value* v = g.value(name);
  if (v == nullptr || !v->is_constant()) return {};
  std::vector<float> out;
  for (double d : v->to_doubles()) out.push_back(static_cast<float>(d));
  return out;
}

// A scalar constant (any numeric type, any shape of one element).
inline bool const_scalar(const Graph& g, const std::string& name, double* out) {
  const Value* v = g.value(name);
  if (v == nullptr || !v->is_constant()) return false;
  const auto d = v->to_doubles();
  if (d.size() != 1) return false;
  *out = d[0];
  return true;
}

// y = a x + b when node n is Mul, Add or Sub of value x and a scalar
// constant, or Div of x by one, and its output has x's shape (a scalar of
// higher rank would broadcast).
inline bool scalar_affine(const Graph& g, const Node& n, const std::string& x, double* a, double* b) {
  if (!n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  const bool x_first = n.inputs[0] == x;
  if (!x_first && n.inputs[1] != x) return false;
  double c;
  if (!const_scalar(g, n.inputs[x_first ? 1 : 0], &c)) return false;
  const Value* in = g.value(x);
  const Value* out = g.value(n.outputs[0]);
  if (in == nullptr || out == nullptr || !in->has_shape || !out->has_shape || in->shape != out->shape) return false;
  *a = 1;
  *b = 0;
  if (n.op_type == "Mul") *a = c;
  else if (n.op_type == "Add") *b = c;
  else if (n.op_type == "Sub") *a = x_first ? 1 : -1, *b = x_first ? -c : c;
  else if (n.op_type == "Div" && x_first && c != 0) *a = 1 / c;
  else return false;
  return std::isfinite(*a) && std::isfinite(*b);
}

inline bool near(double a, double b, double tol = 1e-5) { return std::fabs(a - b) <= tol * (1.0 + std::fabs(b)); }

inline std::vector<uint8_t> i64_bytes(const std::vector<int64_t>& v) {
  std::vector<uint8_t> b(v.size() * 8);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline std::vector<uint8_t> float_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Clip bounds of a Clip node (attributes before opset 11, inputs after).
inline void clip_bounds(const Graph& g, const Node& n, double* lo, double* hi) {
  *lo = -INFINITY;
  *hi = INFINITY;
  if (n.attrs.has("min")) *lo = n.attrs.get_float("min", -INFINITY);
  if (n.attrs.has("max")) *hi = n.attrs.get_float("max", INFINITY);
  double v;
  if (n.inputs.size() > 1 && !n.inputs[1].empty() && const_scalar(g, n.inputs[1], &v)) *lo = v;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && const_scalar(g, n.inputs[2], &v)) *hi = v;
}

// A Conv or ConvTranspose (default domain) whose weights are a float
// constant of rank >= 3: the convolutions a per-output-channel affine map
// after them folds into. Returns their output channel count (Conv weights
// are [Cout, Cin/group, ...], ConvTranspose weights [Cin, Cout/group, ...]),
// 0 for any other node.
inline int64_t foldable_conv_channels(const Graph& g, const Node& conv) {
  if ((conv.op_type != "Conv" && conv.op_type != "ConvTranspose") || !conv.domain.empty() || conv.inputs.size() < 2)
    return 0;
  const Value* w = g.value(conv.inputs[1]);
  if (w == nullptr || !w->is_constant() || w->elem_type != kFloat || w->shape.size() < 3) return 0;
  if (conv.op_type == "Conv") return w->shape[0];
  const int64_t group = conv.attrs.get_int("group", 1);
  return group > 0 && w->shape[0] % group == 0 ? w->shape[1] * group : 0;
}

// Multiplies the weights `w` (of shape `wshape`) of such a convolution by
// s[c] along each output channel c. False (nothing changed) when the data
// does not hold the shape's elements (a malformed model).
inline bool scale_out_channels(const Node& conv, const std::vector<int64_t>& wshape, const std::vector<double>& s,
                               std::vector<float>* w) {
  size_t inner = 1;  // elements per (dim 0, dim 1) pair
  for (size_t d = 2; d < wshape.size(); ++d) inner *= static_cast<size_t>(wshape[d]);
  const size_t d0 = static_cast<size_t>(wshape[0]), d1 = static_cast<size_t>(wshape[1]);
  const bool transposed = conv.op_type == "ConvTranspose";
  const size_t groups = transposed && d1 != 0 ? s.size() / d1 : 0;
  if (w->size() != d0 * d1 * inner) return false;
  if (transposed ? groups == 0 || groups * d1 != s.size() || d0 % groups != 0 : s.size() != d0) return false;
  const size_t in_per_group = transposed ? d0 / groups : 0;
  for (size_t i = 0; i < d0; ++i)
    for (size_t j = 0; j < d1; ++j) {
      const size_t c = transposed ? (i / in_per_group) * d1 + j : i;
      float* p = w->data() + (i * d1 + j) * inner;
      for (size_t k = 0; k < inner; ++k) p[k] = static_cast<float>(p[k] * s[c]);
    }
  return true;
}

// Removes node `index`, making its output `out` an alias of `in` (graph
// outputs keep their name: the producer of `in` is renamed instead).
// Returns false when the rewrite is not possible.
bool bypass_node(Graph* g, size_t index, std::string in, std::string out);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_PASSES_PASS_UTIL_H_
