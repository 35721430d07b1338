// SPDX-License-Identifier: Apache-2.0
// Compiler stage 1, the fusion pass: the nodes of each BPU subgraph become
// ops (a node, or a node with what its unit absorbs: a residual Add, a
// Relu/Clip), in execution order, with the subgraph's input and output
// values.
#ifndef OPENBPU_CONVERTER_CODEGEN_FUSION_H_
#define OPENBPU_CONVERTER_CODEGEN_FUSION_H_

#include <string>
#include <vector>

#include "converter/codegen/lowering.h"
#include "converter/ir/graph.h"
#include "converter/partition/placement.h"

namespace openbpu::cvt {

struct SubgraphPlan {
  std::vector<Op> ops;
  std::vector<std::string> inputs;   // float values read from outside, in first-use order
  std::vector<std::string> outputs;  // values read outside the subgraph or model outputs
};

struct FusionOptions {
  bool fuse = true;  // false: every node is its own op (optimize_level O0)
};

// One plan per BPU subgraph of the placement. Fails when a BPU node has no
// operator unit with an emitter (a placement/unit table inconsistency).
bool plan_subgraphs(const Graph& g, const Placement& placement, const FusionOptions& options,
                    std::vector<SubgraphPlan>* plans, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_CODEGEN_FUSION_H_
