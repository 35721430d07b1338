// SPDX-License-Identifier: Apache-2.0
// hrt_model_exec: the board tool for model information (model_info),
// inference on given inputs (infer) and performance measurement (perf),
// command-line compatible with the vendor tool (TOOLS.md section 1). It is a
// plain client of the public API it is built on (api.h): `hrt_model_exec` of
// libdnn 1.x, `hrt_model_exec_ucp` of the UCP generation; the first hands
// .hbm models to the second, so users run one command for both.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "api.h"
#include "commands.h"
#include "log.h"
#include "model.h"
#include "options.h"

namespace {

using namespace openbpu::tools;

// Runs hrt_model_exec_ucp (next to this executable) with the same arguments.
int exec_ucp_tool(char** argv) {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    log_error("cannot locate hrt_model_exec_ucp for the .hbm model: %s", std::strerror(errno));
    return 1;
  }
  self[n] = '\0';
  std::string path(self);
  path = path.substr(0, path.rfind('/') + 1) + "hrt_model_exec_ucp";
  std::fflush(stdout);
  ::execv(path.c_str(), argv);
  log_error(".hbm models run on the UCP runtime; cannot start '%s': %s", path.c_str(), std::strerror(errno));
  return 1;
}

int run_tool(int argc, char** argv) {
  Options opt;
  switch (parse_options(argc, argv, &opt)) {
    case ParseResult::kHelp:
      print_usage();
      // Running without arguments is a usage error; asking for help is not.
      return argc <= 1 ? 1 : 0;
    case ParseResult::kVersion:
      print_version_banner();
      return 0;
    case ParseResult::kError: return 1;
    case ParseResult::kRun: break;
  }
  if (!opt.remote.empty()) {
    // The server's hrt_model_exec prints its own banner and results (and
    // hands .hbm models to its hrt_model_exec_ucp), so this comes first.
    const char* mode = opt.mode == Mode::kModelInfo ? "model_info" : opt.mode == Mode::kInfer ? "infer" : "perf";
    return run_remote(opt, mode);
  }
  if (!kUcp && has_hbm_model(opt)) return exec_ucp_tool(argv);
  // The vendor library prints its version banner when it loads a model.
  print_version_banner();
  switch (opt.mode) {
    case Mode::kModelInfo: return run_model_info(opt);
    case Mode::kInfer: return run_infer(opt);
    case Mode::kPerf: return run_perf(opt);
    case Mode::kNone: break;
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // The tool boundary: an exception of a library that was not caught where
  // its file is known ends here as an error, not an abort.
  try {
    return run_tool(argc, argv);
  } catch (const std::exception& e) {
    log_error("hrt_model_exec failed: %s", e.what());
  } catch (...) {
    log_error("hrt_model_exec failed: unknown exception");
  }
  return 1;
}
