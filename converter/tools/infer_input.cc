// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/infer_input.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>

#include "converter/ir/local_ops.h"

#ifdef OPENBPU_WITH_OPENCV
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace openbpu::cvt {
namespace {

struct Geometry {
  int64_t n = 1, c = 3, h = 0, w = 0;
  bool nhwc = false;
  size_t at(int64_t b, int64_t ch, int64_t y, int64_t x) const {
    return static_cast<size_t>(nhwc ? ((b * h + y) * w + x) * c + ch : ((b * c + ch) * h + y) * w + x);
  }
};

bool train_geometry(const InputParameter& ip, Geometry* g, std::string* error) {
  if (ip.shape.size() != 4) {
    *error = "input '" + ip.name + "': input_shape is not 4-D";
    return false;
  }
  g->nhwc = ip.layout_train == "NHWC";
  g->n = ip.shape[0];
  g->c = g->nhwc ? ip.shape[3] : ip.shape[1];
  g->h = g->nhwc ? ip.shape[1] : ip.shape[2];
  g->w = g->nhwc ? ip.shape[2] : ip.shape[3];
  return true;
}

uint8_t round_u8(double v) { return static_cast<uint8_t>(std::clamp(std::floor(v + 0.5), 0.0, 255.0)); }

// The pixel (b, y, x) of a train sample as (Y, U, V) and as (R, G, B).
void pixel(const InputParameter& ip, const Geometry& g, const std::vector<float>& v, int64_t b, int64_t y, int64_t x,
           std::array<double, 3>* rgb, std::array<double, 3>* yuv) {
  std::array<double, 3> p{};
  for (int64_t ch = 0; ch < std::min<int64_t>(g.c, 3); ++ch) p[static_cast<size_t>(ch)] = v[g.at(b, ch, y, x)];
  if (ip.type_train == "gray") {
    *rgb = {p[0], p[0], p[0]};
    *yuv = {p[0], 128.0, 128.0};
    return;
  }
  if (ip.type_train == "yuv444") {
    *yuv = p;
    yuv_to_rgb(p[0], p[1], p[2], false, &(*rgb)[0], &(*rgb)[1], &(*rgb)[2]);
    return;
  }
  *rgb = ip.type_train == "bgr" ? std::array<double, 3>{p[2], p[1], p[0]} : p;
  rgb_to_yuv((*rgb)[0], (*rgb)[1], (*rgb)[2], &(*yuv)[0], &(*yuv)[1], &(*yuv)[2]);
}

void to_video_range(std::array<double, 3>* yuv) {
  (*yuv)[0] = 16.0 + (*yuv)[0] * 219.0 / 255.0;
  (*yuv)[1] = 128.0 + ((*yuv)[1] - 128.0) * 224.0 / 255.0;
  (*yuv)[2] = 128.0 + ((*yuv)[2] - 128.0) * 224.0 / 255.0;
}

}  // namespace

bool is_image_file(const std::string& path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return false;
  std::string ext = path.substr(dot + 1);
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const char* const kExt[] = {"jpg", "jpeg", "png", "bmp", "ppm", "pgm", "tif", "tiff", "webp"};
  for (const char* e : kExt)
    if (ext == e) return true;
  return false;
}

bool image_to_train_values(const std::string& path, const InputParameter& ip, std::vector<float>* values,
                           std::string* error) {
#ifdef OPENBPU_WITH_OPENCV
  Geometry g;
  if (!train_geometry(ip, &g, error)) return false;
  if (ip.type_train == "featuremap") {
    *error = "input '" + ip.name + "' is a featuremap; give a raw float32 file, not the image '" + path + "'";
    return false;
  }
  const cv::Mat img = cv::imread(path, cv::IMREAD_COLOR);
  if (img.empty()) {
    *error = "cannot decode the image '" + path + "'";
    return false;
  }
  cv::Mat resized;
  cv::resize(img, resized, cv::Size(static_cast<int>(g.w), static_cast<int>(g.h)), 0, 0, cv::INTER_LINEAR);
  values->assign(static_cast<size_t>(g.n * g.c * g.h * g.w), 0.0f);
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t y = 0; y < g.h; ++y)
      for (int64_t x = 0; x < g.w; ++x) {
        const cv::Vec3b bgr = resized.at<cv::Vec3b>(static_cast<int>(y), static_cast<int>(x));
        std::array<double, 3> out{double(bgr[0]), double(bgr[1]), double(bgr[2])};
        if (ip.type_train == "rgb") {
          std::swap(out[0], out[2]);
        } else if (ip.type_train == "gray" || ip.type_train == "yuv444") {
          double yy, u, v;
          rgb_to_yuv(bgr[2], bgr[1], bgr[0], &yy, &u, &v);
          out = {double(round_u8(yy)), double(round_u8(u)), double(round_u8(v))};
        }
        for (int64_t ch = 0; ch < std::min<int64_t>(g.c, 3); ++ch)
          (*values)[g.at(b, ch, y, x)] = static_cast<float>(out[static_cast<size_t>(ch)]);
      }
  return true;
#else
  (void)ip;
  (void)values;
  *error = "'" + path + "': this hb_mapper was built without OpenCV and reads raw files only";
  return false;
#endif
}

