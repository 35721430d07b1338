// SPDX-License-Identifier: Apache-2.0
// classify_ucp: image classification with an .hbm model through the UCP API
// (J6 / S100), in the steps of the public S100 samples: load the model,
// prepare tensors (the caller sets dynamic strides), fill the NV12 planes,
// hbDNNInferV2 + hbUCPSubmitTask + hbUCPWaitTaskDone, post-process, release.
//
//   classify_ucp <model.hbm> <image>... [--top K] [--labels FILE]
//
// The model takes NV12 as two inputs, Y (1,H,W,1) and UV (1,H/2,W/2,2)
// (hb_compile with input_type_rt 'nv12'). The image is read with OpenCV,
// resized to H x W and converted with BT.601 full range (the 'regular'
// input range). The first output is taken as class scores, dequantized by
// its per-tensor or per-axis scale when it is an integer tensor. Output lines:
// "<image> top<i>: <class> <score> [label]".
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_sys.h"

#define HB_CHECK_SUCCESS(value, errmsg)                                                    \
  do {                                                                                     \
    auto ret_code = (value);                                                               \
    if (ret_code != 0) {                                                                   \
      std::fprintf(stderr, "%s, error code: %d (%s)\n", errmsg, static_cast<int>(ret_code), \
                   hbDNNGetErrorDesc(ret_code));                                           \
      return ret_code;                                                                     \
    }                                                                                      \
  } while (0)

#define ALIGN_32(value) (((value) + 31) & ~31)

namespace {

// Tensors of the model's inputs and outputs; dynamic (-1) strides get the
// minimal 32-byte aligned rows, as the samples do.
int32_t prepare_tensor(hbDNNTensor* input_tensor, hbDNNTensor* output_tensor, hbDNNHandle_t dnn_handle) {
  int input_count = 0, output_count = 0;
  hbDNNGetInputCount(&input_count, dnn_handle);
  hbDNNGetOutputCount(&output_count, dnn_handle);
  for (int i = 0; i < input_count; i++) {
    HB_CHECK_SUCCESS(hbDNNGetInputTensorProperties(&input_tensor[i].properties, dnn_handle, i),
                     "hbDNNGetInputTensorProperties failed");
    hbDNNTensorProperties& properties = input_tensor[i].properties;
    const int32_t dim_len = properties.validShape.numDimensions;
    for (int32_t dim_i = dim_len - 1; dim_i >= 0; --dim_i) {
      if (properties.stride[dim_i] == -1) {
        const int64_t cur_stride = properties.stride[dim_i + 1] * properties.validShape.dimensionSize[dim_i + 1];
        properties.stride[dim_i] = ALIGN_32(cur_stride);
      }
    }
    const int64_t input_mem_size = properties.stride[0] * properties.validShape.dimensionSize[0];
    HB_CHECK_SUCCESS(hbUCPMallocCached(&input_tensor[i].sysMem, static_cast<uint64_t>(input_mem_size), 0),
                     "hbUCPMallocCached failed");
  }
  for (int i = 0; i < output_count; i++) {
    HB_CHECK_SUCCESS(hbDNNGetOutputTensorProperties(&output_tensor[i].properties, dnn_handle, i),
                     "hbDNNGetOutputTensorProperties failed");
    const int64_t output_mem_size = output_tensor[i].properties.alignedByteSize;
    HB_CHECK_SUCCESS(hbUCPMallocCached(&output_tensor[i].sysMem, static_cast<uint64_t>(output_mem_size), 0),
                     "hbUCPMallocCached failed");
  }
  return 0;
}

// The image as NV12 in the Y and UV input tensors, rows at their strides.
int32_t read_image_2_tensor_as_nv12(const std::string& image_file, hbDNNTensor* input_tensor) {
  hbDNNTensor& y_tensor = input_tensor[0];
  hbDNNTensor& uv_tensor = input_tensor[1];
  const int input_h = y_tensor.properties.validShape.dimensionSize[1];
  const int input_w = y_tensor.properties.validShape.dimensionSize[2];
  if (input_h % 2 != 0 || input_w % 2 != 0) {
    std::fprintf(stderr, "NV12 needs an even height and width, the model takes %dx%d\n", input_h, input_w);
    return -1;
  }
  cv::Mat bgr_mat = cv::imread(image_file, cv::IMREAD_COLOR);
  if (bgr_mat.empty()) {
    std::fprintf(stderr, "image file not exist or cannot be read: %s\n", image_file.c_str());
    return -1;
  }
  cv::Mat resized_mat;
  cv::resize(bgr_mat, resized_mat, cv::Size(input_w, input_h), 0, 0, cv::INTER_LINEAR);
  // YCrCb is BT.601 full range: Y, then Cr (V), then Cb (U).
  cv::Mat ycrcb;
  cv::cvtColor(resized_mat, ycrcb, cv::COLOR_BGR2YCrCb);

  auto* y_data = static_cast<uint8_t*>(y_tensor.sysMem.virAddr);
  const int64_t y_stride = y_tensor.properties.stride[1];
  for (int h = 0; h < input_h; ++h)
    for (int w = 0; w < input_w; ++w) y_data[h * y_stride + w] = ycrcb.at<cv::Vec3b>(h, w)[0];

  auto* uv_data = static_cast<uint8_t*>(uv_tensor.sysMem.virAddr);
  const int64_t uv_stride = uv_tensor.properties.stride[1];
  for (int h = 0; h < input_h / 2; ++h) {
    for (int w = 0; w < input_w / 2; ++w) {
      int u = 0, v = 0;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const cv::Vec3b& p = ycrcb.at<cv::Vec3b>(2 * h + dy, 2 * w + dx);
          v += p[1];
          u += p[2];
        }
      uv_data[h * uv_stride + 2 * w] = static_cast<uint8_t>((u + 2) / 4);
      uv_data[h * uv_stride + 2 * w + 1] = static_cast<uint8_t>((v + 2) / 4);
    }
  }
  return 0;
}

