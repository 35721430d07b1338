// SPDX-License-Identifier: Apache-2.0
// fuzz_replay: runs corpus files through the fuzz entry (fuzz_model_loader.cc)
// without libFuzzer, with any compiler.
//   fuzz_replay --accept DIR|FILE...   every file must load and every model run
//   fuzz_replay --reject DIR|FILE...   every file must fail to load with an error code
// A crash, a sanitizer report or a contract violation inside the entry aborts
// the process, which fails the test too.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dnn/hb_dnn_status.h"
#include "schema/writer.h"
#include "tests/fuzz/fuzz_model_loader.h"

namespace {

// The files of a directory (sorted), or the path itself when it is a file.
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (FILE* f = std::fopen(dir.c_str(), "rb")) {
      std::fclose(f);
      out.push_back(dir);
    }
    return out;
  }
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || name[0] == '.' || name == "README.md") continue;
    out.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  openbpu::fuzz::init(/*known_bug_filters=*/false);
  bool accept = true;
  int files = 0, failures = 0;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--accept" || arg == "--reject") {
      accept = arg == "--accept";
      continue;
    }
    const std::vector<std::string> paths = files_in(arg);
    if (paths.empty()) {
      std::fprintf(stderr, "fuzz_replay: no files in %s\n", arg.c_str());
      ++failures;
    }
    for (const auto& path : paths) {
      std::vector<uint8_t> bytes;
      std::string err;
      if (!openbpu::model::read_file(path, &bytes, &err)) {
        std::fprintf(stderr, "fuzz_replay: %s\n", err.c_str());
        ++failures;
        continue;
      }
      ++files;
      const openbpu::fuzz::Result r = openbpu::fuzz::run_one(bytes.data(), bytes.size());
      bool ok;
      if (accept) {
        ok = r.load_rc == HB_DNN_SUCCESS && r.skipped == 0 && r.inferred == r.models &&
             r.infer_rc == HB_DNN_SUCCESS;
      } else {
        ok = r.load_rc != HB_DNN_SUCCESS;
      }
      std::printf("%s %s: load %d (%s), %d model(s), %d run, %d skipped, infer %d\n", ok ? "ok  " : "FAIL",
                  path.c_str(), r.load_rc, hbDNNGetErrorDesc(r.load_rc), r.models, r.inferred, r.skipped,
                  r.infer_rc);
      failures += ok ? 0 : 1;
    }
  }
  std::printf("fuzz_replay: %d file(s), %d failure(s)\n", files, failures);
  return failures == 0 ? 0 : 1;
}
