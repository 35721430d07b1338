// SPDX-License-Identifier: Apache-2.0
#include "converter/ir/graph.h"

#include <algorithm>
#include <cstring>
#include <queue>
#include <set>

#include "runtime/core/tensor.h"

namespace openbpu::cvt {

int elem_size(int32_t t) {
  switch (t) {
    case kFloat: case kInt32: case kUint32: return 4;
    case kUint8: case kInt8: case kBool: return 1;
    case kUint16: case kInt16: case kFloat16: return 2;
    case kInt64: case kDouble: case kUint64: return 8;
    default: return 0;
  }
}

const char* elem_name(int32_t t) {
  switch (t) {
    case kFloat: return "float32";
    case kUint8: return "uint8";
    case kInt8: return "int8";
    case kUint16: return "uint16";
    case kInt16: return "int16";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kString: return "string";
    case kBool: return "bool";
    case kFloat16: return "float16";
    case kDouble: return "float64";
    case kUint32: return "uint32";
    case kUint64: return "uint64";
    default: return "undefined";
  }
}

int32_t to_rt_type(int32_t t) {
  switch (t) {
    case kFloat: return rt::kF32;
    case kUint8: return rt::kU8;
    case kInt8: return rt::kS8;
    case kUint16: return rt::kU16;
    case kInt16: return rt::kS16;
    case kInt32: return rt::kS32;
    case kInt64: return rt::kS64;
    case kBool: return rt::kBool8;
    case kFloat16: return rt::kF16;
    case kDouble: return rt::kF64;
    case kUint32: return rt::kU32;
    case kUint64: return rt::kU64;
    default: return -1;
  }
}

int32_t from_rt_type(int32_t t) {
  for (int32_t e : {kFloat, kUint8, kInt8, kUint16, kInt16, kInt32, kInt64, kBool, kFloat16, kDouble, kUint32, kUint64})
    if (to_rt_type(e) == t) return e;
  return kUndefined;
}

std::string format_shape(const std::vector<int64_t>& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(shape[i]);
  }
  return out;
}

int64_t capped_elements(const std::vector<int64_t>& shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxTensorElements / n) return -1;
    n *= d;
  }
  return n;
}

bool Value::shape_known() const {
  if (!has_shape) return false;
  for (int64_t d : shape)
    if (d < 0) return false;
  return true;
}

int64_t Value::elements() const {
  if (!shape_known()) return -1;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<double> Value::to_doubles() const {
  std::vector<double> out;
  if (!data) return out;
  const int es = elem_size(elem_type);
  const int32_t rt_type = to_rt_type(elem_type);
  if (es == 0 || rt_type < 0) return out;
  const size_t n = data->size() / static_cast<size_t>(es);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(rt::load_as_double(rt_type, data->data() + i * es));
  return out;
}

std::vector<int64_t> Value::to_ints() const {
  std::vector<int64_t> out;
  if (!data) return out;
  if (elem_type == kInt64) {
    out.resize(data->size() / 8);
    std::memcpy(out.data(), data->data(), out.size() * 8);
    return out;
  }
  for (double d : to_doubles()) out.push_back(static_cast<int64_t>(d));
  return out;
}

Value* Graph::value(const std::string& n) {
  auto it = values.find(n);
  return it == values.end() ? nullptr : &it->second;
}

const Value* Graph::value(const std::string& n) const {
  auto it = values.find(n);
  return it == values.end() ? nullptr : &it->second;
}

const Node* Graph::producer(const std::string& v) const {
  for (const auto& node : nodes)
    for (const auto& o : node.outputs)
      if (o == v) return &node;
  return nullptr;
}

std::vector<size_t> Graph::consumers(const std::string& v) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& in : nodes[i].inputs)
      if (in == v) {
        out.push_back(i);
        break;
      }
  return out;
}

bool Graph::is_graph_output(const std::string& v) const {
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}

std::string Graph::unique_name(const std::string& base) const {
  if (values.count(base) == 0) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (values.count(n) == 0) return n;
  }
}

std::string Graph::add_constant(const std::string& base, int32_t elem_type, const std::vector<int64_t>& shape,
                                std::vector<uint8_t> bytes) {
  Value v;
  v.name = unique_name(base);
  v.elem_type = elem_type;
  v.has_shape = true;
  v.shape = shape;
  v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  const std::string n = v.name;
  values[n] = std::move(v);
  return n;
}

bool Graph::topo_sort(std::string* error) {
  std::map<std::string, size_t> produced_by;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs)
      if (!o.empty()) produced_by[o] = i;
  std::vector<int> indegree(nodes.size(), 0);
  std::vector<std::vector<size_t>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& in : nodes[i].inputs) {
      auto it = produced_by.find(in);
      if (it != produced_by.end()) {
        ++indegree[i];
        users[it->second].push_back(i);
      }
    }
  // Stable: among ready nodes keep the original order.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (indegree[i] == 0) ready.push(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i])
      if (--indegree[u] == 0) ready.push(u);
  }
  if (order.size() != nodes.size()) {
    if (error) *error = "the graph has a cycle";
    return false;
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (size_t i : order) sorted.push_back(std::move(nodes[i]));
  nodes = std::move(sorted);
  return true;
}

void Graph::remove_dead() {
  std::set<std::string> live(outputs.begin(), outputs.end());
  std::vector<bool> keep(nodes.size(), false);
  for (size_t i = nodes.size(); i-- > 0;) {
    bool used = false;
    for (const auto& o : nodes[i].outputs) used = used || live.count(o) != 0;
    if (!used) continue;
    keep[i] = true;
    for (const auto& in : nodes[i].inputs)
      if (!in.empty()) live.insert(in);
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (keep[i]) kept.push_back(std::move(nodes[i]));
  nodes = std::move(kept);
  for (const auto& in : inputs) live.insert(in);
  for (const auto& n : nodes)
    for (const auto& o : n.outputs) live.insert(o);
  for (auto it = values.begin(); it != values.end();)
    it = live.count(it->first) ? std::next(it) : values.erase(it);
}

void Graph::replace_uses(const std::string& from, const std::string& to) {
  for (auto& n : nodes)
    for (auto& in : n.inputs)
      if (in == from) in = to;
  for (auto& o : outputs)
    if (o == from) o = to;
}

void Graph::rename_value(const std::string& from, const std::string& to) {
  for (auto& n : nodes)
    for (auto& o : n.outputs)
      if (o == from) o = to;
  replace_uses(from, to);
  const auto it = values.find(from);
  if (it == values.end()) return;
  Value v = std::move(it->second);
  v.name = to;
  values.erase(it);
  values[to] = std::move(v);
}

bool Graph::check_tensor_sizes(std::string* error) const {
  for (const auto& [name, v] : values) {
    if (!v.shape_known() || capped_elements(v.shape) >= 0) continue;
    const Node* p = producer(name);
    *error = "value '" + name + "' of shape " + format_shape(v.shape) +
             (p ? " (output of " + p->op_type + " node '" + p->name + "')" : std::string()) + " has more than " +
             std::to_string(kMaxTensorElements) + " elements, the converter's limit per tensor";
    return false;
  }
  return true;
}

}  // namespace openbpu::cvt
