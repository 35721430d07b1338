// SPDX-License-Identifier: Apache-2.0
// hb_model_modifier BIN_FILE [-r NODE]... [-a TYPE]... [-o OUT]: removes
// Quantize / Dequantize / Transpose / Cast / Reshape / Softmax nodes at the
// model's inputs and outputs (docs/hb_model_modifier.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "converter/pipeline.h"
#include "converter/tools/mapper_log.h"
#include "converter/tools/model_file.h"
#include "converter/tools/model_modifier.h"
#include "converter/writer/bin_writer.h"
#include "schema/writer.h"

namespace {

using namespace openbpu::cvt;

std::string quoted_list(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", '" : "'") + v[i] + "'";
  return s + "]";
}

const openbpu::fb::RemovedNodeT* last_removed(const openbpu::fb::ModelT& m) {
  return m.removed_nodes.empty() ? nullptr : m.removed_nodes.back().get();
}

void report_removal(const openbpu::fb::ModelT& m, MapperLog& log) {
  const auto* r = last_removed(m);
  log.info("Node '" + r->name + "' found, its OP type is '" + r->op_type + "'");
  log.debug("node '" + r->name + "' details: " + r->info);
  if (r->op_type == "Quantize" || r->op_type == "Dequantize" || r->op_type == "DequantizeFilter")
    log.info(r->info.substr(0, r->info.find("; input ")) +
             ". node info details are stored in hb_model_modifier log file");
  log.info("Node '" + r->name + "' is removed");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hb_model_modifier: remove Quantize/Dequantize/Transpose/Cast/Reshape/Softmax nodes at a model's "
               "inputs and outputs",
               "hb_model_modifier"};
  app.set_version_flag("--version", std::string(kMapperVersion));
  std::string file, out;
  std::vector<std::string> names, types;
  app.add_option("BIN_FILE,--model_file", file, "the .bin model (not a packed file)")->required();
  app.add_option("-r", names, "name of a node to remove (repeatable, applied in order)");
  app.add_option("-a,--all", types, "remove every removable node of this type (repeatable)")
      ->check(CLI::IsMember(removable_types()));
  app.add_option("-o", out, "output file (default <input>_modified.bin)");
  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<MapperLog> log(make_mapper_log("hb_model_modifier.log"));
  LoadedFile lf;
  std::string err;
  if (!load_bin_argument(file, &lf, &err)) {
    log->error(err);
    return 1;
  }
  if (openbpu::model::is_packed(lf.file)) {
    log->error("Pack model detected. Packed model is not supported.");
    return 1;
  }
  openbpu::fb::ModelT& m = *lf.file.models[0];
  if (names.empty() && types.empty()) {
    const auto can = removable_nodes(m);
    if (can.empty()) log->info("No nodes available");
    else log->info("Nodes that can be deleted: " + quoted_list(can));
    return 0;
  }
  std::vector<std::string> removed;
  for (const std::string& t : types)
    for (const std::string& n : remove_nodes_of_type(&m, t)) {
      removed.push_back(n);
      report_removal(m, *log);
    }
  for (const std::string& n : names) {
    std::string why;
    if (remove_node(&m, n, &why) == RemoveResult::kRemoved) {
      removed.push_back(n);
      report_removal(m, *log);
    } else {
      log->warn("node '" + n + "' is not removed: " + why);
    }
  }
  if (removed.empty()) {
    log->warn("no node was removed; no file written");
    return 0;
  }
  log->info("Nodes that will be removed from this model: " + quoted_list(removed));
  m.estimated_latency_us = static_cast<uint32_t>(std::min(estimate_model_latency_us(m), 2147483647.0));
  openbpu::model::ModelFileWriter w;
  if (!openbpu::model::relocate_blobs(&m, lf.data, &w, &err)) {
    log->error(err);
    return 1;
  }
  if (out.empty()) out = strip_bin_suffix(file) + "_modified.bin";
  if (!openbpu::model::write_file_atomic(out, w.finish(&lf.file), &err)) {
    log->error(err);
    return 1;
  }
  log->info("modified model saved as " + out);
  return 0;
}
