// SPDX-License-Identifier: Apache-2.0
// Resizer models of the UCP generation through the public API (hobot/*.h,
// libdnn + libhbucp): the Y + UV + roi inputs, several ROIs of one frame as
// sub-tasks of one task, the ROI rules and their error code. The model is
// testgen's nv12_classifier with input_source resizer; its pyramid twin
// (same weights) run on the resized crops is the reference, the crops made
// by the one implementation of the resizer rule (runtime/core/roi_resize.h,
// checked against numpy and ONNX Runtime by tests/ucp/resizer_e2e.py).
// Runs without the converter, so also under ASan + UBSan (ctest -R Ucp).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"
#include "runtime/core/roi_resize.h"
#include "tests/common/nv12_frame.h"

namespace {

using openbpu::rt::RoiBox;

constexpr int kModelSide = 32;  // testgen's Nv12Classifier: 32 x 32 NV12
constexpr int kFrameH = 90, kFrameW = 160;

int64_t align32(int64_t v) { return (v + 31) / 32 * 32; }

struct Pack {
  hbDNNPackedHandle_t pack = nullptr;
  hbDNNHandle_t dnn = nullptr;
  explicit Pack(const char* file) {
    const std::string path = std::string(OPENBPU_UCP_TESTDATA) + "/" + file;
    const char* p = path.c_str();
    const char** names = nullptr;
    int32_t n = 0;
    EXPECT_EQ(hbDNNInitializeFromFiles(&pack, &p, 1), 0) << path;
    EXPECT_EQ(hbDNNGetModelNameList(&names, &n, pack), 0);
    EXPECT_EQ(hbDNNGetModelHandle(&dnn, pack, names[0]), 0);
  }
  ~Pack() { hbDNNRelease(pack); }
};

struct Mem {
  hbUCPSysMem m{};
  explicit Mem(uint64_t size) { EXPECT_EQ(hbUCPMallocCached(&m, size, 0), 0); }
  ~Mem() { hbUCPFree(&m); }
  Mem(const Mem&) = delete;
  Mem& operator=(const Mem&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(m.virAddr); }
};

// A plane of the frame in a buffer with 32-byte aligned rows.
void put_plane(const uint8_t* src, int rows, int cols, int64_t stride, uint8_t* dst) {
  for (int r = 0; r < rows; ++r) std::memcpy(dst + r * stride, src + static_cast<size_t>(r) * cols, cols);
}

// Output buffers of the model.
struct Outputs {
  std::vector<hbDNNTensor> t;
  std::vector<std::unique_ptr<Mem>> mem;
  explicit Outputs(hbDNNHandle_t dnn) {
    int32_t n = 0;
    EXPECT_EQ(hbDNNGetOutputCount(&n, dnn), 0);
    t.resize(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) {
      EXPECT_EQ(hbDNNGetOutputTensorProperties(&t[i].properties, dnn, i), 0);
      mem.push_back(std::make_unique<Mem>(static_cast<uint64_t>(t[i].properties.alignedByteSize)));
      t[i].sysMem = mem.back()->m;
    }
  }
  std::vector<uint8_t> bytes(size_t i) const {
    const uint8_t* p = static_cast<const uint8_t*>(t[i].sysMem.virAddr);
    return std::vector<uint8_t>(p, p + t[i].properties.alignedByteSize);
  }
};

// The resizer model's inputs for one ROI over the frame in y / uv.
struct ResizerInputs {
  hbDNNTensor t[3];
  std::unique_ptr<Mem> roi = std::make_unique<Mem>(16);
  ResizerInputs(hbDNNHandle_t dnn, const Mem& y, const Mem& uv, const RoiBox& r, int h = kFrameH, int w = kFrameW) {
    std::memset(t, 0, sizeof(t));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(hbDNNGetInputTensorProperties(&t[i].properties, dnn, i), 0);
    for (int i = 0; i < 2; ++i) {
      hbDNNTensorProperties& p = t[i].properties;
      p.validShape.dimensionSize[1] = i == 0 ? h : h / 2;
      p.validShape.dimensionSize[2] = i == 0 ? w : w / 2;
      p.stride[1] = align32(p.stride[2] * p.validShape.dimensionSize[2]);
      p.stride[0] = p.stride[1] * p.validShape.dimensionSize[1];
      t[i].sysMem = i == 0 ? y.m : uv.m;
    }
    const int32_t v[4] = {r.left, r.top, r.right, r.bottom};
    std::memcpy(roi->data(), v, sizeof(v));
    t[2].sysMem = roi->m;
  }
};

// Runs the pyramid model on a model-sized NV12 image; the outputs' bytes.
std::vector<std::vector<uint8_t>> run_pyramid(hbDNNHandle_t dnn, const std::vector<uint8_t>& nv12) {
  const int64_t stride = align32(kModelSide);
  Mem y(stride * kModelSide), uv(stride * kModelSide / 2);
  put_plane(nv12.data(), kModelSide, kModelSide, stride, y.data());
  put_plane(nv12.data() + kModelSide * kModelSide, kModelSide / 2, kModelSide, stride, uv.data());
  hbDNNTensor in[2];
  std::memset(in, 0, sizeof(in));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(hbDNNGetInputTensorProperties(&in[i].properties, dnn, i), 0);
    in[i].properties.stride[1] = stride;
    in[i].properties.stride[0] = stride * in[i].properties.validShape.dimensionSize[1];
    in[i].sysMem = i == 0 ? y.m : uv.m;
  }
  Outputs out(dnn);
  EXPECT_EQ(hbDNNInferV2(nullptr, out.t.data(), in, dnn), 0);
  std::vector<std::vector<uint8_t>> r;
  for (size_t i = 0; i < out.t.size(); ++i) r.push_back(out.bytes(i));
  return r;
}

