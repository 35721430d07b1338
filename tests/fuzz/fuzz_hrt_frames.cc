// SPDX-License-Identifier: Apache-2.0
// Fuzz entry of hrt_server's frame parser and request checks: the bytes are
// fed to a FrameParser in pieces (sizes taken from the data), every frame is
// decoded, checked and, when accepted, read field by field as the server
// reads it. Built as the libFuzzer target fuzz_hrt_frames
// (OPENBPU_BUILD_FUZZ) and replayed by hrt_frames_replay in every build.
#include "tests/fuzz/fuzz_hrt_frames.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hrt_server/protocol.h"

namespace openbpu::fuzz {

namespace {

[[noreturn]] void violation(const char* what) {
  std::fprintf(stderr, "contract violation: %s\n", what);
  std::abort();
}

// Reads what the server reads of an accepted request.
size_t touch(const tools::wire::Message& m) {
  using namespace tools::wire;
  size_t n = 0;
  switch (m.body_type()) {
    case Body::Hello: n += m.body_as_Hello()->token()->size(); break;
    case Body::Query: n += m.body_as_Query()->sha256()->size(); break;
    case Body::Upload: {
      const Upload* u = m.body_as_Upload();
      n += u->sha256()->size() + (u->data() ? u->data()->size() : 0);
      if (u->offset() > u->total_size()) violation("upload offset beyond total accepted");
      break;
    }
    case Body::Run: {
      const Run* r = m.body_as_Run();
      n += r->mode()->size();
      for (const auto* h : *r->models()) {
        if (!is_sha256_hex(h->str())) violation("bad model hash accepted");
        ++n;
      }
      if (r->inputs())
        for (const auto* in : *r->inputs()) {
          const std::string name = in->name()->str();
          if (name.find('/') != std::string::npos || name == "." || name == "..") violation("path in a file name");
          n += in->sha256()->size();
        }
      if (r->model_names()) {
        if (r->model_names()->size() != r->models()->size()) violation("model names without their models accepted");
        for (const auto* s : *r->model_names()) {
          const std::string name = s->str();
          if (name.find('/') != std::string::npos || name == "." || name == "..") violation("path in a model name");
        }
      }
      if (r->options())
        for (const auto* o : *r->options()) n += o->name()->size() + o->value()->size();
      break;
    }
    default: break;
  }
  return n;
}

}  // namespace

FrameStats run_frames(const uint8_t* data, size_t size) {
  FrameStats st;
  tools::wire::FrameParser parser;
  size_t pos = 0;
  uint8_t step_seed = size > 0 ? data[0] : 1;
  while (pos < size) {
    const size_t step = std::min<size_t>(size - pos, 1 + (step_seed = static_cast<uint8_t>(step_seed * 33 + 7)) % 97);
    const bool ok = parser.feed(data + pos, step);
    pos += step;
    std::string payload;
    while (parser.next(&payload)) {
      if (payload.empty() || payload.size() > tools::wire::kMaxFrame) violation("frame size outside the limit");
      ++st.frames;
      std::string error;
      const tools::wire::Message* m = tools::wire::decode(payload, &error);
      if (m == nullptr) continue;
      ++st.decoded;
      if (!tools::wire::check_request(*m, &error)) continue;
      ++st.accepted;
      st.touched += touch(*m);
    }
    if (!ok) {
      if (parser.error().empty()) violation("feed failed without an error");
      st.rejected = true;
      break;
    }
  }
  return st;
}

}  // namespace openbpu::fuzz

#ifdef OPENBPU_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  openbpu::fuzz::run_frames(data, size);
  return 0;
}
#endif
