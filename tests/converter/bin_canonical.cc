// SPDX-License-Identifier: Apache-2.0
// openbpu_bin_canonical IN.bin OUT.bin [PREFIX=TOKEN ...]
//
// Writes the model file IN.bin again with every occurrence of each PREFIX in
// its metadata values and config yaml replaced by TOKEN, so that .bin files
// built in different directories (hb_mapper records absolute paths of the
// model, the calibration data and the working directory) can be compared
// byte for byte. Everything else (BPU programs, constants, tensors,
// quantization, CPU operators) is carried over unchanged, in the writer's
// canonical layout. Used by tests/converter/e2e/bin_identity.py.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "schema/writer.h"

namespace {

void replace_all(std::string* s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t p = s->find(from); p != std::string::npos; p = s->find(from, p + to.size()))
    s->replace(p, from.size(), to);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace openbpu;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s IN.bin OUT.bin [PREFIX=TOKEN ...]\n", argv[0]);
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> subst;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "bad substitution '%s' (PREFIX=TOKEN)\n", argv[i]);
      return 2;
    }
    subst.emplace_back(a.substr(0, eq), a.substr(eq + 1));
  }
  std::string err;
  std::vector<uint8_t> bytes, data;
  fb::ModelFileT file;
  if (!model::read_file(argv[1], &bytes, &err) ||
      !model::unpack_model_file(bytes.data(), bytes.size(), &file, &data, &err)) {
    std::fprintf(stderr, "%s: %s\n", argv[1], err.c_str());
    return 1;
  }
  model::ModelFileWriter writer;
  for (auto& m : file.models) {
    for (const auto& [from, to] : subst) {
      for (auto& kv : m->metadata) replace_all(&kv->value, from, to);
      replace_all(&m->config_yaml, from, to);
    }
    if (!model::relocate_blobs(m.get(), data, &writer, &err)) {
      std::fprintf(stderr, "%s: %s\n", argv[1], err.c_str());
      return 1;
    }
  }
  if (!model::write_file_atomic(argv[2], writer.finish(&file), &err)) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  return 0;
}
