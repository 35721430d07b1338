// SPDX-License-Identifier: Apache-2.0
// hrt_model_exec's input readers under the fuzzer (issue 15,
// docs/robustness.md): the input's first byte picks the file suffix (bin,
// txt, png, jpg), the second the model input it feeds (float or int8
// tensor, NV12, RGB, Y, BGR image, or an NV12 resizer input that keeps the
// image size); the rest is the file. load_inputs must accept it with exactly
// the input's size or refuse it with a logged error; a crash, an escaped
// exception or (ASan/UBSan) a memory error is a finding.
//
// Built from this file: the replay test fuzz_replay_hrt_inputs (seeds in
// hrt_inputs_corpus/, Release) and fuzz_replay_hrt_inputs_asan (ASan + UBSan
// build of the readers inside the x86 build), and with OPENBPU_LIBFUZZER the
// libFuzzer target fuzz_hrt_inputs.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "hrt_tools/hrt_model_exec/input_data.h"
#include "tests/fuzz/corpus_files.h"

namespace {

using namespace openbpu::tools;  // NOLINT

std::string g_dir;

ModelDesc model(uint8_t pick, bool* resizer) {
  struct Kind {
    int32_t type;
    int32_t layout;
    int32_t dims[4];
    ImageKind kind;
  };
  static const Kind kKinds[] = {
      {HB_DNN_TENSOR_TYPE_F32, HB_DNN_LAYOUT_NCHW, {1, 3, 8, 8}, ImageKind::kNone},
      {HB_DNN_TENSOR_TYPE_S8, HB_DNN_LAYOUT_NHWC, {1, 8, 8, 3}, ImageKind::kNone},
      {HB_DNN_IMG_TYPE_NV12, HB_DNN_LAYOUT_NCHW, {1, 3, 16, 16}, ImageKind::kNV12},
      {HB_DNN_IMG_TYPE_RGB, HB_DNN_LAYOUT_NHWC, {1, 16, 16, 3}, ImageKind::kRGB},
      {HB_DNN_IMG_TYPE_Y, HB_DNN_LAYOUT_NCHW, {1, 1, 16, 16}, ImageKind::kY},
      {HB_DNN_IMG_TYPE_BGR, HB_DNN_LAYOUT_NCHW, {2, 3, 16, 16}, ImageKind::kBGR},
      {HB_DNN_IMG_TYPE_NV12, HB_DNN_LAYOUT_NCHW, {1, 3, 16, 16}, ImageKind::kNV12},  // resizer
  };
  constexpr size_t kCount = sizeof(kKinds) / sizeof(kKinds[0]);
  const size_t k = pick % kCount;
  *resizer = k == kCount - 1;
  const Kind& c = kKinds[k];
  hbDNNTensorProperties p{};
  p.tensorType = c.type;
  p.tensorLayout = c.layout;
  p.validShape.numDimensions = 4;
  for (int d = 0; d < 4; ++d) p.validShape.dimensionSize[d] = c.dims[d];
  p.alignedShape = p.validShape;
  ModelDesc m;
  m.name = "fuzz";
  m.inputs = {p};
  m.input_names = {"data"};
  m.input_sources = {0};
  m.input_resizer = {*resizer};
  m.input_kinds = {c.kind};
  return m;
}

void run_one(const uint8_t* data, size_t size) {
  if (size < 2) return;
  static const char* kSuffix[] = {"bin", "txt", "png", "jpg"};
  const std::string file = g_dir + "/input." + kSuffix[data[0] % 4];
  {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data + 2), static_cast<std::streamsize>(size - 2));
  }
  bool resizer = false;
  const ModelDesc m = model(data[1], &resizer);
  std::vector<InputData> out;
  const bool ok = load_inputs(m, {file}, resizer, &out);
  if (!ok) return;
  // Accepted: exactly what the input takes (a resizer input: the frame size
  // it was given, NV12).
  const int64_t need = tight_byte_size(out.at(0).props);
  if (out.size() != 1 || need <= 0 || static_cast<int64_t>(out[0].bytes.size()) != need) {
    std::fprintf(stderr, "accepted input of %zu bytes, the input takes %lld\n", out.at(0).bytes.size(),
                 static_cast<long long>(need));
    std::abort();
  }
}

void init() {
  char tmpl[] = "/tmp/obpu_fuzz_hrt_inputs_XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  if (d == nullptr) std::abort();
  g_dir = d;
  std::atexit([] {
    for (const char* s : {"bin", "txt", "png", "jpg"}) ::unlink((g_dir + "/input." + s).c_str());
    ::rmdir(g_dir.c_str());
  });
}

}  // namespace

#ifdef OPENBPU_LIBFUZZER

OPENBPU_LIBFUZZER_ENTRY(init, run_one)

#else

// fuzz_hrt_inputs_replay DIR...: every file of every DIR; then every seed
// again with each suffix and input kind.
int main(int argc, char** argv) {
  init();
  size_t files = 0;
  for (int a = 1; a < argc; ++a)
    for (const std::string& path : openbpu::fuzz::corpus_files(argv[a])) {
      std::vector<uint8_t> bytes = openbpu::fuzz::read_bytes(path);
      if (bytes.size() < 2) continue;
      for (int s = 0; s < 4; ++s)
        for (int k = 0; k < 7; ++k) {
          bytes[0] = static_cast<uint8_t>(s);
          bytes[1] = static_cast<uint8_t>(k);
          run_one(bytes.data(), bytes.size());
        }
      ++files;
    }
  if (files == 0) {
    std::fprintf(stderr, "no corpus files\n");
    return 1;
  }
  std::printf("%zu corpus files ran, each with every suffix and input kind\n", files);
  return 0;
}

#endif
