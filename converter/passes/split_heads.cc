// SPDX-License-Identifier: Apache-2.0
// The attention's 5-D qkv split, rewritten into operators of rank <= 4.
//
// Vision transformers export `qkv(x).reshape(B, N, 3, H, D).permute(2, 0, 3,
// 1, 4)` followed by `qkv[0], qkv[1], qkv[2]`: a Reshape to rank 5, a
// Transpose moving the "3" axis first and a Gather (axis 0, constant index)
// per part (Paddle: a Slice of one element on axis 0, then a Squeeze). The BPU moves tensors of rank <= 4, so the pass computes each part
// from the Reshape's input directly: a Slice of its last axis (the part's
// contiguous block of channels), a Reshape to the part's dimensions and the
// Transpose that remains of the permutation once the split axis is gone. The
// rewrite only moves data: the results are identical.
#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"

namespace openbpu::cvt {

namespace {

rt::AttrValue ints_attr(std::vector<int64_t> v) {
  rt::AttrValue a;
  a.type = rt::AttrValue::kInts;
  a.ints = std::move(v);
  return a;
}

// The pattern rooted at a Transpose node: its Reshape producer, the split axis
// of the Reshape's output and the Gather consumers with their indices.
struct QkvSplit {
  size_t transpose = 0;
  const Node* reshape = nullptr;
  std::vector<int64_t> out_shape;  // the Reshape's output shape
  int64_t axis = 0;                // the split axis of the Reshape's output
  std::vector<int64_t> rest_perm;  // the permutation of a part's axes
  std::vector<std::pair<size_t, int64_t>> gathers;  // node each part replaces, part index
};

// Ints of attribute `attr` (older opsets) or of constant input `input`;
// false when neither is there or the input is not constant.
bool ints_param(const Graph& g, const Node& n, const char* attr, size_t input, std::vector<int64_t>* out) {
  if (n.attrs.has(attr)) {
    *out = n.attrs.get_ints(attr);
    return true;
  }
  const Value* v = input < n.inputs.size() && !n.inputs[input].empty() ? g.value(n.inputs[input]) : nullptr;
  if (v == nullptr || !v->is_constant()) return false;
  *out = v->to_ints();
  return true;
}

// A Gather on axis 0 with a constant scalar index: the part it takes.
bool gather_part(const Graph& g, const Node& n, int64_t parts, int64_t* k) {
  const Value* idx = n.inputs.size() == 2 ? g.value(n.inputs[1]) : nullptr;
  if (n.attrs.get_int("axis", 0) != 0 || idx == nullptr || !idx->is_constant() || !idx->shape.empty()) return false;
  *k = idx->to_ints()[0];
  if (*k < 0) *k += parts;
  return *k >= 0 && *k < parts;
}

// A Slice of one element on axis 0 followed by a Squeeze of axis 0 (as
// Paddle exports the split): the part and the Squeeze node.
bool slice_squeeze_part(const Graph& g, const Node& n, int64_t parts, int64_t* k, size_t* squeeze) {
  std::vector<int64_t> starts, ends, axes{0}, steps{1};
  if (!ints_param(g, n, "starts", 1, &starts) || !ints_param(g, n, "ends", 2, &ends)) return false;
  if ((n.attrs.has("axes") || (n.inputs.size() > 3 && !n.inputs[3].empty())) && !ints_param(g, n, "axes", 3, &axes))
    return false;
  if (n.inputs.size() > 4 && !n.inputs[4].empty() && !ints_param(g, n, "steps", 4, &steps)) return false;
  if (starts.size() != 1 || ends.size() != 1 || axes != std::vector<int64_t>{0} || steps != std::vector<int64_t>{1})
    return false;
  *k = starts[0] < 0 ? starts[0] + parts : starts[0];
  const int64_t end = ends[0] < 0 ? ends[0] + parts : std::min(ends[0], parts);
  if (*k < 0 || *k >= parts || end != *k + 1 || !single_use(g, n.outputs[0])) return false;
  const size_t c = g.consumers(n.outputs[0])[0];
  const Node& q = g.nodes[c];
  std::vector<int64_t> sq;
  if (q.op_type != "Squeeze" || !q.domain.empty() || !ints_param(g, q, "axes", 1, &sq) ||
      sq != std::vector<int64_t>{0})
    return false;
  *squeeze = c;
  return true;
}

// The consumers of `value` that take one part each (Gather, or Slice then
// Squeeze), as the node each part replaces and the part index; false if any
// consumer is something else.
bool part_takers(const Graph& g, const std::string& value, int64_t parts,
                 std::vector<std::pair<size_t, int64_t>>* out) {
  if (g.is_graph_output(value)) return false;
  for (size_t c : g.consumers(value)) {
    const Node& n = g.nodes[c];
    if (!n.domain.empty() || n.inputs[0] != value) return false;
    int64_t k = 0;
    size_t squeeze = 0;
    if (n.op_type == "Gather" && gather_part(g, n, parts, &k)) {
      out->push_back({c, k});
    } else if (n.op_type == "Slice" && slice_squeeze_part(g, n, parts, &k, &squeeze)) {
      out->push_back({squeeze, k});
    } else {
      return false;
    }
  }
  return !out->empty();
}

bool match(const Graph& g, size_t t, QkvSplit* m) {
  const Node& tr = g.nodes[t];
  if (tr.op_type != "Transpose" || !tr.domain.empty() || tr.inputs.empty()) return false;
  const Node* r = g.producer(tr.inputs[0]);
  if (r == nullptr || r->op_type != "Reshape" || !r->domain.empty() || !single_use(g, tr.inputs[0])) return false;
  const Value* x = g.value(r->inputs[0]);
  const Value* y = g.value(tr.inputs[0]);
  const std::vector<int64_t> perm = tr.attrs.get_ints("perm");
  if (!x || !y || !x->shape_known() || !y->shape_known() || x->is_constant() || y->shape.size() <= 4 ||
      perm.size() != y->shape.size())
    return false;
  // The split axis is the one moved first; the Reshape keeps every dimension
  // before it and merges the split axis and all after it into x's last axis.
  const int64_t a = perm[0];
  if (a < 0 || static_cast<size_t>(a) + 1 != x->shape.size()) return false;
  for (int64_t k = 0; k < a; ++k)
    if (x->shape[static_cast<size_t>(k)] != y->shape[static_cast<size_t>(k)]) return false;
  m->transpose = t;
  m->reshape = r;
  m->out_shape = y->shape;
  m->axis = a;
  m->rest_perm.clear();
  for (size_t k = 1; k < perm.size(); ++k) m->rest_perm.push_back(perm[k] > a ? perm[k] - 1 : perm[k]);
  m->gathers.clear();
  return part_takers(g, tr.outputs[0], y->shape[static_cast<size_t>(a)], &m->gathers);
}

std::string unique_node_name(const Graph& g, const std::string& base) {
  std::set<std::string> names;
  for (const Node& n : g.nodes) names.insert(n.name);
  if (names.count(base) == 0) return base;
  for (int i = 1;; ++i)
    if (names.count(base + "_" + std::to_string(i)) == 0) return base + "_" + std::to_string(i);
}

std::string add_float_value(Graph* g, const std::string& base, const std::vector<int64_t>& shape) {
  Value v;
  v.name = g->unique_name(base);
  v.elem_type = kFloat;
  v.has_shape = true;
  v.shape = shape;
  g->values[v.name] = v;
  return v.name;
}

// The nodes computing part `k` of the split into the output of `gather` (the
// Gather or the Squeeze after a Slice; the Slice is then left unused).
std::vector<Node> part_nodes(Graph* g, const QkvSplit& m, const Node& gather, int64_t k) {
  const std::string x = m.reshape->inputs[0];
  const size_t a = static_cast<size_t>(m.axis);
  const int64_t block = std::accumulate(m.out_shape.begin() + static_cast<std::ptrdiff_t>(a) + 1, m.out_shape.end(),
                                        int64_t{1}, std::multiplies<>());
  std::vector<int64_t> sliced(m.out_shape.begin(), m.out_shape.begin() + static_cast<std::ptrdiff_t>(a));
  sliced.push_back(block);
  std::vector<int64_t> part = m.out_shape;
  part.erase(part.begin() + static_cast<std::ptrdiff_t>(a));
  const std::string& name = gather.name;
  Node s;
  s.name = unique_node_name(*g, name + "_slice");
  s.op_type = "Slice";
  if (g->opset < 10) {  // Slice-1: attributes
    s.inputs = {x};
    s.attrs.set("starts", ints_attr({k * block}));
    s.attrs.set("ends", ints_attr({(k + 1) * block}));
    s.attrs.set("axes", ints_attr({m.axis}));
  } else {
    s.inputs = {x, g->add_constant(name + "_starts", kInt64, {1}, i64_bytes({k * block})),
                g->add_constant(name + "_ends", kInt64, {1}, i64_bytes({(k + 1) * block})),
                g->add_constant(name + "_axes", kInt64, {1}, i64_bytes({m.axis}))};
  }
  s.outputs = {add_float_value(g, name + "_sliced", sliced)};
  Node r;
  r.name = unique_node_name(*g, name + "_reshape");
  r.op_type = "Reshape";
  r.inputs = {s.outputs[0], g->add_constant(name + "_shape", kInt64, {static_cast<int64_t>(part.size())},
                                            i64_bytes(part))};
  bool identity = true;
  for (size_t i = 0; i < m.rest_perm.size(); ++i) identity = identity && m.rest_perm[i] == static_cast<int64_t>(i);
  if (identity) {
    r.name = name;
    r.outputs = gather.outputs;
    return {s, r};
  }
  r.outputs = {add_float_value(g, name + "_part", part)};
  Node t;
  t.name = name;
  t.op_type = "Transpose";
  t.inputs = {r.outputs[0]};
  t.outputs = gather.outputs;
  t.attrs.set("perm", ints_attr(m.rest_perm));
  return {s, r, t};
}

}  // namespace

int split_heads(Graph* g, std::string* error) {
  int count = 0;
  for (size_t t = 0; t < g->nodes.size(); ++t) {
    QkvSplit m;
    if (!match(*g, t, &m)) continue;
    std::vector<std::pair<size_t, std::vector<Node>>> parts;
    for (const auto& [gi, k] : m.gathers) parts.push_back({gi, part_nodes(g, m, g->nodes[gi], k)});
    // Replace each Gather by its nodes, last index first so indices hold.
    std::sort(parts.begin(), parts.end(), [](const auto& l, const auto& r) { return l.first > r.first; });
    for (auto& [gi, nodes] : parts) {
      g->nodes.erase(g->nodes.begin() + static_cast<std::ptrdiff_t>(gi));
      g->nodes.insert(g->nodes.begin() + static_cast<std::ptrdiff_t>(gi), nodes.begin(), nodes.end());
    }
    ++count;
    g->remove_dead();
    if (!g->topo_sort(error)) return -1;
    t = 0;
  }
  return count;
}

}  // namespace openbpu::cvt
