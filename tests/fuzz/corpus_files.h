// SPDX-License-Identifier: Apache-2.0
// Corpus folders of the replay tests, and the libFuzzer entry points of a
// target built from the same file (header only).
#ifndef OPENBPU_TESTS_FUZZ_CORPUS_FILES_H_
#define OPENBPU_TESTS_FUZZ_CORPUS_FILES_H_

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

namespace openbpu::fuzz {

// The files of a folder, sorted, without hidden files and README.md; the
// path itself when it is not a folder.
inline std::vector<std::string> corpus_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {dir};
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name[0] == '.' || name == "README.md") continue;
    out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace openbpu::fuzz

// libFuzzer's entry points: init() once, run(data, size) per input.
#define OPENBPU_LIBFUZZER_ENTRY(init, run)                                   \
  extern "C" int LLVMFuzzerInitialize(int*, char***) {                       \
    init();                                                                  \
    return 0;                                                                \
  }                                                                          \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    run(data, size);                                                         \
    return 0;                                                                \
  }

#endif  // OPENBPU_TESTS_FUZZ_CORPUS_FILES_H_
