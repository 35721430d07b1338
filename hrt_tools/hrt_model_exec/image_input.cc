// SPDX-License-Identifier: Apache-2.0
// Image files as model input. Needs OpenCV (CMake option OPENBPU_WITH_OPENCV);
// board builds have none and report a clear error instead. The conversion is
// the one of the vendor tool and samples: OpenCV decode (BGR), bilinear
// resize to the input's valid H x W, BGR -> I420 -> NV12 for NV12 inputs.
#include <cstring>

#include "input_data.h"
#include "log.h"

#ifdef OPENBPU_WITH_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace openbpu::tools {

#ifdef OPENBPU_WITH_OPENCV

namespace {

// Interleaves the U and V planes of an I420 image into NV12's UV plane.
void i420_to_nv12(const cv::Mat& i420, int h, int w, uint8_t* dst) {
  const uint8_t* src = i420.ptr<uint8_t>();
  const size_t y_size = static_cast<size_t>(h) * w;
  const size_t c_size = y_size / 4;
  std::memcpy(dst, src, y_size);
  const uint8_t* u = src + y_size;
  const uint8_t* v = u + c_size;
  uint8_t* uv = dst + y_size;
  for (size_t k = 0; k < c_size; ++k) {
    uv[2 * k] = u[k];
    uv[2 * k + 1] = v[k];
  }
}

// Packs an 8-bit 3-channel image as HWC (NHWC inputs) or CHW (NCHW inputs).
void pack_3ch(const cv::Mat& img, bool nhwc, uint8_t* dst) {
  const int h = img.rows, w = img.cols;
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = img.ptr<uint8_t>(y);
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        const size_t at = nhwc ? (static_cast<size_t>(y) * w + x) * 3 + c
                               : (static_cast<size_t>(c) * h + y) * w + x;
        dst[at] = row[x * 3 + c];
      }
  }
}

}  // namespace

bool load_image(const std::string& file, int index, const std::string& name, ImageKind kind, bool keep_size,
                InputData* data) {
  hbDNNTensorProperties& p = data->props;
  int h = 0, w = 0;
  if (kind == ImageKind::kNone || !image_size(p, kind, &h, &w)) {
    log_error(
        "image file '%s' given for input[%d] '%s' of type %s: images feed image inputs "
        "(NV12, Y, RGB, BGR, YUV444, or the Y/UV planes of NV12) only; give a .bin or .txt file",
        file.c_str(), index, name.c_str(), data_type_name(p.tensorType));
    return false;
  }
  cv::Mat img = cv::imread(file, cv::IMREAD_COLOR);
  if (img.empty()) {
    log_error("cannot read image file '%s' (missing or not a decodable image)", file.c_str());
    return false;
  }
  const bool nv12 = kind == ImageKind::kNV12 || kind == ImageKind::kPlaneY || kind == ImageKind::kPlaneUV;
  if (keep_size) {
    // A resizer input reads the whole frame; NV12 needs even sizes.
    h = nv12 ? img.rows & ~1 : img.rows;
    w = nv12 ? img.cols & ~1 : img.cols;
    if (h < 2 || w < 2) {
      log_error("image file '%s' is too small (%dx%d)", file.c_str(), img.cols, img.rows);
      return false;
    }
    img = img(cv::Rect(0, 0, w, h)).clone();
    set_image_size(&p, kind, h, w);
  } else if (img.rows != h || img.cols != w) {
    log_info("resize image '%s' from %dx%d to %dx%d (input[%d] '%s' valid shape)", file.c_str(),
             img.cols, img.rows, w, h, index, name.c_str());
    cv::Mat resized;
    cv::resize(img, resized, cv::Size(w, h));
    img = resized;
  }
  if (nv12 && (h % 2 != 0 || w % 2 != 0)) {
    log_error("input[%d] '%s' is NV12 with odd size %dx%d", index, name.c_str(), w, h);
    return false;
  }
  const size_t area = static_cast<size_t>(h) * w;
  std::vector<uint8_t> frame;
  const bool nhwc = image_nhwc(p);
  cv::Mat conv;
  switch (kind) {
    case ImageKind::kNV12:
    case ImageKind::kPlaneY:
    case ImageKind::kPlaneUV: {
      std::vector<uint8_t> yuv(area * 3 / 2);
      cv::cvtColor(img, conv, cv::COLOR_BGR2YUV_I420);
      i420_to_nv12(conv, h, w, yuv.data());
      if (kind == ImageKind::kPlaneY) yuv.resize(area);
      if (kind == ImageKind::kPlaneUV) yuv.erase(yuv.begin(), yuv.begin() + static_cast<std::ptrdiff_t>(area));
      frame = std::move(yuv);
      break;
    }
    case ImageKind::kY:
      frame.resize(area);
      cv::cvtColor(img, conv, cv::COLOR_BGR2GRAY);
      for (int y = 0; y < h; ++y) std::memcpy(frame.data() + static_cast<size_t>(y) * w, conv.ptr(y), w);
      break;
    case ImageKind::kRGB:
      frame.resize(area * 3);
      cv::cvtColor(img, conv, cv::COLOR_BGR2RGB);
      pack_3ch(conv, nhwc, frame.data());
      break;
    case ImageKind::kYUV444:
      frame.resize(area * 3);
      cv::cvtColor(img, conv, cv::COLOR_BGR2YUV);
      pack_3ch(conv, nhwc, frame.data());
      break;
    default:  // BGR
      frame.resize(area * 3);
      pack_3ch(img, nhwc, frame.data());
      break;
  }
  // A batch input gets the same image in every batch slot.
  data->bytes.clear();
  for (int b = 0; b < p.validShape.dimensionSize[0]; ++b)
    data->bytes.insert(data->bytes.end(), frame.begin(), frame.end());
  return true;
}

#else  // !OPENBPU_WITH_OPENCV

bool load_image(const std::string& file, int index, const std::string& name, ImageKind kind, bool keep_size,
                InputData* data) {
  (void)kind;
  (void)keep_size;
  (void)data;
  log_error(
      "image file '%s' for input[%d] '%s' needs OpenCV, and this hrt_model_exec was built "
      "without it (OPENBPU_WITH_OPENCV=OFF): convert the image to a .bin file (e.g. NV12 "
      "H*W*3/2 bytes) instead",
      file.c_str(), index, name.c_str());
  return false;
}

#endif  // OPENBPU_WITH_OPENCV

}  // namespace openbpu::tools
