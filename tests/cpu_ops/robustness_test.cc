// SPDX-License-Identifier: Apache-2.0
// Kernels shared by threads, non-dense tensor descriptions (NHWC layouts,
// padded aligned shapes, explicit strides) and error handling: malformed
// operator definitions give kInvalidModel errors naming the node - never a
// crash.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include <gtest/gtest.h>

#include "runtime/core/log.h"
#include "tests/cpu_ops/op_test_util.h"

namespace openbpu::rt::test {
namespace {

// --- concurrency ---------------------------------------------------------------

TEST(CpuOpsThreads, OneKernelManyThreads) {
  struct Case {
    CpuOpDef def;
    std::vector<std::vector<int64_t>> in, out;
  };
  std::vector<Case> cases;
  {
    Case c{op("Conv"), {{1, 8, 20, 20}, {16, 8, 3, 3}, {16}}, {{1, 16, 10, 10}}};
    set_ints(&c.def, "strides", {2, 2});
    set_ints(&c.def, "pads", {1, 1, 1, 1});
    cases.push_back(c);
  }
  {
    Case c{op("Conv"), {{1, 8, 12, 12}, {8, 1, 3, 3}}, {{1, 8, 12, 12}}};
    set_int(&c.def, "group", 8);
    set_ints(&c.def, "pads", {1, 1, 1, 1});
    cases.push_back(c);
  }
  cases.push_back({op("MatMul"), {{3, 40, 30}, {30, 20}}, {{3, 40, 20}}});
  {
    Case c{op("Resize"), {{1, 2, 5, 5}, {0}, {4}}, {{1, 2, 10, 10}}};
    set_string(&c.def, "mode", "linear");
    cases.push_back(c);
  }
  cases.push_back({op("Softmax"), {{4, 50}}, {{4, 50}}});
  {
    Case c{op("MaxPool"), {{1, 4, 9, 9}}, {{1, 4, 4, 4}}};
    set_ints(&c.def, "kernel_shape", {3, 3});
    set_ints(&c.def, "strides", {2, 2});
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    // Per-thread inputs; the Resize scales input is fixed.
    const int kThreads = 6, kIters = 20;
    std::vector<std::vector<T>> ins(kThreads), outs(kThreads), refs(kThreads);
    std::vector<T> proto_in, proto_out;
    for (const auto& d : c.in) proto_in.push_back(f32(d));
    for (const auto& d : c.out) proto_out.push_back(f32(d));
    std::unique_ptr<CpuKernel> k;
    {
      std::vector<T*> pi, po;
      for (auto& t : proto_in) pi.push_back(&t);
      for (auto& t : proto_out) po.push_back(&t);
      ASSERT_TRUE(create(c.def, pi, po, &k).ok()) << c.def.op_type;
    }
    for (int t = 0; t < kThreads; ++t) {
      for (size_t i = 0; i < c.in.size(); ++i) {
        ins[t].push_back(f32(c.in[i]));
        fill_random(&ins[t].back(), static_cast<uint32_t>(t * 10 + i));
      }
      if (c.def.op_type == "Resize") {
        const float sc[] = {1, 1, 2, 2};
        std::memcpy(ins[t][2].bytes.data(), sc, sizeof(sc));
      }
      for (const auto& d : c.out) outs[t].push_back(f32(d)), refs[t].push_back(f32(d));
      std::vector<T*> pi, po;
      for (auto& x : ins[t])
        pi.push_back(c.def.op_type == "Resize" && pi.size() == 1 ? nullptr : &x);
      for (auto& x : refs[t]) po.push_back(&x);
      ASSERT_TRUE(k->run(tensors(pi), tensors(po)).ok());
    }
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        std::vector<T*> pi, po;
        for (auto& x : ins[t])
          pi.push_back(c.def.op_type == "Resize" && pi.size() == 1 ? nullptr : &x);
        for (auto& x : outs[t]) po.push_back(&x);
        for (int it = 0; it < kIters; ++it) {
          if (!k->run(tensors(pi), tensors(po)).ok()) ++mismatches;
          for (size_t o = 0; o < outs[t].size(); ++o)
            if (outs[t][o].bytes != refs[t][o].bytes) ++mismatches;
        }
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0) << c.def.op_type;
  }
}

// --- non-dense views ----------------------------------------------------------------

// NHWC tensor with the W dimension padded to `aw` and C to `ac`.
T nhwc(int32_t type, int64_t n, int64_t c, int64_t h, int64_t w, int64_t aw, int64_t ac) {
  T t(type, {n, h, aw, ac});
  t.desc.layout = kNHWC;
  t.desc.valid = {static_cast<int32_t>(n), static_cast<int32_t>(h), static_cast<int32_t>(w),
                  static_cast<int32_t>(c)};
  return t;
}

float& at_nchw_of_nhwc(T& t, int64_t n, int64_t c, int64_t h, int64_t w) {
  const auto& a = t.desc.aligned;
  return t.as<float>()[((n * a[1] + h) * a[2] + w) * a[3] + c];
}

TEST(CpuOpsViews, QuantizeIntoPaddedNhwcAndBack) {
  const int64_t n = 1, c = 3, h = 2, w = 5;
  T x = f32({n, c, h, w});
  fill_random(&x, 3, -2, 2);
  T q = nhwc(kS8, n, c, h, w, 8, 4);
  std::fill(q.bytes.begin(), q.bytes.end(), 0x55);  // garbage in the padding
  q.desc.quant.type = kQuantScale;
  q.desc.quant.axis = 3;  // C in layout order
  q.desc.quant.scales = {0.02f, 0.03f, 0.05f};
  CpuOpDef d = op("Quantize");
  d.domain = "openbpu";
  ASSERT_TRUE(run_op(d, {&x}, {&q}).ok());
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t wi = 0; wi < 8; ++wi)
        for (int64_t pc = 0; pc < 4; ++pc) {
          const int8_t v = q.as<int8_t>()[((hi * 8) + wi) * 4 + pc];
          if (wi >= w || pc >= c) {
            EXPECT_EQ(v, 0) << "padding must be zero-filled";
          } else if (pc == ci) {
            const float s = q.desc.quant.scales[ci];
            const float ref = x.as<float>()[(ci * h + hi) * w + wi];
            EXPECT_EQ(v, quantize_value(ref, s, -128, 127));
          }
        }
  // Dequantize the padded NHWC tensor into a strided NCHW view.
  T y(kF32, {n, c, h, w + 3});  // row stride larger than the valid width
  y.desc.valid = {1, 3, 2, 5};
  CpuOpDef dq = op("Dequantize");
  dq.domain = "openbpu";
  ASSERT_TRUE(run_op(dq, {&q}, {&y}).ok());
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t wi = 0; wi < w; ++wi)
        EXPECT_NEAR(y.as<float>()[(ci * h + hi) * (w + 3) + wi],
                    x.as<float>()[(ci * h + hi) * w + wi], q.desc.quant.scales[ci] / 2 + 1e-6);
}