class UcpResizer : public ::testing::Test {
 protected:
  void SetUp() override {
    frame_ = openbpu::testing::make_nv12_frame(kFrameH, kFrameW);
    put_plane(frame_.data(), kFrameH, kFrameW, align32(kFrameW), y_.data());
    put_plane(frame_.data() + kFrameH * kFrameW, kFrameH / 2, kFrameW, align32(kFrameW), uv_.data());
  }
  // The reference crop: the model-sized NV12 image of `r`.
  std::vector<uint8_t> resized(const RoiBox& r) const {
    std::vector<uint8_t> out(kModelSide * kModelSide * 3 / 2);
    openbpu::rt::roi_resize_image(frame_.data(), kFrameW, frame_.data() + kFrameH * kFrameW, kFrameW, r, true,
                                  out.data(), kModelSide, kModelSide);
    return out;
  }
  Pack resizer_{"nv12_classifier_resizer.hbm"};
  Pack pyramid_{"nv12_classifier.hbm"};
  std::vector<uint8_t> frame_;
  Mem y_{static_cast<uint64_t>(align32(kFrameW) * kFrameH)};
  Mem uv_{static_cast<uint64_t>(align32(kFrameW) * kFrameH / 2)};
};

TEST_F(UcpResizer, InputsAreYUvAndRoi) {
  int32_t n = 0;
  ASSERT_EQ(hbDNNGetInputCount(&n, resizer_.dnn), 0);
  ASSERT_EQ(n, 3);
  const char* names[3];
  hbDNNTensorProperties p[3];
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(hbDNNGetInputName(&names[i], resizer_.dnn, i), 0);
    ASSERT_EQ(hbDNNGetInputTensorProperties(&p[i], resizer_.dnn, i), 0);
  }
  EXPECT_STREQ(names[0], "data_y");
  EXPECT_STREQ(names[1], "data_uv");
  EXPECT_STREQ(names[2], "data_roi");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(p[i].tensorType, HB_DNN_TENSOR_TYPE_U8);
    EXPECT_EQ(p[i].validShape.numDimensions, 4);
    EXPECT_EQ(p[i].validShape.dimensionSize[1], -1);  // the frame's H and W: the caller's
    EXPECT_EQ(p[i].validShape.dimensionSize[2], -1);
    EXPECT_EQ(p[i].validShape.dimensionSize[3], i == 0 ? 1 : 2);
    EXPECT_EQ(p[i].stride[0], -1);
    EXPECT_EQ(p[i].stride[1], -1);
    EXPECT_EQ(p[i].stride[2], i == 0 ? 1 : 2);
    EXPECT_EQ(p[i].alignedByteSize, -1);
  }
  EXPECT_EQ(p[2].tensorType, HB_DNN_TENSOR_TYPE_S32);
  EXPECT_EQ(p[2].validShape.numDimensions, 2);
  EXPECT_EQ(p[2].validShape.dimensionSize[0], 1);
  EXPECT_EQ(p[2].validShape.dimensionSize[1], 4);
  EXPECT_EQ(p[2].stride[0], 16);
  EXPECT_EQ(p[2].stride[1], 4);
  EXPECT_EQ(p[2].alignedByteSize, 16);
}

