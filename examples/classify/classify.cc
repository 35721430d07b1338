// SPDX-License-Identifier: Apache-2.0
// classify: runs an image classification .bin model on image files and
// prints the top-k classes - a complete libdnn application in one file.
//
//   classify <model.bin> <image>... [--top K] [--labels FILE]
//
// The image is read with OpenCV, resized to the model input and converted to
// the input's type: NV12 (BT.601 full range, as the camera pipeline and
// hb_mapper's 'regular' input range), BGR or RGB (NHWC or NCHW), Y or
// YUV444. The first output is taken as class scores (dequantized when the
// model outputs integers). Output lines: "<image> top<i>: <class> <score>
// [label]".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"

namespace {

#define CHECK_DNN(call)                                                                   \
  do {                                                                                    \
    const int32_t rc_ = (call);                                                           \
    if (rc_ != 0) {                                                                       \
      std::fprintf(stderr, "%s failed: %s (%d)\n", #call, hbDNNGetErrorDesc(rc_), rc_);  \
      return false;                                                                       \
    }                                                                                     \
  } while (0)

uint8_t clamp8(double v) { return static_cast<uint8_t>(std::min(255.0, std::max(0.0, std::round(v)))); }

// BT.601 full range.
void bgr_to_yuv(const cv::Vec3b& p, double* y, double* u, double* v) {
  const double b = p[0], g = p[1], r = p[2];
  *y = 0.299 * r + 0.587 * g + 0.114 * b;
  *u = -0.168736 * r - 0.331264 * g + 0.5 * b + 128.0;
  *v = 0.5 * r - 0.418688 * g - 0.081312 * b + 128.0;
}

// Height and width of an image input from its valid shape and layout.
bool input_hw(const hbDNNTensorProperties& p, int* h, int* w, int* c_axis) {
  if (p.validShape.numDimensions != 4) return false;
  const bool nhwc = p.tensorLayout == HB_DNN_LAYOUT_NHWC;
  *h = p.validShape.dimensionSize[nhwc ? 1 : 2];
  *w = p.validShape.dimensionSize[nhwc ? 2 : 3];
  *c_axis = nhwc ? 3 : 1;
  return true;
}

// Writes the image into the input tensor memory in the tensor's type and
// aligned layout.
bool fill_input(const cv::Mat& bgr_in, hbDNNTensor* t) {
  const hbDNNTensorProperties& p = t->properties;
  int h = 0, w = 0, c_axis = 1;
  if (!input_hw(p, &h, &w, &c_axis)) {
    std::fprintf(stderr, "the model input is not a 4-D image\n");
    return false;
  }
  cv::Mat img;
  cv::resize(bgr_in, img, cv::Size(w, h), 0, 0, cv::INTER_LINEAR);
  auto* dst = static_cast<uint8_t*>(t->sysMem[0].virAddr);
  std::memset(dst, 0, static_cast<size_t>(p.alignedByteSize));
  const int* al = p.alignedShape.dimensionSize;
  const bool nhwc = p.tensorLayout == HB_DNN_LAYOUT_NHWC;
  const int ah = al[nhwc ? 1 : 2], aw = al[nhwc ? 2 : 3], ac = al[c_axis];
  switch (p.tensorType) {
    case HB_DNN_IMG_TYPE_NV12:
    case HB_DNN_IMG_TYPE_Y: {
      if (h % 2 != 0 || w % 2 != 0) {
        if (p.tensorType == HB_DNN_IMG_TYPE_NV12) {
          std::fprintf(stderr, "NV12 input %dx%d: height and width must be even\n", h, w);
          return false;
        }
      }
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          double Y, U, V;
          bgr_to_yuv(img.at<cv::Vec3b>(y, x), &Y, &U, &V);
          dst[static_cast<size_t>(y) * aw + x] = clamp8(Y);
        }
      if (p.tensorType == HB_DNN_IMG_TYPE_Y) return true;
      uint8_t* uv = dst + static_cast<size_t>(ah) * aw;
      for (int y = 0; y < h / 2; ++y)
        for (int x = 0; x < w / 2; ++x) {
          double su = 0, sv = 0;
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx) {
              double Y, U, V;
              bgr_to_yuv(img.at<cv::Vec3b>(2 * y + dy, 2 * x + dx), &Y, &U, &V);
              su += U, sv += V;
            }
          uv[static_cast<size_t>(y) * aw + 2 * x] = clamp8(su / 4);
          uv[static_cast<size_t>(y) * aw + 2 * x + 1] = clamp8(sv / 4);
        }
      return true;
    }
    case HB_DNN_IMG_TYPE_BGR:
    case HB_DNN_IMG_TYPE_RGB:
    case HB_DNN_IMG_TYPE_YUV444: {
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const cv::Vec3b px = img.at<cv::Vec3b>(y, x);
          uint8_t v[3] = {px[0], px[1], px[2]};
          if (p.tensorType == HB_DNN_IMG_TYPE_RGB) std::swap(v[0], v[2]);
          if (p.tensorType == HB_DNN_IMG_TYPE_YUV444) {
            double Y, U, V;
            bgr_to_yuv(px, &Y, &U, &V);
            v[0] = clamp8(Y), v[1] = clamp8(U), v[2] = clamp8(V);
          }
          for (int c = 0; c < 3; ++c) {
            const size_t off = nhwc ? (static_cast<size_t>(y) * aw + x) * ac + c
                                    : (static_cast<size_t>(c) * ah + y) * aw + x;
            dst[off] = v[c];
          }
        }
      return true;
    }
    default:
      std::fprintf(stderr, "input type %d is not an image; this example feeds images only\n", p.tensorType);
      return false;
  }
}

