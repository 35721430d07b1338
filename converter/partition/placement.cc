// SPDX-License-Identifier: Apache-2.0
#include "converter/partition/placement.h"

#include <algorithm>
#include <map>

#include "converter/ops/op_unit.h"
#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::cvt {

bool bpu_supported(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* type,
                   std::string* reason) {
  const OpUnit* u = find_op_unit(n);
  *type = n.op_type;
  if (u == nullptr || u->place == nullptr) {
    *reason = n.op_type + " is not supported on the BPU";
    return false;
  }
  std::string why;
  if (!u->place(g, n, march, &why)) {
    *reason = n.op_type + ": " + why;
    return false;
  }
  *type = u->table_type;
  return true;
}

bool is_passive(const Node& n) {
  const OpUnit* u = find_op_unit(n);
  return u != nullptr && u->passive;
}

namespace {

bool is_source(const Graph& g, const std::string& v) {
  const Value* val = g.value(v);
  return v.empty() || (val && val->is_constant()) ||
         std::find(g.inputs.begin(), g.inputs.end(), v) != g.inputs.end();
}


// Element-wise arithmetic and table lookups (activations) the CPU runtime
// computes in float.
bool cpu_elementwise(const Node& n) {
  if (n.domain.empty() && (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul")) return true;
  const OpUnit* u = find_op_unit(n);
  return u != nullptr && u->lut != nullptr && rt::find_cpu_op(n.domain, n.op_type) != nullptr;
}

int find_root(std::vector<int>* parent, int i) {
  std::vector<int>& p = *parent;
  while (p[static_cast<size_t>(i)] != i) i = p[static_cast<size_t>(i)] = p[static_cast<size_t>(p[static_cast<size_t>(i)])];
  return i;
}

// Connected BPU islands (through BPU -> BPU edges): root of each node, -1 on the CPU.
std::vector<int> bpu_islands(const Graph& g, const std::vector<NodePlacement>& pl,
                             const std::map<std::string, size_t>& producer) {
  std::vector<int> parent(pl.size());
  for (size_t i = 0; i < pl.size(); ++i) parent[i] = static_cast<int>(i);
  for (size_t i = 0; i < pl.size(); ++i)
    for (const auto& in : g.nodes[i].inputs) {
      auto it = producer.find(in);
      if (pl[i].device == Device::kBpu && it != producer.end() && pl[it->second].device == Device::kBpu)
        parent[static_cast<size_t>(find_root(&parent, static_cast<int>(i)))] = find_root(&parent, static_cast<int>(it->second));
    }
  std::vector<int> root(pl.size(), -1);
  for (size_t i = 0; i < pl.size(); ++i)
    if (pl[i].device == Device::kBpu) root[i] = find_root(&parent, static_cast<int>(i));
  return root;
}

// An island of element-wise arithmetic between CPU operators (every
// non-constant value it reads a CPU node's, every value it writes read by
// CPU nodes or a model output) runs on the CPU in float: on the BPU it would
// add an int8 rounding of each value it reads and writes and a subgraph call
// for a few element-wise operations (on bernoulli2, the bias Adds and scalar
// Muls between the MatMuls and LayerNorms of a transformer block, which run
// on the CPU there, and the MLP's SiLU table; docs/converter.md "Element-wise
// islands").
void move_elementwise_islands(const Graph& g, const std::vector<bool>& forced,
                              const std::map<std::string, size_t>& producer, std::vector<NodePlacement>* pl) {
  const std::vector<int> root = bpu_islands(g, *pl, producer);
  std::map<int, bool> movable;
  for (size_t i = 0; i < pl->size(); ++i) {
    if (root[i] < 0) continue;
    bool ok = cpu_elementwise(g.nodes[i]) && !forced[i];
    for (const auto& in : g.nodes[i].inputs) {
      const Value* v = g.value(in);
      if (in.empty() || (v != nullptr && v->is_constant())) continue;
      auto it = producer.find(in);
      ok = ok && it != producer.end() && (root[it->second] == root[i] || (*pl)[it->second].device == Device::kCpu);
    }
    for (const auto& o : g.nodes[i].outputs)
      for (size_t c : g.consumers(o)) ok = ok && (root[c] == root[i] || (*pl)[c].device == Device::kCpu);
    auto m = movable.emplace(root[i], ok);
    m.first->second = m.first->second && ok;
  }
  for (size_t i = 0; i < pl->size(); ++i)
    if (root[i] >= 0 && movable[root[i]]) {
      (*pl)[i].device = Device::kCpu;
      (*pl)[i].type = g.nodes[i].op_type;
      (*pl)[i].reason = "element-wise island between CPU operators (it would add int8 roundings)";
    }
}

}  // namespace

Placement place(Graph* g, const PlacementOptions& options) {
  Placement result;
  const size_t n = g->nodes.size();
  std::vector<NodePlacement> pl(n);
  std::vector<bool> forced(n, false);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g->nodes[i];
    std::string type, reason;
    const bool ok = bpu_supported(*g, node, *options.march, &type, &reason);
    pl[i].type = type;
    if (options.run_on_cpu.count(node.name)) {
      pl[i].device = Device::kCpu;
      pl[i].type = node.op_type;
      pl[i].reason = "named in run_on_cpu";
      continue;
    }
    if (options.run_on_bpu.count(node.name)) {
      if (ok) {
        forced[i] = true;
      } else {
        result.warnings.push_back("run_on_bpu: node '" + node.name + "' cannot run on the BPU (" + reason + ")");
      }
    }
    pl[i].device = ok ? Device::kBpu : Device::kCpu;
    pl[i].reason = ok ? "" : reason;
  }
  // Passive operators at the head (fed only by inputs/CPU) or the tail (feeding
  // only outputs/CPU) gain nothing on the BPU: they stay on the CPU.
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (const auto& o : g->nodes[i].outputs) producer[o] = i;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      const Node& node = g->nodes[i];
      if (pl[i].device != Device::kBpu || forced[i] || !is_passive(node)) continue;
      bool head = true;
      for (const auto& in : node.inputs) {
        if (is_source(*g, in)) continue;
        auto it = producer.find(in);
        head = head && it != producer.end() && pl[it->second].device == Device::kCpu;
      }
      bool tail = true;
      for (const auto& o : node.outputs)
        for (size_t c : g->consumers(o)) tail = tail && pl[c].device == Device::kCpu;
      if (head || tail) {
        pl[i].device = Device::kCpu;
        pl[i].type = node.op_type;
        pl[i].reason = std::string("passive operator at the model ") + (head ? "head" : "tail");
        changed = true;
      }
    }
  }
  move_elementwise_islands(*g, forced, producer, &pl);
  // List scheduling: keep taking ready nodes of the current device; switch
  // only when none is ready, so every BPU run is as long as possible.
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<size_t>> users(n);
  for (size_t i = 0; i < n; ++i)
    for (const auto& in : g->nodes[i].inputs) {
      auto it = producer.find(in);
      if (it != producer.end() && it->second != i) {
        ++indegree[i];
        users[it->second].push_back(i);
      }
    }
  std::vector<size_t> order;
  std::vector<bool> done(n, false);
  Device current = Device::kBpu;
  int subgraph = -1;
  bool in_bpu_phase = false;
  while (order.size() < n) {
    bool progressed = false;
    for (size_t i = 0; i < n; ++i) {
      if (done[i] || indegree[i] != 0 || pl[i].device != current) continue;
      if (current == Device::kBpu && !in_bpu_phase) {
        ++subgraph;
        in_bpu_phase = true;
      }
      pl[i].subgraph = current == Device::kBpu ? subgraph : -1;
      done[i] = true;
      order.push_back(i);
      for (size_t u : users[i]) --indegree[u];
      progressed = true;
      i = static_cast<size_t>(-1);  // restart: newly ready nodes in order
    }
    (void)progressed;
    current = current == Device::kBpu ? Device::kCpu : Device::kBpu;
    in_bpu_phase = false;
  }
  std::vector<Node> nodes;
  result.nodes.clear();
  for (size_t i : order) {
    nodes.push_back(std::move(g->nodes[i]));
    result.nodes.push_back(pl[i]);
  }
  g->nodes = std::move(nodes);
  result.subgraphs = subgraph + 1;
  return result;
}

}  // namespace openbpu::cvt
