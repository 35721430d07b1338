// SPDX-License-Identifier: Apache-2.0
// hb_perf's figures of a model (docs/hb_perf.md), all from the timing model
// (bpu_sim/timing.h): per BPU subgraph its MACs, DDR bytes loaded and stored,
// function calls and latency, per layer (the model's debug records) the same
// for its instruction group; the whole-model estimate with the CPU side.
#ifndef OPENBPU_CONVERTER_TOOLS_PERF_REPORT_H_
#define OPENBPU_CONVERTER_TOOLS_PERF_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "schema/model_generated.h"

namespace openbpu::cvt {

struct WorkPerf {
  uint64_t macs = 0, loaded = 0, stored = 0, cycles = 0;
  double us = 0;
};

struct LayerPerf {
  std::string name, op_type, nodes;  // nodes ';'-separated
  uint32_t first = 0, count = 0;
  WorkPerf work;
};

struct SubgraphPerf {
  std::string name;
  size_t segment = 0;
  size_t fcs = 0;
  WorkPerf work;  // cycles and us: the function calls' estimates as in the file
  std::vector<LayerPerf> layers;
};

struct ModelPerf {
  std::string name, march;
  std::vector<SubgraphPerf> subgraphs;
  WorkPerf bpu;          // all subgraphs
  double whole_us = 0;   // BPU + CPU operators + task overhead (docs/timing.md)
  bool has_layers = false;
};

bool model_perf(const fb::ModelT& model, const std::vector<uint8_t>& data, ModelPerf* out, std::string* error);

// Writes <dir>/<SUBGRAPH>.json and .html per subgraph, the model structure
// (<dir>/<name> Graphviz source, <name>.png, <name>.svg) and the main page
// <dir>/<name>.html.
bool write_perf_report(const fb::ModelT& model, const ModelPerf& perf, const std::string& dir, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_TOOLS_PERF_REPORT_H_