// One scale (a model's float input, the row loop: rows of 8 and more go
// through the SSE2 loop on x86, 8 at a time, the rest element by element):
// ties of round half away from zero, values past the range, infinities and
// NaN, with and without a zero point, from NCHW float into padded NHWC int8.
TEST(CpuOpsViews, QuantizeOneScaleRowsMatchTheRule) {
  const int64_t n = 2, c = 3, h = 3, w = 21;
  const float s = 0.05f;
  for (int32_t zp : {0, -128, 37}) {
    T x = f32({n, c, h, w});
    fill_random(&x, 5, -8, 8);
    float* xv = x.as<float>();
    const float special[] = {0.5f * s, -0.5f * s, 2.5f * s, -2.5f * s, 127.5f * s, -128.5f * s, 1e30f, -1e30f,
                             INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 6.35f, -6.4f};
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); ++i) xv[i * 5] = xv[i * 7 + 100] = special[i];
    T q = nhwc(kS8, n, c, h, w, 24, 4);
    std::fill(q.bytes.begin(), q.bytes.end(), 0x55);
    q.desc.quant.type = kQuantScale;
    q.desc.quant.scales = {s};
    if (zp != 0) q.desc.quant.zero_points = {static_cast<int8_t>(zp)};
    CpuOpDef d = op("Quantize");
    d.domain = "openbpu";
    ASSERT_TRUE(run_op(d, {&x}, {&q}).ok());
    for (int64_t ni = 0; ni < n; ++ni)
      for (int64_t ci = 0; ci < 4; ++ci)
        for (int64_t hi = 0; hi < h; ++hi)
          for (int64_t wi = 0; wi < 24; ++wi) {
            const int8_t v = q.as<int8_t>()[(((ni * h + hi) * 24) + wi) * 4 + ci];
            if (wi >= w || ci >= c) {
              EXPECT_EQ(v, 0) << "padding must be zero-filled";
              continue;
            }
            const float ref = xv[((ni * c + ci) * h + hi) * w + wi];
            const int32_t e = std::clamp(quantize_value(ref, s, -128, 127) + zp, -128, 127);
            EXPECT_EQ(v, e) << "x " << ref << " zero point " << zp;
          }
  }
}

