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

// Removes node `index`, making its output `out` an alias of `in` (graph
// outputs keep their name: the producer of `in` is renamed instead).
// Returns false when the rewrite is not possible.
bool bypass_node(Graph* g, size_t index, std::string in, std::string out);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_PASSES_PASS_UTIL_H_
