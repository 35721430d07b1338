// SPDX-License-Identifier: Apache-2.0
// openbpu_run_bin: runs a converted .bin model over a list of inputs through
// the public libdnn API (the test side of the converter's end-to-end tests).
//
//   openbpu_run_bin <model.bin> <list file> <out dir>
//
// Each line of the list names one raw file per model input, separated by
// spaces, in the tight layout hrt_model_exec's --input_file takes (NV12:
// Y plane then interleaved UV; featuremaps: the input's element type).
// Outputs go to <out dir>/<line index>_<output name>.bin as float32 valid
// data (integer outputs dequantized), the naming of tests/common/ort_run.js.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hrt_model_exec/dump.h"
#include "hrt_model_exec/input_data.h"
#include "hrt_model_exec/model.h"

namespace {

using namespace openbpu::tools;

std::string file_name(std::string name) {
  for (char& c : name)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return name;
}

int run(const std::string& model, const std::string& list, const std::string& out_dir) {
  ModelPack pack;
  if (!pack.load({model})) return 1;
  std::string name;
  hbDNNHandle_t handle = nullptr;
  ModelDesc desc;
  if (!pack.select("", &name, &handle) || !describe_model(handle, name, &desc)) return 1;
  bool existed = false;
  if (!make_dirs(out_dir, &existed)) return 1;

  std::ifstream in(list);
  if (!in) {
    std::fprintf(stderr, "openbpu_run_bin: cannot read list '%s'\n", list.c_str());
    return 1;
  }
  std::string line;
  int index = 0;
  for (; std::getline(in, line); ++index) {
    std::istringstream fields(line);
    std::vector<std::string> files;
    for (std::string f; fields >> f;) files.push_back(f);
    if (files.empty()) break;
    std::vector<InputData> inputs;
    if (!load_inputs(desc, files, false, &inputs)) return 1;
    TensorSet tensors;
    for (const InputData& d : inputs)
      if (!tensors.add_input(d.props, d.bytes)) return 1;
    for (const hbDNNTensorProperties& p : desc.outputs)
      if (!tensors.add_output(p)) return 1;
    double ms = 0.0;
    if (run_inference(desc, &tensors, 0, nullptr, &ms) != 0) return 1;
    for (size_t o = 0; o < tensors.outputs.size(); ++o) {
      std::vector<float> values;
      if (!output_to_float(tensors.outputs[o], &values)) return 1;
      const std::string path =
          out_dir + "/" + std::to_string(index) + "_" + file_name(desc.output_names[o]) + ".bin";
      std::ofstream f(path, std::ios::binary);
      f.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
      if (!f) {
        std::fprintf(stderr, "openbpu_run_bin: cannot write '%s'\n", path.c_str());
        return 1;
      }
    }
  }
  std::printf("%d inferences\n", index);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: openbpu_run_bin <model.bin> <list file> <out dir>\n");
    return 2;
  }
  return run(argv[1], argv[2], argv[3]);
}
