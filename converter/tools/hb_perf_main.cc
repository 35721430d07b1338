// SPDX-License-Identifier: Apache-2.0
// hb_perf [-m NAMES] [-p] BIN_FILE: board-time estimates of a .bin without a
// board, written to hb_perf_result/<name>/ (docs/hb_perf.md).
#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "converter/pipeline.h"
#include "converter/tools/mapper_log.h"
#include "converter/tools/model_file.h"
#include "converter/tools/perf_report.h"
#include "schema/writer.h"

namespace {

using namespace openbpu::cvt;

bool make_dir(const std::string& d) {
  ::mkdir(d.c_str(), 0755);
  struct stat st {};
  return ::stat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ";") {
    if (c == ';' || c == ',') {
      if (!cur.empty()) out.push_back(strip_bin_suffix(cur));
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

std::string fixed(double v, int d) {
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", d, v);
  return b;
}

int analyse(const openbpu::fb::ModelT& m, const std::vector<uint8_t>& data, const std::string& name, MapperLog& log) {
  ModelPerf perf;
  std::string err;
  if (!model_perf(m, data, &perf, &err)) {
    log.error(err);
    return 1;
  }
  perf.name = name;
  const std::string dir = "hb_perf_result/" + name;
  if (!make_dir("hb_perf_result") || !make_dir(dir)) {
    log.error("cannot create " + dir);
    return 1;
  }
  if (!write_perf_report(m, perf, dir, &err)) {
    log.error(err);
    return 1;
  }
  for (const SubgraphPerf& s : perf.subgraphs)
    log.info(s.name + ": latency " + fixed(s.work.us / 1000.0, 3) + " ms, " + std::to_string(s.work.macs) + " MACs, " +
             std::to_string(s.work.loaded) + " bytes loaded, " + std::to_string(s.work.stored) + " bytes stored, " +
             std::to_string(s.fcs) + " function call(s)");
  log.info(name + ": BPU latency " + fixed(perf.bpu.us / 1000.0, 3) + " ms, estimated board latency with the CPU "
           "operators " + fixed(perf.whole_us / 1000.0, 3) + " ms (docs/timing.md)");
  if (!perf.has_layers) {
    log.warn("bpu model don't have per-layer perf info.");
    log.warn("if you need per-layer perf info please enable[compiler_parameters.debug:True] when use makertbin.");
  }
  log.info("perf result of " + name + " written to " + dir + "/" + name + ".html");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hb_perf: estimated board performance of a .bin model (no board needed)", "hb_perf"};
  app.set_version_flag("--version", std::string(kMapperVersion));
  std::string file, names;
  bool packed_flag = false;
  app.add_option("BIN_FILE", file, "the .bin model")->required();
  app.add_option("-m", names, "models of a packed file to analyse, ';'-separated (default: all)");
  app.add_flag("-p", packed_flag, "the file is packed (detected automatically; accepted for compatibility)");
  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<MapperLog> log(make_mapper_log("hb_perf.log"));
  LoadedFile lf;
  std::string err;
  if (!load_bin_argument(file, &lf, &err)) {
    log->error(err);
    return 1;
  }
  const bool packed = openbpu::model::is_packed(lf.file);
  if (packed_flag && !packed) log->warn("-p: " + file + " is not a packed file; analysing its model");
  const std::vector<std::string> wanted = split_names(names);
  for (const std::string& w : wanted)
    if (find_model(lf.file, w) == nullptr) {
      log->error("model '" + w + "' not found in this bin model");
      return 1;
    }
  int rc = 0;
  for (const auto& m : lf.file.models) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), m->name) == wanted.end()) continue;
    rc |= analyse(*m, lf.data, packed ? m->name : file_stem(file), *log);
  }
  return rc;
}
