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

void print_model(const ModelDesc& d) {
  std::printf("%s\n", kRule);
  std::printf("[model name]: %s\n", d.name.c_str());
  std::printf("[model march]: %s\n", d.march.c_str());
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    std::printf("\n");
    print_tensor_info("input", static_cast<int>(i), d.input_names[i], d.inputs[i], &d.input_sources[i]);
  }
  for (size_t i = 0; i < d.outputs.size(); ++i) {
    std::printf("\n");
    print_tensor_info("output", static_cast<int>(i), d.output_names[i], d.outputs[i], nullptr);
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