// Several ROIs of one frame, one sub-task each in one task, submitted once:
// every sub-task's outputs equal the pyramid twin's on the resized crop; a
// ROI of the model's size equals the twin on the plain crop (no resampling).
TEST_F(UcpResizer, RoisAsSubTasksOfOneTask) {
  const std::vector<RoiBox> rois = {{0, 0, 31, 31},      {10, 20, 41, 51},  {0, 0, 119, 89},
                                    {30, 8, 45, 23},     {2, 4, 71, 47},    {88, 58, 119, 89}};
  std::vector<std::unique_ptr<ResizerInputs>> ins;
  std::vector<std::unique_ptr<Outputs>> outs;
  hbUCPTaskHandle_t task = nullptr;
  for (const RoiBox& r : rois) {
    ins.push_back(std::make_unique<ResizerInputs>(resizer_.dnn, y_, uv_, r));
    outs.push_back(std::make_unique<Outputs>(resizer_.dnn));
    ASSERT_EQ(hbDNNInferV2(&task, outs.back()->t.data(), ins.back()->t, resizer_.dnn), 0);
  }
  hbUCPSchedParam sched;
  HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
  ASSERT_EQ(hbUCPSubmitTask(task, &sched), 0);
  ASSERT_EQ(hbUCPWaitTaskDone(task, 0), 0);
  for (size_t i = 0; i < rois.size(); ++i) {
    const std::vector<std::vector<uint8_t>> want = run_pyramid(pyramid_.dnn, resized(rois[i]));
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(outs[i]->bytes(k), want[k]) << "roi " << i << " output " << k;
  }
  // Identity: the 32 x 32 ROI at (10, 20) is the frame's pixels.
  std::vector<uint8_t> crop(kModelSide * kModelSide * 3 / 2);
  for (int r = 0; r < kModelSide; ++r) {
    std::memcpy(&crop[r * kModelSide], &frame_[(20 + r) * kFrameW + 10], kModelSide);
    if (r < kModelSide / 2)
      std::memcpy(&crop[(kModelSide + r) * kModelSide], &frame_[(kFrameH + 10 + r) * kFrameW + 10], kModelSide);
  }
  EXPECT_EQ(outs[1]->bytes(0), run_pyramid(pyramid_.dnn, crop)[0]);
  hbDNNTensorProperties p;
  EXPECT_EQ(hbDNNGetTaskOutputTensorProperties(&p, task, static_cast<int32_t>(rois.size()) - 1, 0), 0);
  EXPECT_NE(hbDNNGetTaskOutputTensorProperties(&p, task, static_cast<int32_t>(rois.size()), 0), 0);
  EXPECT_EQ(hbUCPReleaseTask(task), 0);
}

