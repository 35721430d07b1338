// SPDX-License-Identifier: Apache-2.0
// Opset-dependent semantics the backend data (always the newest opset of
// each operator) does not exercise: Softmax's pre-13 flattening, attribute
// forms of Clip / Pad / Slice / Split / ReduceSum, Resize-10 and Upsample-7,
// legacy broadcasting, and the `__opset` attribute.
#include <cmath>

#include <gtest/gtest.h>

#include "tests/cpu_ops/op_test_util.h"

namespace openbpu::rt::test {
namespace {

void set_opset(CpuOpDef* d, int64_t v) { set_int(d, kOpsetAttr, v); }

TEST(CpuOpsSemantics, SoftmaxFlattensBeforeOpset13) {
  std::vector<float> v(2 * 3 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.1f;
  T x = f32({2, 3, 2}, v), y11 = f32({2, 3, 2}), y13 = f32({2, 3, 2});
  CpuOpDef d = op("Softmax");
  set_int(&d, "axis", 1);
  set_opset(&d, 11);
  ASSERT_TRUE(run_op(d, {&x}, {&y11}).ok());
  set_opset(&d, 13);
  ASSERT_TRUE(run_op(d, {&x}, {&y13}).ok());
  // Opset 11: each batch's 6 values sum to 1. Opset 13: each column of 3.
  for (int b = 0; b < 2; ++b) {
    double s = 0;
    for (int i = 0; i < 6; ++i) s += y11.as<float>()[b * 6 + i];
    EXPECT_NEAR(s, 1.0, 1e-6);
    for (int j = 0; j < 2; ++j) {
      double c = 0;
      for (int i = 0; i < 3; ++i) c += y13.as<float>()[b * 6 + i * 2 + j];
      EXPECT_NEAR(c, 1.0, 1e-6);
    }
  }
  // No __opset attribute = latest semantics; opset < 13 default axis is 1.
  CpuOpDef latest = op("Softmax");
  T y = f32({2, 3, 2});
  ASSERT_TRUE(run_op(latest, {&x}, {&y}).ok());
  EXPECT_NEAR(y.as<float>()[0] + y.as<float>()[1], 1.0, 1e-6);
  CpuOpDef old = op("LogSoftmax");
  set_opset(&old, 9);
  ASSERT_TRUE(run_op(old, {&x}, {&y}).ok());
  double s = 0;
  for (int i = 0; i < 6; ++i) s += std::exp(y.as<float>()[i]);
  EXPECT_NEAR(s, 1.0, 1e-6);
}

TEST(CpuOpsSemantics, ClipAttributesAndInputs) {
  T x = f32({4}, {-2, -0.5f, 0.5f, 2}), y = f32({4});
  CpuOpDef d6 = op("Clip");
  set_opset(&d6, 6);
  set_float(&d6, "min", -1);
  set_float(&d6, "max", 1);
  ASSERT_TRUE(run_op(d6, {&x}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{-1, -0.5f, 0.5f, 1}));
  CpuOpDef d11 = op("Clip");
  set_opset(&d11, 11);
  T lo = f32({}, {0.0f});
  ASSERT_TRUE(run_op(d11, {&x, &lo, nullptr}, {&y}).ok());  // max absent
  EXPECT_EQ(y.floats(), (std::vector<float>{0, 0, 0.5f, 2}));
  ASSERT_TRUE(run_op(d11, {&x}, {&y}).ok());  // no bounds: identity
  EXPECT_EQ(y.floats(), x.floats());
}

// openbpu::Swish (the converter's fused SiLU, placed on the CPU between CPU
// MatMuls on bernoulli2): x * sigmoid(x).
TEST(CpuOpsSemantics, OpenbpuSwish) {
  T x = f32({4}, {-4, -0.5f, 0, 3}), y = f32({4});
  CpuOpDef d = op("Swish");
  d.domain = "openbpu";
  ASSERT_TRUE(run_op(d, {&x}, {&y}).ok());
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(y.floats()[i], x.floats()[i] / (1 + std::exp(-x.floats()[i])), 1e-6f) << i;
}

TEST(CpuOpsSemantics, PadAttributeFormAndModes) {
  T x = f32({1, 3}, {1, 2, 3});
  T y = f32({1, 7});
  CpuOpDef d = op("Pad");
  set_opset(&d, 2);
  set_ints(&d, "pads", {0, 2, 0, 2});
  set_float(&d, "value", 9);
  ASSERT_TRUE(run_op(d, {&x}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{9, 9, 1, 2, 3, 9, 9}));
  set_string(&d, "mode", "reflect");
  ASSERT_TRUE(run_op(d, {&x}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  set_string(&d, "mode", "edge");
  ASSERT_TRUE(run_op(d, {&x}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{1, 1, 1, 2, 3, 3, 3}));
  // Opset 11 input form; negative pads crop.
  CpuOpDef d11 = op("Pad");
  set_opset(&d11, 11);
  T pads = i64({4}, {0, -1, 0, 1});
  T v = f32({}, {5.0f});
  T y2 = f32({1, 3});
  ASSERT_TRUE(run_op(d11, {&x, &pads, &v}, {&y2}).ok());
  EXPECT_EQ(y2.floats(), (std::vector<float>{2, 3, 5}));
}

TEST(CpuOpsSemantics, SliceAttributeFormAndNegativeSteps) {
  T x = f32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  T y = f32({2, 2});
  CpuOpDef d = op("Slice");
  set_opset(&d, 9);
  set_ints(&d, "starts", {1});
  set_ints(&d, "ends", {3});
  set_ints(&d, "axes", {1});
  ASSERT_TRUE(run_op(d, {&x}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{1, 2, 5, 6}));
  CpuOpDef d13 = op("Slice");
  T starts = i64({1}, {-1}), ends = i64({1}, {INT64_MIN}), axes = i64({1}, {1}),
    steps = i64({1}, {-2});
  ASSERT_TRUE(run_op(d13, {&x, &starts, &ends, &axes, &steps}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{3, 1, 7, 5}));
}

TEST(CpuOpsSemantics, SplitAttributeInputAndEqual) {
  QuietLog quiet;
  T x = f32({5}, {0, 1, 2, 3, 4});
  T a = f32({2}), b = f32({3});
  CpuOpDef d = op("Split");
  set_opset(&d, 11);
  set_ints(&d, "split", {2, 3});
  ASSERT_TRUE(run_op(d, {&x}, {&a, &b}).ok());
  EXPECT_EQ(b.floats(), (std::vector<float>{2, 3, 4}));
  CpuOpDef d13 = op("Split");
  T split = i64({2}, {2, 3});
  ASSERT_TRUE(run_op(d13, {&x, &split}, {&a, &b}).ok());
  EXPECT_EQ(a.floats(), (std::vector<float>{0, 1}));
  T bad = i64({2}, {3, 2});
  EXPECT_FALSE(run_op(d13, {&x, &bad}, {&a, &b}).ok());  // disagrees with the outputs
  set_ints(&d, "split", {3, 2});
  EXPECT_EQ(run_op(d, {&x}, {&a, &b}).code(), kInvalidModel);
}

TEST(CpuOpsSemantics, ReduceAxesAttributeInputAndNoop) {
  QuietLog quiet;
  T x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  T y = f32({2, 1});
  CpuOpDef d = op("ReduceSum");
  set_opset(&d, 11);
  set_ints(&d, "axes", {1});
  ASSERT_TRUE(run_op(d, {&x}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{6, 15}));
  CpuOpDef d13 = op("ReduceSum");
  T axes = i64({1}, {-1});
  ASSERT_TRUE(run_op(d13, {&x, &axes}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{6, 15}));
  // Empty axes: reduce all, or identity with noop_with_empty_axes.
  T all = f32({1, 1}), same = f32({2, 3});
  T none = i64({0}, {});
  ASSERT_TRUE(run_op(d13, {&x, &none}, {&all}).ok());
  EXPECT_EQ(all.floats(), (std::vector<float>{21}));
  set_int(&d13, "noop_with_empty_axes", 1);
  ASSERT_TRUE(run_op(d13, {&x, &none}, {&same}).ok());
  EXPECT_EQ(same.floats(), x.floats());
  // Wrong keepdims shape.
  CpuOpDef k0 = op("ReduceMean");
  set_ints(&k0, "axes", {1});
  set_int(&k0, "keepdims", 0);
  EXPECT_EQ(run_op(k0, {&x}, {&y}).code(), kInvalidModel);
  T y1 = f32({2});
  ASSERT_TRUE(run_op(k0, {&x}, {&y1}).ok());
  EXPECT_EQ(y1.floats(), (std::vector<float>{2, 5}));
}

TEST(CpuOpsSemantics, ResizeOpset10AndUpsample) {
  T x = f32({1, 1, 1, 3}, {1, 2, 3});
  T scales = f32({4}, {1, 1, 1, 2});
  T y = f32({1, 1, 1, 6});
  // Resize-10 / Upsample-9: asymmetric, nearest = floor(x / scale).
  CpuOpDef r10 = op("Resize");
  set_opset(&r10, 10);
  ASSERT_TRUE(run_op(r10, {&x, &scales}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{1, 1, 2, 2, 3, 3}));
  set_string(&r10, "mode", "linear");
  ASSERT_TRUE(run_op(r10, {&x, &scales}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{1, 1.5f, 2, 2.5f, 3, 3}));
  CpuOpDef u7 = op("Upsample");
  set_opset(&u7, 7);
  AttrValue s;
  s.type = AttrValue::kFloats;
  s.floats = {1, 1, 1, 2};
  u7.attrs.set("scales", s);
  ASSERT_TRUE(run_op(u7, {&x}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{1, 1, 2, 2, 3, 3}));
  // Resize-10 shrinking: nearest takes ceil(x / scale) (ONNX Runtime's rule).
  T x5 = f32({1, 1, 1, 5}, {0, 1, 2, 3, 4}), half = f32({4}, {1, 1, 1, 0.6f}), y3 = f32({1, 1, 1, 3});
  CpuOpDef r10n = op("Resize");
  set_opset(&r10n, 10);
  ASSERT_TRUE(run_op(r10n, {&x5, &half}, {&y3}).ok());
  EXPECT_EQ(y3.floats(), (std::vector<float>{0, 2, 4}));
  // Resize-11+ defaults: half_pixel + round_prefer_floor; linear half_pixel.
  CpuOpDef r13 = op("Resize");
  set_string(&r13, "mode", "linear");
  ASSERT_TRUE(run_op(r13, {&x, nullptr, &scales}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{1, 1.25f, 1.75f, 2.25f, 2.75f, 3}));
  // align_corners with sizes.
  set_string(&r13, "coordinate_transformation_mode", "align_corners");
  T sizes = i64({4}, {1, 1, 1, 5});
  T y5 = f32({1, 1, 1, 5});
  ASSERT_TRUE(run_op(r13, {&x, nullptr, nullptr, &sizes}, {&y5}).ok());
  EXPECT_EQ(y5.floats(), (std::vector<float>{1, 1.5f, 2, 2.5f, 3}));
}

TEST(CpuOpsSemantics, LegacyBroadcastAxis) {
  QuietLog quiet;
  // Opset 6 Add with broadcast=1, axis=0: B [2] lines up with A's dim 0.
  T a = f32({2, 3}, {0, 0, 0, 0, 0, 0}), b = f32({2}, {1, 2}), y = f32({2, 3});
  CpuOpDef d = op("Add");
  set_opset(&d, 6);
  set_int(&d, "broadcast", 1);
  set_int(&d, "axis", 0);
  ASSERT_TRUE(run_op(d, {&a, &b}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{1, 1, 1, 2, 2, 2}));
  CpuOpDef numpy = op("Add");  // numpy rules: [2] does not broadcast to [2,3]
  EXPECT_EQ(run_op(numpy, {&a, &b}, {&y}).code(), kInvalidModel);
}

TEST(CpuOpsSemantics, IntegerDivisionAndModByZeroDoNotTrap) {
  T a(kS32, {3}), b(kS32, {3}), y(kS32, {3});
  const int32_t av[] = {7, -7, INT32_MIN}, bv[] = {0, 2, -1};
  std::memcpy(a.bytes.data(), av, 12);
  std::memcpy(b.bytes.data(), bv, 12);
  ASSERT_TRUE(run_op(op("Div"), {&a, &b}, {&y}).ok());
  EXPECT_EQ(y.as<int32_t>()[0], 0);
  EXPECT_EQ(y.as<int32_t>()[1], -3);
  ASSERT_TRUE(run_op(op("Mod"), {&a, &b}, {&y}).ok());
  EXPECT_EQ(y.as<int32_t>()[0], 0);
  EXPECT_EQ(y.as<int32_t>()[1], 1);  // Python-style: sign of the divisor
  EXPECT_EQ(y.as<int32_t>()[2], 0);
}

// The reverse half of a bidirectional LSTM with sequence_lens equals a
// forward LSTM over each sequence reversed; the backend data has no
// bidirectional or reverse case.
TEST(CpuOpsSemantics, BidirectionalLstmWithSequenceLengths) {
  const int64_t seq = 5, batch = 2, input = 3, hidden = 4, g = 4 * hidden;
  T x = f32({seq, batch, input}), w = f32({2, g, input}), r = f32({2, g, hidden}),
    b = f32({2, 2 * g});
  fill_random(&x, 1);
  fill_random(&w, 2, -0.5f, 0.5f);
  fill_random(&r, 3, -0.5f, 0.5f);
  fill_random(&b, 4, -0.5f, 0.5f);
  T lens(kS32, {batch});
  lens.as<int32_t>()[0] = 5;
  lens.as<int32_t>()[1] = 3;
  T y = f32({seq, 2, batch, hidden}), yh = f32({2, batch, hidden});
  CpuOpDef d = op("LSTM");
  set_string(&d, "direction", "bidirectional");
  set_int(&d, "hidden_size", hidden);
  ASSERT_TRUE(run_op(d, {&x, &w, &r, &b, &lens}, {&y, &yh}).ok());
  auto Y = [&](int64_t t, int64_t dir, int64_t bb, int64_t j) {
    return y.as<float>()[((t * 2 + dir) * batch + bb) * hidden + j];
  };
  for (int64_t bb = 0; bb < batch; ++bb) {
    const int64_t len = lens.as<int32_t>()[bb];
    // Forward LSTM with the reverse direction's weights over x reversed.
    T xr = f32({len, 1, input}), w1 = f32({1, g, input}), r1 = f32({1, g, hidden}),
      b1 = f32({1, 2 * g});
    for (int64_t t = 0; t < len; ++t)
      for (int64_t i = 0; i < input; ++i)
        xr.as<float>()[t * input + i] = x.as<float>()[((len - 1 - t) * batch + bb) * input + i];
    std::memcpy(w1.bytes.data(), w.as<float>() + g * input, sizeof(float) * g * input);
    std::memcpy(r1.bytes.data(), r.as<float>() + g * hidden, sizeof(float) * g * hidden);
    std::memcpy(b1.bytes.data(), b.as<float>() + 2 * g, sizeof(float) * 2 * g);
    T yf = f32({len, 1, 1, hidden}), yhf = f32({1, 1, hidden});
    CpuOpDef fwd = op("LSTM");
    set_int(&fwd, "hidden_size", hidden);
    ASSERT_TRUE(run_op(fwd, {&xr, &w1, &r1, &b1}, {&yf, &yhf}).ok());
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t j = 0; j < hidden; ++j) {
        const float want = t < len ? yf.as<float>()[(len - 1 - t) * hidden + j] : 0.0f;
        EXPECT_NEAR(Y(t, 1, bb, j), want, 1e-6) << "t=" << t << " b=" << bb;
        if (t >= len) {
          EXPECT_EQ(Y(t, 0, bb, j), 0.0f);
        }
      }
    for (int64_t j = 0; j < hidden; ++j) {
      EXPECT_NEAR(yh.as<float>()[(1 * batch + bb) * hidden + j], yhf.as<float>()[j], 1e-6);
      EXPECT_EQ(yh.as<float>()[(0 * batch + bb) * hidden + j], Y(len - 1, 0, bb, j));
    }
  }
}

TEST(CpuOpsSemantics, EinsumEllipsisMatchesMatMul) {
  T a = f32({2, 3, 4, 5}), b = f32({5, 6}), y1 = f32({2, 3, 4, 6}), y2 = f32({2, 3, 4, 6});
  fill_random(&a, 5);
  fill_random(&b, 6);
  CpuOpDef e = op("Einsum");
  set_string(&e, "equation", "...ij,jk->...ik");
  ASSERT_TRUE(run_op(e, {&a, &b}, {&y1}).ok());
  ASSERT_TRUE(run_op(op("MatMul"), {&a, &b}, {&y2}).ok());
  for (int64_t i = 0; i < y1.count(); ++i) EXPECT_NEAR(y1.as<float>()[i], y2.as<float>()[i], 1e-5);
}

TEST(CpuOpsSemantics, GroupNormalization) {
  T x = f32({1, 4, 2}, {1, 2, 3, 4, 10, 20, 30, 40}), s = f32({2}, {1, 2}), b = f32({2}, {0, 1}),
    y = f32({1, 4, 2});
  CpuOpDef d = op("GroupNormalization");
  set_int(&d, "num_groups", 2);
  set_float(&d, "epsilon", 0.0f);
  ASSERT_TRUE(run_op(d, {&x, &s, &b}, {&y}).ok());
  const float k = 1.0f / std::sqrt(1.25f);  // group {1,2,3,4}: mean 2.5, var 1.25
  EXPECT_NEAR(y.as<float>()[0], -1.5f * k, 1e-6);
  EXPECT_NEAR(y.as<float>()[7], 2 * 1.5f * k + 1, 1e-5);
}

}  // namespace
}  // namespace openbpu::rt::test
