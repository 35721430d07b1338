// SPDX-License-Identifier: Apache-2.0
// Recognition of activations that exporters emit decomposed, so each becomes
// one operator (one BPU table lookup or layer later):
//   hard-sigmoid  clip(x + 3, 0, 6) / 6          -> HardSigmoid(alpha 1/6, beta 0.5)
//   hard-swish    x * hard_sigmoid(x)  |  x * clip(x + 3, 0, 6) / 6  -> HardSwish
//   swish         x * sigmoid(x)                 -> openbpu::Swish
//   gelu          0.5 * x * (1 + erf(x / sqrt 2)) -> openbpu::Gelu
//   layer norm    (x - mean) / sqrt(var + eps) * gamma + beta (ReduceMean/Sub/
//                 Pow/Sqrt/Div)                  -> LayerNormalization (last axis)
#include <cmath>
#include <functional>
#include <optional>

#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

namespace {

struct Match {
  size_t node;
  std::string other;  // the non-constant operand
  double constant;    // the scalar operand
};

// A binary op of type `op` producing `value`, with one scalar constant operand.
std::optional<Match> scalar_op(const Graph& g, const std::string& value, const char* op) {
  const int pi = producer_index(g, value);
  if (pi < 0) return std::nullopt;
  const Node& n = g.nodes[static_cast<size_t>(pi)];
  if (n.op_type != op || !n.domain.empty() || n.inputs.size() != 2) return std::nullopt;
  double c;
  if (const_scalar(g, n.inputs[1], &c)) return Match{static_cast<size_t>(pi), n.inputs[0], c};
  if (std::string(op) != "Div" && std::string(op) != "Sub" && const_scalar(g, n.inputs[0], &c))
    return Match{static_cast<size_t>(pi), n.inputs[1], c};
  return std::nullopt;
}

// value == clip(x + 3, 0, 6): returns x.
std::optional<std::string> relu6_of_x_plus_3(const Graph& g, const std::string& value) {
  const int pi = producer_index(g, value);
  if (pi < 0) return std::nullopt;
  const Node& c = g.nodes[static_cast<size_t>(pi)];
  if (c.op_type != "Clip" || !c.domain.empty()) return std::nullopt;
  double lo, hi;
  clip_bounds(g, c, &lo, &hi);
  if (!near(lo, 0.0) || !near(hi, 6.0)) return std::nullopt;
  const auto add = scalar_op(g, c.inputs[0], "Add");
  if (!add || !near(add->constant, 3.0)) return std::nullopt;
  return add->other;
}

// value == clip(x + 3, 0, 6) / 6 (or * 1/6): returns x.
std::optional<std::string> hard_sigmoid_of(const Graph& g, const std::string& value) {
  if (auto d = scalar_op(g, value, "Div"); d && near(d->constant, 6.0)) return relu6_of_x_plus_3(g, d->other);
  if (auto m = scalar_op(g, value, "Mul"); m && near(m->constant, 1.0 / 6.0)) return relu6_of_x_plus_3(g, m->other);
  const int pi = producer_index(g, value);
  if (pi >= 0) {
    const Node& h = g.nodes[static_cast<size_t>(pi)];
    if (h.op_type == "HardSigmoid" && h.domain.empty() && near(h.attrs.get_float("alpha", 0.2f), 1.0 / 6.0, 1e-4) &&
        near(h.attrs.get_float("beta", 0.5f), 0.5))
      return h.inputs[0];
  }
  return std::nullopt;
}

Node make_node(const std::string& name, const std::string& op, const std::string& domain,
               std::vector<std::string> inputs, const std::string& output) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.domain = domain;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  return n;
}

void set_float(Node* n, const char* name, float v) {
  rt::AttrValue a;
  a.type = rt::AttrValue::kFloat;
  a.f = v;
  n->attrs.set(name, a);
}

// Replaces node `index` by `n` (same output).
void replace(Graph* g, size_t index, Node n) { g->nodes[index] = std::move(n); }

bool try_hard_swish(Graph* g, size_t i) {
  const Node n = g->nodes[i];
  if (!n.domain.empty()) return false;
  std::string x;
  if (n.op_type == "Mul" && n.inputs.size() == 2) {
    // x * hard_sigmoid(x)
    for (int s = 0; s < 2 && x.empty(); ++s) {
      auto hs = hard_sigmoid_of(*g, n.inputs[s]);
      if (hs && *hs == n.inputs[1 - s]) x = *hs;
    }
    // (x * relu6(x + 3)) * 1/6
    if (x.empty())
      if (auto m = scalar_op(*g, n.outputs[0], "Mul"); m && near(m->constant, 1.0 / 6.0)) {
        const int pi = producer_index(*g, m->other);
        if (pi >= 0 && g->nodes[static_cast<size_t>(pi)].op_type == "Mul") {
          const Node& inner = g->nodes[static_cast<size_t>(pi)];
          for (int s = 0; s < 2 && x.empty(); ++s) {
            auto r = relu6_of_x_plus_3(*g, inner.inputs[s]);
            if (r && *r == inner.inputs[1 - s]) x = *r;
          }
        }
      }
  } else if (n.op_type == "Div") {
    // (x * relu6(x + 3)) / 6
    auto d = scalar_op(*g, n.outputs[0], "Div");
    if (d && near(d->constant, 6.0)) {
      const int pi = producer_index(*g, d->other);
      if (pi >= 0 && g->nodes[static_cast<size_t>(pi)].op_type == "Mul") {
        const Node& inner = g->nodes[static_cast<size_t>(pi)];
        for (int s = 0; s < 2 && x.empty(); ++s) {
          auto r = relu6_of_x_plus_3(*g, inner.inputs[s]);
          if (r && *r == inner.inputs[1 - s]) x = *r;
        }
      }
    }
  }
  if (x.empty()) return false;
  replace(g, i, make_node(n.name, "HardSwish", "", {x}, n.outputs[0]));
  return true;
}

