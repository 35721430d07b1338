// SPDX-License-Identifier: Apache-2.0
// The conversion command shared by `hb_mapper makertbin` (.bin, libdnn 1.x)
// and `hb_compile` (.hbm, UCP API): the config from a yaml file or the
// built-in --fast-perf one, validated against the float model's inputs,
// then the pipeline (run_makertbin) writing the tool's model file.
#ifndef OPENBPU_CONVERTER_TOOLS_CONVERT_COMMAND_H_
#define OPENBPU_CONVERTER_TOOLS_CONVERT_COMMAND_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "converter/pipeline.h"
#include "converter/tools/mapper_log.h"

namespace openbpu::cvt {

struct ConvertCommand {
  std::string config_path;  // -c/--config
  std::string model_type;   // --model-type ("" = from the yaml / "onnx")
  bool fast_perf = false;   // --fast-perf with --model/--proto/--march/--input-shape
  std::string model, proto, march;
  std::vector<std::string> input_shapes;  // name, shape, name, shape, ...
};

// "1x3x224x224" -> {1, 3, 224, 224}; false on bad text.
bool parse_shape(const std::string& s, std::vector<int64_t>* out);
// --input-shape name/shape pairs; false with a message in *error.
bool shape_pairs(const std::vector<std::string>& raw, std::vector<std::pair<std::string, std::vector<int64_t>>>* out,
                 std::string* error);

// Loads and validates the config of `cmd` (errors logged the vendor's way,
// ending with "exception in command: <tool.command>"); false on failure.
bool load_convert_config(const ConvertCommand& cmd, const ConvertTool& tool, Config* config, MapperLog& log);

// load_convert_config + run_makertbin; 0 on success.
int run_convert_command(const ConvertCommand& cmd, const ConvertTool& tool, MapperLog& log);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_TOOLS_CONVERT_COMMAND_H_
