// SPDX-License-Identifier: Apache-2.0
// Custom CPU layers (dnn/plugin/, docs/custom_ops.md): a model with a user
// layer runs the registered creator's layer end to end (Init with the node's
// attributes, Forward on the node's tensors), from several threads; missing
// creators, failing Init / Forward and layer/node mismatches are errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "dnn/plugin/hb_dnn_layer.h"
#include "dnn/plugin/hb_dnn_plugin.h"
#include "tests/common/dnn_calls.h"
#include "tests/common/test_models.h"

namespace {

using hobot::dnn::Attribute;
using hobot::dnn::Layer;
using hobot::dnn::NDArray;
using openbpu::testing::TinyCnn;

std::atomic<int> g_inits{0}, g_forwards{0};

// y = alpha * x + shift, with alpha and shift from the node's attributes.
class AffineLayer : public Layer {
 public:
  int32_t Init(Attribute const& attributes) override {
    std::string tag;
    if (attributes.GetAttributeValue(&alpha_, "alpha") != 0 || attributes.GetAttributeValue(&shift_, "shift") != 0 ||
        attributes.GetAttributeValue(&tag, "tag") != 0 || tag != "tiny")
      return -1;
    // Wrong type and missing keys are errors.
    int32_t i = 0;
    if (attributes.GetAttributeValue(&i, "alpha") == 0 || attributes.GetAttributeValue(&i, "nope") == 0) return -2;
    ++g_inits;
    return 0;
  }
  int32_t Forward(std::vector<NDArray*> const& bottom, std::vector<NDArray*>& top,
                  hobot::dnn::hbDNNInferCtrlParam const* ctrl) override {
    (void)ctrl;
    if (bottom.size() != 1 || top.size() != 1 || bottom[0]->Dtype() != hobot::dnn::TypeFlag::kFloat32 ||
        bottom[0]->Size() != top[0]->Size() || bottom[0]->NDim() != 4)
      return -1;
    const float* x = bottom[0]->Dptr<float>();
    float* y = top[0]->Dptr<float>();
    for (uint64_t k = 0; k < bottom[0]->Size(); ++k) y[k] = alpha_ * x[k] + static_cast<float>(shift_);
    ++g_forwards;
    return 0;
  }
  std::string GetType() const override { return "Affine"; }

 private:
  float alpha_ = 0.0f;
  int32_t shift_ = 0;
};
Layer* affine_creator() { return new AffineLayer; }

class BadInitLayer : public AffineLayer {
 public:
  int32_t Init(Attribute const&) override { return 7; }
};
Layer* bad_init_creator() { return new BadInitLayer; }

class FailingForwardLayer : public AffineLayer {
 public:
  int32_t Forward(std::vector<NDArray*> const&, std::vector<NDArray*>&,
                  hobot::dnn::hbDNNInferCtrlParam const*) override {
    return 5;
  }
};
Layer* failing_forward_creator() { return new FailingForwardLayer; }

class TwoInputLayer : public AffineLayer {
 public:
  uint32_t GetInputCount() const override { return 2U; }
};
Layer* two_input_creator() { return new TwoInputLayer; }

using Outcome = openbpu::testing::LoadOutcome;

Outcome load(const std::string& layer_type) {
  TinyCnn t;
  t.custom_layer = layer_type;
  return openbpu::testing::load_from_ddr(t.build());
}

// One inference; returns the task's status and the float output.
int32_t infer(hbDNNHandle_t h, const std::vector<float>& input, std::vector<float>* output) {
  return openbpu::testing::infer_once(h, input, 0, output);
}

TEST(Plugin, RegisteredLayerRunsEndToEndFromManyThreads) {
  ASSERT_EQ(hbDNNRegisterLayerCreator("Affine", affine_creator), HB_DNN_SUCCESS);
  const Outcome o = load("Affine");
  ASSERT_EQ(o.rc, HB_DNN_SUCCESS) << o.log;
  EXPECT_EQ(g_inits.load(), 1);
  hbDNNHandle_t h = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&h, o.pack, "tiny_cnn"), 0);
  TinyCnn ref;
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        const std::vector<float> x = ref.random_input(static_cast<uint32_t>(100 * t + i));
        const std::vector<float> want = ref.expected(x);
        std::vector<float> got;
        if (infer(h, x, &got) != 0 || got.size() != want.size()) {
          bad++;
          continue;
        }
        for (size_t k = 0; k < want.size(); ++k)
          if (std::abs(got[k] - (0.5f * want[k] + 3.0f)) > 1e-4f * (1.0f + std::abs(want[k]))) {
            bad++;
            break;
          }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(g_forwards.load(), 20);
  EXPECT_EQ(hbDNNRelease(o.pack), 0);
}