// Element i (row-major over the valid shape) of an output as float.
std::vector<float> output_scores(const hbDNNTensor& t) {
  const hbDNNTensorProperties& p = t.properties;
  const int n = p.validShape.numDimensions;
  int64_t count = 1;
  for (int k = 0; k < n; ++k) count *= p.validShape.dimensionSize[k];
  std::vector<float> scores(static_cast<size_t>(count));
  const auto* base = static_cast<const uint8_t*>(t.sysMem.virAddr);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0, channel = 0;
    for (int k = n - 1; k >= 0; --k) {
      const int64_t idx = rest % p.validShape.dimensionSize[k];
      rest /= p.validShape.dimensionSize[k];
      offset += idx * p.stride[k];
      if (k == p.quantizeAxis) channel = idx;
    }
    float value = 0.0f;
    switch (p.tensorType) {
      case HB_DNN_TENSOR_TYPE_F32: std::memcpy(&value, base + offset, 4); break;
      case HB_DNN_TENSOR_TYPE_S32: {
        int32_t q;
        std::memcpy(&q, base + offset, 4);
        value = static_cast<float>(q);
        break;
      }
      case HB_DNN_TENSOR_TYPE_S16: {
        int16_t q;
        std::memcpy(&q, base + offset, 2);
        value = static_cast<float>(q);
        break;
      }
      case HB_DNN_TENSOR_TYPE_S8: value = static_cast<float>(static_cast<int8_t>(base[offset])); break;
      default: value = static_cast<float>(base[offset]); break;
    }
    if (p.quantiType == SCALE && p.scale.scaleLen > 0) {
      const int64_t c = p.scale.scaleLen > 1 ? channel : 0;
      const float zero = p.scale.zeroPointLen > c ? static_cast<float>(p.scale.zeroPointData[c]) : 0.0f;
      value = (value - zero) * p.scale.scaleData[c];
    }
    scores[static_cast<size_t>(i)] = value;
  }
  return scores;
}

