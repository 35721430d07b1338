// SPDX-License-Identifier: Apache-2.0
// Every float pass preserves the graph's results: small graphs with each
// pattern are run by the float executor before and after the pass on random
// inputs; the pass must have rewritten something and outputs must agree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "converter/frontend/onnx/legalize.h"
#include "converter/ir/executor.h"
#include "converter/passes/passes.h"
#include "tests/converter/graph_builder.h"

namespace openbpu::cvt {
namespace {

using namespace graph_test;  // the shared graph builder

// Shape inference, then the pass; checks it rewrote and preserved results.
void check_pass(Builder& b, int (*pass)(Graph*, std::string*), int min_rewrites = 1, double tol = 1e-4) {
  std::string err;
  ASSERT_GE(fold_constants(&b.g, &err), 0) << err;
  const Graph before = b.g;
  const int n = pass(&b.g, &err);
  ASSERT_GE(n, min_rewrites) << "pass made no rewrite; " << err;
  b.g.remove_dead();
  ASSERT_TRUE(b.g.topo_sort(&err)) << err;
  for (uint32_t seed : {1u, 2u, 3u}) {
    const auto in = random_inputs(before, seed);
    const auto r0 = run(before, in), r1 = run(b.g, in);
    for (const auto& [name, v0] : r0) {
      const auto& v1 = r1.at(name);
      ASSERT_EQ(v0.size(), v1.size()) << name;
      for (size_t i = 0; i < v0.size(); ++i)
        ASSERT_NEAR(v1[i], v0[i], tol * (1.0 + std::fabs(v0[i]))) << name << "[" << i << "] seed " << seed;
    }
  }
}

TEST(Passes, RemoveIdentityDropoutAndNoopReshape) {
  Builder b;
  std::string x = b.input("x", {1, 4, 5, 5});
  x = b.node("Identity", {x});
  x = b.node("Relu", {x});
  x = b.node("Dropout", {x});
  x = b.node("Reshape", {x, b.ints("shape", {1, 4, 5, 5})});
  b.output(b.node("Sigmoid", {x}));
  check_pass(b, remove_identity, 3);
  for (const auto& n : b.g.nodes) EXPECT_TRUE(n.op_type == "Relu" || n.op_type == "Sigmoid") << n.op_type;
}

// x * 1, 1 * x, x / 1, x + 0, x - 0 go; x * 2, 1 / x, 0 - x and a neutral
// scalar of higher rank (it broadcasts the output to rank 4) stay.
TEST(Passes, RemoveIdentityNeutralScalarArithmetic) {
  Builder b;
  std::string x = b.input("x", {1, 4, 5});
  x = b.node("Mul", {x, b.scalar(1.0f)});
  x = b.node("Mul", {b.scalar(1.0f), x});
  x = b.node("Div", {x, b.scalar(1.0f)});
  x = b.node("Add", {x, b.scalar(0.0f)});
  x = b.node("Sub", {x, b.scalar(0.0f)});
  x = b.node("Mul", {x, b.scalar(2.0f)});
  x = b.node("Div", {b.scalar(1.0f), x});
  x = b.node("Sub", {b.scalar(0.0f), x});
  x = b.node("Mul", {x, b.constant_values("one4", {1, 1, 1, 1}, {1.0f})});
  b.output(b.node("Sigmoid", {x}));
  check_pass(b, remove_identity, 5);
  EXPECT_EQ(b.g.nodes.size(), 5u);
}

TEST(Passes, FoldBatchNormIntoConv) {
  Builder b;
  const std::string x = b.input("x", {1, 3, 8, 8});
  std::string c = b.node("Conv", {x, b.constant("w", {6, 3, 3, 3}), b.constant("bias", {6})}, ints_attr("pads", {1, 1, 1, 1}));
  c = b.node("BatchNormalization", {c, b.constant("g", {6}, 0.5f, 1.5f), b.constant("beta", {6}),
                                    b.constant("mean", {6}), b.constant("var", {6}, 0.5f, 2.0f)});
  b.output(b.node("Relu", {c}));
  check_pass(b, fold_batchnorm);
  for (const auto& n : b.g.nodes) EXPECT_NE(n.op_type, "BatchNormalization");
}

TEST(Passes, FoldPerChannelMulAddIntoConv) {
  Builder b;
  const std::string x = b.input("x", {1, 3, 6, 6});
  std::string c = b.node("Conv", {x, b.constant("w", {5, 3, 1, 1})});  // no bias
  c = b.node("Mul", {c, b.constant("scale", {1, 5, 1, 1}, 0.5f, 2.0f)});
  c = b.node("Add", {b.constant("shift", {5, 1, 1}), c});
  b.output(c);
  check_pass(b, fold_conv_affine, 2);
  ASSERT_EQ(b.g.nodes.size(), 1u);
  EXPECT_EQ(b.g.nodes[0].op_type, "Conv");
}

// ConvTranspose weights are [Cin, Cout/group, kh, kw]: with 2 groups of 3
// output channels, output channel c scales w[(c / 3) * 2 .. + 1][c % 3].
TEST(Passes, FoldBatchNormAndAffineIntoGroupedConvTranspose) {
  Builder b;
  const std::string x = b.input("x", {1, 4, 5, 5});
  std::string c = b.node("ConvTranspose", {x, b.constant("w", {4, 3, 3, 3})},
                         int_attr("group", 2, ints_attr("strides", {2, 2})));  // no bias
  c = b.node("Add", {c, b.constant("bias", {1, 6, 1, 1})});
  c = b.node("BatchNormalization", {c, b.constant("g", {6}, 0.5f, 1.5f), b.constant("beta", {6}),
                                    b.constant("mean", {6}), b.constant("var", {6}, 0.5f, 2.0f)});
  c = b.node("Mul", {c, b.constant("scale", {6, 1, 1}, -2.0f, 2.0f)});
  b.output(b.node("Sigmoid", {c}));
  check_pass(b, fold_conv_affine, 1);  // the Add
  check_pass(b, fold_batchnorm, 1);
  check_pass(b, fold_conv_affine, 1);  // the Mul
  ASSERT_EQ(b.g.nodes.size(), 2u);
  EXPECT_EQ(b.g.nodes[0].op_type, "ConvTranspose");
}

// A weight constant holding fewer values than its shape (a malformed model)
// is left alone, not scaled past its end.
TEST(Passes, FoldsSkipWeightsShorterThanTheirShape) {
  for (const char* op : {"Conv", "ConvTranspose"}) {
    Builder b;
    const std::string x = b.input("x", {1, 4, 5, 5});
    std::string c = b.node(op, {x, b.constant_values("w", {4, 4, 3, 3}, std::vector<float>(20, 0.5f))});
    c = b.node("BatchNormalization", {c, b.constant("g", {4}, 0.5f, 1.5f), b.constant("beta", {4}),
                                      b.constant("mean", {4}), b.constant("var", {4}, 0.5f, 2.0f)});
    c = b.node("Mul", {c, b.constant("scale", {1, 4, 1, 1}, 0.5f, 2.0f)});
    b.output(c);
    std::string err;
    EXPECT_EQ(fold_batchnorm(&b.g, &err), 0) << op;
    EXPECT_EQ(fold_conv_affine(&b.g, &err), 0) << op;
    EXPECT_EQ(b.g.nodes.size(), 3u) << op;
  }
}

TEST(Passes, GemmAfterFlattenBecomesConv) {
  Builder b;
  const std::string x = b.input("x", {1, 8, 3, 3});
  std::string f = b.node("Flatten", {x}, int_attr("axis", 1));
  rt::Attrs a = int_attr("transB", 1);
  b.output(b.node("Gemm", {f, b.constant("w", {10, 72}), b.constant("c", {10})}, a));
  check_pass(b, gemm_to_conv);
  bool conv = false;
  for (const auto& n : b.g.nodes) conv = conv || n.op_type == "Conv";
  EXPECT_TRUE(conv);
}

TEST(Passes, MatMulWithBiasAddBecomesConv) {
  Builder b;
  const std::string x = b.input("x", {2, 16});
  const std::string m = b.node("MatMul", {x, b.constant("w", {16, 7})});
  b.output(b.node("Add", {m, b.constant("bias", {7})}));
  check_pass(b, gemm_to_conv);
  for (const auto& n : b.g.nodes) EXPECT_NE(n.op_type, "Add");
}

TEST(Passes, ReshapeChainsAndTransposePairs) {
  Builder b;
  const std::string x = b.input("x", {1, 6, 4, 4});
  std::string r = b.node("Reshape", {x, b.ints("s1", {1, 6, 16})});
  r = b.node("Reshape", {r, b.ints("s2", {1, 96})});
  r = b.node("Unsqueeze", {r, b.ints("axes", {2})});
  const std::string y = b.node("Sigmoid", {r});
  std::string t = b.node("Transpose", {x}, ints_attr("perm", {0, 2, 3, 1}));
  t = b.node("Transpose", {t}, ints_attr("perm", {0, 3, 1, 2}));
  b.output(y);
  b.output(b.node("Relu", {t}));
  check_pass(b, cleanup_reshapes, 2);
  int transposes = 0, reshapes = 0;
  for (const auto& n : b.g.nodes) transposes += n.op_type == "Transpose", reshapes += n.op_type == "Reshape";
  EXPECT_EQ(transposes, 0);
  EXPECT_EQ(reshapes, 1);
}

// The attention's qkv split (Reshape to [B, N, 3, H, D], Transpose moving
// the 3 first, Gather per part) becomes per part Slice/Reshape/Transpose of
// rank <= 4 with identical results (also Paddle's Slice + Squeeze per part);
// a Gather on another axis keeps it.
TEST(Passes, QkvSplitOfRankFiveBecomesSlices) {
  for (const int variant : {0, 1, 2}) {
    const bool other_axis = variant == 1;
    Builder b(variant == 2 ? 9 : 13);  // opset 9: Slice with attributes
    const std::string x = b.input("x", {1, 5, 24});
    const std::string r = b.node("Reshape", {x, b.ints("s", {1, 5, 3, 2, 4})});
    const std::string t = b.node("Transpose", {r}, ints_attr("perm", {2, 0, 3, 1, 4}));
    for (int64_t k : {0, 1, -1}) {
      std::vector<uint8_t> bytes(8);
      std::memcpy(bytes.data(), &k, 8);
      const std::string i = b.g.add_constant("i", kInt64, {}, bytes);
      rt::Attrs a;
      if (other_axis && k == 1) a.set("axis", [] { rt::AttrValue v; v.type = rt::AttrValue::kInt; v.i = 1; return v; }());
      if (k == 1 && !other_axis) {  // Paddle's form: a Slice of one element, then a Squeeze
        rt::Attrs sa = ints_attr("starts", {1});
        sa.set("ends", *ints_attr("ends", {2}).find("ends"));
        sa.set("axes", *ints_attr("axes", {0}).find("axes"));
        const std::string sl = variant == 2 ? b.node("Slice", {t}, sa)
                                            : b.node("Slice", {t, b.ints("st", {1}), b.ints("en", {2}), b.ints("ax", {0})});
        b.output(variant == 2 ? b.node("Squeeze", {sl}, ints_attr("axes", {0}))
                              : b.node("Squeeze", {sl, b.ints("sq", {0})}));
        continue;
      }
      b.output(b.node("Gather", {t, i}, a));
    }
    if (other_axis) {
      std::string err;
      ASSERT_GE(fold_constants(&b.g, &err), 0) << err;
      EXPECT_EQ(split_heads(&b.g, &err), 0);
      continue;
    }
    check_pass(b, split_heads, 1, 0.0);
    for (const auto& n : b.g.nodes) {
      if (n.op_type == "Slice") EXPECT_EQ(n.inputs.size(), variant == 2 ? 1u : 4u) << "Slice of opset " << b.g.opset;
      EXPECT_NE(n.op_type, "Gather");
      EXPECT_NE(n.op_type, "Squeeze");
      for (const auto& o : n.outputs) EXPECT_LE(b.g.value(o)->shape.size(), 4u) << n.name;
    }
  }
}

TEST(Passes, HardSwishDecompositionsBecomeOneOperator) {
  Builder b(11);
  const std::string x = b.input("x", {1, 4, 3, 3});
  // x * clip(x + 3, 0, 6) / 6
  std::string c = b.node("Clip", {b.node("Add", {x, b.scalar(3.0f)}), b.scalar(0.0f), b.scalar(6.0f)});
  const std::string hs1 = b.node("Div", {b.node("Mul", {x, c}), b.scalar(6.0f)});
  // x * hard_sigmoid(x) with alpha 1/6
  rt::Attrs hsa;
  rt::AttrValue alpha;
  alpha.type = rt::AttrValue::kFloat;
  alpha.f = 1.0f / 6.0f;
  hsa.set("alpha", alpha);
  const std::string hs2 = b.node("Mul", {x, b.node("HardSigmoid", {x}, hsa)});
  // clip(x + 3, 0, 6) / 6 alone: hard sigmoid
  std::string c2 = b.node("Clip", {b.node("Add", {x, b.scalar(3.0f)}), b.scalar(0.0f), b.scalar(6.0f)});
  const std::string hsig = b.node("Div", {c2, b.scalar(6.0f)});
  b.output(hs1);
  b.output(hs2);
  b.output(hsig);
  check_pass(b, fuse_activations, 3);
  int hardswish = 0, hardsigmoid = 0;
  for (const auto& n : b.g.nodes) hardswish += n.op_type == "HardSwish", hardsigmoid += n.op_type == "HardSigmoid";
  EXPECT_EQ(hardswish, 2);
  EXPECT_EQ(hardsigmoid, 1);
}

TEST(Passes, SwishGeluAndLayerNormAreRecognized) {
  Builder b;
  const std::string x = b.input("x", {1, 5, 8});
  const std::string sw = b.node("Mul", {b.node("Sigmoid", {x}), x});
  // torch's GELU export: Div(x, sqrt2) -> Erf -> Add 1 -> Mul x -> Mul 0.5
  std::string e = b.node("Erf", {b.node("Div", {x, b.scalar(1.41421356f)})});
  const std::string gelu = b.node("Mul", {b.node("Mul", {x, b.node("Add", {e, b.scalar(1.0f)})}), b.scalar(0.5f)});
  // layer norm over the last axis
  rt::Attrs axes = ints_attr("axes", {-1});
  const std::string mean = b.node("ReduceMean", {x}, axes);
  const std::string d = b.node("Sub", {x, mean});
  const std::string var = b.node("ReduceMean", {b.node("Pow", {d, b.scalar(2.0f)})}, axes);
  const std::string sd = b.node("Sqrt", {b.node("Add", {var, b.scalar(1e-5f)})});
  std::string ln = b.node("Div", {d, sd});
  ln = b.node("Mul", {ln, b.constant("gamma", {8})});
  ln = b.node("Add", {ln, b.constant("beta", {8})});
  b.output(sw);
  b.output(gelu);
  b.output(ln);
  check_pass(b, fuse_activations, 3);
  int swish = 0, g = 0, layernorm = 0;
  for (const auto& n : b.g.nodes)
    swish += n.op_type == "Swish", g += n.op_type == "Gelu", layernorm += n.op_type == "LayerNormalization";
  EXPECT_EQ(swish, 1);
  EXPECT_EQ(g, 1);
  EXPECT_EQ(layernorm, 1);
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape becomes constant once the
// input shape is fixed (the exporters' dynamic flatten).
TEST(Passes, ShapeChainsFoldToConstants) {
  Builder b(11);
  const std::string x = b.input("x", {1, 4, 3, 5});
  const std::string shape = b.node("Shape", {x});
  std::vector<uint8_t> zero(8, 0);
  const std::string idx = b.g.add_constant("idx", kInt64, {}, zero);
  const std::string n0 = b.node("Gather", {shape, idx}, int_attr("axis", 0));
  const std::string u = b.node("Unsqueeze", {n0}, ints_attr("axes", {0}));
  const std::string cat = b.node("Concat", {u, b.ints("minus1", {-1})}, int_attr("axis", 0));
  b.output(b.node("Reshape", {x, cat}));
  std::string err;
  ASSERT_GT(fold_constants(&b.g, &err), 0) << err;
  ASSERT_EQ(b.g.nodes.size(), 1u);
  EXPECT_EQ(b.g.nodes[0].op_type, "Reshape");
  EXPECT_TRUE(b.g.value(b.g.nodes[0].inputs[1])->is_constant());
  EXPECT_EQ(b.g.value(b.g.outputs[0])->shape, (std::vector<int64_t>{1, 60}));
}

// The standard-ONNX rewrite of our own operators computes the same values.
TEST(Passes, LegalizationPreservesResults) {
  Builder b(11);
  const std::string x = b.input("x", {1, 3, 4, 4});
  const std::string sw = b.node("Swish", {x}, {}, "openbpu");
  const std::string ge = b.node("Gelu", {x}, {}, "openbpu");
  const std::string hs = b.node("HardSwish", {x});
  b.output(sw);
  b.output(ge);
  b.output(hs);
  std::string err;
  ASSERT_GE(fold_constants(&b.g, &err), 0) << err;
  const Graph before = b.g;
  ASSERT_TRUE(legalize_for_onnx(&b.g, &err)) << err;
  for (const auto& n : b.g.nodes) EXPECT_TRUE(n.domain.empty()) << n.op_type;
  const auto in = random_inputs(before, 5);
  const auto r0 = run(before, in), r1 = run(b.g, in);
  for (const auto& [name, v0] : r0)
    for (size_t i = 0; i < v0.size(); ++i) ASSERT_NEAR(r1.at(name)[i], v0[i], 1e-5) << name;
}

}  // namespace
}  // namespace openbpu::cvt
