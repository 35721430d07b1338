// SPDX-License-Identifier: Apache-2.0
// The conversion pipeline: the ordered list of stages of hb_mapper, each a
// call into its module (import, preprocess, folding, optimization,
// placement, calibration, compilation, outputs).
#ifndef OPENBPU_CONVERTER_PIPELINE_H_
#define OPENBPU_CONVERTER_PIPELINE_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "converter/codegen/compiler.h"
#include "converter/config/config.h"
#include "converter/ir/graph.h"
#include "converter/partition/placement.h"
#include "converter/tools/mapper_log.h"

namespace openbpu::cvt {

inline constexpr const char* kMapperVersion = "1.24.3-openbpu0.1.0";

struct CheckerOptions {
  std::string model_type = "onnx";
  std::string model;
  std::string proto;
  std::string march = "bayes";
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
};

// hb_mapper checker: prints the node placement table; 0 on success.
int run_checker(const CheckerOptions& options, MapperLog& log);

// hb_mapper makertbin: full conversion into config.working_dir; 0 on success.
// On failure every output file already written is removed.
int run_makertbin(const Config& config, MapperLog& log);

// hb_mapper infer: runs a float or quantized ONNX produced by makertbin on
// the given inputs (image files or raw .bin in the model input's type) and
// writes every float value as <output_dir>/<name>_float.bin.
int run_infer(const Config& config, const std::string& model_file,
              const std::vector<std::pair<std::string, std::string>>& inputs, const std::string& output_dir,
              MapperLog& log);

// ---- stages (exposed for tests) -------------------------------------------

// Loads the float model with input shapes applied (dynamic dims must be
// given), preprocess inserted per the config, constants folded.
bool load_and_prepare(const Config& config, Graph* graph, MapperLog& log, std::string* error);

struct Similarity {
  std::vector<std::pair<std::string, double>> nodes;  // value -> cosine
  struct Output {
    std::string name;
    double cosine, l1, l2, chebyshev;
  };
  std::vector<Output> outputs;
};

// Compares the float graph with the compiled model on one sample.
bool compute_similarity(const Graph& float_graph, const CompiledModel& cm, const std::map<std::string, Value>& sample,
                        Similarity* sim, std::string* error);

double cosine_similarity(const std::vector<double>& a, const std::vector<double>& b);

// Reads a value of the quantized graph's scratch / regions back as floats.
std::vector<double> dequantize_trace(const LayerTrace& t, const std::vector<uint8_t>& region_data);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_PIPELINE_H_
