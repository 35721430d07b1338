// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/roi_resize.h"

#include <algorithm>
#include <vector>

namespace openbpu::rt {

namespace {

constexpr int64_t kOne = 1 << 16;

std::string roi_text(const RoiBox& r) {
  return "(" + std::to_string(r.left) + ", " + std::to_string(r.top) + ", " + std::to_string(r.right) + ", " +
         std::to_string(r.bottom) + ")";
}

// Source index and weight of every output index along one axis.
struct Tap {
  int32_t i0, i1;
  int64_t f;
};

std::vector<Tap> taps(int32_t src_len, int32_t dst_len) {
  const int64_t step = resizer_step(src_len, dst_len);
  std::vector<Tap> t(static_cast<size_t>(dst_len));
  for (int32_t i = 0; i < dst_len; ++i) {
    const int64_t p = i * step;
    const int32_t i0 = static_cast<int32_t>(std::min<int64_t>(p >> 16, src_len - 1));
    t[static_cast<size_t>(i)] = {i0, std::min(i0 + 1, src_len - 1), p & (kOne - 1)};
  }
  return t;
}

Status check_steps(const RoiBox& roi, int32_t dst_h, int32_t dst_w, int32_t div, const std::string& what,
                   const char* plane) {
  const int64_t sx = resizer_step(roi.width() / div, dst_w / div), sy = resizer_step(roi.height() / div, dst_h / div);
  if (sx > kResizerMaxStep || sy > kResizerMaxStep)
    return error(kInvalidArgument, what + ": roi " + roi_text(roi) + " of " + std::to_string(roi.width()) + "x" +
                                       std::to_string(roi.height()) + " is too large for the " +
                                       std::to_string(dst_w) + "x" + std::to_string(dst_h) +
                                       " input: the resizer's " + plane + " step " + std::to_string(std::max(sx, sy)) +
                                       " exceeds " + std::to_string(kResizerMaxStep) +
                                       " (a ROI side may be at most about 4 times the input's)");
  return Status::Ok();
}

}  // namespace

ResizerLimits resizer_limits(const std::string& march) {
  if (march == "bernoulli2") return ResizerLimits{16, 255};
  return ResizerLimits{};
}

int64_t resizer_step(int32_t src_len, int32_t dst_len) {
  if (dst_len <= 1) return 0;
  return ((static_cast<int64_t>(src_len) - 1) * kOne + (dst_len - 1) / 2) / (dst_len - 1);
}

Status check_roi(const RoiBox& roi, int32_t image_h, int32_t image_w, int32_t dst_h, int32_t dst_w, bool nv12,
                 const ResizerLimits& limits, const std::string& what) {
  const std::string frame = std::to_string(image_w) + "x" + std::to_string(image_h);
  if (image_h < 2 || image_w < 2 || image_h > kResizerMaxSide || image_w > kResizerMaxSide)
    return error(kInvalidArgument, what + ": the frame is " + frame + ", the resizer takes 2x2 to " +
                                       std::to_string(kResizerMaxSide) + "x" + std::to_string(kResizerMaxSide));
  if (nv12 && (image_h % 2 != 0 || image_w % 2 != 0))
    return error(kInvalidArgument, what + ": the NV12 frame " + frame + " has an odd side");
  if (roi.left < 0 || roi.top < 0 || roi.right >= image_w || roi.bottom >= image_h || roi.left > roi.right ||
      roi.top > roi.bottom)
    return error(kInvalidArgument, what + ": roi " + roi_text(roi) + " (left, top, right, bottom) is not inside the " +
                                       frame + " frame with left <= right and top <= bottom");
  if (roi.left % 2 != 0 || roi.top % 2 != 0 || roi.right % 2 != 1 || roi.bottom % 2 != 1)
    return error(kInvalidArgument, what + ": roi " + roi_text(roi) +
                                       ": left and top must be even, right and bottom odd (even width and height)");
  if (std::min(roi.width(), roi.height()) < limits.min_roi_side ||
      std::max(roi.width(), roi.height()) > limits.max_roi_side)
    return error(kInvalidArgument, what + ": roi " + roi_text(roi) + " is " + std::to_string(roi.width()) + "x" +
                                       std::to_string(roi.height()) + ", this resizer takes ROI sides " +
                                       std::to_string(limits.min_roi_side) + " to " +
                                       std::to_string(limits.max_roi_side));
  OBPU_RETURN_IF_ERROR(check_steps(roi, dst_h, dst_w, 1, what, "Y"));
  if (nv12) OBPU_RETURN_IF_ERROR(check_steps(roi, dst_h, dst_w, 2, what, "UV"));
  return Status::Ok();
}

void resize_plane(const uint8_t* src, int64_t src_stride, int32_t x0, int32_t y0, int32_t w, int32_t h, int ch,
                  uint8_t* dst, int32_t dst_h, int32_t dst_w) {
  const std::vector<Tap> tx = taps(w, dst_w), ty = taps(h, dst_h);
  for (int32_t oy = 0; oy < dst_h; ++oy) {
    const Tap& y = ty[static_cast<size_t>(oy)];
    const uint8_t* r0 = src + (y0 + y.i0) * src_stride + static_cast<int64_t>(x0) * ch;
    const uint8_t* r1 = src + (y0 + y.i1) * src_stride + static_cast<int64_t>(x0) * ch;
    uint8_t* out = dst + static_cast<int64_t>(oy) * dst_w * ch;
    for (int32_t ox = 0; ox < dst_w; ++ox) {
      const Tap& x = tx[static_cast<size_t>(ox)];
      for (int c = 0; c < ch; ++c) {
        const int64_t a = x.i0 * ch + c, b = x.i1 * ch + c;
        const int64_t top = r0[a] * (kOne - x.f) + r0[b] * x.f;
        const int64_t bottom = r1[a] * (kOne - x.f) + r1[b] * x.f;
        out[ox * ch + c] = static_cast<uint8_t>((top * (kOne - y.f) + bottom * y.f + (int64_t{1} << 31)) >> 32);
      }
    }
  }
}

void roi_resize_image(const uint8_t* y, int64_t y_stride, const uint8_t* uv, int64_t uv_stride, const RoiBox& roi,
                      bool nv12, uint8_t* dst, int32_t dst_h, int32_t dst_w) {
  resize_plane(y, y_stride, roi.left, roi.top, roi.width(), roi.height(), 1, dst, dst_h, dst_w);
  if (nv12)
    resize_plane(uv, uv_stride, roi.left / 2, roi.top / 2, roi.width() / 2, roi.height() / 2, 2,
                 dst + static_cast<int64_t>(dst_h) * dst_w, dst_h / 2, dst_w / 2);
}

}  // namespace openbpu::rt
