// SPDX-License-Identifier: Apache-2.0
// Models built with the C++ writer (schema/writer.h) for tests, fuzz seeds
// and benchmarks, with an independent computation of their expected outputs.
#ifndef OPENBPU_TESTS_COMMON_TEST_MODELS_H_
#define OPENBPU_TESTS_COMMON_TEST_MODELS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::testing {

// "tiny" CNN, float NCHW input (1,3,h,w) -> CPU Quantize -> BPU [conv3x3 3->8
// + relu, maxpool 2x2/2, conv1x1 8->4 with int32 output] -> CPU Dequantize
// (per-channel scales) -> float NCHW output (1,4,h/2,w/2).
struct TinyCnn {
  int h = 8, w = 8;
  uint32_t seed = 1;
  std::string name = "tiny_cnn";
  std::string march = "bernoulli2";
  // Non-empty: the float output then goes through a user layer of this type
  // (a CPU operator of domain "custom", node "custom_layer", attributes
  // alpha = 0.5 (float), shift = 3 (int), tag = "tiny" (string)) into
  // the model output "custom_out"; expected() stays the Dequantize output.
  std::string custom_layer;
  // Runs the model's integer arithmetic independently (plain NCHW loops in
  // 64-bit integers / double) and returns the expected float output.
  std::vector<float> expected(const std::vector<float>& input) const;
  std::vector<float> random_input(uint32_t seed) const;
  std::vector<uint8_t> build() const;  // model file bytes

  // Parameters (derived from the seed at construction of the file).
  struct Params {
    float s_in, s1, s2;  // activation scales: input, after conv1+relu (and pool)
    std::vector<int8_t> w1, w2;  // [Cout][KH][KW][Cin]
    std::vector<int32_t> b1, b2;
    std::vector<float> sw1, sw2;  // per-channel weight scales
  };
  Params params() const;
};

// "nv12 classifier": NV12 input (1,3,h,w) -> BPU [preprocess nv12->bgr,
// conv3x3/2 3->16 + relu6, depthwise 3x3 + relu, conv1x1 16->32 + relu,
// global average pool, fc 32->classes as conv1x1 with int32 output] -> CPU
// Dequantize -> CPU Softmax; output float (1, classes). Random weights.
struct Nv12Classifier {
  int h = 32, w = 32;
  int classes = 10;
  uint32_t seed = 7;
  std::string name = "nv12_classifier";
  std::string march = "bernoulli2";
  double max_fc_us = 0.0;  // max_time_per_fc (0 = one function call)
  int core_num = 1;        // 2 marks the program as compiled for both cores
  bool resizer = false;    // input_source resizer (else pyramid)
  std::vector<uint8_t> build() const;
};

// MobileNetV1 (alpha 1.0) for an nv12 input of h x w with random weights:
// the network the bernoulli2 timing model is calibrated against. BPU part:
// preprocess, 27 convolutions, global average pool, fc (int32); CPU part:
// Dequantize + Softmax.
struct MobileNetV1 {
  int h = 224, w = 224;
  int classes = 1000;
  uint32_t seed = 11;
  std::string name = "mobilenetv1_224x224_nv12";
  std::string march = "bernoulli2";
  double max_fc_us = 0.0;  // max_time_per_fc (0 = one function call)
  int core_num = 1;        // 2 marks the program as compiled for both cores
  std::vector<uint8_t> build() const;
};

// "trivial": one BPU instruction (a copy of an int8 NHWC [1, 1, 1, c] tensor
// in the native layout) and no CPU segment, so that the runtime's own cost per
// task dominates (scheduling benchmarks). Output equals input.
struct TrivialBpu {
  int c = 8;
  std::string name = "trivial_bpu";
  std::string march = "bernoulli2";
  std::vector<uint8_t> build() const;
};

// Packs several models into one file (as hb_pack does).
std::vector<uint8_t> pack_models(const std::vector<std::vector<uint8_t>>& files);

// The same models as a .hbm file of the UCP generation (ModelFile.generation
// B) with `desc` as the file's description JSON.
std::vector<uint8_t> as_hbm(const std::vector<uint8_t>& file, const std::string& desc = "");

// Converts a BGR image (h x w x 3, uint8) to NV12 with the same BT.601
// full-range integer formula the tools use.
std::vector<uint8_t> bgr_to_nv12(const std::vector<uint8_t>& bgr, int h, int w);

}  // namespace openbpu::testing

#endif  // OPENBPU_TESTS_COMMON_TEST_MODELS_H_
