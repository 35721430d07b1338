// SPDX-License-Identifier: Apache-2.0
// Identity, inference-mode Dropout, no-op Cast/Reshape nodes and arithmetic
// with a neutral scalar (x * 1, x / 1, x + 0, x - 0: PaddlePaddle's swish
// exports x * sigmoid(x * 1)) are removed.
#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

namespace {

// The value node n passes through unchanged, or "" (only non-constant inputs).
std::string passed_through(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.inputs.empty() || n.outputs.empty()) return "";
  const Value* in = g.value(n.inputs[0]);
  const Value* out = g.value(n.outputs[0]);
  std::string x = n.inputs[0];
  bool noop = n.op_type == "Identity";
  // Dropout in inference: output = input; the optional mask must be unused.
  if (n.op_type == "Dropout") noop = n.outputs.size() < 2 || n.outputs[1].empty() || g.consumers(n.outputs[1]).empty();
  if ((n.op_type == "Cast" || n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" ||
       n.op_type == "Unsqueeze") &&
      in && out && in->has_shape && out->has_shape)
    noop = in->elem_type == out->elem_type && in->shape == out->shape;
  if (n.inputs.size() == 2 && (n.op_type == "Mul" || n.op_type == "Div" || n.op_type == "Add" || n.op_type == "Sub")) {
    if (in != nullptr && in->is_constant()) x = n.inputs[1];
    double a, b;
    noop = scalar_affine(g, n, x, &a, &b) && a == 1 && b == 0 && g.value(x)->elem_type == out->elem_type;
  }
  const Value* xv = g.value(x);
  return noop && xv && !xv->is_constant() ? x : "";
}

}  // namespace

int remove_identity(Graph* g, std::string* error) {
  (void)error;
  int count = 0;
  for (size_t i = 0; i < g->nodes.size();) {
    const Node& n = g->nodes[i];
    const std::string x = passed_through(*g, n);
    if (!x.empty() && bypass_node(g, i, x, n.outputs[0])) {
      ++count;
      continue;
    }
    ++i;
  }
  return count;
}

}  // namespace openbpu::cvt
