// SPDX-License-Identifier: Apache-2.0
// hrt_frames_replay: runs the committed corpus of byte streams through the
// hrt_server frame fuzz entry (fuzz_hrt_frames.cc) with any compiler.
//   hrt_frames_replay DIR|FILE...      every file must run without a violation
//   hrt_frames_replay --generate DIR   writes the seed corpus (valid requests,
//                                      several per stream, truncated,
//                                      oversized, corrupted and random ones)
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "hrt_server/protocol.h"
#include "tests/fuzz/fuzz_hrt_frames.h"

namespace {

using namespace openbpu::tools::wire;

std::string finish(flatbuffers::FlatBufferBuilder& b, Body type, flatbuffers::Offset<void> body) {
  b.Finish(CreateMessage(b, type, body), MessageIdentifier());
  return frame(b);
}

std::vector<std::pair<std::string, std::string>> seeds() {
  const std::string sha(64, 'a');
  std::vector<std::pair<std::string, std::string>> out;
  flatbuffers::FlatBufferBuilder b1;
  const std::string hello =
      finish(b1, Body::Hello, CreateHello(b1, kProtocol, b1.CreateString("0123456789abcdef"), b1.CreateString("seed")).Union());
  flatbuffers::FlatBufferBuilder b2;
  const std::string info = finish(b2, Body::InfoRequest, CreateInfoRequest(b2).Union());
  flatbuffers::FlatBufferBuilder b3;
  const std::string query = finish(b3, Body::Query, CreateQuery(b3, b3.CreateString(sha)).Union());
  flatbuffers::FlatBufferBuilder b4;
  const std::vector<uint8_t> data(100, 7);
  const std::string upload =
      finish(b4, Body::Upload, CreateUpload(b4, b4.CreateString(sha), 300, 100, b4.CreateVector(data)).Union());
  flatbuffers::FlatBufferBuilder b5;
  const auto opt = CreateOption(b5, b5.CreateString("frame_count"), b5.CreateString("3"));
  const auto in = CreateInputFile(b5, b5.CreateString(sha), b5.CreateString("input.bin"));
  const std::string run = finish(
      b5, Body::Run,
      CreateRun(b5, b5.CreateString("infer"), b5.CreateVector(std::vector<flatbuffers::Offset<Option>>{opt}),
                b5.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>{b5.CreateString(sha)}),
                b5.CreateVector(std::vector<flatbuffers::Offset<InputFile>>{in}), true,
                b5.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>{b5.CreateString("m.hbm")}))
          .Union());
  flatbuffers::FlatBufferBuilder b6;
  const auto bad_in = CreateInputFile(b6, b6.CreateString(sha), b6.CreateString("../escape"));
  const std::string bad_run = finish(
      b6, Body::Run,
      CreateRun(b6, b6.CreateString("perf"), 0,
                b6.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>{b6.CreateString("XYZ")}),
                b6.CreateVector(std::vector<flatbuffers::Offset<InputFile>>{bad_in}), false,
                b6.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>{b6.CreateString("../m.hbm")}))
          .Union());
  out.push_back({"hello", hello});
  out.push_back({"session", hello + info + query + upload + run});
  out.push_back({"bad_run", hello + bad_run});
  out.push_back({"error_frame", error_frame(kBadRequest, "x")});
  out.push_back({"truncated", (hello + run).substr(0, hello.size() + run.size() / 2)});
  out.push_back({"oversized", std::string("\xff\xff\xff\x7f", 4) + "abc"});
  out.push_back({"empty_frame", std::string(4, '\0') + hello});
  std::string corrupt = hello + run;
  for (size_t k = 10; k < corrupt.size(); k += 13) corrupt[k] = static_cast<char>(corrupt[k] ^ 0x5a);
  out.push_back({"corrupted", corrupt});
  std::mt19937 rng(42);
  for (int k = 0; k < 4; ++k) {
    std::string r(64 + rng() % 512, '\0');
    for (char& c : r) c = static_cast<char>(rng());
    out.push_back({"random_" + std::to_string(k), r});
  }
  return out;
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return {dir};
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.' && std::string(e->d_name) != "README.md") out.push_back(dir + "/" + e->d_name);
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--generate") {
    for (const auto& [name, bytes] : seeds()) {
      FILE* f = std::fopen((std::string(argv[2]) + "/" + name + ".bin").c_str(), "wb");
      if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) return 1;
    }
    return 0;
  }
  int files = 0, frames = 0, accepted = 0;
  for (int i = 1; i < argc; ++i)
    for (const std::string& path : files_in(argv[i])) {
      FILE* f = std::fopen(path.c_str(), "rb");
      if (f == nullptr) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        return 1;
      }
      std::string bytes;
      char buf[65536];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.append(buf, n);
      std::fclose(f);
      const auto st = openbpu::fuzz::run_frames(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++files;
      frames += st.frames;
      accepted += st.accepted;
    }
  std::printf("%d file(s), %d frame(s), %d accepted request(s)\n", files, frames, accepted);
  return files > 0 ? 0 : 1;
}
