// SPDX-License-Identifier: Apache-2.0
// infer's --enable_dump files and --enable_cls_post_process. Names follow
// TOOLS.md 1.5: model_infer_input_<i>_<name>.bin and
// model_infer_output_<i>_<name>.<bin|txt> in --dump_path (default: cwd).
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_DUMP_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_DUMP_H_

#include <string>
#include <vector>

#include "input_data.h"

namespace openbpu::tools {

struct DumpConfig {
  std::string dir;              // empty: current directory
  std::string format = "bin";   // bin | txt
  int precision = 9;            // decimals of floats in txt
  int txt_axis = 4;             // txt line break axis
  bool dequantize = false;      // float32 valid data (hybrid_dequantize_process)
  bool remove_padding = false;  // valid data of the output's own type
};

// Creates cfg.dir when missing.
bool prepare_dump_dir(const DumpConfig& cfg);
bool dump_input(const DumpConfig& cfg, int index, const std::string& name, const InputData& data);
bool dump_output(const DumpConfig& cfg, int index, const std::string& name, const hbDNNTensor& t);

// Valid (unpadded) elements of an output as float: integer outputs are
// dequantized by their SCALE (per quantizeAxis) or SHIFT parameters.
bool output_to_float(const hbDNNTensor& t, std::vector<float>* values);

// Prints the top-5 classes of an output (first batch item).
bool print_top5(const hbDNNTensor& t, const std::string& name);

// Creates a directory and its parents; *existed tells whether it was there.
bool make_dirs(const std::string& dir, bool* existed);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_DUMP_H_