TEST(CpuOpsViews, LayoutOpsOnNhwc) {
  const int64_t c = 3, h = 2, w = 4;
  T src = nhwc(kF32, 1, c, h, w, 6, 3);
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t wi = 0; wi < w; ++wi)
        at_nchw_of_nhwc(src, 0, ci, hi, wi) = static_cast<float>(ci * 100 + hi * 10 + wi);
  // LayoutConvert to dense NCHW.
  T dense = f32({1, c, h, w});
  CpuOpDef lc = op("LayoutConvert");
  lc.domain = "openbpu";
  ASSERT_TRUE(run_op(lc, {&src}, {&dense}).ok());
  for (int64_t i = 0; i < dense.count(); ++i) {
    const int64_t ci = i / (h * w), hi = i / w % h, wi = i % w;
    EXPECT_EQ(dense.as<float>()[i], ci * 100 + hi * 10 + wi);
  }
  // Reshape reads the logical (NCHW) order of the NHWC tensor.
  T flat = f32({1, c * h * w});
  ASSERT_TRUE(run_op(op("Reshape"), {&src}, {&flat}).ok());
  EXPECT_EQ(flat.floats(), dense.floats());
  // Transpose NCHW -> NHWC of the logical view gives the NHWC order back.
  T tr = f32({1, h, w, c});
  CpuOpDef t = op("Transpose");
  set_ints(&t, "perm", {0, 2, 3, 1});
  ASSERT_TRUE(run_op(t, {&src}, {&tr}).ok());
  for (int64_t hi = 0; hi < h; ++hi)
    for (int64_t wi = 0; wi < w; ++wi)
      for (int64_t ci = 0; ci < c; ++ci)
        EXPECT_EQ(tr.as<float>()[(hi * w + wi) * c + ci], ci * 100 + hi * 10 + wi);
}

TEST(CpuOpsViews, ComputeKernelsStageNonDenseTensors) {
  // Conv, Add, Relu, Concat and Softmax on an NHWC-padded input must equal
  // their results on the dense copy.
  const int64_t c = 4, h = 5, w = 5;
  T src = nhwc(kF32, 1, c, h, w, 8, 4);
  T dense = f32({1, c, h, w});
  fill_random(&dense, 9);
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t wi = 0; wi < w; ++wi)
        at_nchw_of_nhwc(src, 0, ci, hi, wi) = dense.as<float>()[(ci * h + hi) * w + wi];
  T wt = f32({2, c, 3, 3});
  fill_random(&wt, 10);
  struct Run {
    CpuOpDef def;
    std::vector<int64_t> out;
    bool second;  // second input = the same tensor
  };
  std::vector<Run> runs;
  CpuOpDef conv = op("Conv");
  set_ints(&conv, "pads", {1, 1, 1, 1});
  runs.push_back({conv, {1, 2, h, w}, false});
  runs.push_back({op("Add"), {1, c, h, w}, true});
  runs.push_back({op("Relu"), {1, c, h, w}, false});
  CpuOpDef cat = op("Concat");
  set_int(&cat, "axis", 1);
  runs.push_back({cat, {1, 2 * c, h, w}, true});
  CpuOpDef sm = op("Softmax");
  set_int(&sm, "axis", 1);
  runs.push_back({sm, {1, c, h, w}, false});
  for (auto& r : runs) {
    T y1 = f32(r.out), y2 = f32(r.out);
    std::vector<T*> a = {&src}, b = {&dense};
    if (r.second) a.push_back(&src), b.push_back(&dense);
    if (r.def.op_type == "Conv") a.push_back(&wt), b.push_back(&wt);
    ASSERT_TRUE(run_op(r.def, a, {&y1}).ok()) << r.def.op_type;
    ASSERT_TRUE(run_op(r.def, b, {&y2}).ok()) << r.def.op_type;
    EXPECT_EQ(y1.floats(), y2.floats()) << r.def.op_type;
  }
  // And an NHWC output: Relu writes through the view, padding untouched.
  T out = nhwc(kF32, 1, c, h, w, 8, 4);
  std::fill(out.bytes.begin(), out.bytes.end(), 0x7f);
  ASSERT_TRUE(run_op(op("Relu"), {&dense}, {&out}).ok());
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t wi = 0; wi < w; ++wi)
        EXPECT_EQ(at_nchw_of_nhwc(out, 0, ci, hi, wi),
                  std::max(0.0f, dense.as<float>()[(ci * h + hi) * w + wi]));
  EXPECT_EQ(out.bytes[(5 * 4) * 4], 0x7f);  // W padding (w index 5) untouched
}

