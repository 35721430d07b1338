// SPDX-License-Identifier: Apache-2.0
// fuzz_converter_replay: runs corpus files through the converter's fuzz
// entries (fuzz_converter.cc) without libFuzzer, with any compiler.
//   --onnx DIR|FILE...          ONNX models: no crash, no exception
//   --onnx-ok DIR|FILE...       ONNX models that must import and pass shape inference
//   --onnx-refused DIR|FILE...  ONNX models that must be refused
//   --yaml, --yaml-ok, --yaml-refused: the same for yaml configs (ok: parse
//   and validate against the fixture model)
// With --mutate N, each ONNX file is also run through N structure-aware
// mutations (seeds 0..N-1), deterministic; OPENBPU_FUZZ_SAVE_MUTANT=DIR
// writes each mutant to DIR/mutant.onnx before running it (crash triage).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/fuzz/corpus_files.h"
#include "tests/fuzz/fuzz_converter.h"

namespace {

namespace fz = openbpu::fuzz;

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

const char* stage_name(fz::Stage s) {
  switch (s) {
    case fz::Stage::kUnparsed: return "unparsed";
    case fz::Stage::kRefused: return "refused";
    case fz::Stage::kImported: return "imported";
    default: return "accepted";
  }
}

}  // namespace

int main(int argc, char** argv) {
  fz::converter_init();
  const char* save_dir = std::getenv("OPENBPU_FUZZ_SAVE_MUTANT");
  std::string mode;
  int mutations = 0, failures = 0, runs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mutate" && i + 1 < argc) {
      mutations = std::atoi(argv[++i]);
      continue;
    }
    if (a.rfind("--", 0) == 0) {
      mode = a;
      continue;
    }
    for (const auto& file : openbpu::fuzz::corpus_files(a)) {
      const std::string bytes = read(file);
      const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
      const bool onnx = mode.rfind("--onnx", 0) == 0;
      const fz::Stage s = onnx ? fz::onnx_import_one(p, bytes.size()) : fz::yaml_config_one(p, bytes.size());
      ++runs;
      const bool must_pass = mode == "--onnx-ok" || mode == "--yaml-ok";
      const bool must_fail = mode == "--onnx-refused" || mode == "--yaml-refused";
      if ((must_pass && s != fz::Stage::kInferred) || (must_fail && s == fz::Stage::kInferred)) {
        std::printf("FAIL %s: %s, expected %s (%s)\n", file.c_str(), stage_name(s),
                    must_pass ? "accepted" : "refused", must_pass ? fz::last_error().c_str() : "");
        ++failures;
      }
      if (!onnx) continue;
      std::vector<uint8_t> buf(bytes.size() * 2 + 4096);
      for (int seed = 0; seed < mutations; ++seed) {
        std::copy(bytes.begin(), bytes.end(), buf.begin());
        const size_t n = fz::onnx_mutate(buf.data(), bytes.size(), buf.size(), static_cast<unsigned>(seed));
        if (n == 0) continue;
        if (save_dir != nullptr)  // (to triage a crash: the mutated model before it runs)
          std::ofstream(std::string(save_dir) + "/mutant.onnx", std::ios::binary)
              .write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(n));
        fz::onnx_import_one(buf.data(), n);
        ++runs;
      }
    }
  }
  std::printf("%d inputs run, %d failure(s)\n", runs, failures);
  return failures ? 1 : 0;
}
