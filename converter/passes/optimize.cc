// SPDX-License-Identifier: Apache-2.0
// The float optimization pipeline and the helpers its passes share.
#include <algorithm>
#include <map>
#include <set>

#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"
#include "runtime/core/log.h"

namespace openbpu::cvt {

// `in` and `out` are taken by value: callers pass names of the node erased here.
bool bypass_node(Graph* g, size_t index, std::string in, std::string out) {
  if (!g->is_graph_output(out)) {
    g->nodes.erase(g->nodes.begin() + static_cast<std::ptrdiff_t>(index));
    g->replace_uses(out, in);
    return true;
  }
  // `out` is a model output and keeps its name: rename `in` to `out` when `in`
  // is an intermediate value that is not itself a model output.
  const int p = producer_index(*g, in);
  if (p < 0 || g->is_graph_output(in)) return false;
  g->nodes.erase(g->nodes.begin() + static_cast<std::ptrdiff_t>(index));
  g->rename_value(in, out);
  return true;
}

namespace {

// Operators that only move or relabel data: a pass that removes one leaves
// no computation for another node to take over.
bool moves_data(const std::string& op) {
  static const std::set<std::string> kOps = {"Identity", "Dropout",   "Cast",      "Reshape",
                                             "Flatten",  "Squeeze",   "Unsqueeze", "Transpose"};
  return kOps.count(op) != 0;
}

// A round's nodes before it ran, and the graph after it, indexed by name.
struct RoundIndex {
  std::map<std::string, const Node*> was, now, produced_by;  // nodes by name; g's value -> producer
  std::map<std::string, std::vector<const Node*>> readers;    // value -> readers before the round
  RoundIndex(const std::vector<Node>& before, const Graph& g) {
    for (const Node& b : before) {
      was[b.name] = &b;
      for (const auto& in : b.inputs) readers[in].push_back(&b);
    }
    for (const Node& n : g.nodes) {
      now[n.name] = &n;
      for (const auto& o : n.outputs) produced_by[o] = &n;
    }
  }
};

// The one node that computes now what `n` fed: the producers of the first
// surviving values downstream of n's outputs, if that is a single node that
// is new or changed (else "").
std::string taken_over_by(const Node& n, const RoundIndex& ix) {
  std::set<std::string> into, seen;
  std::vector<std::string> todo(n.outputs.begin(), n.outputs.end());
  while (!todo.empty()) {
    const std::string v = todo.back();
    todo.pop_back();
    if (v.empty() || !seen.insert(v).second) continue;
    if (const auto p = ix.produced_by.find(v); p != ix.produced_by.end()) {
      into.insert(p->second->name);
      continue;
    }
    if (const auto r = ix.readers.find(v); r != ix.readers.end())
      for (const Node* reader : r->second) todo.insert(todo.end(), reader->outputs.begin(), reader->outputs.end());
  }
  if (into.size() != 1) return "";
  const Node* now = ix.now.at(*into.begin());
  const auto old = ix.was.find(now->name);
  const bool changed = old == ix.was.end() || old->second->op_type != now->op_type || old->second->inputs != now->inputs;
  return changed ? now->name : "";
}

// Records the nodes of `before` that are gone from `g` (Graph::merged;
// constant inputs, named in `constants`, as ""); an earlier record whose
// node went in this round follows it.
void record_merges(const std::vector<Node>& before, const std::set<std::string>& constants, Graph* g) {
  const RoundIndex ix(before, *g);
  for (const Node& n : before) {
    if (ix.now.count(n.name)) continue;
    const std::string into = moves_data(n.op_type) ? "" : taken_over_by(n, ix);
    std::vector<std::string> inputs = n.inputs;
    for (auto& in : inputs)
      if (constants.count(in)) in.clear();
    g->merged[n.name] = MergedNode{into, n.op_type, inputs, n.outputs};
  }
  for (auto& [name, m] : g->merged) {
    if (m.into.empty() || ix.now.count(m.into)) continue;
    const auto next = g->merged.find(m.into);
    m.into = next != g->merged.end() ? next->second.into : "";
  }
}

}  // namespace

bool optimize(Graph* g, std::string* error) {
  struct Pass {
    const char* name;
    int (*fn)(Graph*, std::string*);
  };
  static const Pass kPasses[] = {
      {"remove_identity", remove_identity}, {"fold_batchnorm", fold_batchnorm},
      {"fold_conv_affine", fold_conv_affine}, {"gemm_to_conv", gemm_to_conv},
      {"split_heads", split_heads}, {"cleanup_reshapes", cleanup_reshapes}, {"fuse_activations", fuse_activations},
  };
  // Passes enable each other (e.g. BN folding after identity removal): run
  // the list until nothing changes.
  for (int round = 0; round < 8; ++round) {
    const std::vector<Node> before = g->nodes;
    std::set<std::string> constants;
    for (const auto& [name, v] : g->values)
      if (v.is_constant()) constants.insert(name);
    int total = 0;
    for (const Pass& p : kPasses) {
      const int n = p.fn(g, error);
      if (n < 0) return false;
      if (n > 0) OBPU_LOGI("pass %s: %d rewrite(s)", p.name, n);
      total += n;
    }
    g->remove_dead();
    if (!g->topo_sort(error)) return false;
    record_merges(before, constants, g);
    if (total == 0) break;
  }
  return true;
}

}  // namespace openbpu::cvt
