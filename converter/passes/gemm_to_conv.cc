// SPDX-License-Identifier: Apache-2.0
// Gemm / MatMul with a constant weight become convolutions (the BPU computes
// fully connected layers as convolutions):
//  * Flatten/Reshape(x: [N,C,H,W] -> [N,C*H*W]) -> Gemm  ==>  Conv(x, kernel HxW) -> Flatten
//  * otherwise A: [N,K] -> Gemm  ==>  Reshape [N,K,1,1] -> Conv 1x1 -> Reshape [N,M]
#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

int gemm_to_conv(Graph* g, std::string* error) {
  (void)error;
  int count = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const Node op = g->nodes[i];
    const bool gemm = op.op_type == "Gemm", matmul = op.op_type == "MatMul";
    if ((!gemm && !matmul) || !op.domain.empty() || op.inputs.size() < 2) continue;
    const Value* a = g->value(op.inputs[0]);
    const Value* b = g->value(op.inputs[1]);
    const Value* y = g->value(op.outputs[0]);
    if (!a || !b || !y || a->is_constant() || !b->is_constant() || b->elem_type != kFloat || a->shape.size() != 2 ||
        b->shape.size() != 2 || !y->shape_known())
      continue;
    if (gemm && op.attrs.get_int("transA", 0) != 0) continue;
    const bool trans_b = gemm && op.attrs.get_int("transB", 0) != 0;
    const double alpha = gemm ? op.attrs.get_float("alpha", 1.0f) : 1.0;
    const double beta = gemm ? op.attrs.get_float("beta", 1.0f) : 1.0;
    const int64_t k = a->shape[1], m = trans_b ? b->shape[0] : b->shape[1];
    if ((trans_b ? b->shape[1] : b->shape[0]) != k) continue;
    // Bias: Gemm's C broadcast to [M] (scalar or [M] or [1,M]).
    std::vector<float> bias(static_cast<size_t>(m), 0.0f);
    if (gemm && op.inputs.size() > 2 && !op.inputs[2].empty()) {
      const std::vector<float> c = const_floats(*g, op.inputs[2]);
      if (c.size() == 1) {
        bias.assign(static_cast<size_t>(m), c[0]);
      } else if (static_cast<int64_t>(c.size()) == m) {
        bias = c;
      } else {
        continue;  // C depends on the row: not a per-channel bias
      }
      for (float& v : bias) v = static_cast<float>(v * beta);
    }
    // MatMul followed by Add of a constant [M] vector (exporters split Gemm
    // like that): the Add becomes the convolution's bias.
    std::string final_out = op.outputs[0];
    std::string absorbed_add;
    if (matmul && single_use(*g, op.outputs[0])) {
      const Node& a = g->nodes[g->consumers(op.outputs[0])[0]];
      if (a.op_type == "Add" && a.domain.empty() && a.inputs.size() == 2) {
        const std::string c = a.inputs[0] == op.outputs[0] ? a.inputs[1] : a.inputs[0];
        const std::vector<float> cv = const_floats(*g, c);
        const Value* av = g->value(a.outputs[0]);
        if (static_cast<int64_t>(cv.size()) == m && av && av->shape == y->shape) {
          bias = cv;
          final_out = a.outputs[0];
          absorbed_add = a.name;
        }
      }
    }
    const std::vector<float> bw = const_floats(*g, op.inputs[1]);
    // Conv weight [M, K] (later reshaped to the kernel).
    std::vector<float> w(static_cast<size_t>(m * k));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < k; ++c)
        w[r * k + c] = static_cast<float>(alpha * (trans_b ? bw[r * k + c] : bw[c * m + r]));

    // Input side: use the 4-D tensor before a Flatten when there is one.
    std::string conv_in;
    std::vector<int64_t> wshape = {m, k, 1, 1};
    const int pi = producer_index(*g, op.inputs[0]);
    if (pi >= 0 && single_use(*g, op.inputs[0])) {
      const Node& p = g->nodes[static_cast<size_t>(pi)];
      const Value* x = g->value(p.inputs.empty() ? "" : p.inputs[0]);
      const bool flat = (p.op_type == "Flatten" && p.attrs.get_int("axis", 1) == 1) || p.op_type == "Reshape";
      if (flat && x && x->shape_known() && x->shape.size() == 4 && x->shape[1] * x->shape[2] * x->shape[3] == k) {
        conv_in = p.inputs[0];
        wshape = {m, x->shape[1], x->shape[2], x->shape[3]};
      }
    }
    const std::string name = op.name;
    const int64_t n = a->shape[0];
    std::vector<Node> added;
    if (conv_in.empty()) {
      Node r;
      r.name = name + "_to_4d";
      r.op_type = "Reshape";
      r.outputs = {g->unique_name(name + "_in_4d")};
      r.inputs = {op.inputs[0], g->add_constant(name + "_shape_4d", kInt64, {4}, i64_bytes({n, k, 1, 1}))};
      Value rv;
      rv.name = r.outputs[0];
      rv.elem_type = kFloat;
      rv.has_shape = true;
      rv.shape = {n, k, 1, 1};
      g->values[rv.name] = rv;
      conv_in = rv.name;
      added.push_back(r);
    }
    Node conv;
    conv.name = name;
    conv.op_type = "Conv";
    conv.inputs = {conv_in, g->add_constant(name + "_weight_conv", kFloat, wshape, float_bytes(w)),
                   g->add_constant(name + "_bias_conv", kFloat, {m}, float_bytes(bias))};
    const std::string conv_out = g->unique_name(name + "_conv_out");
    conv.outputs = {conv_out};
    conv.attrs.set("kernel_shape", [&] {
      rt::AttrValue v;
      v.type = rt::AttrValue::kInts;
      v.ints = {wshape[2], wshape[3]};
      return v;
    }());
    Value cv;
    cv.name = conv_out;
    cv.elem_type = kFloat;
    cv.has_shape = true;
    cv.shape = {n, m, 1, 1};
    g->values[conv_out] = cv;
    added.push_back(conv);
    Node back;
    back.name = name + "_to_2d";
    back.op_type = "Reshape";
    back.inputs = {conv_out, g->add_constant(name + "_shape_2d", kInt64, {2}, i64_bytes({n, m}))};
    back.outputs = {final_out};
    added.push_back(back);
    if (!absorbed_add.empty())
      for (size_t k = 0; k < g->nodes.size(); ++k)
        if (g->nodes[k].name == absorbed_add) {
          g->nodes.erase(g->nodes.begin() + static_cast<std::ptrdiff_t>(k));
          if (k < i) --i;
          break;
        }
    g->nodes.erase(g->nodes.begin() + static_cast<std::ptrdiff_t>(i));
    g->nodes.insert(g->nodes.begin() + static_cast<std::ptrdiff_t>(i), added.begin(), added.end());
    i += added.size() - 1;
    ++count;
  }
  if (count > 0) {
    std::string err;
    g->remove_dead();
    if (!g->topo_sort(&err)) {
      *error = err;
      return -1;
    }
  }
  return count;
}

}  // namespace openbpu::cvt
