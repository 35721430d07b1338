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
#include "converter/tools/convert_command.h"
#include "converter/tools/mapper_log.h"
#include "runtime/core/log.h"

using namespace openbpu::cvt;

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
    ConvertCommand cmd;
    cmd.config_path = config_path;
    cmd.model_type = model_type;
    cmd.fast_perf = fast_perf;
    cmd.model = fast_model;
    cmd.proto = fast_proto;
    cmd.march = fast_march;
    cmd.input_shapes = fast_shapes;
    return run_convert_command(cmd, ConvertTool{}, *log);
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
