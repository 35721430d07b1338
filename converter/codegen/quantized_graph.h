// SPDX-License-Identifier: Apache-2.0
// Compiler stage 5, the quantized-graph export: the float graph with each
// BPU subgraph replaced by one openbpu::BpuSubgraph node (its program as
// attributes, its constants as an initializer), openbpu::Quantize /
// Dequantize / LayoutConvert where values cross between CPU and BPU, and the
// image inputs in their runtime types.
#ifndef OPENBPU_CONVERTER_CODEGEN_QUANTIZED_GRAPH_H_
#define OPENBPU_CONVERTER_CODEGEN_QUANTIZED_GRAPH_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/codegen/compiler.h"
#include "converter/codegen/fusion.h"

namespace openbpu::cvt {

bool export_quantized_graph(const Graph& g, const Placement& placement, const std::vector<SubgraphPlan>& plans,
                            const std::vector<CompiledSubgraph>& subgraphs, const std::map<std::string, QParams>& q,
                            int align, Graph* qg, std::string* error);

// Graph inputs read by a Preprocess node (runtime image bytes).
std::set<std::string> image_inputs(const Graph& g);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_CODEGEN_QUANTIZED_GRAPH_H_
