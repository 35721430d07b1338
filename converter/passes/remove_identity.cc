// SPDX-License-Identifier: Apache-2.0
// Identity, inference-mode Dropout and no-op Cast/Reshape nodes are removed.
#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

int remove_identity(Graph* g, std::string* error) {
  (void)error;
  int count = 0;
  for (size_t i = 0; i < g->nodes.size();) {
    const Node& n = g->nodes[i];
    bool noop = false;
    if (n.domain.empty() && !n.inputs.empty() && !n.outputs.empty()) {
      const Value* in = g->value(n.inputs[0]);
      const Value* out = g->value(n.outputs[0]);
      if (n.op_type == "Identity") noop = true;
      // Dropout in inference: output = input; the optional mask must be unused.
      if (n.op_type == "Dropout")
        noop = n.outputs.size() < 2 || n.outputs[1].empty() || g->consumers(n.outputs[1]).empty();
      if ((n.op_type == "Cast" || n.op_type == "Reshape" || n.op_type == "Flatten" ||
           n.op_type == "Squeeze" || n.op_type == "Unsqueeze") &&
          in && out && in->has_shape && out->has_shape)
        noop = in->elem_type == out->elem_type && in->shape == out->shape;
    }
    if (noop && !g->value(n.inputs[0])->is_constant() && bypass_node(g, i, n.inputs[0], n.outputs[0])) {
      ++count;
      continue;
    }
    ++i;
  }
  return count;
}

}  // namespace openbpu::cvt