// The valid elements of an output as float (dequantized integer outputs).
bool output_scores(const hbDNNTensor& t, std::vector<float>* out) {
  const hbDNNTensorProperties& p = t.properties;
  const int nd = p.validShape.numDimensions;
  int esize = 0;
  switch (p.tensorType) {
    case HB_DNN_TENSOR_TYPE_F32: case HB_DNN_TENSOR_TYPE_S32: case HB_DNN_TENSOR_TYPE_U32: esize = 4; break;
    case HB_DNN_TENSOR_TYPE_S16: case HB_DNN_TENSOR_TYPE_U16: esize = 2; break;
    case HB_DNN_TENSOR_TYPE_S8: case HB_DNN_TENSOR_TYPE_U8: esize = 1; break;
    default:
      std::fprintf(stderr, "output type %d is not supported by this example\n", p.tensorType);
      return false;
  }
  // Byte strides: the tensor's own, or dense over the aligned shape.
  std::vector<int64_t> stride(static_cast<size_t>(nd));
  int64_t s = esize;
  for (int d = nd - 1; d >= 0; --d) {
    stride[static_cast<size_t>(d)] = p.stride[d] != 0 ? p.stride[d] : s;
    s *= p.alignedShape.dimensionSize[d];
  }
  const auto* base = static_cast<const uint8_t*>(t.sysMem[0].virAddr);
  std::vector<int> idx(static_cast<size_t>(nd), 0);
  int64_t count = 1;
  for (int d = 0; d < nd; ++d) count *= p.validShape.dimensionSize[d];
  out->clear();
  for (int64_t i = 0; i < count; ++i) {
    int64_t off = 0;
    for (int d = 0; d < nd; ++d) off += idx[static_cast<size_t>(d)] * stride[static_cast<size_t>(d)];
    const uint8_t* e = base + off;
    double v = 0;
    switch (p.tensorType) {
      case HB_DNN_TENSOR_TYPE_F32: { float f; std::memcpy(&f, e, 4); v = f; break; }
      case HB_DNN_TENSOR_TYPE_S32: { int32_t x; std::memcpy(&x, e, 4); v = x; break; }
      case HB_DNN_TENSOR_TYPE_U32: { uint32_t x; std::memcpy(&x, e, 4); v = x; break; }
      case HB_DNN_TENSOR_TYPE_S16: { int16_t x; std::memcpy(&x, e, 2); v = x; break; }
      case HB_DNN_TENSOR_TYPE_U16: { uint16_t x; std::memcpy(&x, e, 2); v = x; break; }
      case HB_DNN_TENSOR_TYPE_S8: v = static_cast<int8_t>(*e); break;
      default: v = *e; break;
    }
    if (p.quantiType == SCALE && p.scale.scaleLen > 0) {
      const int k = p.scale.scaleLen == 1 ? 0 : idx[static_cast<size_t>(p.quantizeAxis)];
      const double zp = p.scale.zeroPointLen > 0 ? p.scale.zeroPointData[p.scale.zeroPointLen == 1 ? 0 : k] : 0;
      v = (v - zp) * p.scale.scaleData[k];
    } else if (p.quantiType == SHIFT && p.shift.shiftLen > 0) {
      const int k = p.shift.shiftLen == 1 ? 0 : idx[static_cast<size_t>(p.quantizeAxis)];
      v = std::ldexp(v, -p.shift.shiftData[k]);
    }
    out->push_back(static_cast<float>(v));
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < p.validShape.dimensionSize[d]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  return true;
}

struct Buffers {
  std::vector<hbDNNTensor> in, out;
  ~Buffers() {
    for (auto& t : in) hbSysFreeMem(&t.sysMem[0]);
    for (auto& t : out) hbSysFreeMem(&t.sysMem[0]);
  }
};

bool classify(hbDNNHandle_t model, const std::string& image, int top, const std::vector<std::string>& labels) {
  const cv::Mat bgr = cv::imread(image, cv::IMREAD_COLOR);
  if (bgr.empty()) {
    std::fprintf(stderr, "cannot read image '%s'\n", image.c_str());
    return false;
  }
  int n_in = 0, n_out = 0;
  CHECK_DNN(hbDNNGetInputCount(&n_in, model));
  CHECK_DNN(hbDNNGetOutputCount(&n_out, model));
  if (n_in != 1 || n_out < 1) {
    std::fprintf(stderr, "the model has %d inputs and %d outputs; this example needs one image input\n", n_in, n_out);
    return false;
  }
  Buffers b;
  b.in.resize(1);
  b.out.resize(static_cast<size_t>(n_out));
  CHECK_DNN(hbDNNGetInputTensorProperties(&b.in[0].properties, model, 0));
  CHECK_DNN(hbSysAllocCachedMem(&b.in[0].sysMem[0], static_cast<uint32_t>(b.in[0].properties.alignedByteSize)));
  for (int i = 0; i < n_out; ++i) {
    hbDNNTensor& t = b.out[static_cast<size_t>(i)];
    CHECK_DNN(hbDNNGetOutputTensorProperties(&t.properties, model, i));
    CHECK_DNN(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(t.properties.alignedByteSize)));
  }
  if (!fill_input(bgr, &b.in[0])) return false;
  CHECK_DNN(hbSysFlushMem(&b.in[0].sysMem[0], HB_SYS_MEM_CACHE_CLEAN));

  hbDNNTaskHandle_t task = nullptr;
  hbDNNInferCtrlParam ctrl;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&ctrl);
  hbDNNTensor* outs = b.out.data();
  CHECK_DNN(hbDNNInfer(&task, &outs, b.in.data(), model, &ctrl));
  const int32_t rc = hbDNNWaitTaskDone(task, 0);
  hbDNNReleaseTask(task);
  CHECK_DNN(rc);
  CHECK_DNN(hbSysFlushMem(&b.out[0].sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE));

  std::vector<float> scores;
  if (!output_scores(b.out[0], &scores)) return false;
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const size_t k = std::min(order.size(), static_cast<size_t>(top));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](size_t a, size_t c) { return scores[a] > scores[c]; });
  for (size_t i = 0; i < k; ++i)
    std::printf("%s top%zu: %zu %.6f%s%s\n", image.c_str(), i + 1, order[i], scores[order[i]],
                order[i] < labels.size() ? " " : "", order[i] < labels.size() ? labels[order[i]].c_str() : "");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> images, labels;
  std::string model_file, labels_file;
  int top = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--top" && i + 1 < argc) {
      top = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--labels" && i + 1 < argc) {
      labels_file = argv[++i];
    } else if (model_file.empty()) {
      model_file = a;
    } else {
      images.push_back(a);
    }
  }
  if (model_file.empty() || images.empty()) {
    std::fprintf(stderr, "usage: classify <model.bin> <image>... [--top K] [--labels FILE]\n");
    return 2;
  }
  if (!labels_file.empty()) {
    std::ifstream f(labels_file);
    if (!f) {
      std::fprintf(stderr, "cannot read labels '%s'\n", labels_file.c_str());
      return 1;
    }
    for (std::string line; std::getline(f, line);) labels.push_back(line);
  }

  hbPackedDNNHandle_t packed = nullptr;
  const char* files[] = {model_file.c_str()};
  int32_t rc = hbDNNInitializeFromFiles(&packed, files, 1);
  if (rc != 0) {
    std::fprintf(stderr, "cannot load '%s': %s (%d)\n", model_file.c_str(), hbDNNGetErrorDesc(rc), rc);
    return 1;
  }
  const char** names = nullptr;
  int32_t count = 0;
  hbDNNHandle_t model = nullptr;
  bool ok = hbDNNGetModelNameList(&names, &count, packed) == 0 && count > 0 &&
            hbDNNGetModelHandle(&model, packed, names[0]) == 0;
  for (size_t i = 0; ok && i < images.size(); ++i) ok = classify(model, images[i], top, labels);
  hbDNNRelease(packed);
  return ok ? 0 : 1;
}