bool train_values_to_rt_bytes(const InputParameter& ip, const std::vector<float>& values,
                              std::vector<uint8_t>* bytes, std::string* error) {
  Geometry g;
  if (!train_geometry(ip, &g, error)) return false;
  if (values.size() != static_cast<size_t>(g.n * g.c * g.h * g.w)) {
    *error = "input '" + ip.name + "': sample size does not match input_shape";
    return false;
  }
  bytes->clear();
  if (ip.type_rt == "featuremap") {
    // The runtime layout is the train layout for featuremaps.
    bytes->resize(values.size() * sizeof(float));
    std::memcpy(bytes->data(), values.data(), bytes->size());
    return true;
  }
  const bool video = ip.space_and_range == "bt601_video";
  for (int64_t b = 0; b < g.n; ++b) {
    if (ip.type_rt == "nv12") {
      if (g.h % 2 != 0 || g.w % 2 != 0) {
        *error = "input '" + ip.name + "': NV12 needs an even height and width";
        return false;
      }
      std::vector<uint8_t> plane(static_cast<size_t>(g.h * g.w * 3 / 2));
      std::vector<std::array<double, 3>> yuv(static_cast<size_t>(g.h * g.w));
      for (int64_t y = 0; y < g.h; ++y)
        for (int64_t x = 0; x < g.w; ++x) {
          std::array<double, 3> rgb, p;
          pixel(ip, g, values, b, y, x, &rgb, &p);
          if (video) to_video_range(&p);
          yuv[static_cast<size_t>(y * g.w + x)] = p;
          plane[static_cast<size_t>(y * g.w + x)] = round_u8(p[0]);
        }
      for (int64_t y = 0; y < g.h / 2; ++y)
        for (int64_t x = 0; x < g.w / 2; ++x) {
          double u = 0, v = 0;
          for (int64_t dy = 0; dy < 2; ++dy)
            for (int64_t dx = 0; dx < 2; ++dx) {
              const auto& p = yuv[static_cast<size_t>((2 * y + dy) * g.w + 2 * x + dx)];
              u += p[1], v += p[2];
            }
          const size_t o = static_cast<size_t>(g.h * g.w + y * g.w + 2 * x);
          plane[o] = round_u8(u / 4.0);
          plane[o + 1] = round_u8(v / 4.0);
        }
      bytes->insert(bytes->end(), plane.begin(), plane.end());
      continue;
    }
    const int64_t c = ip.type_rt == "gray" ? 1 : 3;
    const bool nhwc = ip.layout_rt != "NCHW";
    std::vector<uint8_t> img(static_cast<size_t>(c * g.h * g.w));
    for (int64_t y = 0; y < g.h; ++y)
      for (int64_t x = 0; x < g.w; ++x) {
        std::array<double, 3> rgb, yuv;
        pixel(ip, g, values, b, y, x, &rgb, &yuv);
        std::array<double, 3> out = rgb;
        if (ip.type_rt == "bgr") out = {rgb[2], rgb[1], rgb[0]};
        if (ip.type_rt == "yuv444" || ip.type_rt == "gray") out = yuv;
        for (int64_t ch = 0; ch < c; ++ch)
          img[static_cast<size_t>(nhwc ? (y * g.w + x) * c + ch : (ch * g.h + y) * g.w + x)] =
              round_u8(out[static_cast<size_t>(ch)]);
      }
    bytes->insert(bytes->end(), img.begin(), img.end());
  }
  return true;
}

}  // namespace openbpu::cvt
