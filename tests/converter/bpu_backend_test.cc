// SPDX-License-Identifier: Apache-2.0
// BPU table lookups, transposes, means and softmax against the ONNX backend test data
// (/usr/share/libonnx-testdata/data/node): each case's one-node model is
// converted for the BPU (calibrated on the case's own input, int8 and int16
// activations) and run on the host through the simulator's reference
// kernels. Every output element must lie within the error quantization
// allows it: the change of the float function over one input step (one
// table interval for int16) plus one output step.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "converter/codegen/compiler.h"
#include "converter/frontend/onnx/onnx_io.h"
#include "converter/passes/passes.h"
#include "converter/quant/calibration.h"
#include "converter/quant/method_search.h"
#include "tests/converter/graph_builder.h"

namespace openbpu::cvt {
namespace {

using namespace graph_test;  // run()

const std::string kData = OPENBPU_ONNX_TESTDATA "/node/";

bool read_tensor(const std::string& path, Value* v) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto t;
  std::string err;
  return f && t.ParseFromString(ss.str()) && onnxio::value_from_tensor(t, "", v, &err);
}

// The same values with every element moved by `delta` (`alternate`: every
// other element by -delta, which moves a shift-invariant function like
// Softmax as far as rounding its inputs can).
Value shifted(const Value& v, double delta, bool alternate = false) {
  std::vector<double> x = v.to_doubles();
  std::vector<float> f(x.begin(), x.end());
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(f[i] + (alternate && i % 2 ? -delta : delta));
  Value s = v;
  std::vector<uint8_t> b(f.size() * 4);
  std::memcpy(b.data(), f.data(), b.size());
  s.data = std::make_shared<const std::vector<uint8_t>>(std::move(b));
  return s;
}

class BpuBackendTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BpuBackendTest, WithinQuantizationError) {
  const std::string dir = kData + GetParam();
  Graph g;
  std::string err;
  if (!std::ifstream(dir + "/model.onnx")) GTEST_SKIP() << "no ONNX backend test data in " << dir;
  ASSERT_TRUE(onnxio::load_model(dir + "/model.onnx", &g, &err)) << err;
  ASSERT_EQ(g.nodes.size(), 1u);
  ASSERT_EQ(g.inputs.size(), 1u);
  Value x, expected;
  ASSERT_TRUE(read_tensor(dir + "/test_data_set_0/input_0.pb", &x));
  ASSERT_TRUE(read_tensor(dir + "/test_data_set_0/output_0.pb", &expected));
  x.name = g.inputs[0];
  const Sample sample = {{g.inputs[0], x}};
  ASSERT_GE(fold_constants(&g, &err), 0) << err;
  PlacementOptions po;
  po.march = isa::find_march("bayes-e");
  po.run_on_bpu.insert(g.nodes[0].name);
  const Placement pl = place(&g, po);
  ASSERT_EQ(pl.nodes[0].device, Device::kBpu) << pl.nodes[0].reason;
  FloatExecutor fe;
  CalibrationStats stats;
  ASSERT_TRUE(fe.prepare(g, &err) && collect_stats(fe, {sample}, &stats, &err)) << err;
  const auto thr = thresholds_for(g, stats, CalCandidate{});
  const std::string y = g.outputs[0];
  const auto e = expected.to_doubles();
  for (const bool int16 : {false, true}) {
    CompileOptions co;
    co.march = po.march;
    co.all_int16 = int16;
    CompiledModel cm;
    ASSERT_TRUE(compile(g, pl, thr, co, &cm, &err)) << err;
    const double qmax = int16 ? 32767.0 : 127.0;
    const double s_in = thr.at(g.inputs[0]) / qmax, s_out = thr.at(y) / qmax;
    // One input step for int8 tables; one table interval (128 steps) for
    // the interpolated int16 tables.
    const double step = int16 ? 128 * s_in : s_in;
    const auto f = run(g, sample).at(y), q = run(cm.graph, sample).at(y);
    std::vector<std::vector<double>> moved;
    for (const bool alt : {false, true})
      for (const double d : {step, -step}) moved.push_back(run(g, {{x.name, shifted(x, d, alt)}}).at(y));
    ASSERT_EQ(q.size(), e.size());
    for (size_t i = 0; i < e.size(); ++i) {
      double tol = s_out + 1e-5 * (1 + std::fabs(e[i]));
      double dev = 0;
      for (const auto& m : moved) dev = std::max(dev, std::fabs(m[i] - f[i]));
      tol += dev;
      EXPECT_NEAR(q[i], e[i], tol) << GetParam() << (int16 ? " int16" : " int8") << " element " << i;
    }
  }
}

// The cases whose model the converter accepts (opset 7 and later) with an
// input of rank 2 or more. Not here: the opset-6 and older models of elu,
// selu, softplus and hardsigmoid (makertbin refuses opsets below 7), and the
// *_example cases, whose 1-D inputs get a quantized graph the CPU Quantize
// node rejects (a rank-1 value is one channel in the converter, the runtime
// pads it at the end).
INSTANTIATE_TEST_SUITE_P(
    Node, BpuBackendTest,
    ::testing::Values("test_sigmoid", "test_tanh", "test_exp", "test_erf", "test_abs", "test_neg", "test_relu",
                      "test_leakyrelu", "test_leakyrelu_default", "test_hardswish", "test_reciprocal", "test_sqrt",
                      // data movement and reductions over other axes than the last
                      "test_transpose_default", "test_transpose_all_permutations_3", "test_reduce_mean_keepdims_random",
                      "test_reduce_mean_do_not_keepdims_random", "test_reduce_mean_negative_axes_keepdims_random",
                      "test_softmax_axis_1", "test_softmax_default_axis"),
    [](const ::testing::TestParamInfo<std::string>& i) { return i.param.substr(5); });

}  // namespace
}  // namespace openbpu::cvt
