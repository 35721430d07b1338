// SPDX-License-Identifier: Apache-2.0
// hb_model_info [-m NAME] BIN_FILE: what a .bin was built from and with
// (docs/hb_model_info.md).
#include <CLI/CLI.hpp>

#include <fstream>
#include <memory>
#include <string>

#include "converter/pipeline.h"
#include "converter/tools/mapper_log.h"
#include "converter/tools/model_file.h"
#include "converter/tools/model_info.h"
#include "schema/writer.h"

int main(int argc, char** argv) {
  using namespace openbpu::cvt;
  CLI::App app{"hb_model_info: print the dependencies and build parameters of a .bin model", "hb_model_info"};
  app.set_version_flag("--version", std::string(kMapperVersion));
  std::string file, name;
  app.add_option("BIN_FILE", file, "the .bin model (a packed file too)")->required();
  app.add_option("-m", name, "only this model of a packed file");
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<MapperLog> log(make_mapper_log("hb_model_info.log"));
  log->info("Start hb_model_info....");
  log->info("hb_model_info version " + std::string(kMapperVersion));
  LoadedFile lf;
  std::string err;
  if (!load_bin_argument(file, &lf, &err)) {
    log->error(err);
    return 1;
  }
  const auto& models = lf.file.models;
  if (openbpu::model::is_packed(lf.file)) {
    std::string names;
    for (const auto& m : models) names += (names.empty() ? "" : ", ") + m->name;
    log->info("This is a packed model with " + std::to_string(models.size()) + " model(s): " + names);
  }
  const std::string wanted = strip_bin_suffix(name);
  if (!wanted.empty() && find_model(lf.file, wanted) == nullptr) {
    log->error("model '" + wanted + "' not found in this bin model");
    return 1;
  }
  std::vector<std::string> deleted;
  for (const auto& m : models) {
    if (!wanted.empty() && m->name != wanted) continue;
    for (const std::string& line : model_info_lines(*m)) log->info(line);
    for (const std::string& line : model_detail_lines(*m)) log->debug(line);
    for (const std::string& line : deleted_node_lines(*m)) deleted.push_back(line);
  }
  if (!deleted.empty()) {
    log->warn("nodes were removed from this model after it was compiled (hb_model_modifier or remove_node_*): "
              "the parameters above are those of the compilation");
    std::ofstream f("deleted_nodes_info.txt");
    for (const std::string& line : deleted) f << line << "\n";
    if (!f) {
      log->error("cannot write deleted_nodes_info.txt in the current directory");
      return 1;
    }
    log->info("deleted node details written to deleted_nodes_info.txt");
  }
  return 0;
}
