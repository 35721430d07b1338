// SPDX-License-Identifier: Apache-2.0
// The three modes of hrt_model_exec. Each returns the process exit code
// (0 success) and has printed a message for every failure.
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_COMMANDS_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_COMMANDS_H_

#include <string>
#include <vector>

#include "model.h"
#include "options.h"

namespace openbpu::tools {

// The model infer and perf run: --model_file loaded, --model_name selected
// and described, --core_id checked, the input options applied and, with
// --roi_infer, the ROIs of --roi parsed (infer.cc).
struct RunModel {
  ModelPack pack;
  std::string name;
  hbDNNHandle_t handle = nullptr;
  ModelDesc desc;
  std::vector<Roi> rois;
};
bool open_run_model(const Options& opt, RunModel* m);

int run_model_info(const Options& opt);
int run_infer(const Options& opt);
int run_perf(const Options& opt);
// The mode on the hrt_server of --remote (remote.cc).
int run_remote(const Options& opt, const char* mode);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_COMMANDS_H_
