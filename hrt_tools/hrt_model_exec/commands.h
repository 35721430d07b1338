// SPDX-License-Identifier: Apache-2.0
// The three modes of hrt_model_exec. Each returns the process exit code
// (0 success) and has printed a message for every failure.
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_COMMANDS_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_COMMANDS_H_

#include "options.h"

namespace openbpu::tools {

int run_model_info(const Options& opt);
int run_infer(const Options& opt);
int run_perf(const Options& opt);
// The mode on the hrt_server of --remote (remote.cc).
int run_remote(const Options& opt, const char* mode);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_COMMANDS_H_
