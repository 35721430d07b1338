// SPDX-License-Identifier: Apache-2.0
// Image files as model input. Needs OpenCV (CMake option OPENBPU_WITH_OPENCV);
// board builds have none and report a clear error instead. The conversion is
// the one of the vendor tool and samples: OpenCV decode (BGR), bilinear
// resize to the input's valid H x W, BGR -> I420 -> NV12 for NV12 inputs.
#include <unistd.h>

#include <algorithm>
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

// A decoded image may be this many times the input's height and width (it
// is resized to them), and at least kMinImageSideLimit on each side (camera
// frames for small inputs); larger files are refused from their header,
// before OpenCV allocates anything.
constexpr int64_t kImageSideFactor = 16;
constexpr int64_t kMinImageSideLimit = 8192;
// Bytes per pixel a PNG or JPEG file can take at most (16-bit RGBA, stored),
// plus headers: files above that are refused before reading.
constexpr int64_t kMaxFileBytesPerPixel = 8;
constexpr int64_t kFileSlackBytes = 1 << 20;
constexpr int64_t kMaxFileBytes = int64_t{1} << 30;

uint32_t be16(const std::vector<uint8_t>& b, size_t at) { return uint32_t{b[at]} << 8 | b[at + 1]; }
uint32_t be32(const std::vector<uint8_t>& b, size_t at) { return be16(b, at) << 16 | be16(b, at + 2); }

// Width and height from a PNG header (IHDR) or a JPEG frame header (the
// first SOFn marker); false when the bytes are neither.
bool header_size(const std::vector<uint8_t>& b, uint32_t* w, uint32_t* h) {
  static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (b.size() >= 24 && std::memcmp(b.data(), kPng, 8) == 0 && std::memcmp(b.data() + 12, "IHDR", 4) == 0) {
    *w = be32(b, 16);
    *h = be32(b, 20);
    return true;
  }
  if (b.size() < 4 || b[0] != 0xFF || b[1] != 0xD8) return false;
  size_t at = 2;
  while (at + 4 <= b.size()) {
    if (b[at] != 0xFF) return false;
    const uint8_t marker = b[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // no length field
      at += 2;
      continue;
    }
    if (marker == 0xD9 || marker == 0xDA) return false;  // end of image or scan before any frame header
    const uint32_t len = be16(b, at + 2);
    const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      if (len < 7 || at + 9 > b.size()) return false;
      *h = be16(b, at + 5);
      *w = be16(b, at + 7);
      return true;
    }
    if (len < 2) return false;
    at += 2 + len;
  }
  return false;
}

// Reads the image file after checking its type and size, and its header's
// dimensions against what input `index` can take (h x w).
bool read_image_file(const std::string& file, int index, const std::string& name, int h, int w,
                     std::vector<uint8_t>* bytes) {
  const int64_t max_h = std::max(kMinImageSideLimit, kImageSideFactor * h);
  const int64_t max_w = std::max(kMinImageSideLimit, kImageSideFactor * w);
  const uint64_t max_bytes =
      static_cast<uint64_t>(std::min(max_h * max_w * kMaxFileBytesPerPixel + kFileSlackBytes, kMaxFileBytes));
  uint64_t size = 0;
  const int fd = open_input_file(file, &size);
  if (fd < 0) return false;
  if (size > max_bytes) {
    ::close(fd);
    log_error("image file '%s' has %llu bytes, more than an image input[%d] '%s' takes can have (%llu)",
              file.c_str(), static_cast<unsigned long long>(size), index, name.c_str(),
              static_cast<unsigned long long>(max_bytes));
    return false;
  }
  if (!read_input_file(fd, file, size, bytes)) return false;
  uint32_t iw = 0, ih = 0;
  if (!header_size(*bytes, &iw, &ih)) {
    log_error("image file '%s' is not a PNG or JPEG image (no PNG header or JPEG frame header)", file.c_str());
    return false;
  }
  if (iw == 0 || ih == 0 || iw > max_w || ih > max_h) {
    log_error(
        "image file '%s' is %ux%u: input[%d] '%s' (%dx%d) takes images of 1x1 to %lldx%lld (%lld times its "
        "size, at least %lld)",
        file.c_str(), iw, ih, index, name.c_str(), w, h, static_cast<long long>(max_w),
        static_cast<long long>(max_h), static_cast<long long>(kImageSideFactor),
        static_cast<long long>(kMinImageSideLimit));
    return false;
  }
  return true;
}

}  // namespace

bool load_image(const std::string& file, int index, const std::string& name, ImageKind kind, bool keep_size,
                InputData* data) {
  hbDNNTensorProperties& p = data->props;
  int h = 0, w = 0;
  // A frame (keep_size) may have no size yet: the image gives it.
  const bool sized = kind != ImageKind::kNone && image_size(p, kind, &h, &w);
  if (!sized && (kind == ImageKind::kNone || !keep_size)) {
    log_error(
        "image file '%s' given for input[%d] '%s' of type %s: images feed image inputs "
        "(NV12, Y, RGB, BGR, YUV444, or the Y/UV planes of NV12) only; give a .bin or .txt file",
        file.c_str(), index, name.c_str(), data_type_name(p.tensorType));
    return false;
  }
  std::vector<uint8_t> bytes;
  if (!read_image_file(file, index, name, h, w, &bytes)) return false;
  cv::Mat img;
  try {
    img = cv::imdecode(cv::Mat(1, static_cast<int>(bytes.size()), CV_8U, bytes.data()), cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    log_error("cannot decode image file '%s': %s", file.c_str(), e.what());
    return false;
  }
  bytes = std::vector<uint8_t>();
  if (img.empty()) {
    log_error("cannot decode image file '%s' (damaged or unsupported PNG/JPEG)", file.c_str());
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