// copy_elements between views of equal dims copies in rows along the
// destination's order: every element must still land where the logical
// element-wise walk puts it (padded and permuted strides, rows of 1-16
// bytes, element sizes 1-8); overlapping views keep the element-wise walk.
int64_t view_offset(const LogicalView& v, int64_t e) {
  int64_t off = 0;
  for (size_t k = v.dims.size(); k-- > 0;) {
    off += (e % v.dims[k]) * v.strides[k];
    e /= v.dims[k];
  }
  return off;
}

LogicalView padded_view(const std::vector<int64_t>& dims, const std::vector<int>& order,
                        const std::vector<int64_t>& pad, int32_t type) {
  LogicalView v;
  v.dims = dims, v.data_type = type, v.strides.assign(dims.size(), 0);
  int64_t s = element_size(type);
  for (size_t i = order.size(); i-- > 0;) {  // order: outermost first
    v.strides[static_cast<size_t>(order[i])] = s;
    s *= dims[static_cast<size_t>(order[i])] + pad[i];
  }
  return v;
}

void expect_copy_matches_walk(const LogicalView& src, const LogicalView& dst, size_t bytes) {
  std::mt19937 rng(7);
  std::vector<uint8_t> a(bytes), b(bytes, 0xA5), want(bytes, 0xA5);
  for (uint8_t& x : a) x = static_cast<uint8_t>(rng());
  const int es = element_size(src.data_type);
  for (int64_t e = 0; e < src.elements(); ++e)
    std::memcpy(want.data() + view_offset(dst, e), a.data() + view_offset(src, e), static_cast<size_t>(es));
  copy_elements(src, a.data(), dst, b.data());
  EXPECT_EQ(b, want);
}

TEST(CpuOpsViews, CopyElementsInRowsEqualsTheElementWalk) {
  const std::vector<int64_t> dims = {1, 3, 5, 7};  // N,C,H,W
  for (int32_t type : {kS8, kS16, kF32, kF64})
    for (const std::vector<int>& order : {std::vector<int>{0, 2, 3, 1}, {0, 1, 2, 3}, {0, 3, 1, 2}})
      for (const std::vector<int64_t>& pad : {std::vector<int64_t>{0, 0, 0, 0}, {0, 1, 0, 5}, {0, 0, 2, 0}}) {
        SCOPED_TRACE(std::to_string(type) + " order " + std::to_string(order[3]) + " pad " + std::to_string(pad[3]));
        const LogicalView src = padded_view(dims, {0, 1, 2, 3}, {0, 0, 0, 0}, type);
        const LogicalView dst = padded_view(dims, order, pad, type);
        expect_copy_matches_walk(src, dst, 8 * 4 * 8 * 12 * 8);
        expect_copy_matches_walk(dst, src, 8 * 4 * 8 * 12 * 8);
      }
  // The NHWC model input of 3 channels padded to 8: rows of 3 bytes.
  const LogicalView tight = padded_view({1, 3, 4, 6}, {0, 2, 3, 1}, {0, 0, 0, 0}, kS8);
  const LogicalView aligned = padded_view({1, 3, 4, 6}, {0, 2, 3, 1}, {0, 0, 0, 5}, kS8);
  expect_copy_matches_walk(tight, aligned, 4 * 6 * 8);
}

