// SPDX-License-Identifier: Apache-2.0
// hbDNNRoiInfer (libdnn 1.x, .bin resizer models) through the public API:
// several ROI batches of one frame in one call, each output slice equal to
// the pyramid twin (same weights, input_source pyramid) run by hbDNNInfer on
// the crop resized by the one implementation of the resizer rule
// (runtime/core/roi_resize.h; checked against numpy and ONNX Runtime by the
// e2e tests); appending to an open task, NV12_SEPARATE and padded rows, tight
// outputs; every bad argument's code, with no task created and no output
// written. The models are testgen's Nv12Classifier (bernoulli2, 32 x 32
// NV12) built in memory. Suite api_* so that test.sh runs it under ASan.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "runtime/core/roi_resize.h"
#include "tests/common/test_models.h"
#include "tests/common/nv12_frame.h"

namespace {

using openbpu::rt::RoiBox;

constexpr int kSide = 32;  // the model's input: 32 x 32 NV12
constexpr int kFrameH = 90, kFrameW = 160;

struct Loaded {
  hbPackedDNNHandle_t pack = nullptr;
  hbDNNHandle_t dnn = nullptr;
  explicit Loaded(bool resizer) {
    openbpu::testing::Nv12Classifier c;
    c.resizer = resizer;
    const std::vector<uint8_t> bytes = c.build();
    const void* data = bytes.data();
    int32_t len = static_cast<int32_t>(bytes.size());
    EXPECT_EQ(hbDNNInitializeFromDDR(&pack, &data, &len, 1), 0);
    EXPECT_EQ(hbDNNGetModelHandle(&dnn, pack, c.name.c_str()), 0);
  }
  // Every task was released: nothing counts against the pack.
  ~Loaded() { EXPECT_EQ(hbDNNRelease(pack), 0); }
};

struct Mem {
  hbSysMem m{};
  explicit Mem(size_t size) { EXPECT_EQ(hbSysAllocCachedMem(&m, static_cast<uint32_t>(size)), 0); }
  ~Mem() { hbSysFreeMem(&m); }
  Mem(const Mem&) = delete;
  Mem& operator=(const Mem&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(m.virAddr); }
};

// The model's output tensors for `batch` ROI batches: validShape[0],
// alignedShape[0] and the buffer batch times the model's (tight: alignedShape
// = validShape), filled with a sentinel.
struct Outputs {
  std::vector<hbDNNTensor> t;
  std::vector<std::unique_ptr<Mem>> mem;
  std::vector<int32_t> slice;
  Outputs(hbDNNHandle_t dnn, int batch, bool tight = false) {
    int32_t n = 0;
    EXPECT_EQ(hbDNNGetOutputCount(&n, dnn), 0);
    t.resize(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) {
      hbDNNTensorProperties& p = t[i].properties;
      EXPECT_EQ(hbDNNGetOutputTensorProperties(&p, dnn, i), 0);
      if (tight) p.alignedShape = p.validShape;
      slice.push_back(p.alignedByteSize);  // valid == aligned for these float outputs
      p.validShape.dimensionSize[0] *= batch;
      p.alignedShape.dimensionSize[0] *= batch;
      p.alignedByteSize *= batch;
      mem.push_back(std::make_unique<Mem>(static_cast<size_t>(p.alignedByteSize)));
      std::memset(mem.back()->data(), 0xA5, static_cast<size_t>(p.alignedByteSize));
      t[i].sysMem[0] = mem.back()->m;
    }
  }
  std::vector<uint8_t> bytes(size_t i, int b) const {
    const uint8_t* p = mem[i]->data() + static_cast<size_t>(b) * slice[i];
    return std::vector<uint8_t>(p, p + slice[i]);
  }
  bool untouched() const {
    for (size_t i = 0; i < t.size(); ++i)
      for (int32_t k = 0; k < t[i].properties.alignedByteSize; ++k)
        if (mem[i]->data()[k] != 0xA5) return false;
    return true;
  }
};

// The frame as the resizer input's tensor: NV12 in one buffer with rows of
// `stride` bytes, or NV12_SEPARATE (Y and UV in two buffers).
struct Frame {
  hbDNNTensor t{};
  std::unique_ptr<Mem> y, uv;
  Frame(hbDNNHandle_t dnn, const std::vector<uint8_t>& f, int h, int w, int stride, bool separate) {
    EXPECT_EQ(hbDNNGetInputTensorProperties(&t.properties, dnn, 0), 0);
    hbDNNTensorProperties& p = t.properties;
    p.tensorType = separate ? HB_DNN_IMG_TYPE_NV12_SEPARATE : HB_DNN_IMG_TYPE_NV12;
    p.validShape.dimensionSize[2] = h;
    p.validShape.dimensionSize[3] = w;
    p.alignedShape = p.validShape;
    p.alignedShape.dimensionSize[3] = stride;
    const size_t ybytes = static_cast<size_t>(stride) * h, uvbytes = ybytes / 2;
    y = std::make_unique<Mem>(separate ? ybytes : ybytes + uvbytes);
    uint8_t* uvdst = y->data() + ybytes;
    if (separate) {
      uv = std::make_unique<Mem>(uvbytes);
      uvdst = uv->data();
      t.sysMem[1] = uv->m;
    }
    for (int r = 0; r < h; ++r) std::memcpy(y->data() + static_cast<size_t>(r) * stride, &f[static_cast<size_t>(r) * w], w);
    for (int r = 0; r < h / 2; ++r)
      std::memcpy(uvdst + static_cast<size_t>(r) * stride, &f[static_cast<size_t>(h + r) * w], w);
    t.sysMem[0] = y->m;
  }
};

hbDNNInferCtrlParam ctrl(bool more = false) {
  hbDNNInferCtrlParam p;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
  p.more = more;
  return p;
}

class api_RoiInfer : public ::testing::Test {
 protected:
  void SetUp() override { frame_ = openbpu::testing::make_nv12_frame(kFrameH, kFrameW); }

