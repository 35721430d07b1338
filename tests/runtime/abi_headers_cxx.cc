// SPDX-License-Identifier: Apache-2.0
// Every public header, including the C++-only plugin headers, compiles as
// C++ the way applications include them, and the vendor quirks hold: the
// unprefixed NONE/SHIFT/SCALE, void* handles, the plugin API with C++ linkage.
#include <gtest/gtest.h>

#include <type_traits>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "dnn/plugin/hb_dnn_dtype.h"
#include "dnn/plugin/hb_dnn_layer.h"
#include "dnn/plugin/hb_dnn_ndarray.h"
#include "dnn/plugin/hb_dnn_plugin.h"
#include "dnn/plugin/hb_dnn_tuple.h"
#include "openbpu/openbpu.h"

namespace {

class EchoLayer : public hobot::dnn::Layer {
 public:
  int32_t Forward(std::vector<hobot::dnn::NDArray*> const& bottom, std::vector<hobot::dnn::NDArray*>& top,
                  hobot::dnn::hbDNNInferCtrlParam const*) override {
    *top[0] = bottom[0]->DeepCopy();
    return 0;
  }
  std::string GetType() const override { return "Echo"; }
};

hobot::dnn::Layer* make_echo() { return new EchoLayer(); }

TEST(Headers, VendorQuirks) {
  static_assert(std::is_same<hbDNNHandle_t, void*>::value, "handles are void*");
  static_assert(std::is_same<hbPackedDNNHandle_t, void*>::value, "handles are void*");
  hbDNNQuantiType t = SCALE;
  EXPECT_EQ(t, 2);
  EXPECT_EQ(NONE, 0);
  EXPECT_EQ(SHIFT, 1);
  EXPECT_EQ(HB_DNN_SIZEOF_TYPE(hobot::dnn::TypeFlag::kFloat32), 4u);
  EXPECT_EQ(HB_DNN_SIZEOF_TYPE(hobot::dnn::TypeFlag::kInt16), 2u);
}

TEST(Headers, PluginRegistration) {
  EXPECT_EQ(hbDNNRegisterLayerCreator("Echo", make_echo), 0);
  EXPECT_EQ(hbDNNRegisterLayerCreator("Echo", make_echo), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNUnregisterLayerCreator("Echo"), 0);
  EXPECT_EQ(hbDNNUnregisterLayerCreator("Echo"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRegisterLayerCreator(nullptr, make_echo), HB_DNN_INVALID_ARGUMENT);
}

TEST(Headers, NDArrayBasics) {
  hobot::dnn::NDArray a(hobot::dnn::TShape({2, 3}), hobot::dnn::TypeFlag::kFloat32);
  EXPECT_EQ(a.Size(), 6u);
  EXPECT_EQ(a.NDim(), 2u);
  a.Dptr<float>()[4] = 5.0f;
  EXPECT_EQ(a[1].Dptr<float>()[1], 5.0f);
  EXPECT_EQ(a.Flatten().Shape().Str(), "(6)");
  hobot::dnn::NDArray b;
  std::vector<hobot::dnn::NDArray*> in{&a}, out{&b};
  EchoLayer l;
  EXPECT_EQ(l.Forward(in, out, nullptr), 0);
  EXPECT_EQ(b.Dptr<float>()[4], 5.0f);
  EXPECT_NE(b.RawData(), a.RawData());
}

TEST(Headers, VersionString) {
  const std::string v = hbDNNGetVersion();
  EXPECT_EQ(v.rfind("1.24.5_(", 0), 0u) << v;
  EXPECT_NE(v.find(OPENBPU_VERSION_STRING), std::string::npos);
  EXPECT_STREQ(hbDNNGetErrorDesc(-1), "unknown error code");
}

}  // namespace
