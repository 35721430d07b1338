// SPDX-License-Identifier: Apache-2.0
// model_info: the vendor layout of TOOLS.md 1.4 (gen A), which scripts parse
// line by line: shapes with trailing commas, a trailing space after
// "input[i]:", a blank line between tensor blocks.
#include <cstdio>
#include <sstream>

#include "commands.h"
#include "log.h"
#include "model.h"

namespace openbpu::tools {

namespace {

const char kRule[] = "---------------------------------------------------------------------";

void print_quantization(const hbDNNTensorProperties& p) {
  if (p.quantiType == SCALE) {
    std::ostringstream s;
    for (int32_t i = 0; i < p.scale.scaleLen && p.scale.scaleData != nullptr; ++i)
      s << p.scale.scaleData[i] << ",";
    std::printf("scale data: %s\n", s.str().c_str());
    if (p.scale.zeroPointLen > 0 && p.scale.zeroPointData != nullptr) {
      std::string z;
      for (int32_t i = 0; i < p.scale.zeroPointLen; ++i)
        z += std::to_string(p.scale.zeroPointData[i]) + ",";
      std::printf("zero point data: %s\n", z.c_str());
    }
    std::printf("quantizeAxis: %d\n", p.quantizeAxis);
  } else if (p.quantiType == SHIFT) {
    std::string s;
    for (int32_t i = 0; i < p.shift.shiftLen && p.shift.shiftData != nullptr; ++i)
      s += std::to_string(p.shift.shiftData[i]) + ",";
    std::printf("shift data: %s\n", s.c_str());
    std::printf("quantizeAxis: %d\n", p.quantizeAxis);
  }
}

void print_tensor(const char* kind, int index, const std::string& name,
                  const hbDNNTensorProperties& p, const int32_t* source) {
  std::printf("%s[%d]: \n", kind, index);
  std::printf("name: %s\n", name.c_str());
  if (source != nullptr) std::printf("input source: %s\n", input_source_name(*source));
  std::printf("valid shape: %s\n", shape_str(p.validShape).c_str());
  std::printf("aligned shape: %s\n", shape_str(p.alignedShape).c_str());
  std::printf("aligned byte size: %d\n", p.alignedByteSize);
  std::printf("tensor type: %s\n", data_type_name(p.tensorType));
  std::printf("tensor layout: %s\n", layout_name(p.tensorLayout));
  std::printf("quanti type: %s\n", quanti_type_name(p.quantiType));
  std::string stride = "(";
  for (int32_t i = 0; i < p.validShape.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i)
    stride += std::to_string(p.stride[i]) + ",";
  std::printf("stride: %s)\n", stride.c_str());
  print_quantization(p);
}

void print_model(const ModelDesc& d) {
  std::printf("%s\n", kRule);
  std::printf("[model name]: %s\n", d.name.c_str());
  std::printf("[model march]: %s\n", d.march.c_str());
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    std::printf("\n");
    print_tensor("input", static_cast<int>(i), d.input_names[i], d.inputs[i], &d.input_sources[i]);
  }
  for (size_t i = 0; i < d.outputs.size(); ++i) {
    std::printf("\n");
    print_tensor("output", static_cast<int>(i), d.output_names[i], d.outputs[i], nullptr);
  }
}

}  // namespace

int run_model_info(const Options& opt) {
  ModelPack pack;
  if (!pack.load(split_list(opt.model_file, ','))) return 1;
  std::printf("This model file has %zu model:\n", pack.names().size());
  std::string line;
  for (const std::string& n : pack.names()) line += (line.empty() ? "[" : "\t[") + n + "]";
  std::printf("%s\n", line.c_str());

  std::vector<std::string> selected;
  if (opt.model_name.empty()) {
    selected = pack.names();
  } else {
    selected.push_back(opt.model_name);
  }
  for (const std::string& name : selected) {
    hbDNNHandle_t h = nullptr;
    ModelDesc desc;
    if (!pack.handle(name, &h) || !describe_model(h, name, &desc)) return 1;
    print_model(desc);
  }
  std::printf("%s\n", kRule);
  return 0;
}

}  // namespace openbpu::tools
