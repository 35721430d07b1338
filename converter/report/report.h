// SPDX-License-Identifier: Apache-2.0
// The tables hb_mapper logs: checker placement, per-subgraph estimates, the
// quantized node table (device, subgraph, type, cosine, threshold, data
// types) and the output similarity table, in the vendor's layout.
#ifndef OPENBPU_CONVERTER_REPORT_REPORT_H_
#define OPENBPU_CONVERTER_REPORT_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "bpu_sim/isa/march.h"
#include "converter/codegen/compiler.h"
#include "converter/ir/graph.h"
#include "converter/partition/placement.h"
#include "converter/report/similarity.h"
#include "converter/tools/mapper_log.h"

namespace openbpu::cvt {

// A number with a fixed number of decimals.
std::string fixed(double v, int digits = 6);

// Prints a table with aligned columns, '=' above the header, '-' below.
void print_table(MapperLog& log, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);

// hb_mapper checker: node, device, subgraph, type; then each CPU node's reason.
void log_placement(MapperLog& log, const Graph& g, const Placement& pl);
// Each CPU node's placement rule (run_on_cpu, the operator unit's limit that
// failed, a passive operator at the model's head or tail): checker and
// makertbin.
void log_cpu_reasons(MapperLog& log, const Graph& g, const Placement& pl);

// makertbin: FPS, latency, MACs and function calls of each BPU subgraph.
void log_subgraphs(MapperLog& log, const CompiledModel& cm, const isa::MarchInfo& march);

// compiler_parameters.advice: every op whose estimated time (the timing
// model of bpu_sim/timing.h) exceeds its time at the march's peak MAC rate
// by more than advice_us, with why and its output's channel padding.
void log_advice(MapperLog& log, const CompiledModel& cm, const isa::MarchInfo& march, double advice_us);

// makertbin: the quantized node table and the output table.
void log_quantized_nodes(MapperLog& log, const Graph& g, const Placement& pl, const CompiledModel& cm,
                         const std::map<std::string, double>& thresholds, const Similarity& sim);
void log_outputs(MapperLog& log, const Similarity& sim);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_REPORT_REPORT_H_
