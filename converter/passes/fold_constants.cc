// SPDX-License-Identifier: Apache-2.0
#include <cstring>

#include "converter/frontend/onnx/onnx_io.h"
#include "converter/ir/executor.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

namespace {

// Operators never folded: randomness, or outputs too large to be worth it.
bool foldable(const Node& n) {
  if (!n.domain.empty()) return false;
  static const char* const kNever[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                       "Multinomial", "Dropout"};
  for (const char* op : kNever)
    if (n.op_type == op) return false;
  return true;
}

bool all_inputs_constant(const Graph& g, const Node& n) {
  for (const auto& in : n.inputs) {
    if (in.empty()) continue;
    const Value* v = g.value(in);
    if (v == nullptr || !v->is_constant()) return false;
  }
  return true;
}

// Shape / Size of a value whose shape is known.
bool fold_shape_op(Graph* g, const Node& n) {
  if (n.op_type != "Shape" && n.op_type != "Size") return false;
  const Value* in = g->value(n.inputs[0]);
  if (in == nullptr || !in->shape_known() || n.outputs.empty()) return false;
  std::vector<int64_t> dims = in->shape;
  if (n.op_type == "Size") {
    int64_t s = 1;
    for (int64_t d : dims) s *= d;
    dims = {s};
  } else {
    const int64_t rank = static_cast<int64_t>(dims.size());
    int64_t start = n.attrs.get_int("start", 0), end = n.attrs.get_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::max<int64_t>(0, std::min(start, rank));
    end = std::max<int64_t>(start, std::min(end, rank));
    dims = std::vector<int64_t>(dims.begin() + start, dims.begin() + end);
  }
  Value& out = g->values[n.outputs[0]];
  out.elem_type = kInt64;
  out.has_shape = true;
  out.shape = n.op_type == "Size" ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(dims.size())};
  std::vector<uint8_t> bytes(dims.size() * 8);
  std::memcpy(bytes.data(), dims.data(), bytes.size());
  out.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  return true;
}

bool fold_node(Graph* g, const Node& n, std::string* error) {
  for (const auto& o : n.outputs) {
    const Value* v = g->value(o);
    if (v == nullptr || !v->shape_known()) return false;  // not yet inferable
  }
  if (rt::find_cpu_op(n.domain, n.op_type) == nullptr) return false;  // left to placement
  std::unique_ptr<rt::CpuKernel> kernel;
  std::string why;
  if (!create_kernel(*g, n, &kernel, &why)) {
    *error = "constant folding of node '" + n.name + "': " + why;
    return false;
  }
  std::vector<rt::TensorDesc> ins, outs;
  for (const auto& in : n.inputs) ins.push_back(in.empty() ? rt::TensorDesc{} : desc_of(*g->value(in)));
  for (const auto& o : n.outputs) outs.push_back(desc_of(*g->value(o)));
  std::vector<rt::CpuTensor> ti, to;
  for (size_t k = 0; k < n.inputs.size(); ++k)
    ti.push_back({&ins[k], n.inputs[k].empty() ? nullptr : const_cast<uint8_t*>(g->value(n.inputs[k])->data->data())});
  std::vector<std::shared_ptr<std::vector<uint8_t>>> bufs;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    bufs.push_back(std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(std::max<int64_t>(outs[k].aligned_byte_size, 1)), 0));
    to.push_back({&outs[k], bufs.back()->data()});
  }
  const rt::Status st = kernel->run(ti, to);
  if (!st.ok()) {
    *error = "constant folding of node '" + n.name + "' failed: " + st.message();
    return false;
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    bufs[k]->resize(static_cast<size_t>(outs[k].aligned_byte_size));
    g->values[n.outputs[k]].data = bufs[k];
  }
  return true;
}

}  // namespace

int fold_constants(Graph* g, std::string* error) {
  int folded = 0;
  for (int round = 0; round < 64; ++round) {
    if (!onnxio::infer_shapes(g, error) || !g->check_tensor_sizes(error)) return -1;
    // ONNX does not know our own element-wise operators, nor the ones we use
    // before the opset that introduced them: same shape as the input.
    for (const Node& n : g->nodes)
      if (((n.domain == "openbpu" && (n.op_type == "Swish" || n.op_type == "Gelu")) ||
           (n.domain.empty() && (n.op_type == "HardSwish" || n.op_type == "LayerNormalization"))) &&
          !n.inputs.empty()) {
        const Value* in = g->value(n.inputs[0]);
        Value* out = g->value(n.outputs[0]);
        if (in && out && in->shape_known() && !out->shape_known()) {
          out->has_shape = true;
          out->shape = in->shape;
          out->elem_type = in->elem_type;
        }
      }
    int changed = 0;
    std::vector<Node> kept;
    for (const Node& n : g->nodes) {
      bool done = false;
      if (fold_shape_op(g, n)) {
        done = true;
      } else if (foldable(n) && all_inputs_constant(*g, n)) {
        std::string why;
        done = fold_node(g, n, &why);
        if (!done && !why.empty()) {
          *error = why;
          return -1;
        }
      }
      if (done) {
        ++changed;
      } else {
        kept.push_back(n);
      }
    }
    g->nodes = std::move(kept);
    folded += changed;
    if (changed == 0) break;
  }
  g->remove_dead();
  for (const auto& n : g->nodes)
    for (const auto& o : n.outputs) {
      const Value* v = g->value(o);
      if (!o.empty() && (v == nullptr || !v->shape_known())) {
        *error = "cannot determine the shape of '" + o + "' (output of " + n.op_type + " node '" + n.name +
                 "'); give every dynamic input dimension with input_shape / --input-shape";
        return -1;
      }
    }
  return folded;
}

}  // namespace openbpu::cvt
