// SPDX-License-Identifier: Apache-2.0
// hrt_server's frame parser fuzz entry (fuzz_hrt_frames.cc).
#ifndef OPENBPU_TESTS_FUZZ_FUZZ_HRT_FRAMES_H_
#define OPENBPU_TESTS_FUZZ_FUZZ_HRT_FRAMES_H_

#include <cstddef>
#include <cstdint>

namespace openbpu::fuzz {

struct FrameStats {
  int frames = 0;     // complete frames
  int decoded = 0;    // that passed the flatbuffers verifier
  int accepted = 0;   // that passed check_request
  bool rejected = false;  // the stream was refused (oversized / empty frame)
  size_t touched = 0;
};

// Aborts on a contract violation of the parser or of check_request.
FrameStats run_frames(const uint8_t* data, size_t size);

}  // namespace openbpu::fuzz

#endif  // OPENBPU_TESTS_FUZZ_FUZZ_HRT_FRAMES_H_
