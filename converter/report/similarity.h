// SPDX-License-Identifier: Apache-2.0
// The similarity report of makertbin: per node and per output, the float
// model against the compiled model on one sample.
#ifndef OPENBPU_CONVERTER_REPORT_SIMILARITY_H_
#define OPENBPU_CONVERTER_REPORT_SIMILARITY_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "converter/codegen/compiler.h"
#include "converter/ir/graph.h"

namespace openbpu::cvt {

struct Similarity {
  std::vector<std::pair<std::string, double>> nodes;  // value -> cosine
  struct Output {
    std::string name;
    double cosine, l1, l2, chebyshev;
  };
  std::vector<Output> outputs;
};

// Compares the float graph with the compiled model on one sample. The
// compiled model should be a debug build (CompileOptions::no_scratch_reuse)
// so every intermediate value is still in the scratch arena after the run.
bool compute_similarity(const Graph& float_graph, const CompiledModel& cm, const std::map<std::string, Value>& sample,
                        Similarity* sim, std::string* error);

double cosine_similarity(const std::vector<double>& a, const std::vector<double>& b);

// Reads a value of the quantized graph's scratch / regions back as floats.
std::vector<double> dequantize_trace(const LayerTrace& t, const std::vector<uint8_t>& region_data);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_REPORT_SIMILARITY_H_
