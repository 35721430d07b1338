// SPDX-License-Identifier: Apache-2.0
// The resizer: what the board's resizer does to an input compiled with
// `input_source: resizer` -- crop a region of interest out of a whole NV12
// (or gray) frame in memory and scale it bilinearly to the model's input
// size -- and the limits a ROI must meet. The one home of this rule for both
// API generations (libdnn 1.x hbDNNRoiInfer, the UCP runtime's Y + UV + roi
// inputs); docs/numerics.md section 19 states it in words.
//
// The rule, per plane (Y: one channel; UV: two interleaved channels, the ROI
// halved), each axis on its own, in 16.16 fixed point:
//   step  = ((src_len - 1) * 65536 + (dst_len - 1) / 2) / (dst_len - 1)
//           (0 when dst_len == 1), integer division;
//   for output index i: p = i * step, i0 = min(p >> 16, src_len - 1),
//           i1 = min(i0 + 1, src_len - 1), f = p & 0xFFFF;
//   out = (((s00 * (65536 - fx) + s01 * fx) * (65536 - fy) +
//           (s10 * (65536 - fx) + s11 * fx) * fy) + 2^31) >> 32
// where s00, s01 are the pixels (y0, x0), (y0, x1) and s10, s11 (y1, x0),
// (y1, x1) of the crop. Corners map to corners (align-corners sampling).
#ifndef OPENBPU_RUNTIME_CORE_ROI_RESIZE_H_
#define OPENBPU_RUNTIME_CORE_ROI_RESIZE_H_

#include <cstdint>
#include <string>

#include "runtime/core/status.h"

namespace openbpu::rt {

// A region of interest in frame pixels, inclusive corners (hbDNNRoi; the
// UCP roi tensor's int32 left, top, right, bottom).
struct RoiBox {
  int32_t left = 0, top = 0, right = 0, bottom = 0;
  int32_t width() const { return right - left + 1; }
  int32_t height() const { return bottom - top + 1; }
};

// Limits of the resizer (HBDNN_API.md 9.9, the documented resizer rules of
// the 1.x generation, kept for the UCP one): frame sides and ROI sides up to
// 4096 pixels, steps up to 262143 (a ROI side at most about 4x the input's).
inline constexpr int32_t kResizerMaxSide = 4096;
inline constexpr int64_t kResizerMaxStep = 262143;
// A frame's row stride (libdnn 1.x: the alignedShape W of the frame
// tensor): the frame's width (tight rows) or a multiple of 16 up to this.
inline constexpr int64_t kResizerMaxRowStride = 131072;
inline constexpr int64_t kResizerRowAlign = 16;

// The ROI sides a march's resizer takes: RDK X3 (bernoulli2) 16..255, the
// others (Ultra's documented rule, also used for X5 and the UCP marches)
// 2..4096. HBDNN_API.md 9.9.
struct ResizerLimits {
  int32_t min_roi_side = 2, max_roi_side = kResizerMaxSide;
};
ResizerLimits resizer_limits(const std::string& march);

// The 16.16 step from src_len source pixels to dst_len output pixels.
int64_t resizer_step(int32_t src_len, int32_t dst_len);

// Whether `roi` may be resized from an image_h x image_w frame to a dst_h x
// dst_w input (nv12: the UV plane's steps too): the frame even-sized (NV12)
// and at most 4096 x 4096; the ROI inside it with even left and top and odd
// right and bottom (even width and height), its sides within `limits`;
// every step at most kResizerMaxStep. kInvalidArgument naming `what` and
// the broken rule.
Status check_roi(const RoiBox& roi, int32_t image_h, int32_t image_w, int32_t dst_h, int32_t dst_w, bool nv12,
                 const ResizerLimits& limits, const std::string& what);

// One plane: the crop of w x h pixels at (x0, y0) of `src` (row stride
// src_stride bytes, ch interleaved channels) to dst_h x dst_w pixels of dst
// (tight rows of dst_w * ch bytes), by the rule above.
void resize_plane(const uint8_t* src, int64_t src_stride, int32_t x0, int32_t y0, int32_t w, int32_t h, int ch,
                  uint8_t* dst, int32_t dst_h, int32_t dst_w);

// A checked ROI of a frame (Y plane, and UV plane for nv12) to the model's
// image input: dst_h x dst_w Y bytes, then for nv12 dst_h / 2 rows of dst_w
// interleaved UV bytes.
void roi_resize_image(const uint8_t* y, int64_t y_stride, const uint8_t* uv, int64_t uv_stride, const RoiBox& roi,
                      bool nv12, uint8_t* dst, int32_t dst_h, int32_t dst_w);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CORE_ROI_RESIZE_H_