  // The pyramid twin on the crop of `r` resized by the rule; its outputs.
  std::vector<std::vector<uint8_t>> reference(const RoiBox& r) const {
    std::vector<uint8_t> img(kSide * kSide * 3 / 2);
    openbpu::rt::roi_resize_image(frame_.data(), kFrameW, frame_.data() + kFrameH * kFrameW, kFrameW, r, true,
                                  img.data(), kSide, kSide);
    hbDNNTensor in{};
    EXPECT_EQ(hbDNNGetInputTensorProperties(&in.properties, pyramid_.dnn, 0), 0);
    in.properties.alignedShape = in.properties.validShape;
    Mem m(img.size());
    std::memcpy(m.data(), img.data(), img.size());
    in.sysMem[0] = m.m;
    Outputs out(pyramid_.dnn, 1);
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* o = out.t.data();
    hbDNNInferCtrlParam p = ctrl();
    EXPECT_EQ(hbDNNInfer(&task, &o, &in, pyramid_.dnn, &p), 0);
    EXPECT_EQ(hbDNNWaitTaskDone(task, 0), 0);
    EXPECT_EQ(hbDNNReleaseTask(task), 0);
    std::vector<std::vector<uint8_t>> r2;
    for (size_t i = 0; i < out.t.size(); ++i) r2.push_back(out.bytes(i, 0));
    return r2;
  }

  // Runs rois over the frame tensor (one per batch, the same frame) in one
  // call; expects every slice to equal the reference.
  void run_and_check(const std::vector<RoiBox>& rois, const Frame& frame, bool tight) {
    const int batch = static_cast<int>(rois.size());
    std::vector<hbDNNTensor> in(rois.size(), frame.t);
    std::vector<hbDNNRoi> r;
    for (const RoiBox& b : rois) r.push_back(hbDNNRoi{b.left, b.top, b.right, b.bottom});
    Outputs out(resizer_.dnn, batch, tight);
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* o = out.t.data();
    hbDNNInferCtrlParam p = ctrl();
    ASSERT_EQ(hbDNNRoiInfer(&task, &o, in.data(), r.data(), batch, resizer_.dnn, &p), 0);
    ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
    EXPECT_EQ(hbDNNReleaseTask(task), 0);
    for (int b = 0; b < batch; ++b) {
      const auto want = reference(rois[static_cast<size_t>(b)]);
      for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(out.bytes(k, b), want[k]) << "batch " << b << " output " << k;
    }
  }

