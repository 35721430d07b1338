// SPDX-License-Identifier: Apache-2.0
#include "converter/codegen/fusion.h"

#include <algorithm>
#include <set>

#include "converter/ops/op_unit.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

bool is_constant(const Graph& g, const std::string& v) {
  return !v.empty() && g.value(v) && g.value(v)->is_constant();
}

// The node consuming v when it is v's only consumer, in subgraph k and not
// fused yet; -1 otherwise.
int single_consumer_in(const Graph& g, const Placement& pl, const std::vector<bool>& fused, const std::string& v,
                       int k) {
  const auto c = g.consumers(v);
  if (c.size() != 1 || g.is_graph_output(v) || pl.nodes[c[0]].subgraph != k || fused[c[0]]) return -1;
  return static_cast<int>(c[0]);
}

// Node j joins op, whose output becomes j's.
void absorb(const Graph& g, int j, std::vector<bool>* fused, Op* op, std::string* cur) {
  op->nodes.push_back(static_cast<size_t>(j));
  (*fused)[static_cast<size_t>(j)] = true;
  *cur = g.nodes[static_cast<size_t>(j)].outputs[0];
}

// conv + Add(conv, other) with `other` a same-shaped non-constant value.
void fuse_residual(const Graph& g, const Placement& pl, int k, std::vector<bool>* fused, Op* op, std::string* cur) {
  const int j = single_consumer_in(g, pl, *fused, *cur, k);
  if (j < 0) return;
  const Node& a = g.nodes[static_cast<size_t>(j)];
  if (a.op_type != "Add" || !a.domain.empty() || a.inputs.size() != 2) return;
  const std::string other = a.inputs[0] == *cur ? a.inputs[1] : a.inputs[0];
  const Value* ov = g.value(other);
  const Value* cv = g.value(*cur);
  if (!ov || ov->is_constant() || other == *cur || ov->shape != cv->shape) return;
  op->residual = other;
  op->inputs.push_back(other);
  absorb(g, j, fused, op, cur);
}

// A following Relu / Clip folds into the op's output clamp.
void fuse_activation(const Graph& g, const Placement& pl, int k, std::vector<bool>* fused, Op* op, std::string* cur) {
  const int j = single_consumer_in(g, pl, *fused, *cur, k);
  if (j < 0) return;
  const OpUnit* u = find_op_unit(g.nodes[static_cast<size_t>(j)]);
  if (u == nullptr || u->fusion != Fusion::kActivation) return;
  op->act_min_node = j;
  absorb(g, j, fused, op, cur);
}

// Following Mul / Add / Sub / Div by scalar constants fold into a table
// lookup's entries (op_table_function).
void fuse_affine(const Graph& g, const Placement& pl, int k, std::vector<bool>* fused, Op* op, std::string* cur) {
  for (;;) {
    const int j = single_consumer_in(g, pl, *fused, *cur, k);
    double a, b;
    if (j < 0 || !scalar_affine(g, g.nodes[static_cast<size_t>(j)], *cur, &a, &b)) return;
    absorb(g, j, fused, op, cur);
  }
}

// Subgraph inputs (values read but not produced inside) and outputs (values
// read outside or model outputs).
void subgraph_io(const Graph& g, SubgraphPlan* plan) {
  std::set<std::string> produced;
  for (const Op& op : plan->ops)
    for (const auto& o : op.outputs) produced.insert(o);
  for (const Op& op : plan->ops)
    for (const auto& in : op.inputs)
      if (!produced.count(in) && std::find(plan->inputs.begin(), plan->inputs.end(), in) == plan->inputs.end())
        plan->inputs.push_back(in);
  std::set<size_t> op_nodes;
  for (const Op& op : plan->ops) op_nodes.insert(op.nodes.begin(), op.nodes.end());
  for (const Op& op : plan->ops)
    for (const auto& o : op.outputs) {
      bool external = g.is_graph_output(o);
      for (size_t c : g.consumers(o)) external = external || !op_nodes.count(c);
      if (external) plan->outputs.push_back(o);
    }
}

}  // namespace

bool plan_subgraphs(const Graph& g, const Placement& pl, const FusionOptions& options,
                    std::vector<SubgraphPlan>* plans, std::string* error) {
  plans->assign(static_cast<size_t>(pl.subgraphs), SubgraphPlan{});
  std::vector<bool> fused(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int k = pl.nodes[i].subgraph;
    if (k < 0 || fused[i]) continue;
    const Node& n = g.nodes[i];
    Op op;
    op.nodes = {i};
    op.unit = find_op_unit(n);
    if (op.unit == nullptr || op.unit->emit == nullptr) {
      *error = "node '" + n.name + "' (" + n.op_type + ") is placed on the BPU but has no emitter";
      return false;
    }
    for (const auto& in : n.inputs)
      if (!in.empty() && !is_constant(g, in)) op.inputs.push_back(in);
    op.outputs = n.outputs;
    const Fusion f = options.fuse ? op.unit->fusion : Fusion::kNone;
    if (f == Fusion::kTakesResidual || f == Fusion::kTakesActivation || f == Fusion::kTakesAffine) {
      std::string cur = n.outputs[0];
      if (f == Fusion::kTakesResidual) fuse_residual(g, pl, k, &fused, &op, &cur);
      if (f == Fusion::kTakesAffine) fuse_affine(g, pl, k, &fused, &op, &cur);
      else fuse_activation(g, pl, k, &fused, &op, &cur);
      op.outputs = {cur};
    }
    (*plans)[static_cast<size_t>(k)].ops.push_back(op);
  }
  // Ops run at the position of their last fused node (a residual operand may
  // be produced between the conv and the add).
  for (auto& p : *plans) {
    std::stable_sort(p.ops.begin(), p.ops.end(), [](const Op& a, const Op& b) {
      return *std::max_element(a.nodes.begin(), a.nodes.end()) < *std::max_element(b.nodes.begin(), b.nodes.end());
    });
    subgraph_io(g, &p);
  }
  return true;
}

}  // namespace openbpu::cvt