TEST(Plugin, UnregisteredLayerTypeFailsTheLoad) {
  // No creator at all, then a creator for another type.
  Outcome o = load("Unknown");
  EXPECT_EQ(o.rc, HB_DNN_API_USE_ERROR) << o.log;
  EXPECT_NE(o.log.find("'Unknown'"), std::string::npos) << o.log;
  EXPECT_NE(o.log.find("hbDNNRegisterLayerCreator"), std::string::npos) << o.log;
  ASSERT_EQ(hbDNNRegisterLayerCreator("Affine", affine_creator), HB_DNN_SUCCESS);
  o = load("Unknown");
  EXPECT_EQ(o.rc, HB_DNN_API_USE_ERROR) << o.log;
  // Unregistered again: models loaded afterwards cannot use it.
  ASSERT_EQ(hbDNNUnregisterLayerCreator("Affine"), HB_DNN_SUCCESS);
  o = load("Affine");
  EXPECT_EQ(o.rc, HB_DNN_API_USE_ERROR) << o.log;
}

TEST(Plugin, FailingInitAndMismatchedLayersFailTheLoad) {
  ASSERT_EQ(hbDNNRegisterLayerCreator("BadInit", bad_init_creator), HB_DNN_SUCCESS);
  Outcome o = load("BadInit");
  EXPECT_EQ(o.rc, HB_DNN_INVALID_MODEL) << o.log;
  EXPECT_NE(o.log.find("Init returned 7"), std::string::npos) << o.log;
  ASSERT_EQ(hbDNNRegisterLayerCreator("TwoInputs", two_input_creator), HB_DNN_SUCCESS);
  o = load("TwoInputs");
  EXPECT_EQ(o.rc, HB_DNN_INVALID_MODEL) << o.log;
  EXPECT_NE(o.log.find("the layer takes 2"), std::string::npos) << o.log;
}

TEST(Plugin, FailingForwardFailsTheTask) {
  ASSERT_EQ(hbDNNRegisterLayerCreator("FailingForward", failing_forward_creator), HB_DNN_SUCCESS);
  const Outcome o = load("FailingForward");
  ASSERT_EQ(o.rc, HB_DNN_SUCCESS) << o.log;
  hbDNNHandle_t h = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&h, o.pack, "tiny_cnn"), 0);
  std::vector<float> got;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(infer(h, TinyCnn{}.random_input(1), &got), HB_DNN_RUN_TASK_FAILED);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("Forward returned 5"), std::string::npos) << log;
  EXPECT_EQ(hbDNNRelease(o.pack), 0);
}

TEST(Plugin, RegistrationArguments) {
  EXPECT_EQ(hbDNNRegisterLayerCreator(nullptr, affine_creator), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRegisterLayerCreator("X", nullptr), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRegisterLayerCreator("", affine_creator), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRegisterLayerCreator("Twice", affine_creator), HB_DNN_SUCCESS);
  EXPECT_EQ(hbDNNRegisterLayerCreator("Twice", affine_creator), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNUnregisterLayerCreator("Never"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNUnregisterLayerCreator(nullptr), HB_DNN_INVALID_ARGUMENT);
}

}  // namespace
