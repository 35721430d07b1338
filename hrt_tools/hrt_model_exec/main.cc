// SPDX-License-Identifier: Apache-2.0
// hrt_model_exec: the board tool for model information (model_info),
// inference on given inputs (infer) and performance measurement (perf),
// command-line compatible with the vendor tool (TOOLS.md section 1). It is a
// plain libdnn client: only the public dnn/*.h and openbpu/openbpu.h APIs.
#include <cstdio>

#include "commands.h"
#include "dnn/hb_dnn.h"
#include "options.h"

int main(int argc, char** argv) {
  using namespace openbpu::tools;
  Options opt;
  switch (parse_options(argc, argv, &opt)) {
    case ParseResult::kHelp:
      print_usage();
      // Running without arguments is a usage error; asking for help is not.
      return argc <= 1 ? 1 : 0;
    case ParseResult::kVersion:
      std::printf("[DNN] Runtime version = %s\n", hbDNNGetVersion());
      return 0;
    case ParseResult::kError: return 1;
    case ParseResult::kRun: break;
  }
  // The vendor library prints its version banner when it loads a model.
  std::printf("[DNN] Runtime version = %s\n", hbDNNGetVersion());
  switch (opt.mode) {
    case Mode::kModelInfo: return run_model_info(opt);
    case Mode::kInfer: return run_infer(opt);
    case Mode::kPerf: return run_perf(opt);
    case Mode::kNone: break;
  }
  return 1;
}
