// SPDX-License-Identifier: Apache-2.0
// BatchNormalization (inference) after a Conv or ConvTranspose with constant
// weights is folded into it: W' = W * s, B' = (B - mean) * s + beta, s = gamma / sqrt(var + eps).
#include <cmath>

#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

int fold_batchnorm(Graph* g, std::string* error) {
  (void)error;
  int count = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const Node bn = g->nodes[i];
    if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() < 5) continue;
    if (bn.outputs.size() > 1) {
      bool extra_used = false;
      for (size_t k = 1; k < bn.outputs.size(); ++k)
        extra_used = extra_used || (!bn.outputs[k].empty() && !g->consumers(bn.outputs[k]).empty());
      if (extra_used) continue;  // training-mode outputs in use
    }
    const int pi = producer_index(*g, bn.inputs[0]);
    if (pi < 0 || !single_use(*g, bn.inputs[0])) continue;
    Node& conv = g->nodes[static_cast<size_t>(pi)];
    const int64_t cout = foldable_conv_channels(*g, conv);
    if (cout == 0) continue;
    const std::vector<float> gamma = const_floats(*g, bn.inputs[1]), beta = const_floats(*g, bn.inputs[2]),
                             mean = const_floats(*g, bn.inputs[3]), var = const_floats(*g, bn.inputs[4]);
    if (static_cast<int64_t>(gamma.size()) != cout || beta.size() != gamma.size() || mean.size() != gamma.size() ||
        var.size() != gamma.size())
      continue;
    const double eps = bn.attrs.get_float("epsilon", 1e-5f);
    std::vector<float> bias(static_cast<size_t>(cout), 0.0f);
    if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
      bias = const_floats(*g, conv.inputs[2]);
      if (static_cast<int64_t>(bias.size()) != cout) continue;
    }
    std::vector<double> s(static_cast<size_t>(cout));
    for (int64_t c = 0; c < cout; ++c) {
      s[c] = gamma[c] / std::sqrt(static_cast<double>(var[c]) + eps);
      bias[c] = static_cast<float>((bias[c] - mean[c]) * s[c] + beta[c]);
    }
    const Value* w = g->value(conv.inputs[1]);
    std::vector<float> wv = const_floats(*g, conv.inputs[1]);
    if (!scale_out_channels(conv, w->shape, s, &wv)) continue;
    const std::vector<int64_t> wshape = w->shape;
    conv.inputs[1] = g->add_constant(conv.name + "_weight_bn", kFloat, wshape, float_bytes(wv));
    const std::string b = g->add_constant(conv.name + "_bias_bn", kFloat, {cout}, float_bytes(bias));
    if (conv.inputs.size() < 3) conv.inputs.resize(3);
    conv.inputs[2] = b;
    if (bypass_node(g, i, bn.inputs[0], bn.outputs[0])) {
      ++count;
      --i;
    }
  }
  return count;
}

}  // namespace openbpu::cvt
