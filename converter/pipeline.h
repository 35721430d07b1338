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
#include "converter/report/similarity.h"
#include "converter/tools/mapper_log.h"

namespace openbpu::cvt {

inline constexpr const char* kMapperVersion = "1.24.3-openbpu0.1.0";
inline constexpr const char* kCompileVersion = "openbpu0.1.0";

// The tool a conversion runs for: hb_mapper makertbin writes <prefix>.bin
// (libdnn 1.x), hb_compile <prefix>.hbm (the UCP generation: ModelFile.
// generation B with the HBM description JSON, nash marches only).
struct ConvertTool {
  std::string name = "hb_mapper";     // log lines, the model's builder and tool versions
  std::string command = "makertbin";  // "exception in command: <command>"
  std::string version = kMapperVersion;
  bool hbm = false;
};
ConvertTool hb_compile_tool();

struct CheckerOptions {
  std::string model_type = "onnx";
  std::string model;
  std::string proto;
  std::string march = "bayes";
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
};

// hb_mapper checker: prints the node placement table; 0 on success.
int run_checker(const CheckerOptions& options, MapperLog& log);

// hb_mapper makertbin (hb_compile with its ConvertTool): full conversion
// into config.working_dir; 0 on success. On failure every output file
// already written is removed.
int run_makertbin(const Config& config, MapperLog& log, const ConvertTool& tool = ConvertTool{});

// hb_mapper infer: runs a float or quantized ONNX produced by makertbin on
// the given inputs (image files or raw .bin in the model input's type) and
// writes every float value as <output_dir>/<name>_float.bin.
int run_infer(const Config& config, const std::string& model_file,
              const std::vector<std::pair<std::string, std::string>>& inputs, const std::string& output_dir,
              MapperLog& log);

// ---- stages (exposed for tests; the others are in options.h,
// quant/method_search.h, report/) ------------------------------------------

// Loads the float model with input shapes applied (dynamic dims must be
// given), preprocess inserted per the config, constants folded.
// calibration_type load (with `qdq`): the model's Q/DQ pairs removed first
// (quant/qdq_load.h), their thresholds in *qdq.
struct QdqModel;
bool load_and_prepare(const Config& config, Graph* graph, MapperLog& log, std::string* error,
                      QdqModel* qdq = nullptr);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_PIPELINE_H_