  Loaded resizer_{true};
  Loaded pyramid_{false};
  std::vector<uint8_t> frame_;
  const std::vector<RoiBox> rois_ = {{0, 0, 31, 31},  {10, 20, 41, 51}, {0, 0, 119, 89},  {30, 8, 45, 23},
                                     {2, 4, 71, 47},  {88, 58, 119, 89}, {40, 0, 159, 35}, {144, 70, 159, 89}};
};

TEST_F(api_RoiInfer, ModelReportsResizerInput) {
  int32_t source = -1;
  ASSERT_EQ(hbDNNGetInputSource(&source, resizer_.dnn, 0), 0);
  EXPECT_EQ(source, HB_DNN_INPUT_FROM_RESIZER);
}

// Eight ROIs of one frame in one call (tight NV12 rows): every batch's
// outputs equal the pyramid twin on the resized crop; a ROI of the model's
// size is the plain crop (no resampling).
TEST_F(api_RoiInfer, RoiBatchesEqualPyramidTwinOnResizedCrops) {
  run_and_check(rois_, Frame(resizer_.dnn, frame_, kFrameH, kFrameW, kFrameW, false), false);
  // The 32 x 32 ROI at (10, 20) is the frame's pixels.
  std::vector<uint8_t> crop(kSide * kSide * 3 / 2);
  for (int r = 0; r < kSide; ++r) {
    std::memcpy(&crop[r * kSide], &frame_[(20 + r) * kFrameW + 10], kSide);
    if (r < kSide / 2) std::memcpy(&crop[(kSide + r) * kSide], &frame_[(kFrameH + 10 + r) * kFrameW + 10], kSide);
  }
  std::vector<uint8_t> resized(crop.size());
  openbpu::rt::roi_resize_image(frame_.data(), kFrameW, frame_.data() + kFrameH * kFrameW, kFrameW, rois_[1], true,
                                resized.data(), kSide, kSide);
  EXPECT_EQ(resized, crop);
}

// NV12_SEPARATE planes with rows padded to 176 bytes, tight outputs.
TEST_F(api_RoiInfer, SeparatePlanesPaddedRowsTightOutputs) {
  run_and_check({rois_[2], rois_[4], rois_[6]}, Frame(resizer_.dnn, frame_, kFrameH, kFrameW, 176, true), true);
}

// A task chained from two calls (more = 1, then more = 0) and one of
// hbDNNInfer's: all runs in order, one wait.
TEST_F(api_RoiInfer, AppendsToAnOpenTask) {
  Frame f(resizer_.dnn, frame_, kFrameH, kFrameW, kFrameW, false);
  std::vector<hbDNNTensor> in(3, f.t);
  std::vector<hbDNNRoi> r1 = {{0, 0, 119, 89}, {30, 8, 45, 23}}, r2 = {{2, 4, 71, 47}};
  Outputs o1(resizer_.dnn, 2), o2(resizer_.dnn, 1);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* p1 = o1.t.data();
  hbDNNTensor* p2 = o2.t.data();
  hbDNNInferCtrlParam more = ctrl(true), last = ctrl(false);
  ASSERT_EQ(hbDNNRoiInfer(&task, &p1, in.data(), r1.data(), 2, resizer_.dnn, &more), 0);
  hbDNNTaskHandle_t first = task;
  ASSERT_EQ(hbDNNRoiInfer(&task, &p2, in.data(), r2.data(), 1, resizer_.dnn, &last), 0);
  EXPECT_EQ(task, first);
  // Started: no more appending.
  EXPECT_EQ(hbDNNRoiInfer(&task, &p2, in.data(), r2.data(), 1, resizer_.dnn, &last), HB_DNN_API_USE_ERROR);
  ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_EQ(hbDNNReleaseTask(task), 0);
  EXPECT_EQ(o1.bytes(0, 0), reference({0, 0, 119, 89})[0]);
  EXPECT_EQ(o1.bytes(0, 1), reference({30, 8, 45, 23})[0]);
  EXPECT_EQ(o2.bytes(0, 0), reference({2, 4, 71, 47})[0]);
}

// Every bad argument: its code, *taskHandle left NULL, nothing written (the
// fixture's destructor checks that no task counts against the pack).
TEST_F(api_RoiInfer, BadArgumentsAreRefused) {
  Frame f(resizer_.dnn, frame_, kFrameH, kFrameW, kFrameW, false);
  const int batch = 3;
  auto call = [&](std::vector<hbDNNTensor> in, std::vector<hbDNNRoi> r, Outputs* out, hbDNNHandle_t dnn,
                  int32_t count, hbDNNInferCtrlParam p, const char* why) {
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* o = out->t.data();
    const int32_t rc = hbDNNRoiInfer(&task, &o, in.data(), r.data(), count, dnn, &p);
    EXPECT_EQ(task, nullptr) << why;
    EXPECT_TRUE(out->untouched()) << why;
    return rc;
  };
  const std::vector<hbDNNTensor> in(batch, f.t);
  const std::vector<hbDNNRoi> good = {{0, 0, 31, 31}, {10, 20, 41, 51}, {2, 4, 71, 47}};
  Outputs out(resizer_.dnn, batch);
  // ROIs (the third batch's): each rule of the resizer.
  const std::vector<std::pair<hbDNNRoi, const char*>> bad_rois = {
      {{1, 0, 32, 31}, "odd left"},           {{0, 3, 31, 34}, "odd top"},
      {{0, 0, 30, 31}, "even right"},         {{0, 0, 31, 30}, "even bottom"},
      {{-2, 0, 31, 31}, "negative left"},     {{0, -2, 31, 31}, "negative top"},
      {{140, 0, 161, 31}, "right outside"},   {{0, 60, 31, 91}, "bottom outside"},
      {{40, 0, 31, 31}, "left > right"},      {{0, 40, 31, 31}, "top > bottom"},
      {{0, 0, 13, 31}, "14 wide (X3: 16..255)"}, {{0, 0, 31, 13}, "14 high"},
      {{0, 0, 159, 31}, "160 wide for 32 pixels (step above 262143)"},
  };
  for (const auto& [roi, why] : bad_rois) {
    std::vector<hbDNNRoi> r = good;
    r[2] = roi;
    EXPECT_EQ(call(in, r, &out, resizer_.dnn, batch, ctrl(), why), HB_DNN_INVALID_ARGUMENT) << why;
  }
  // roiCount and the model.
  EXPECT_EQ(call(in, good, &out, resizer_.dnn, 0, ctrl(), "roiCount 0"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(call(in, good, &out, resizer_.dnn, -1, ctrl(), "roiCount -1"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(call(in, good, &out, resizer_.dnn, 256, ctrl(), "batch 256"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(call(in, good, &out, pyramid_.dnn, batch, ctrl(), "no resizer input"), HB_DNN_INVALID_ARGUMENT);
  int dummy = 0;
  EXPECT_EQ(call(in, good, &out, &dummy, batch, ctrl(), "not a model"), HB_DNN_INVALID_DNN_HANDLE);
  // The frame tensor of the second batch.
  auto bad_frame = [&](const char* why, auto edit) {
    std::vector<hbDNNTensor> in2 = in;
    edit(&in2[1]);
    return call(in2, good, &out, resizer_.dnn, batch, ctrl(), why);
  };
  using T = hbDNNTensor*;
  EXPECT_EQ(bad_frame("odd frame height", [](T t) { t->properties.validShape.dimensionSize[2] = 89; t->properties.alignedShape.dimensionSize[2] = 89; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("frame 1 wide", [](T t) { t->properties.validShape.dimensionSize[3] = 1; t->properties.alignedShape.dimensionSize[3] = 16; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("frame wider than 4096", [](T t) { t->properties.validShape.dimensionSize[3] = 4098; t->properties.alignedShape.dimensionSize[3] = 4098; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("stride 168: not a multiple of 16", [](T t) { t->properties.alignedShape.dimensionSize[3] = 168; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("stride below the width", [](T t) { t->properties.alignedShape.dimensionSize[3] = 144; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("stride above 131072", [](T t) { t->properties.alignedShape.dimensionSize[3] = 131088; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("aligned H differs", [](T t) { t->properties.alignedShape.dimensionSize[2] = 96; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("C 1 for NV12", [](T t) { t->properties.validShape.dimensionSize[1] = 1; t->properties.alignedShape.dimensionSize[1] = 1; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("N 2", [](T t) { t->properties.validShape.dimensionSize[0] = 2; t->properties.alignedShape.dimensionSize[0] = 2; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("3-D shape", [](T t) { t->properties.validShape.numDimensions = 3; t->properties.alignedShape.numDimensions = 3; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("NHWC", [](T t) { t->properties.tensorLayout = HB_DNN_LAYOUT_NHWC; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("F32 type", [](T t) { t->properties.tensorType = HB_DNN_TENSOR_TYPE_F32; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("buffer 1 byte short", [](T t) { t->sysMem[0].memSize -= 1; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("NV12_SEPARATE without a UV buffer", [](T t) { t->properties.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE; }), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(bad_frame("NULL frame", [](T t) { t->sysMem[0].virAddr = nullptr; }), HB_DNN_INVALID_ARGUMENT);
  // The outputs.
  {
    Outputs o(resizer_.dnn, 1);  // one batch's size for three
    EXPECT_EQ(call(in, good, &o, resizer_.dnn, batch, ctrl(), "output not batched"), HB_DNN_INVALID_ARGUMENT);
  }
  {
    Outputs o(resizer_.dnn, batch);
    o.t[0].sysMem[0].memSize -= 1;
    EXPECT_EQ(call(in, good, &o, resizer_.dnn, batch, ctrl(), "output buffer short"), HB_DNN_INVALID_ARGUMENT);
    o.t[0].sysMem[0].memSize += 1;
    o.t[0].properties.alignedShape.dimensionSize[1] += 1;
    EXPECT_EQ(call(in, good, &o, resizer_.dnn, batch, ctrl(), "output alignedShape"), HB_DNN_INVALID_ARGUMENT);
    o.t[0].properties.alignedShape.dimensionSize[1] -= 1;
    o.t[0].properties.tensorType = HB_DNN_TENSOR_TYPE_S32;
    EXPECT_EQ(call(in, good, &o, resizer_.dnn, batch, ctrl(), "output type"), HB_DNN_INVALID_ARGUMENT);
  }
  // The control parameters.
  hbDNNInferCtrlParam p = ctrl();
  p.priority = 256;
  EXPECT_EQ(call(in, good, &out, resizer_.dnn, batch, p, "priority 256"), HB_DNN_INVALID_ARGUMENT);
  p = ctrl();
  p.bpuCoreId = 4;  // X3 has cores 0 and 1
  EXPECT_EQ(call(in, good, &out, resizer_.dnn, batch, p, "core 2"), HB_DNN_INVALID_ARGUMENT);
  // NULL arguments and a task handle that is not a task.
  std::vector<hbDNNTensor> in2 = in;
  std::vector<hbDNNRoi> r = good;
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* o = out.t.data();
  hbDNNTensor* null_out = nullptr;
  p = ctrl();
  EXPECT_EQ(hbDNNRoiInfer(nullptr, &o, in2.data(), r.data(), batch, resizer_.dnn, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRoiInfer(&task, nullptr, in2.data(), r.data(), batch, resizer_.dnn, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRoiInfer(&task, &null_out, in2.data(), r.data(), batch, resizer_.dnn, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRoiInfer(&task, &o, nullptr, r.data(), batch, resizer_.dnn, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRoiInfer(&task, &o, in2.data(), nullptr, batch, resizer_.dnn, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNRoiInfer(&task, &o, in2.data(), r.data(), batch, resizer_.dnn, nullptr), HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(task, nullptr);
  hbDNNTaskHandle_t not_a_task = &dummy;
  EXPECT_EQ(hbDNNRoiInfer(&not_a_task, &o, in2.data(), r.data(), batch, resizer_.dnn, &p), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_TRUE(out.untouched());
}

// A task chains at most 255 runs: 200 ROI batches and then 56 more is
// HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT, and the open task stays usable.
TEST_F(api_RoiInfer, RunsPerTaskLimit) {
  Frame f(resizer_.dnn, frame_, kFrameH, kFrameW, kFrameW, false);
  std::vector<hbDNNTensor> in(200, f.t);
  std::vector<hbDNNRoi> r(200, hbDNNRoi{0, 0, 31, 31});
  Outputs o1(resizer_.dnn, 200), o2(resizer_.dnn, 56), o3(resizer_.dnn, 55);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* p1 = o1.t.data();
  hbDNNTensor* p2 = o2.t.data();
  hbDNNTensor* p3 = o3.t.data();
  hbDNNInferCtrlParam more = ctrl(true), last = ctrl(false);
  ASSERT_EQ(hbDNNRoiInfer(&task, &p1, in.data(), r.data(), 200, resizer_.dnn, &more), 0);
  EXPECT_EQ(hbDNNRoiInfer(&task, &p2, in.data(), r.data(), 56, resizer_.dnn, &last), HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT);
  EXPECT_TRUE(o2.untouched());
  ASSERT_EQ(hbDNNRoiInfer(&task, &p3, in.data(), r.data(), 55, resizer_.dnn, &last), 0);
  ASSERT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_EQ(hbDNNReleaseTask(task), 0);
  const auto want = reference({0, 0, 31, 31})[0];
  EXPECT_EQ(o1.bytes(0, 199), want);
  EXPECT_EQ(o3.bytes(0, 54), want);
}

}  // namespace
