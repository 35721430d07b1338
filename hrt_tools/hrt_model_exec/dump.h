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

// --dump_intermediate=level (1..3): per-layer files of one inference with
// obpuInferWithLayerOutputs, in <dir>/intermediate/ (docs/hrt_model_exec.md):
//   1  <layer>.bin, the data as computed (aligned layout, padding included,
//      BPU values as int8/int16/int32 NHWC);
//   2  1 plus <layer>.txt with the same numbers;
//   3  <layer>.bin and .txt with the valid values as float32 (integers
//      dequantized), BPU values reordered from NHWC to the ONNX NCHW order:
//      what hb_mapper infer writes for the float models, for vec_diff.
// plus layer_mapping.txt (what computed each file: BPU subgraph or
// CPU operator, its ONNX nodes, instructions, type, shape) and
// execution_order.txt. The inference's outputs land in `outputs`.
bool dump_layers(const DumpConfig& cfg, int level, hbDNNHandle_t model, const std::vector<hbDNNTensor>& inputs,
                 std::vector<hbDNNTensor>* outputs);

// Creates a directory and its parents; *existed tells whether it was there.
bool make_dirs(const std::string& dir, bool* existed);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_DUMP_H_