// Every broken ROI rule is HB_UCP_INVALID_ARGUMENT from hbDNNInferV2, and
// no task is created.
TEST_F(UcpResizer, BadRoisAreRejected) {
  const std::vector<std::pair<RoiBox, const char*>> bad = {
      {{1, 0, 32, 31}, "odd left"},
      {{0, 3, 31, 34}, "odd top"},
      {{0, 0, 30, 31}, "even right (odd width)"},
      {{0, 0, 31, 30}, "even bottom"},
      {{-2, 0, 31, 31}, "negative left"},
      {{0, 0, 161, 31}, "right outside the frame"},
      {{0, 0, 31, 91}, "bottom outside the frame"},
      {{40, 0, 31, 31}, "left > right"},
      {{150, 0, 169, 31}, "right outside"},
      {{0, 0, 159, 1}, "too wide for 32 pixels (step above 262143)"},
  };
  for (const auto& [r, why] : bad) {
    ResizerInputs in(resizer_.dnn, y_, uv_, r);
    Outputs out(resizer_.dnn);
    hbUCPTaskHandle_t task = nullptr;
    EXPECT_EQ(hbDNNInferV2(&task, out.t.data(), in.t, resizer_.dnn), HB_UCP_INVALID_ARGUMENT) << why;
    EXPECT_EQ(task, nullptr) << why;
    EXPECT_EQ(hbDNNInferV2(nullptr, out.t.data(), in.t, resizer_.dnn), HB_UCP_INVALID_ARGUMENT) << why;
  }
  const RoiBox good{0, 0, 31, 31};
  {  // The UV plane is not half the frame.
    ResizerInputs in(resizer_.dnn, y_, uv_, good);
    in.t[1].properties.validShape.dimensionSize[1] -= 1;
    Outputs out(resizer_.dnn);
    EXPECT_EQ(hbDNNInferV2(nullptr, out.t.data(), in.t, resizer_.dnn), HB_UCP_INVALID_ARGUMENT);
  }
  {  // The frame's sides left dynamic.
    ResizerInputs in(resizer_.dnn, y_, uv_, good);
    in.t[0].properties.validShape.dimensionSize[1] = -1;
    Outputs out(resizer_.dnn);
    EXPECT_EQ(hbDNNInferV2(nullptr, out.t.data(), in.t, resizer_.dnn), HB_UCP_INVALID_ARGUMENT);
  }
  {  // A roi buffer of 8 bytes, a roi tensor of the wrong type.
    ResizerInputs in(resizer_.dnn, y_, uv_, good);
    in.t[2].sysMem.memSize = 8;
    Outputs out(resizer_.dnn);
    EXPECT_EQ(hbDNNInferV2(nullptr, out.t.data(), in.t, resizer_.dnn), HB_UCP_INVALID_ARGUMENT);
    in.t[2].sysMem.memSize = 16;
    in.t[2].properties.tensorType = HB_DNN_TENSOR_TYPE_U32;
    EXPECT_EQ(hbDNNInferV2(nullptr, out.t.data(), in.t, resizer_.dnn), HB_UCP_INVALID_ARGUMENT);
  }
  {  // An odd-sided NV12 frame.
    ResizerInputs in(resizer_.dnn, y_, uv_, good, kFrameH - 1, kFrameW);
    in.t[1].properties.validShape.dimensionSize[1] = (kFrameH - 1) / 2;
    Outputs out(resizer_.dnn);
    EXPECT_EQ(hbDNNInferV2(nullptr, out.t.data(), in.t, resizer_.dnn), HB_UCP_INVALID_ARGUMENT);
  }
}

// The rule itself on planes whose result is known without it.
TEST(UcpResizerRule, CornersIdentityAndRamps) {
  using openbpu::rt::resize_plane;
  using openbpu::rt::resizer_step;
  EXPECT_EQ(resizer_step(32, 32), 65536);
  EXPECT_EQ(resizer_step(64, 32), (63 * 65536 + 15) / 31);
  EXPECT_EQ(resizer_step(5, 1), 0);
  // A ramp 0, 10, ..., 90 scaled to 19 pixels: the midpoints interpolate
  // (5, 15, ...), the corners stay.
  std::vector<uint8_t> ramp(10), out(19);
  for (int i = 0; i < 10; ++i) ramp[static_cast<size_t>(i)] = static_cast<uint8_t>(10 * i);
  resize_plane(ramp.data(), 10, 0, 0, 10, 1, 1, out.data(), 1, 19);
  for (int i = 0; i < 19; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], 5 * i) << i;
  // Interleaved UV channels stay apart; a 2x2 block to 3x3: the centre is
  // the mean of the four (rounded half up).
  const uint8_t uv[8] = {0, 200, 100, 0, 50, 0, 151, 0};  // (U, V) of 2 x 2 pixels
  uint8_t o[18];
  resize_plane(uv, 4, 0, 0, 2, 2, 2, o, 3, 3);
  EXPECT_EQ(o[0], 0);
  EXPECT_EQ(o[1], 200);
  EXPECT_EQ(o[4 * 2], 75);      // U centre: (0 + 100 + 50 + 151) / 4 = 75.25
  EXPECT_EQ(o[4 * 2 + 1], 50);  // V centre: 200 / 4 = 50
  EXPECT_EQ(o[8 * 2], 151);
}

}  // namespace