TEST(CpuOpsViews, CopyElementsOverlappingViewsWalkElementWise) {
  // dst = src shifted by one element: the walk's order decides the result.
  LogicalView v;
  v.dims = {16}, v.strides = {1}, v.data_type = kS8;
  std::vector<uint8_t> buf(17), want(17);
  for (int i = 0; i < 17; ++i) buf[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  want = buf;
  for (int i = 0; i < 16; ++i) want[static_cast<size_t>(i) + 1] = want[static_cast<size_t>(i)];
  copy_elements(v, buf.data(), v, buf.data() + 1);
  EXPECT_EQ(buf, want);
}

// --- absent optional inputs ----------------------------------------------------

// Callers may pass a default-constructed TensorDesc (and a null data
// pointer) for an ONNX "" input or output instead of nullptr.
TEST(CpuOpsViews, AbsentAsDefaultDescriptions) {
  TensorDesc none;
  T x(kS8, {4}), y(kS8, {4}), hi(kS8, {});
  const int8_t xv[] = {-100, -1, 1, 100};
  std::memcpy(x.bytes.data(), xv, 4);
  hi.as<int8_t>()[0] = 50;
  CpuOpDef clip = op("Clip");
  std::unique_ptr<CpuKernel> k;
  ASSERT_TRUE(create_cpu_kernel(clip, {&x.desc, &none, &hi.desc}, {&y.desc}, &k).ok());
  ASSERT_TRUE(k->run({x.cpu(), CpuTensor{&none, nullptr}, hi.cpu()}, {y.cpu()}).ok());
  EXPECT_EQ(y.as<int8_t>()[0], -100);
  EXPECT_EQ(y.as<int8_t>()[3], 50);
  // Resize X, "", "", sizes.
  T img = f32({1, 1, 2, 2}, {1, 2, 3, 4}), sizes = i64({4}, {1, 1, 4, 4}), big = f32({1, 1, 4, 4});
  CpuOpDef rs = op("Resize");
  ASSERT_TRUE(create_cpu_kernel(rs, {&img.desc, &none, &none, &sizes.desc}, {&big.desc}, &k).ok());
  ASSERT_TRUE(k->run({img.cpu(), CpuTensor{&none, nullptr}, CpuTensor{&none, nullptr}, sizes.cpu()}, {big.cpu()}).ok());
  EXPECT_EQ(big.as<float>()[15], 4.0f);
  // LayerNormalization with absent Mean output and present InvStdDev.
  T v = f32({2, 3}, {1, 2, 3, 4, 5, 6}), sc = f32({3}, {1, 1, 1}), o = f32({2, 3}), inv = f32({2, 1});
  CpuOpDef ln = op("LayerNormalization");
  ASSERT_TRUE(create_cpu_kernel(ln, {&v.desc, &sc.desc}, {&o.desc, &none, &inv.desc}, &k).ok());
  ASSERT_TRUE(k->run({v.cpu(), sc.cpu()}, {o.cpu(), CpuTensor{&none, nullptr}, inv.cpu()}).ok());
  EXPECT_NEAR(inv.as<float>()[0], 1.0 / std::sqrt(2.0 / 3.0 + 1e-5), 1e-5);
}

// --- errors ---------------------------------------------------------------------

TEST(CpuOpsErrors, SpecificMistakesNameTheNode) {
  QuietLog quiet;
  auto expect_invalid = [](const CpuOpDef& d, std::vector<T*> in, std::vector<T*> out,
                           const char* what) {
    std::unique_ptr<CpuKernel> k;
    const Status s = create(d, in, out, &k);
    EXPECT_EQ(s.code(), kInvalidModel) << what;
    EXPECT_NE(s.message().find("'" + d.name + "'"), std::string::npos)
        << what << ": " << s.message();
  };
  T x = f32({1, 3, 8, 8}), w = f32({4, 2, 3, 3}), y = f32({1, 4, 6, 6});
  expect_invalid(op("Conv", "conv_bad_channels"), {&x, &w}, {&y}, "weights channel mismatch");
  T w3 = f32({4, 3, 3, 3}), y_bad = f32({1, 4, 7, 7});
  expect_invalid(op("Conv", "conv_bad_out"), {&x, &w3}, {&y_bad}, "output shape mismatch");
  CpuOpDef g = op("Conv", "conv_bad_group");
  set_int(&g, "group", 2);
  expect_invalid(g, {&x, &w3}, {&y}, "group does not divide C");
  CpuOpDef pads = op("Conv", "conv_bad_pads");
  set_ints(&pads, "pads", {1, 1});
  expect_invalid(pads, {&x, &w3}, {&y}, "pads of wrong length");
  T a = f32({2, 3}), b = f32({4, 5}), c = f32({2, 5});
  expect_invalid(op("Gemm", "gemm_k"), {&a, &b}, {&c}, "inner dim");
  expect_invalid(op("MatMul", "matmul_k"), {&a, &b}, {&c}, "inner dim");
  CpuOpDef cat = op("Concat", "concat_axis");
  set_int(&cat, "axis", 5);
  expect_invalid(cat, {&a, &a}, {&c}, "axis out of range");
  T r = f32({7});
  expect_invalid(op("Reshape", "reshape_count"), {&a}, {&r}, "element count");
  expect_invalid(op("Add", "add_shape"), {&a, &b}, {&c}, "not broadcastable");
  CpuOpDef unknown = op("FancyOp", "fancy");
  expect_invalid(unknown, {&a}, {&c}, "unknown operator");
  T idx(kF32, {2});
  expect_invalid(op("Gather", "gather_float_idx"), {&a, &idx}, {&c}, "float indices");
  CpuOpDef tr = op("Transpose", "transpose_perm");
  set_ints(&tr, "perm", {0, 0});
  expect_invalid(tr, {&a}, {&a}, "not a permutation");
  CpuOpDef rs = op("Resize", "resize_mode");
  set_string(&rs, "mode", "lanczos");
  T sc = f32({4});
  expect_invalid(rs, {&x, nullptr, &sc}, {&x}, "unknown mode");
  // Run-time data errors are errors, not crashes.
  T data = f32({3}), out = f32({2});
  T ind = i64({2}, {0, 7});
  EXPECT_EQ(run_op(op("Gather", "gather_oob"), {&data, &ind}, {&out}).code(), kInvalidModel);
}

// Every operator of the table with a battery of malformed definitions:
// creation fails with kInvalidModel naming the node, or the kernel runs
// without crashing.
TEST(CpuOpsErrors, TableSweepNeverCrashes) {
  QuietLog quiet;
  std::vector<std::vector<std::vector<int64_t>>> shapes = {
      {},                                 // no inputs
      {{2, 3}},                           // one 2-D
      {{2, 3}, {2, 3}},                   // two equal
      {{2, 3}, {3}},                      // broadcastable
      {{1, 3, 4, 4}, {2, 3, 3, 3}, {2}},  // conv-like
      {{1, 3, 4, 4}, {5}},                // odd second
      {{0, 3}},                           // empty tensor
      {{2, 3}, {1}, {1}, {1}, {1}},       // many scalars
  };
  std::vector<std::vector<int64_t>> outs = {{2, 3}, {1, 2, 2, 2}, {3}, {}, {0, 3}};
  std::vector<int32_t> types = {kF32, kS64, kBool8, kU8};
  int created = 0, rejected = 0;
  for (const auto& e : all_cpu_ops()) {
    for (const auto& ins : shapes)
      for (const auto& o : outs)
        for (int32_t ty : types)
          for (int variant = 0; variant < 3; ++variant) {
            CpuOpDef d = op(e.op_type, std::string("sweep_") + e.op_type);
            d.domain = e.domain;
            if (variant == 1) {
              set_int(&d, "axis", 9);
              set_ints(&d, "perm", {5, 1});
              set_ints(&d, "kernel_shape", {0, -1});
              set_ints(&d, "pads", {-1, 2, 3});
              set_int(&d, "group", 0);
              set_int(&d, "blocksize", 0);
              set_ints(&d, "starts", {0});
              set_ints(&d, "ends", {100});
              set_ints(&d, "split", {1, 1});
              set_ints(&d, "axes", {7});
              set_string(&d, "mode", "bogus");
            } else if (variant == 2) {
              set_int(&d, "axis", -1);
              set_ints(&d, "kernel_shape", {2, 2});
              set_ints(&d, "strides", {1, 1});
              set_int(&d, "keepdims", 0);
              set_int(&d, "k", 1);
              set_float(&d, "alpha", 0.0f);
            }
            std::vector<T> in_t, out_t;
            for (const auto& s : ins) in_t.emplace_back(ty, s);
            out_t.emplace_back(ty, o);
            std::vector<T*> pi, po;
            for (auto& t : in_t) pi.push_back(&t);
            for (auto& t : out_t) po.push_back(&t);
            std::unique_ptr<CpuKernel> k;
            const Status s = create(d, pi, po, &k);
            if (!s.ok()) {
              ++rejected;
              ASSERT_EQ(s.code(), kInvalidModel) << e.op_type;
              ASSERT_NE(s.message().find(d.name), std::string::npos)
                  << e.op_type << ": " << s.message();
              continue;
            }
            ++created;
            ASSERT_TRUE(k != nullptr);
            const Status rs = k->run(tensors(pi), tensors(po));
            if (!rs.ok()) {
              EXPECT_NE(rs.message().find(d.name), std::string::npos)
                  << e.op_type << ": " << rs.message();
            }
          }
  }
  printf("[sweep] %zu operators: %d definitions created and ran, %d rejected\n",
         all_cpu_ops().size(), created, rejected);
}

// Every operator of the table with one input or output absent at a time
// (robustness finding 8, docs/robustness.md): an absent tensor the operator
// requires is rejected at creation with kInvalidModel naming the node; an
// optional one runs. Absent is nullptr for the kernels' own create and a
// default TensorDesc through create_cpu_kernel (the loader's and the
// converter's forms); the run gets a CpuTensor without desc or data, so any
// read of it would crash.
TEST(CpuOpsErrors, TableSweepAbsentTensorsNeverCrash) {
  QuietLog quiet;
  const std::vector<std::vector<std::vector<int64_t>>> shapes = {
      {{2, 3}},
      {{2, 3}, {2, 3}},
      {{2, 3}, {3}},
      {{1, 3, 4, 4}, {2, 3, 3, 3}, {2}},
      {{2, 3}, {1}, {1}, {1}, {1}},
      {{2, 3}, {2, 3}, {2, 3}, {2, 3}, {2, 3}},
      {{1, 2, 3}, {1, 12, 3}, {1, 12, 4}, {1, 24}, {2}, {1, 2, 4}, {1, 2, 4}, {1, 12}},
  };
  const std::vector<std::vector<std::vector<int64_t>>> outs = {
      {{2, 3}}, {{2, 3}, {2, 3}}, {{2, 3}, {2, 3}, {2, 3}}, {{1, 2, 2, 2}}, {{1, 1, 2, 4}, {1, 2, 4}}};
  const TensorDesc none;
  int created = 0, rejected = 0;
  for (const auto& e : all_cpu_ops())
    for (const auto& ins : shapes)
      for (const auto& os : outs)
        for (int32_t ty : {kF32, kS64})
          for (size_t absent = 0; absent < ins.size() + os.size(); ++absent)
            for (bool default_desc : {false, true}) {
              CpuOpDef d = op(e.op_type, std::string("absent_") + e.op_type);
              d.domain = e.domain;
              std::vector<T> in_t, out_t;
              for (const auto& sh : ins) in_t.emplace_back(ty, sh);
              for (const auto& sh : os) out_t.emplace_back(ty, sh);
              std::vector<const TensorDesc*> di, dout;
              std::vector<CpuTensor> ti, tout;
              for (size_t i = 0; i < in_t.size(); ++i) {
                const bool gone = i == absent;
                di.push_back(gone ? (default_desc ? &none : nullptr) : &in_t[i].desc);
                ti.push_back(gone ? CpuTensor{} : in_t[i].cpu());
              }
              for (size_t i = 0; i < out_t.size(); ++i) {
                const bool gone = ins.size() + i == absent;
                dout.push_back(gone ? (default_desc ? &none : nullptr) : &out_t[i].desc);
                tout.push_back(gone ? CpuTensor{} : out_t[i].cpu());
              }
              std::unique_ptr<CpuKernel> k;
              const Status st =
                  default_desc ? create_cpu_kernel(d, di, dout, &k) : e.create(d, di, dout, &k);
              if (!st.ok()) {
                ++rejected;
                ASSERT_EQ(st.code(), kInvalidModel) << e.op_type;
                ASSERT_NE(st.message().find(d.name), std::string::npos) << e.op_type << ": " << st.message();
                continue;
              }
              ++created;
              ASSERT_TRUE(k != nullptr);
              const Status rs = k->run(ti, tout);
              if (!rs.ok()) {
                EXPECT_NE(rs.message().find(d.name), std::string::npos) << e.op_type << ": " << rs.message();
              }
            }
  printf("[absent sweep] %d definitions created and ran, %d rejected\n", created, rejected);
}

}  // namespace
}  // namespace openbpu::rt::test
