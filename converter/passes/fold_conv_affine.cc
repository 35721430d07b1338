// SPDX-License-Identifier: Apache-2.0
// A Conv or ConvTranspose followed by a Mul or Add with a per-output-channel (or scalar)
// constant is folded into the Conv's weights or bias.
#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

namespace {

// Per-channel factors of a constant broadcast against a [N, C, ...] tensor:
// shapes [], [1], [C,1,1], [1,C,1,1] (any number of trailing 1s).
bool channel_vector(const Graph& g, const std::string& name, int64_t channels, int64_t out_rank,
                    std::vector<float>* out) {
  const Value* v = g.value(name);
  if (v == nullptr || !v->is_constant() || !v->has_shape) return false;
  const std::vector<float> data = const_floats(g, name);
  if (data.size() == 1) {
    out->assign(static_cast<size_t>(channels), data[0]);
    return true;
  }
  if (static_cast<int64_t>(data.size()) != channels) return false;
  // The non-1 dimension must sit at the channel axis (1) once right-aligned.
  const int64_t rank = static_cast<int64_t>(v->shape.size());
  if (rank > out_rank) return false;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t axis = out_rank - rank + d;
    if (v->shape[d] != 1 && axis != 1) return false;
  }
  *out = data;
  return true;
}

}  // namespace

int fold_conv_affine(Graph* g, std::string* error) {
  (void)error;
  int count = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const Node op = g->nodes[i];
    if ((op.op_type != "Mul" && op.op_type != "Add") || !op.domain.empty() || op.inputs.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string& x = op.inputs[side];
      const std::string& c = op.inputs[1 - side];
      const int pi = producer_index(*g, x);
      if (pi < 0 || !single_use(*g, x)) continue;
      Node& conv = g->nodes[static_cast<size_t>(pi)];
      const int64_t cout = foldable_conv_channels(*g, conv);
      if (cout == 0) continue;
      const Value* w = g->value(conv.inputs[1]);
      const Value* y = g->value(op.outputs[0]);
      const Value* xv = g->value(x);
      if (!y || !xv || y->shape != xv->shape) continue;
      std::vector<float> f;
      if (!channel_vector(*g, c, cout, static_cast<int64_t>(xv->shape.size()), &f)) continue;
      std::vector<float> wv = const_floats(*g, conv.inputs[1]);
      std::vector<float> bias(static_cast<size_t>(cout), 0.0f);
      if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) bias = const_floats(*g, conv.inputs[2]);
      if (static_cast<int64_t>(bias.size()) != cout) continue;
      for (int64_t k = 0; k < cout; ++k) bias[k] = op.op_type == "Mul" ? bias[k] * f[k] : bias[k] + f[k];
      if (op.op_type == "Mul" && !scale_out_channels(conv, w->shape, std::vector<double>(f.begin(), f.end()), &wv))
        continue;
      const std::vector<int64_t> wshape = w->shape;
      if (op.op_type == "Mul") conv.inputs[1] = g->add_constant(conv.name + "_weight_scaled", kFloat, wshape, float_bytes(wv));
      if (conv.inputs.size() < 3) conv.inputs.resize(3);
      conv.inputs[2] = g->add_constant(conv.name + "_bias_folded", kFloat, {cout}, float_bytes(bias));
      if (bypass_node(g, i, x, op.outputs[0])) {
        ++count;
        --i;
      }
      break;
    }
  }
  return count;
}

}  // namespace openbpu::cvt
