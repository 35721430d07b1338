// SPDX-License-Identifier: Apache-2.0
// hrt_make_test_image <out.png> <out_nv12.bin> <img_w> <img_h> <nv12_w> <nv12_h>
// Writes a deterministic BGR test image as PNG and, independently of
// hrt_model_exec's code, the NV12 frame its documented pipeline must feed:
// decode, bilinear resize to the input size, BGR -> I420 -> NV12.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s <out.png> <out_nv12.bin> <img_w> <img_h> <nv12_w> <nv12_h>\n",
                 argv[0]);
    return 2;
  }
  const int iw = std::atoi(argv[3]), ih = std::atoi(argv[4]);
  const int w = std::atoi(argv[5]), h = std::atoi(argv[6]);
  cv::Mat img(ih, iw, CV_8UC3);
  for (int y = 0; y < ih; ++y)
    for (int x = 0; x < iw; ++x) {
      cv::Vec3b& px = img.at<cv::Vec3b>(y, x);
      px[0] = static_cast<uchar>((x * 7 + y * 3) & 255);
      px[1] = static_cast<uchar>((x * x + y * 5) & 255);
      px[2] = static_cast<uchar>((255 - x * 5 + y * 11) & 255);
    }
  if (!cv::imwrite(argv[1], img)) {
    std::fprintf(stderr, "cannot write %s\n", argv[1]);
    return 1;
  }
  cv::Mat bgr = cv::imread(argv[1], cv::IMREAD_COLOR);  // PNG is lossless
  if (bgr.cols != w || bgr.rows != h) cv::resize(bgr, bgr, cv::Size(w, h));
  cv::Mat i420;
  cv::cvtColor(bgr, i420, cv::COLOR_BGR2YUV_I420);
  const size_t ys = static_cast<size_t>(w) * h;
  std::vector<uchar> nv12(ys * 3 / 2);
  const uchar* p = i420.ptr<uchar>();
  std::copy(p, p + ys, nv12.begin());
  for (size_t k = 0; k < ys / 4; ++k) {
    nv12[ys + 2 * k] = p[ys + k];
    nv12[ys + 2 * k + 1] = p[ys + ys / 4 + k];
  }
  FILE* f = std::fopen(argv[2], "wb");
  if (f == nullptr || std::fwrite(nv12.data(), 1, nv12.size(), f) != nv12.size()) {
    std::fprintf(stderr, "cannot write %s\n", argv[2]);
    return 1;
  }
  std::fclose(f);
  return 0;
}
