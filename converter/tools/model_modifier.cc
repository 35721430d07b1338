// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/model_modifier.h"

#include <algorithm>
#include <sstream>

#include "schema/verify.h"
#include "schema/writer.h"

namespace openbpu::cvt {

namespace {

const std::vector<std::string> kInputSide = {"Quantize", "Transpose", "Cast", "Reshape"};
const std::vector<std::string> kOutputSide = {"Dequantize", "Transpose", "Cast", "Reshape", "Softmax",
                                              "DequantizeFilter"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Number of segments reading a tensor.
int readers(const fb::ModelT& m, uint32_t t) {
  int n = 0;
  for (const auto& s : m.segments)
    for (uint32_t i : s->inputs) n += i == t ? 1 : 0;
  return n;
}

int input_index(const fb::ModelT& m, uint32_t t) {
  for (size_t i = 0; i < m.inputs.size(); ++i)
    if (m.inputs[i]->tensor == t) return static_cast<int>(i);
  return -1;
}

int output_index(const fb::ModelT& m, uint32_t t) {
  for (size_t i = 0; i < m.outputs.size(); ++i)
    if (m.outputs[i]->tensor == t) return static_cast<int>(i);
  return -1;
}

template <class T>
std::string list(const std::vector<T>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << +v[i];
  os << "]";
  return os.str();
}

std::string shape(const fb::TensorT& t) {
  std::string s = "(";
  for (size_t i = 0; i < t.valid_shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.valid_shape[i]);
  return s + ")";
}

// What the node did, for the RemovedNode record: the quantization of its
// integer side, a permutation, or the shapes.
std::string node_info(const fb::ModelT& m, const fb::SegmentT& s, const std::string& type) {
  const fb::TensorT& in = *m.tensors[s.inputs[0]];
  const fb::TensorT& out = *m.tensors[s.outputs[0]];
  const fb::TensorT& q = type == "Quantize" ? out : in;
  std::string info;
  if ((type == "Quantize" || type == "Dequantize" || type == "DequantizeFilter") && q.quant) {
    info = "scale: " + list(q.quant->scales) + "; zero point: " +
           (q.quant->zero_points.empty() ? std::string("[0]") : list(q.quant->zero_points)) +
           "; axis: " + std::to_string(q.quant->axis) + "; ";
  }
  if (const auto* op = s.kind.AsCpuOp())
    for (const auto& a : op->attrs)
      if (a->name == "perm") info += "perm: " + list(a->ints) + "; ";
  return info + "input " + shape(in) + " -> output " + shape(out);
}

// Sets the per-input entry of a ';'-joined metadata list.
void set_list_item(fb::ModelT* m, const std::string& key, size_t index, const std::string& value) {
  std::vector<std::string> items;
  std::stringstream ss(model::get_metadata(*m, key));
  for (std::string it; std::getline(ss, it, ';');) items.push_back(it);
  if (index >= items.size()) return;
  items[index] = value;
  std::string joined;
  for (size_t i = 0; i < items.size(); ++i) joined += (i ? ";" : "") + items[i];
  model::set_metadata(m, key, joined);
}

// Drops tensors no input, output or segment refers to, renumbering indices.
void drop_unused_tensors(fb::ModelT* m) {
  std::vector<bool> used(m->tensors.size(), false);
  for (const auto& i : m->inputs) used[i->tensor] = true;
  for (const auto& o : m->outputs) used[o->tensor] = true;
  for (const auto& s : m->segments) {
    for (uint32_t t : s->inputs)
      if (t != model::kAbsentInput) used[t] = true;
    for (uint32_t t : s->outputs)
      if (t != model::kAbsentInput) used[t] = true;
  }
  std::vector<uint32_t> remap(m->tensors.size(), 0);
  std::vector<std::unique_ptr<fb::TensorT>> kept;
  for (size_t t = 0; t < m->tensors.size(); ++t) {
    if (!used[t]) continue;
    remap[t] = static_cast<uint32_t>(kept.size());
    kept.push_back(std::move(m->tensors[t]));
  }
  m->tensors = std::move(kept);
  auto fix = [&](uint32_t* t) {
    if (*t != model::kAbsentInput) *t = remap[*t];
  };
  for (auto& i : m->inputs) fix(&i->tensor);
  for (auto& o : m->outputs) fix(&o->tensor);
  for (auto& s : m->segments) {
    for (auto& t : s->inputs) fix(&t);
    for (auto& t : s->outputs) fix(&t);
  }
}

// A CPU segment with one runtime input (its first; further inputs may be
// constants, e.g. Reshape's shape) and one output?
bool one_in_one_out(const fb::ModelT& m, const fb::SegmentT& s) {
  auto runtime = [&](const std::vector<uint32_t>& v) {
    return std::count_if(v.begin(), v.end(),
                         [&](uint32_t t) { return t != model::kAbsentInput && !m.tensors[t]->constant; });
  };
  return s.kind.AsCpuOp() != nullptr && !s.inputs.empty() && !s.outputs.empty() && runtime(s.inputs) == 1 &&
         runtime(s.outputs) == 1 && s.inputs[0] != model::kAbsentInput && !m.tensors[s.inputs[0]]->constant &&
         s.outputs[0] != model::kAbsentInput;
}

// Which side of the model a segment may be removed from: 1 input, 2 output,
// 0 none (with the reason).
int boundary_side(const fb::ModelT& m, const fb::SegmentT& s, RemoveResult* r, std::string* why) {
  const std::string type = node_type(s);
  if (!one_in_one_out(m, s) || (!contains(kInputSide, type) && !contains(kOutputSide, type))) {
    *r = RemoveResult::kNotRemovableType;
    *why = "its OP type '" + type + "' cannot be removed (removable: Quantize, Transpose, Cast, Reshape at inputs; "
           "Dequantize, Transpose, Cast, Reshape, Softmax, DequantizeFilter at outputs)";
    return 0;
  }
  const uint32_t in = s.inputs[0], out = s.outputs[0];
  const bool at_input = input_index(m, in) >= 0, at_output = output_index(m, out) >= 0 && readers(m, out) == 0;
  if (at_input && at_output) {
    *r = RemoveResult::kBothSidesConnected;
    *why = "it connects a model input directly to a model output";
    return 0;
  }
  if (at_input && contains(kInputSide, type)) {
    if (readers(m, in) > 1) {
      *r = RemoveResult::kSharedInput;
      *why = "its model input feeds more than one node";
      return 0;
    }
    return 1;
  }
  if (at_output && contains(kOutputSide, type) && output_index(m, in) < 0) return 2;
  *r = RemoveResult::kNotAtBoundary;
  *why = "it is not next to a model input or output (or both its sides are wired to other nodes)";
  return 0;
}

}  // namespace

const std::vector<std::string>& removable_types() {
  static const std::vector<std::string> kTypes = {"Quantize", "Transpose", "Dequantize", "Cast",
                                                  "Reshape",  "Softmax",   "DequantizeFilter"};
  return kTypes;
}

std::string node_type(const fb::SegmentT& s) {
  const auto* op = s.kind.AsCpuOp();
  if (op == nullptr) return "BPU";
  if (op->op_type == "LayoutConvert") return "Transpose";
  return op->op_type;
}

std::vector<std::string> removable_nodes(const fb::ModelT& m) {
  std::vector<std::string> out;
  for (const auto& s : m.segments) {
    RemoveResult r;
    std::string why;
    if (boundary_side(m, *s, &r, &why) != 0) out.push_back(s->name);
  }
  return out;
}

RemoveResult remove_node(fb::ModelT* m, const std::string& name, std::string* why) {
  auto it = std::find_if(m->segments.begin(), m->segments.end(), [&](const auto& s) { return s->name == name; });
  if (it == m->segments.end()) {
    *why = "node '" + name + "' is not in the model";
    return RemoveResult::kNotFound;
  }
  RemoveResult r = RemoveResult::kRemoved;
  const int side = boundary_side(*m, **it, &r, why);
  if (side == 0) return r;
  const fb::SegmentT& s = **it;
  const std::string type = node_type(s);
  auto rec = std::make_unique<fb::RemovedNodeT>();
  rec->name = s.name;
  rec->op_type = type;
  rec->info = node_info(*m, s, type);
  const uint32_t in = s.inputs[0], out = s.outputs[0];
  if (side == 1) {
    const int k = input_index(*m, in);
    m->tensors[out]->name = m->tensors[in]->name;  // the model input keeps its name
    m->inputs[static_cast<size_t>(k)]->tensor = out;
    if (type == "Quantize") {
      m->inputs[static_cast<size_t>(k)]->input_type_rt = "featuremap";
      set_list_item(m, "INPUT_TYPE_RT", static_cast<size_t>(k), "featuremap");
    }
  } else {
    const int k = output_index(*m, out);
    m->tensors[in]->name = m->tensors[out]->name;  // the model output keeps its name
    m->outputs[static_cast<size_t>(k)]->tensor = in;
  }
  // Debug records name their BPU segment by index: later segments move up.
  const auto erased = static_cast<uint32_t>(it - m->segments.begin());
  for (auto& l : m->layers)
    if (l->segment > erased) --l->segment;
  m->segments.erase(it);
  m->removed_nodes.push_back(std::move(rec));
  drop_unused_tensors(m);
  return RemoveResult::kRemoved;
}

std::vector<std::string> remove_nodes_of_type(fb::ModelT* m, const std::string& type) {
  std::vector<std::string> removed;
  for (bool again = true; again;) {
    again = false;
    for (const std::string& n : removable_nodes(*m)) {
      auto it = std::find_if(m->segments.begin(), m->segments.end(), [&](const auto& s) { return s->name == n; });
      if (it == m->segments.end() || node_type(**it) != type) continue;
      std::string why;
      if (remove_node(m, n, &why) == RemoveResult::kRemoved) {
        removed.push_back(n);
        again = true;
        break;
      }
    }
  }
  return removed;
}

}  // namespace openbpu::cvt
