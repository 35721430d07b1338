// SPDX-License-Identifier: Apache-2.0
// Chains of shape-only operators (Reshape, Flatten, Squeeze, Unsqueeze)
// collapse into one Reshape; Transpose pairs compose and identity
// permutations disappear.
#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

namespace {

bool shape_only(const Node& n) {
  return n.domain.empty() &&
         (n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze");
}

}  // namespace

int cleanup_reshapes(Graph* g, std::string* error) {
  (void)error;
  int count = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    Node& n = g->nodes[i];
    if (n.inputs.empty() || n.outputs.empty()) continue;
    const int pi = producer_index(*g, n.inputs[0]);
    if (pi < 0 || !single_use(*g, n.inputs[0])) continue;
    const Node& p = g->nodes[static_cast<size_t>(pi)];
    if (shape_only(n) && shape_only(p)) {
      const Value* out = g->value(n.outputs[0]);
      if (!out || !out->shape_known()) continue;
      Node merged;
      merged.name = n.name;
      merged.op_type = "Reshape";
      merged.inputs = {p.inputs[0], g->add_constant(n.name + "_shape", kInt64, {static_cast<int64_t>(out->shape.size())},
                                                    i64_bytes(out->shape))};
      merged.outputs = n.outputs;
      n = merged;
      ++count;
      continue;
    }
    if (n.op_type == "Transpose" && p.op_type == "Transpose" && n.domain.empty() && p.domain.empty()) {
      const std::vector<int64_t> p1 = p.attrs.get_ints("perm"), p2 = n.attrs.get_ints("perm");
      if (p1.empty() || p1.size() != p2.size()) continue;
      std::vector<int64_t> composed(p2.size());
      for (size_t k = 0; k < p2.size(); ++k) composed[k] = p1[static_cast<size_t>(p2[k])];
      rt::AttrValue v;
      v.type = rt::AttrValue::kInts;
      v.ints = composed;
      n.attrs.set("perm", v);
      n.inputs[0] = p.inputs[0];
      ++count;
    }
  }
  // Identity permutations.
  for (size_t i = 0; i < g->nodes.size();) {
    const Node& n = g->nodes[i];
    bool identity = n.op_type == "Transpose" && n.domain.empty();
    if (identity) {
      const std::vector<int64_t> perm = n.attrs.get_ints("perm");
      identity = !perm.empty();
      for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int64_t>(k);
    }
    if (identity && bypass_node(g, i, n.inputs[0], n.outputs[0])) {
      ++count;
      continue;
    }
    ++i;
  }
  return count;
}

}  // namespace openbpu::cvt