bool try_hard_sigmoid(Graph* g, size_t i) {
  const Node n = g->nodes[i];
  if (!n.domain.empty() || (n.op_type != "Div" && n.op_type != "Mul")) return false;
  // Only the clip form; a HardSigmoid node is already one operator.
  std::optional<std::string> x;
  if (auto d = scalar_op(*g, n.outputs[0], "Div"); d && near(d->constant, 6.0)) x = relu6_of_x_plus_3(*g, d->other);
  if (auto m = scalar_op(*g, n.outputs[0], "Mul"); m && near(m->constant, 1.0 / 6.0)) x = relu6_of_x_plus_3(*g, m->other);
  if (!x) return false;
  Node h = make_node(n.name, "HardSigmoid", "", {*x}, n.outputs[0]);
  set_float(&h, "alpha", 1.0f / 6.0f);
  set_float(&h, "beta", 0.5f);
  replace(g, i, h);
  return true;
}

bool try_swish(Graph* g, size_t i) {
  const Node n = g->nodes[i];
  if (n.op_type != "Mul" || !n.domain.empty() || n.inputs.size() != 2) return false;
  for (int s = 0; s < 2; ++s) {
    const int pi = producer_index(*g, n.inputs[s]);
    if (pi < 0) continue;
    const Node& sg = g->nodes[static_cast<size_t>(pi)];
    if (sg.op_type == "Sigmoid" && sg.domain.empty() && sg.inputs[0] == n.inputs[1 - s]) {
      replace(g, i, make_node(n.name, "Swish", "openbpu", {sg.inputs[0]}, n.outputs[0]));
      return true;
    }
  }
  return false;
}

// 0.5 * x * (1 + erf(x / sqrt(2))) in the orders torch exports.
bool try_gelu(Graph* g, size_t i) {
  const Node n = g->nodes[i];
  if (n.op_type != "Mul" || !n.domain.empty() || n.inputs.size() != 2) return false;
  // Find the (1 + erf(...)) operand somewhere below this Mul (at most two Muls deep).
  std::function<std::optional<std::string>(const std::string&, int)> erf_arg = [&](const std::string& v, int depth)
      -> std::optional<std::string> {
    if (auto a = scalar_op(*g, v, "Add"); a && near(a->constant, 1.0)) {
      const int ei = producer_index(*g, a->other);
      if (ei < 0 || g->nodes[static_cast<size_t>(ei)].op_type != "Erf") return std::nullopt;
      const std::string& e_in = g->nodes[static_cast<size_t>(ei)].inputs[0];
      if (auto d = scalar_op(*g, e_in, "Div"); d && near(d->constant, std::sqrt(2.0), 1e-4)) return d->other;
      if (auto m = scalar_op(*g, e_in, "Mul"); m && near(m->constant, 1.0 / std::sqrt(2.0), 1e-4)) return m->other;
      return std::nullopt;
    }
    if (depth == 0) return std::nullopt;
    const int pi = producer_index(*g, v);
    if (pi < 0 || g->nodes[static_cast<size_t>(pi)].op_type != "Mul") return std::nullopt;
    const Node& m = g->nodes[static_cast<size_t>(pi)];
    for (const auto& in : m.inputs)
      if (auto r = erf_arg(in, depth - 1)) return r;
    return std::nullopt;
  };
  std::optional<std::string> x;
  for (const auto& in : n.inputs)
    if (!x) x = erf_arg(in, 1);
  if (!x) return false;
  // Check the remaining factors multiply to 0.5 * x: collect the Mul tree leaves.
  std::vector<std::string> leaves;
  std::function<void(const std::string&, int)> collect = [&](const std::string& v, int depth) {
    const int pi = producer_index(*g, v);
    if (depth > 0 && pi >= 0 && g->nodes[static_cast<size_t>(pi)].op_type == "Mul" && single_use(*g, v)) {
      for (const auto& in : g->nodes[static_cast<size_t>(pi)].inputs) collect(in, depth - 1);
      return;
    }
    leaves.push_back(v);
  };
  for (const auto& in : n.inputs) collect(in, 2);
  double half = 1.0;
  bool has_x = false, has_erf = false;
  for (const auto& l : leaves) {
    double c;
    if (l == *x && !has_x) {
      has_x = true;
    } else if (const_scalar(*g, l, &c)) {
      half *= c;
    } else if (erf_arg(l, 0) == x) {
      has_erf = true;
    } else {
      return false;
    }
  }
  if (!has_x || !has_erf || !near(half, 0.5)) return false;
  replace(g, i, make_node(n.name, "Gelu", "openbpu", {*x}, n.outputs[0]));
  return true;
}

