// SPDX-License-Identifier: Apache-2.0
// obpuInferWithLayerOutputs: the writer-built tiny CNN reports its CPU
// operators and its BPU subgraph in execution order, with the values an
// independent integer computation gives (TinyCnn::expected); a callback can
// stop the run; bad arguments are errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "openbpu/openbpu.h"
#include "tests/common/test_models.h"

namespace {

using openbpu::testing::TinyCnn;

struct Seen {
  std::string name, op, nodes, tensor;
  int on_bpu = 0, segment = 0, first = 0, count = 0;
  std::vector<float> values;  // valid values dequantized, NCHW order
};

// Independent reading of a reported layer: valid elements by the reported
// byte strides, dequantized per channel of the quantize axis; NHWC 4-D
// values reordered to NCHW.
std::vector<float> read_values(const obpuLayerOutput& l) {
  const hbDNNTensorProperties& p = l.properties;
  const int n = p.validShape.numDimensions;
  std::vector<int> d(p.validShape.dimensionSize, p.validShape.dimensionSize + n);
  std::vector<float> out;
  std::vector<int> idx(static_cast<size_t>(n), 0);
  int64_t total = 1;
  for (int x : d) total *= x;
  for (int64_t e = 0; e < total; ++e) {
    int64_t off = 0;
    for (int k = 0; k < n; ++k) off += static_cast<int64_t>(idx[k]) * p.stride[k];
    const auto* at = static_cast<const uint8_t*>(l.data) + off;
    double v = 0;
    if (p.tensorType == HB_DNN_TENSOR_TYPE_F32) {
      float f;
      std::memcpy(&f, at, 4);
      v = f;
    } else if (p.tensorType == HB_DNN_TENSOR_TYPE_S32) {
      int32_t i;
      std::memcpy(&i, at, 4);
      v = i;
    } else if (p.tensorType == HB_DNN_TENSOR_TYPE_S8) {
      v = static_cast<int8_t>(*at);
    }
    if (p.quantiType == SCALE && p.tensorType != HB_DNN_TENSOR_TYPE_F32)
      v *= p.scale.scaleData[p.scale.scaleLen == 1 ? 0 : idx[static_cast<size_t>(p.quantizeAxis)]];
    out.push_back(static_cast<float>(v));
    for (int k = n - 1; k >= 0; --k) {
      if (++idx[static_cast<size_t>(k)] < d[static_cast<size_t>(k)]) break;
      idx[static_cast<size_t>(k)] = 0;
    }
  }
  if (p.tensorLayout == HB_DNN_LAYOUT_NHWC && n == 4) {
    std::vector<float> nchw(out.size());
    for (int b = 0; b < d[0]; ++b)
      for (int y = 0; y < d[1]; ++y)
        for (int x = 0; x < d[2]; ++x)
          for (int c = 0; c < d[3]; ++c)
            nchw[((static_cast<size_t>(b) * d[3] + c) * d[1] + y) * d[2] + x] =
                out[((static_cast<size_t>(b) * d[1] + y) * d[2] + x) * d[3] + c];
    out.swap(nchw);
  }
  return out;
}

int32_t collect(obpuLayerOutput const* l, void* user) {
  auto* seen = static_cast<std::vector<Seen>*>(user);
  seen->push_back({l->name, l->opType, l->nodes, l->tensorName, l->onBpu, l->segmentIndex, l->firstInstruction,
                   l->instructionCount, read_values(*l)});
  return 0;
}

int32_t stop(obpuLayerOutput const*, void*) { return 1; }

class ModelRun {
 public:
  explicit ModelRun(const std::vector<uint8_t>& file) {
    const void* p = file.data();
    int32_t len = static_cast<int32_t>(file.size());
    load_rc = hbDNNInitializeFromDDR(&pack, &p, &len, 1);
    if (load_rc != HB_DNN_SUCCESS) return;
    char const** names = nullptr;
    int32_t count = 0;
    hbDNNGetModelNameList(&names, &count, pack);
    hbDNNGetModelHandle(&model, pack, names[0]);
    hbDNNGetInputTensorProperties(&in.properties, model, 0);
    hbDNNGetOutputTensorProperties(&out.properties, model, 0);
    ib.resize(static_cast<size_t>(in.properties.alignedByteSize));
    ob.resize(static_cast<size_t>(out.properties.alignedByteSize));
    in.sysMem[0].virAddr = ib.data();
    in.sysMem[0].memSize = static_cast<uint32_t>(ib.size());
    out.sysMem[0].virAddr = ob.data();
    out.sysMem[0].memSize = static_cast<uint32_t>(ob.size());
  }
  ~ModelRun() {
    if (pack) hbDNNRelease(pack);
  }
  int32_t infer(obpuLayerOutputCallback cb, void* user) {
    hbDNNTensor* o = &out;
    return obpuInferWithLayerOutputs(&o, &in, model, cb, user);
  }
  int32_t load_rc = -1;
  hbPackedDNNHandle_t pack = nullptr;
  hbDNNHandle_t model = nullptr;
  hbDNNTensor in{}, out{};
  std::vector<uint8_t> ib, ob;
};

TEST(api_LayerOutputs, EverySegmentInOrderWithIndependentValues) {
  TinyCnn net;
  ModelRun r(net.build());
  ASSERT_EQ(r.load_rc, HB_DNN_SUCCESS);
  const std::vector<float> x = net.random_input(3);
  std::memcpy(r.ib.data(), x.data(), x.size() * sizeof(float));
  std::vector<Seen> seen;
  ASSERT_EQ(r.infer(collect, &seen), HB_DNN_SUCCESS);
  const std::vector<float> y = net.expected(x);
  ASSERT_EQ(seen.size(), 3u);
  // The input Quantize (CPU): the input to within half a quantization step.
  EXPECT_EQ(seen[0].on_bpu, 0);
  EXPECT_EQ(seen[0].op, "Quantize");
  EXPECT_EQ(seen[0].segment, 0);
  ASSERT_EQ(seen[0].values.size(), x.size());
  float max_err = 0;
  for (size_t i = 0; i < x.size(); ++i) max_err = std::max(max_err, std::fabs(seen[0].values[i] - x[i]));
  EXPECT_GT(max_err, 0.0f);
  EXPECT_LT(max_err, 0.05f);
  // The BPU subgraph: its integer output, dequantized by its scales, is the
  // model's float output.
  EXPECT_EQ(seen[1].name, "TINY_subgraph_0");
  EXPECT_EQ(seen[1].on_bpu, 1);
  EXPECT_EQ(seen[1].op, "");
  EXPECT_EQ(seen[1].segment, 1);
  EXPECT_EQ(seen[1].tensor, "conv2_out");
  EXPECT_EQ(seen[1].first, 0);
  EXPECT_EQ(seen[1].count, 0);
  EXPECT_EQ(seen[1].values, y);
  // The output Dequantize (CPU) and the run's output.
  EXPECT_EQ(seen[2].on_bpu, 0);
  EXPECT_EQ(seen[2].op, "Dequantize");
  EXPECT_EQ(seen[2].values, y);
  std::vector<float> got(y.size());
  std::memcpy(got.data(), r.ob.data(), got.size() * sizeof(float));
  EXPECT_EQ(got, y);
}

TEST(api_LayerOutputs, CallbackStopsAndBadArguments) {
  TinyCnn net;
  ModelRun r(net.build());
  ASSERT_EQ(r.load_rc, HB_DNN_SUCCESS);
  EXPECT_EQ(r.infer(stop, nullptr), HB_DNN_RUN_TASK_FAILED);
  EXPECT_EQ(r.infer(nullptr, nullptr), HB_DNN_INVALID_ARGUMENT);
  hbDNNTensor* o = &r.out;
  EXPECT_EQ(obpuInferWithLayerOutputs(&o, &r.in, nullptr, collect, nullptr), HB_DNN_INVALID_DNN_HANDLE);
}

}  // namespace
