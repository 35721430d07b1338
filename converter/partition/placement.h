// SPDX-License-Identifier: Apache-2.0
// Placement: which node runs on the BPU and which on the CPU, per march.
// The rules are the operator units' (converter/ops/): each a named predicate
// whose message is the CPU-fallback reason the checker prints, and whose
// unit holds its line of docs/supported_ops.md.
#ifndef OPENBPU_CONVERTER_PARTITION_PLACEMENT_H_
#define OPENBPU_CONVERTER_PARTITION_PLACEMENT_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "bpu_sim/isa/march.h"
#include "converter/ir/graph.h"

namespace openbpu::cvt {

enum class Device { kBpu, kCpu };

struct PlacementOptions {
  const isa::MarchInfo* march = nullptr;
  std::set<std::string> run_on_cpu;  // node names forced to the CPU
  std::set<std::string> run_on_bpu;  // node names forced to the BPU (when supported)
};

struct NodePlacement {
  Device device = Device::kCpu;
  std::string type;    // the operator name shown in tables (HzSQuantizedConv, HzLut, ... or the ONNX op)
  std::string reason;  // why it is on the CPU (empty for BPU nodes)
  int subgraph = -1;   // BPU subgraph id, -1 for CPU nodes
};

struct Placement {
  std::vector<NodePlacement> nodes;  // parallel to graph.nodes after placement reordered them
  int subgraphs = 0;
  std::vector<std::string> warnings;
};

// Decides the device of every node, reorders the graph's nodes so that each
// BPU subgraph is contiguous (list scheduling: BPU work first while ready),
// and numbers the subgraphs in execution order.
Placement place(Graph* graph, const PlacementOptions& options);

// BPU support check of one node on a march (its unit's placement rule):
// returns true and the table type, or false and the reason.
bool bpu_supported(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* type,
                   std::string* reason);

// Operators that only move or reinterpret data (no arithmetic needing
// calibration of their own): at the model's head or tail they stay on the CPU.
bool is_passive(const Node& n);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_PARTITION_PLACEMENT_H_
