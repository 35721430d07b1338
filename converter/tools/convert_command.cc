// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/convert_command.h"

#include "bpu_sim/isa/march.h"
#include "converter/config/config.h"
#include "converter/frontend/onnx/onnx_io.h"

namespace openbpu::cvt {

bool parse_shape(const std::string& s, std::vector<int64_t>* out) {
  out->clear();
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t x = s.find('x', pos);
    const std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.size() > 12 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    out->push_back(std::stoll(part));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return !out->empty();
}

bool shape_pairs(const std::vector<std::string>& raw, std::vector<std::pair<std::string, std::vector<int64_t>>>* out,
                 std::string* error) {
  if (raw.size() % 2 != 0) {
    *error = "--input-shape takes a name and a shape (e.g. --input-shape data 1x3x224x224)";
    return false;
  }
  for (size_t i = 0; i < raw.size(); i += 2) {
    std::vector<int64_t> s;
    if (!parse_shape(raw[i + 1], &s)) {
      *error = "--input-shape " + raw[i] + ": '" + raw[i + 1] + "' is not a shape like 1x3x224x224";
      return false;
    }
    out->push_back({raw[i], s});
  }
  return true;
}

namespace {

// A usage error: the message only.
bool usage_error(MapperLog& log, const std::string& msg) {
  log.error(msg);
  return false;
}

bool fail(MapperLog& log, const ConvertTool& tool, const std::string& msg) {
  if (!msg.empty()) log.error(msg);
  log.error("exception in command: " + tool.command);
  return false;
}

bool load_yaml_config(const ConvertCommand& cmd, const ConvertTool& tool, Config* config,
                      std::vector<std::string>* warnings, MapperLog& log) {
  std::string err;
  if (cmd.config_path.empty()) return usage_error(log, tool.command + " needs --config (or --fast-perf with --model)");
  if (!load_config(cmd.config_path, config, warnings, &err, cmd.model_type)) {
    const std::string group = config_error_group(err);
    if (!group.empty()) log.error("Parse '" + group + "' failed!");
    log.error(err);
    log.error("yaml file parse failed. Please double check your input");
    return fail(log, tool, "");
  }
  return true;
}

// hb_compile builds .hbm models for the nash marches only.
bool check_march(const ConvertTool& tool, const std::string& name, std::string* error) {
  if (!tool.hbm) return true;
  const isa::MarchInfo* m = isa::find_march(name);
  if (m == nullptr || m->march == isa::March::kNashE || m->march == isa::March::kNashM) return true;
  *error = "march '" + name + "' is a libdnn 1.x (X3/J5/X5) target: convert for it with hb_mapper makertbin; " +
           tool.name + " builds .hbm models for nash-e and nash-m";
  return false;
}

}  // namespace

bool load_convert_config(const ConvertCommand& cmd, const ConvertTool& tool, Config* config, MapperLog& log) {
  std::string err;
  std::vector<std::string> warnings;
  if (cmd.fast_perf) {
    if (!cmd.config_path.empty()) return usage_error(log, "--config cannot be used together with --fast-perf");
    std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
    if (cmd.model.empty() || !shape_pairs(cmd.input_shapes, &shapes, &err))
      return usage_error(log, err.empty() ? "--fast-perf needs --model" : err);
    *config = make_fast_perf_config(cmd.model, cmd.march, cmd.model_type.empty() ? "onnx" : cmd.model_type, shapes,
                                    cmd.proto);
  } else if (!load_yaml_config(cmd, tool, config, &warnings, log)) {
    return false;
  }
  for (const auto& w : warnings) log.warn(w);
  if (!check_march(tool, config->model_parameters.march, &err)) return fail(log, tool, err);
  // Second validation step against the float model's inputs.
  if (config->model_parameters.model_type == "onnx") {
    Graph probe;
    if (!onnxio::load_model(config->model_parameters.onnx_model, &probe, &err)) return fail(log, tool, err);
    std::vector<ModelInput> mins;
    for (const auto& in : probe.inputs) mins.push_back({in, probe.value(in)->shape});
    warnings.clear();
    if (!validate_with_model(*config, mins, &warnings, &err)) return fail(log, tool, err);
    for (const auto& w : warnings) log.warn(w);
  }
  return true;
}

int run_convert_command(const ConvertCommand& cmd, const ConvertTool& tool, MapperLog& log) {
  Config config;
  if (!load_convert_config(cmd, tool, &config, log)) return 1;
  return run_makertbin(config, log, tool);
}

}  // namespace openbpu::cvt
