// SPDX-License-Identifier: Apache-2.0
// A synthetic NV12 frame for the resizer (ROI) tests of both generations.
#ifndef OPENBPU_TESTS_COMMON_NV12_FRAME_H_
#define OPENBPU_TESTS_COMMON_NV12_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace openbpu::testing {

// Tight NV12 (h rows of Y, then h/2 rows of interleaved U/V) with gradients
// and texture, so that resampling errors show.
inline std::vector<uint8_t> make_nv12_frame(int h, int w) {
  std::vector<uint8_t> f(static_cast<size_t>(h) * w * 3 / 2);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) f[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>((x * 2 + y * 3 + (x * y) % 7) & 255);
  for (int y = 0; y < h / 2; ++y)
    for (int x = 0; x < w; ++x)
      f[static_cast<size_t>(h + y) * w + x] = static_cast<uint8_t>(x % 2 ? 128 + y - x / 4 : 100 + x / 2 - y);
  return f;
}

}  // namespace openbpu::testing

#endif  // OPENBPU_TESTS_COMMON_NV12_FRAME_H_
