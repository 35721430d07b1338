// SPDX-License-Identifier: Apache-2.0
// vec_diff [-o OUTPUT_FILE] LEFT RIGHT: compares two float32 vector files,
// or every pair of equally named .bin files of two dump folders
// (docs/vec_diff.md).
#include <CLI/CLI.hpp>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "converter/pipeline.h"
#include "converter/tools/mapper_log.h"
#include "converter/tools/vec_diff.h"

namespace {

using namespace openbpu::cvt;

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string base_name(const std::string& p) {
  const size_t s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// The .bin files of a folder by pairing key; keys held by two files are
// ambiguous and dropped (with a warning).
std::map<std::string, std::string> dump_files(const std::string& dir, MapperLog& log) {
  std::map<std::string, std::string> files;
  std::set<std::string> ambiguous;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() < 5 || name.compare(name.size() - 4, 4, ".bin") != 0 || !is_file(dir + "/" + name)) continue;
      const std::string key = pairing_key(name);
      if (!files.emplace(key, name).second) ambiguous.insert(key);
    }
    ::closedir(d);
  }
  for (const std::string& k : ambiguous) {
    log.warn(dir + ": more than one file pairs as '" + k + "'; skipped");
    files.erase(k);
  }
  return files;
}

// Pairs in execution order: the left folder's execution_order.txt, then the
// right one's, then the remaining pairs by name.
std::vector<std::string> ordered_keys(const std::string& left, const std::string& right,
                                      const std::set<std::string>& keys) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& dir : {left, right})
    for (const std::string& f : execution_order(dir)) {
      const std::string k = pairing_key(f);
      if (keys.count(k) && seen.insert(k).second) out.push_back(k);
    }
  for (const std::string& k : keys)
    if (seen.insert(k).second) out.push_back(k);
  return out;
}

struct Row {
  std::string left, right;
  VecDiff d;
};

void print_rows(const std::vector<Row>& rows, const std::string& lh, const std::string& rh, MapperLog& log) {
  size_t wl = lh.size(), wr = rh.size();
  for (const Row& r : rows) {
    wl = std::max(wl, r.left.size());
    wr = std::max(wr, r.right.size());
  }
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%-*s  %-*s  %-17s  %-27s  %-18s  %s", static_cast<int>(wl), lh.c_str(),
                static_cast<int>(wr), rh.c_str(), "Cosine Similarity", "Relative Euclidean Distance",
                "Max Absolute Error", "Mean Square Error");
  log.info(buf);
  for (const Row& r : rows) {
    std::snprintf(buf, sizeof(buf), "%-*s  %-*s  %-17.6f  %-27.6g  %-18.6g  %.6g", static_cast<int>(wl),
                  r.left.c_str(), static_cast<int>(wr), r.right.c_str(), r.d.cosine, r.d.rel_euclidean, r.d.max_abs,
                  r.d.mse);
    log.info(buf);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vec_diff: compare float32 vectors (files, or the equally named .bin files of two folders)",
               "vec_diff"};
  app.set_version_flag("--version", std::string(kMapperVersion));
  std::string left, right, out = "vec_diff_result.csv";
  app.add_option("LEFT", left, "file or folder (the reference side)")->required();
  app.add_option("RIGHT", right, "file or folder")->required();
  app.add_option("-o,--output-file", out, "CSV result file")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<MapperLog> log(make_mapper_log("vec_diff.log"));

  std::vector<std::pair<std::string, std::string>> pairs;  // paths
  if (is_dir(left) && is_dir(right)) {
    const auto lf = dump_files(left, *log), rf = dump_files(right, *log);
    std::set<std::string> keys;
    for (const auto& [k, f] : lf) {
      if (rf.count(k)) keys.insert(k);
      else log->warn("only in " + left + ": " + f);
    }
    for (const auto& [k, f] : rf)
      if (!lf.count(k)) log->warn("only in " + right + ": " + f);
    for (const std::string& k : ordered_keys(left, right, keys))
      pairs.push_back({left + "/" + lf.at(k), right + "/" + rf.at(k)});
  } else if (is_file(left) && is_file(right)) {
    pairs.push_back({left, right});
  } else {
    log->error("LEFT and RIGHT must be two files or two folders: " + left + " is " +
               (is_dir(left) ? "a folder" : is_file(left) ? "a file" : "missing") + ", " + right + " is " +
               (is_dir(right) ? "a folder" : is_file(right) ? "a file" : "missing"));
    return 1;
  }

  std::vector<Row> rows;
  for (const auto& [a, b] : pairs) {
    std::vector<float> va, vb;
    std::string why;
    Row r{base_name(a), base_name(b), {}};
    if (!read_floats(a, &va, &why) || !read_floats(b, &vb, &why) || !compare_vectors(va, vb, &r.d, &why)) {
      log->warn(r.left + " vs " + r.right + ": skipped, " + why);
      continue;
    }
    rows.push_back(r);
  }
  if (rows.empty()) {
    log->error("no pair of vectors could be compared");
    return 1;
  }
  print_rows(rows, "Left Files", "Right Files", *log);
  std::ofstream csv(out);
  csv << "Left Files,Right Files,Cosine Similarity,Relative Euclidean Distance,Max Absolute Error,Mean Square Error\n";
  char buf[128];
  for (const Row& r : rows) {
    std::snprintf(buf, sizeof(buf), ",%.9g,%.9g,%.9g,%.9g\n", r.d.cosine, r.d.rel_euclidean, r.d.max_abs, r.d.mse);
    csv << r.left << "," << r.right << buf;
  }
  csv.close();
  if (!csv) {
    log->error("cannot write " + out);
    return 1;
  }
  log->info(std::to_string(rows.size()) + " pair(s) compared, " + std::to_string(pairs.size() - rows.size()) +
            " skipped; result written to " + out);
  return 0;
}
