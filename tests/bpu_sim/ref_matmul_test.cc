// SPDX-License-Identifier: Apache-2.0
// Reference kMatMul against the textbook product of the dense operands,
// requantized with exact 128-bit integers: random batches, transposed
// operands (views with swapped strides), a batch shared by stride 0, int8 and
// int16 operands and outputs, saturating values and activation bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/validate.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

using isa::DType;
using isa::Region;

// A [d0, d1, r, c] operand, stored transposed (as [d0, d1, c, r]) when asked.
isa::TensorRef operand(TestMemory& tm, DType t, int d0, int d1, int r, int c, bool transposed, bool padded) {
  if (!transposed) return tm.tensor(Region::kInput, t, {d0, d1, r, c}, padded);
  isa::TensorRef v = tm.tensor(Region::kInput, t, {d0, d1, c, r}, padded);
  std::swap(v.dims[2], v.dims[3]);
  std::swap(v.strides[2], v.strides[3]);
  return v;
}

TEST(RefMatMul, AgainstTheTextbookProduct) {
  std::mt19937 rng(7);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 200; ++i) {
    TestMemory tm(5000 + i);
    const int b0 = ri(1, 2), b1 = ri(1, 3), m = ri(1, 9), k = ri(1, 40), n = ri(1, 9);
    const DType ta = ri(0, 2) ? DType::kInt8 : DType::kInt16, tb = ri(0, 2) ? DType::kInt8 : DType::kInt16;
    const DType to = ri(0, 2) ? DType::kInt8 : DType::kInt16;
    isa::MatMul ins;
    ins.a = operand(tm, ta, b0, b1, m, k, ri(0, 1), ri(0, 1));
    ins.b = operand(tm, tb, b0, b1, k, n, ri(0, 1), ri(0, 1));
    if (ri(0, 3) == 0) ins.b.strides[1] = 0;  // one b shared by the heads
    ins.out = tm.tensor(Region::kOutput, to, {b0, b1, m, n}, ri(0, 1));
    ins.multiplier = ri(0, 1) ? ri(1, 1 << 20) : ri(1 << 30, INT32_MAX);
    std::vector<int64_t> mults;  // per-column multipliers half of the time
    if (ri(0, 1)) {
      for (int c = 0; c < n; ++c) mults.push_back(ri(1, INT32_MAX));
      ins.multipliers = tm.constants(DType::kInt32, mults);
    }
    ins.shift = ri(0, 4) ? ri(20, 45) : ri(0, 63);
    ins.act_min = static_cast<int32_t>(type_min(to)), ins.act_max = static_cast<int32_t>(type_max(to));
    if (ri(0, 3) == 0) ins.act_min = 0;
    tm.fill_random(ins.a);
    tm.fill_random(ins.b);
    const Dense a = tm.read(ins.a), b = tm.read(ins.b);  // a shared batch keeps its last write
    RegionLayout layout;
    layout.inputs = {tm.region(Region::kInput).size()};
    layout.outputs = {tm.region(Region::kOutput).size()};
    layout.constants = tm.region(Region::kConst).data();
    layout.constants_size = tm.region(Region::kConst).size();
    std::string err;
    ASSERT_TRUE(validate_instruction({isa::Opcode::kMatMul, ins}, layout, &err)) << err;
    const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
    ref::matmul(ins, tm.bind());
    tm.expect_only_views_written(Region::kOutput, before, {ins.out});
    const Dense y = tm.read(ins.out);
    for (int p = 0; p < b0; ++p)
      for (int q = 0; q < b1; ++q)
        for (int r = 0; r < m; ++r)
          for (int c = 0; c < n; ++c) {
            __int128 acc = 0;
            for (int d = 0; d < k; ++d) acc += static_cast<__int128>(a.at(p, q, r, d)) * b.at(p, q, d, c);
            __int128 v = acc * (mults.empty() ? ins.multiplier : mults[static_cast<size_t>(c)]);
            if (ins.shift > 0) v = (v + (static_cast<__int128>(1) << (ins.shift - 1))) >> ins.shift;
            const int64_t want = static_cast<int64_t>(std::clamp<__int128>(v, ins.act_min, ins.act_max));
            ASSERT_EQ(y.at(p, q, r, c), want) << "case " << i;
          }
  }
}

// The validator: shapes that disagree, overlapping output, bad requantization
// and marches without the datapath are refused with a reason.
TEST(RefMatMul, ValidatorRefusesMalformedInstructions) {
  TestMemory tm(77);
  isa::MatMul ok;  // 2 heads of [4 x 8] * [8 x 4]
  ok.a = tm.tensor(Region::kInput, DType::kInt8, {1, 2, 4, 8}, false);
  ok.b = tm.tensor(Region::kInput, DType::kInt8, {1, 2, 8, 4}, false);
  ok.out = tm.tensor(Region::kOutput, DType::kInt8, {1, 2, 4, 4}, false);
  RegionLayout layout;
  layout.inputs = {tm.region(Region::kInput).size()};
  layout.outputs = {tm.region(Region::kOutput).size()};
  const auto check = [&](const isa::MatMul& m, const isa::MarchInfo* march) {
    RegionLayout l = layout;
    l.march = march;
    std::string err;
    return validate_instruction({isa::Opcode::kMatMul, m}, l, &err) ? std::string() : err;
  };
  EXPECT_EQ(check(ok, nullptr), "");
  for (const char* march : {"bayes", "bayes-e", "nash-e", "nash-m"}) EXPECT_EQ(check(ok, isa::find_march(march)), "");
  EXPECT_NE(check(ok, isa::find_march("bernoulli2")).find("(MatMul) is not supported on bernoulli2"), std::string::npos);
  struct Bad {
    void (*mutate)(isa::MatMul&);
    const char* needle;
  };
  const Bad bad[] = {
      {[](isa::MatMul& m) { m.out.dtype = DType::kUInt8; }, "output has unsupported"},
      {[](isa::MatMul& m) { m.b.dims[2] = 7; }, "matmul dimensions disagree"},
      {[](isa::MatMul& m) { m.out.dims[1] = 1; }, "matmul dimensions disagree"},
      {[](isa::MatMul& m) { m.a.dims[4] = 2; }, "must be 4-D"},
      {[](isa::MatMul& m) { m.out.region = Region::kInput, m.out.offset = m.a.offset; }, "read-only"},
      {[](isa::MatMul& m) { m.multiplier = 0; }, "matmul multiplier must be positive"},
      {[](isa::MatMul& m) { m.shift = 64; }, "matmul shift 64 out of range"},
      {[](isa::MatMul& m) { m.act_min = 5, m.act_max = 4; }, "activation bounds"},
  };
  for (const Bad& b : bad) {
    isa::MatMul m = ok;
    b.mutate(m);
    EXPECT_NE(check(m, nullptr).find(b.needle), std::string::npos) << b.needle << ": " << check(m, nullptr);
  }
  isa::MatMul over = ok;  // out over a's bytes in the same region
  over.a = tm.tensor(Region::kOutput, DType::kInt8, {1, 2, 4, 8}, false);
  over.out.offset = over.a.offset;
  layout.outputs = {tm.region(Region::kOutput).size()};
  EXPECT_NE(check(over, nullptr).find("output overlaps input a"), std::string::npos) << check(over, nullptr);
}

}  // namespace
}  // namespace openbpu::sim::test
