// SPDX-License-Identifier: Apache-2.0
// hb_mapper: checker, makertbin, infer (the vendor tool's command line).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "converter/config/config.h"
#include "converter/frontend/onnx/onnx_io.h"
#include "converter/pipeline.h"
#include "converter/tools/mapper_log.h"
#include "runtime/core/log.h"

namespace {

using namespace openbpu::cvt;

// "1x3x224x224" -> {1, 3, 224, 224}; false on bad text.
bool parse_shape(const std::string& s, std::vector<int64_t>* out) {
  out->clear();
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t x = s.find('x', pos);
    const std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
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

}  // namespace

int main(int argc, char** argv) {
  // The runtime library's own messages are errors only here.
  openbpu::log::set_level(4);
  CLI::App app{"hb_mapper: offline model transform tool (OpenBPU)", "hb_mapper"};
  app.set_version_flag("--version", std::string(kMapperVersion));
  app.require_subcommand(1);

  CheckerOptions chk;
  std::vector<std::string> chk_shapes;
  std::string chk_output;
  auto* checker = app.add_subcommand("checker", "check whether a float model can be converted, and where each node runs");
  checker->add_option("--model-type", chk.model_type, "caffe or onnx")->required()->check(CLI::IsMember({"caffe", "onnx"}));
  checker->add_option("--march", chk.march, "BPU micro architecture")->default_val("bayes");
  checker->add_option("--proto", chk.proto, "Caffe prototxt");
  checker->add_option("--model", chk.model, "caffemodel or onnx file")->required();
  checker->add_option("--input-shape", chk_shapes, "input name and shape, e.g. data 1x3x224x224 (repeatable)")
      ->expected(2)->take_all();
  checker->add_option("--output", chk_output, "deprecated: the log is hb_mapper_checker.log");

  std::string config_path, model_type, fast_model, fast_proto, fast_march = "bayes";
  bool fast_perf = false;
  std::vector<std::string> fast_shapes;
  auto* mk = app.add_subcommand("makertbin", "convert a float model to a runtime .bin");
  mk->add_option("-c,--config", config_path, "yaml config");
  mk->add_option("--model-type", model_type, "caffe or onnx")->check(CLI::IsMember({"caffe", "onnx"}));
  mk->add_flag("--fast-perf", fast_perf, "build a best-performance model for perf evaluation (random calibration)");
  mk->add_option("--model", fast_model, "float model (--fast-perf)");
  mk->add_option("--proto", fast_proto, "Caffe prototxt (--fast-perf)");
  mk->add_option("--march", fast_march, "BPU micro architecture (--fast-perf)");
  mk->add_option("-i,--input-shape", fast_shapes, "input name and shape (--fast-perf, repeatable)")->expected(2)->take_all();

  std::string inf_config, inf_model, inf_layout = "NCHW", inf_out, inf_type = "caffe";
  std::vector<std::string> inf_images;
  auto* inf = app.add_subcommand("infer", "run a model produced by makertbin and dump every float output");
  inf->add_option("-c,--config", inf_config, "the yaml used for makertbin")->required();
  inf->add_option("--model-file", inf_model, "original / optimized / quantized ONNX")->required();
  inf->add_option("--model-type", inf_type, "caffe or onnx");
  inf->add_option("--image-file", inf_images, "input name and file (repeatable)")->expected(2)->take_all()->required();
  inf->add_option("--input-layout", inf_layout, "NCHW or NHWC");
  inf->add_option("--output-dir", inf_out, "output directory")->required();

  CLI11_PARSE(app, argc, argv);

  if (checker->parsed()) {
    std::unique_ptr<MapperLog> log(make_mapper_log("hb_mapper_checker.log"));
    if (!chk_output.empty()) log->warn("--output is deprecated; the log is written to hb_mapper_checker.log");
    std::string err;
    if (!shape_pairs(chk_shapes, &chk.input_shapes, &err)) {
      log->error(err);
      return 1;
    }
    return run_checker(chk, *log);
  }
  if (mk->parsed()) {
    std::unique_ptr<MapperLog> log(make_mapper_log("hb_mapper_makertbin.log"));
    Config config;
    std::string err;
    std::vector<std::string> warnings;
    if (fast_perf) {
      if (!config_path.empty()) {
        log->error("--config cannot be used together with --fast-perf");
        return 1;
      }
      std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
      if (fast_model.empty() || !shape_pairs(fast_shapes, &shapes, &err)) {
        log->error(err.empty() ? "--fast-perf needs --model" : err);
        return 1;
      }
      config = make_fast_perf_config(fast_model, fast_march, model_type.empty() ? "onnx" : model_type, shapes,
                                     fast_proto);
    } else {
      if (config_path.empty()) {
        log->error("makertbin needs --config (or --fast-perf with --model)");
        return 1;
      }
      if (!load_config(config_path, &config, &warnings, &err, model_type)) {
        const std::string group = config_error_group(err);
        if (!group.empty()) log->error("Parse '" + group + "' failed!");
        log->error(err);
        log->error("yaml file parse failed. Please double check your input");
        log->error("exception in command: makertbin");
        return 1;
      }
    }
    for (const auto& w : warnings) log->warn(w);
    // Second validation step against the float model's inputs.
    if (config.model_parameters.model_type == "onnx") {
      openbpu::cvt::Graph probe;
      if (!openbpu::cvt::onnxio::load_model(config.model_parameters.onnx_model, &probe, &err)) {
        log->error(err);
        log->error("exception in command: makertbin");
        return 1;
      }
      std::vector<ModelInput> mins;
      for (const auto& in : probe.inputs) mins.push_back({in, probe.value(in)->shape});
      warnings.clear();
      if (!validate_with_model(config, mins, &warnings, &err)) {
        log->error(err);
        log->error("exception in command: makertbin");
        return 1;
      }
      for (const auto& w : warnings) log->warn(w);
    }
    return run_makertbin(config, *log);
  }
  if (inf->parsed()) {
    std::unique_ptr<MapperLog> log(make_mapper_log("hb_mapper_infer.log"));
    if (inf_layout != "NCHW" && inf_layout != "NHWC") {
      log->error("input_layout should be NCHW or NHWC !");
      return 1;
    }
    Config config;
    std::string err;
    if (!load_config(inf_config, &config, nullptr, &err)) {
      log->error(err);
      return 1;
    }
    std::vector<std::pair<std::string, std::string>> images;
    for (size_t i = 0; i + 1 < inf_images.size(); i += 2) images.push_back({inf_images[i], inf_images[i + 1]});
    return run_infer(config, inf_model, images, inf_out, *log);
  }
  return 1;
}
