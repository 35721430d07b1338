// SPDX-License-Identifier: Apache-2.0
// hb_compile: the J6/S100 toolchain's conversion command (seed 004), a front
// end of the converter pipeline hb_mapper makertbin runs, writing an .hbm
// model of the UCP generation into working_dir and hb_compile.log into the
// current directory.
//   hb_compile --config X.yaml
//   hb_compile --fast-perf --model M.onnx --march nash-e [-i name 1x3x224x224]
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "converter/tools/convert_command.h"
#include "converter/tools/mapper_log.h"
#include "runtime/core/log.h"

int main(int argc, char** argv) {
  using namespace openbpu::cvt;
  // The runtime library's own messages are errors only here.
  openbpu::log::set_level(4);
  CLI::App app{"hb_compile: model quantized compilation into .hbm models (OpenBPU)", "hb_compile"};
  const ConvertTool tool = hb_compile_tool();
  app.set_version_flag("--version", tool.version);
  ConvertCommand cmd;
  app.add_option("-c,--config", cmd.config_path, "yaml config of the model compilation");
  app.add_flag("--fast-perf", cmd.fast_perf,
               "build the best-performance model for perf evaluation (built-in config, random calibration)");
  app.add_option("-m,--model", cmd.model, "float model (ONNX, or caffemodel with --proto) for --fast-perf");
  app.add_option("--proto", cmd.proto, "Caffe prototxt (--fast-perf)");
  app.add_option("--march", cmd.march, "BPU micro architecture: nash-e (J6E/S100), nash-m (J6M/S100P)");
  app.add_option("-i,--input-shape", cmd.input_shapes, "input name and shape (--fast-perf, repeatable)")
      ->expected(2)
      ->take_all();
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<MapperLog> log(make_mapper_log("hb_compile.log"));
  if (cmd.fast_perf) cmd.model_type = cmd.proto.empty() ? "onnx" : "caffe";
  if (!cmd.fast_perf && (!cmd.model.empty() || !cmd.march.empty() || !cmd.input_shapes.empty())) {
    log->error("--model, --march and --input-shape belong to --fast-perf; without it the yaml of --config "
               "gives them");
    return 1;
  }
  if (cmd.fast_perf && cmd.march.empty()) {
    log->error("--fast-perf needs --march (nash-e or nash-m)");
    return 1;
  }
  return run_convert_command(cmd, tool, *log);
}