bool last_axis_mean(const Graph& g, const std::string& value, std::string* x) {
  const int pi = producer_index(g, value);
  if (pi < 0) return false;
  const Node& r = g.nodes[static_cast<size_t>(pi)];
  if (r.op_type != "ReduceMean" || !r.domain.empty()) return false;
  std::vector<int64_t> axes = r.attrs.get_ints("axes");
  if (axes.empty() && r.inputs.size() > 1) axes = g.value(r.inputs[1]) ? g.value(r.inputs[1])->to_ints() : axes;
  const Value* in = g.value(r.inputs[0]);
  if (axes.size() != 1 || !in || !in->has_shape) return false;
  const int64_t rank = static_cast<int64_t>(in->shape.size());
  if (axes[0] != -1 && axes[0] != rank - 1) return false;
  if (r.attrs.get_int("keepdims", 1) != 1) return false;
  *x = r.inputs[0];
  return true;
}

bool try_layer_norm(Graph* g, size_t i) {
  const Node n = g->nodes[i];
  if (n.op_type != "Div" || !n.domain.empty() || n.inputs.size() != 2) return false;
  // Div(d, Sqrt(Add(ReduceMean(Pow(d, 2)), eps))), d = Sub(x, ReduceMean(x))
  const int si = producer_index(*g, n.inputs[1]);
  if (si < 0 || g->nodes[static_cast<size_t>(si)].op_type != "Sqrt") return false;
  const auto add = scalar_op(*g, g->nodes[static_cast<size_t>(si)].inputs[0], "Add");
  if (!add) return false;
  std::string var_in;
  if (!last_axis_mean(*g, add->other, &var_in)) return false;
  const auto pw = scalar_op(*g, var_in, "Pow");
  if (!pw || !near(pw->constant, 2.0) || pw->other != n.inputs[0]) return false;
  const int di = producer_index(*g, n.inputs[0]);
  if (di < 0 || g->nodes[static_cast<size_t>(di)].op_type != "Sub") return false;
  const Node& sub = g->nodes[static_cast<size_t>(di)];
  std::string x;
  if (!last_axis_mean(*g, sub.inputs[1], &x) || x != sub.inputs[0]) return false;
  const Value* xv = g->value(x);
  if (!xv || !xv->shape_known()) return false;
  const int64_t c = xv->shape.back();
  // Optional affine: Mul(gamma) then Add(beta) with constant [C] vectors.
  std::string out = n.outputs[0];
  std::vector<float> gamma(static_cast<size_t>(c), 1.0f), beta(static_cast<size_t>(c), 0.0f);
  std::vector<size_t> consumers = g->consumers(out);
  if (consumers.size() == 1 && !g->is_graph_output(out)) {
    const Node& m = g->nodes[consumers[0]];
    const std::string other = m.inputs[0] == out ? m.inputs[1] : m.inputs[0];
    std::vector<float> gv = const_floats(*g, other);
    if (m.op_type == "Mul" && static_cast<int64_t>(gv.size()) == c) {
      gamma = gv;
      out = m.outputs[0];
      consumers = g->consumers(out);
      if (consumers.size() == 1 && !g->is_graph_output(out)) {
        const Node& a = g->nodes[consumers[0]];
        const std::string o2 = a.inputs[0] == out ? a.inputs[1] : a.inputs[0];
        std::vector<float> bv = const_floats(*g, o2);
        if (a.op_type == "Add" && static_cast<int64_t>(bv.size()) == c) {
          beta = bv;
          out = a.outputs[0];
        }
      }
    }
  }
  Node ln = make_node(n.name, "LayerNormalization", "",
                      {x, g->add_constant(n.name + "_gamma", kFloat, {c}, float_bytes(gamma)),
                       g->add_constant(n.name + "_beta", kFloat, {c}, float_bytes(beta))},
                      out);
  set_float(&ln, "epsilon", static_cast<float>(add->constant));
  rt::AttrValue axis;
  axis.type = rt::AttrValue::kInt;
  axis.i = -1;
  ln.attrs.set("axis", axis);
  // Put the fused node where the last matched node was, drop the old producer of `out`.
  const int oi = producer_index(*g, out);
  g->nodes[static_cast<size_t>(oi)] = ln;
  return true;
}

}  // namespace

int fuse_activations(Graph* g, std::string* error) {
  int count = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (try_hard_swish(g, i) || try_gelu(g, i) || try_swish(g, i) || try_layer_norm(g, i) || try_hard_sigmoid(g, i))
      ++count;
  }
  if (count > 0) {
    g->remove_dead();
    if (!g->topo_sort(error)) return -1;
  }
  return count;
}

}  // namespace openbpu::cvt