std::vector<std::string> read_labels(const std::string& file) {
  std::vector<std::string> labels;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) labels.push_back(line);
  return labels;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_file, labels_file;
  std::vector<std::string> images;
  int top_k = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--top" && i + 1 < argc) {
      top_k = std::atoi(argv[++i]);
    } else if (a == "--labels" && i + 1 < argc) {
      labels_file = argv[++i];
    } else if (model_file.empty()) {
      model_file = a;
    } else {
      images.push_back(a);
    }
  }
  if (model_file.empty() || images.empty() || top_k < 1) {
    std::fprintf(stderr, "usage: classify_ucp <model.hbm> <image>... [--top K] [--labels FILE]\n");
    return 2;
  }
  const std::vector<std::string> labels = labels_file.empty() ? std::vector<std::string>() : read_labels(labels_file);

  // Step1: get the model handle.
  hbDNNPackedHandle_t packed_dnn_handle = nullptr;
  hbDNNHandle_t dnn_handle = nullptr;
  const char** model_name_list = nullptr;
  const char* model_file_name = model_file.c_str();
  int model_count = 0;
  HB_CHECK_SUCCESS(hbDNNInitializeFromFiles(&packed_dnn_handle, &model_file_name, 1), "hbDNNInitializeFromFiles failed");
  HB_CHECK_SUCCESS(hbDNNGetModelNameList(&model_name_list, &model_count, packed_dnn_handle),
                   "hbDNNGetModelNameList failed");
  HB_CHECK_SUCCESS(hbDNNGetModelHandle(&dnn_handle, packed_dnn_handle, model_name_list[0]),
                   "hbDNNGetModelHandle failed");
  int input_count = 0, output_count = 0;
  HB_CHECK_SUCCESS(hbDNNGetInputCount(&input_count, dnn_handle), "hbDNNGetInputCount failed");
  HB_CHECK_SUCCESS(hbDNNGetOutputCount(&output_count, dnn_handle), "hbDNNGetOutputCount failed");
  if (input_count != 2) {
    std::fprintf(stderr, "model '%s' has %d inputs; this sample takes NV12 as Y and UV inputs\n", model_name_list[0],
                 input_count);
    return 1;
  }

  // Step2: prepare the input and output tensors.
  std::vector<hbDNNTensor> input_tensors(static_cast<size_t>(input_count));
  std::vector<hbDNNTensor> output_tensors(static_cast<size_t>(output_count));
  std::memset(input_tensors.data(), 0, sizeof(hbDNNTensor) * input_tensors.size());
  std::memset(output_tensors.data(), 0, sizeof(hbDNNTensor) * output_tensors.size());
  HB_CHECK_SUCCESS(prepare_tensor(input_tensors.data(), output_tensors.data(), dnn_handle), "prepare tensor failed");

  int status = 0;
  for (const std::string& image : images) {
    // Step3: set the input data.
    if (read_image_2_tensor_as_nv12(image, input_tensors.data()) != 0) {
      status = 1;
      continue;
    }
    for (hbDNNTensor& t : input_tensors) hbUCPMemFlush(&t.sysMem, HB_SYS_MEM_CACHE_CLEAN);

    // Step4: run the inference.
    hbUCPTaskHandle_t task_handle = nullptr;
    HB_CHECK_SUCCESS(hbDNNInferV2(&task_handle, output_tensors.data(), input_tensors.data(), dnn_handle),
                     "hbDNNInferV2 failed");
    hbUCPSchedParam ctrl_param;
    HB_UCP_INITIALIZE_SCHED_PARAM(&ctrl_param);
    ctrl_param.backend = HB_UCP_BPU_CORE_ANY;
    HB_CHECK_SUCCESS(hbUCPSubmitTask(task_handle, &ctrl_param), "hbUCPSubmitTask failed");
    HB_CHECK_SUCCESS(hbUCPWaitTaskDone(task_handle, 0), "hbUCPWaitTaskDone failed");

    // Step5: post-process the first output.
    hbUCPMemFlush(&output_tensors[0].sysMem, HB_SYS_MEM_CACHE_INVALIDATE);
    const std::vector<float> scores = output_scores(output_tensors[0]);
    std::vector<int> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    const int k = std::min<int>(top_k, static_cast<int>(order.size()));
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int a, int b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
    for (int i = 0; i < k; ++i) {
      const int c = order[static_cast<size_t>(i)];
      std::printf("%s top%d: %d %.9g%s%s\n", image.c_str(), i, c, scores[static_cast<size_t>(c)],
                  static_cast<size_t>(c) < labels.size() ? " " : "",
                  static_cast<size_t>(c) < labels.size() ? labels[static_cast<size_t>(c)].c_str() : "");
    }
    HB_CHECK_SUCCESS(hbUCPReleaseTask(task_handle), "hbUCPReleaseTask failed");
  }

  // Step6: release the resources.
  for (hbDNNTensor& t : input_tensors) hbUCPFree(&t.sysMem);
  for (hbDNNTensor& t : output_tensors) hbUCPFree(&t.sysMem);
  HB_CHECK_SUCCESS(hbDNNRelease(packed_dnn_handle), "hbDNNRelease failed");
  return status;
}
