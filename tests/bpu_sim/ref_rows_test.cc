// SPDX-License-Identifier: Apache-2.0
// Reference kSoftmax and kLayerNorm against the float functions they
// approximate (softmax and layer normalization of the dequantized input,
// computed in double) on random rows of int8 and int16 inputs, rows along a
// strided dim 3, with the converter's table and parameters; and the validator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "bpu_sim/isa/numerics.h"
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/validate.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

using isa::DType;
using isa::Region;

RegionLayout layout_of(TestMemory& tm) {
  RegionLayout l;
  l.inputs = {tm.region(Region::kInput).size()};
  l.outputs = {tm.region(Region::kOutput).size()};
  l.constants = tm.region(Region::kConst).data();
  l.constants_size = tm.region(Region::kConst).size();
  return l;
}

TEST(RefRows, SoftmaxMatchesTheFloatSoftmax) {
  std::mt19937 rng(11);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 150; ++i) {
    TestMemory tm(7000 + i);
    const DType ti = ri(0, 1) ? DType::kInt8 : DType::kInt16, to = ri(0, 1) ? DType::kInt8 : DType::kInt16;
    const int d0 = ri(1, 2), d1 = ri(1, 3), d2 = ri(1, 4), len = ri(1, 70);
    const double s_in = (ti == DType::kInt8 ? 16.0 / 127 : 30.0 / 32767) * std::uniform_real_distribution<>(0.05, 1)(rng);
    const double s_out = 1.0 / (to == DType::kInt8 ? 127 : 32767);
    isa::Softmax s;
    s.in = tm.tensor(Region::kInput, ti, {d0, d1, d2, len}, ri(0, 1));
    s.out = tm.tensor(Region::kOutput, to, {d0, d1, d2, len}, ri(0, 1));
    std::vector<int32_t> table = isa::softmax_exp_table(s_in, &s.table_shift);
    s.table = tm.constants(DType::kInt32, std::vector<int64_t>(table.begin(), table.end()));
    isa::quantize_multiplier(1.0 / s_out, &s.multiplier, &s.shift, 31);
    s.act_min = static_cast<int32_t>(type_min(to)), s.act_max = static_cast<int32_t>(type_max(to));
    const Dense x = tm.fill_random(s.in);
    std::string err;
    ASSERT_TRUE(validate_instruction({isa::Opcode::kSoftmax, s}, layout_of(tm), &err)) << err;
    ref::softmax(s, tm.bind());
    const Dense y = tm.read(s.out);
    // 2^-15 table steps, the interpolation and the final rounding: within
    // one output step plus 2^-12 of the float value.
    for (int a = 0; a < d0; ++a)
      for (int b = 0; b < d1; ++b)
        for (int c = 0; c < d2; ++c) {
          double mx = -1e300, sum = 0;
          for (int l = 0; l < len; ++l) mx = std::max(mx, x.at(a, b, c, l) * s_in);
          for (int l = 0; l < len; ++l) sum += std::exp(x.at(a, b, c, l) * s_in - mx);
          for (int l = 0; l < len; ++l) {
            const double want = std::exp(x.at(a, b, c, l) * s_in - mx) / sum;
            ASSERT_NEAR(y.at(a, b, c, l) * s_out, want, s_out + 1.0 / 4096) << "case " << i << " row len " << len;
          }
        }
  }
}

TEST(RefRows, LayerNormMatchesTheFloatLayerNorm) {
  std::mt19937 rng(12);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto rf = [&](double lo, double hi) { return std::uniform_real_distribution<>(lo, hi)(rng); };
  for (int i = 0; i < 150; ++i) {
    TestMemory tm(8000 + i);
    const DType ti = ri(0, 1) ? DType::kInt8 : DType::kInt16, to = ri(0, 1) ? DType::kInt8 : DType::kInt16;
    const int d0 = ri(1, 2), d1 = ri(1, 3), d2 = ri(1, 3), len = ri(2, 96);
    const double s_in = rf(0.001, 0.1), eps = ri(0, 1) ? 1e-5 : 1e-2;
    std::vector<double> gamma(len), beta(len);
    for (auto& g : gamma) g = rf(-2, 2);
    for (auto& b : beta) b = rf(-1, 1);
    double gmax = 0;
    for (double g : gamma) gmax = std::max(gmax, std::fabs(g));
    const double sg = gmax / 32767, acc = sg / 4096, s_out = 8.0 / (to == DType::kInt8 ? 127 : 32767);
    isa::LayerNorm n;
    n.in = tm.tensor(Region::kInput, ti, {d0, d1, d2, len}, ri(0, 1));
    n.out = tm.tensor(Region::kOutput, to, {d0, d1, d2, len}, ri(0, 1));
    std::vector<int64_t> gq(len), bq(len);
    for (int l = 0; l < len; ++l) gq[l] = std::lround(gamma[l] / sg), bq[l] = std::llround(beta[l] / acc);
    n.gamma = tm.constants(DType::kInt32, gq);
    n.beta.offset = tm.reserve(Region::kConst, 8 * len, 8), n.beta.count = len;
    std::memcpy(tm.region(Region::kConst).data() + n.beta.offset, bq.data(), 8 * len);
    n.eps = std::llround(eps * len * len / (s_in * s_in));
    isa::quantize_multiplier(acc / s_out, &n.multiplier, &n.shift);
    n.act_min = static_cast<int32_t>(type_min(to)), n.act_max = static_cast<int32_t>(type_max(to));
    const Dense x = tm.fill_random(n.in, ri(0, 1) ? -40 : type_min(ti), ri(0, 1) ? 40 : type_max(ti));
    std::string err;
    ASSERT_TRUE(validate_instruction({isa::Opcode::kLayerNorm, n}, layout_of(tm), &err)) << err;
    ref::layernorm(n, tm.bind());
    const Dense y = tm.read(n.out);
    for (int a = 0; a < d0; ++a)
      for (int b = 0; b < d1; ++b)
        for (int c = 0; c < d2; ++c) {
          double m = 0, v = 0;
          for (int l = 0; l < len; ++l) m += x.at(a, b, c, l) * s_in / len;
          for (int l = 0; l < len; ++l) v += std::pow(x.at(a, b, c, l) * s_in - m, 2) / len;
          for (int l = 0; l < len; ++l) {
            const double want = std::clamp((x.at(a, b, c, l) * s_in - m) / std::sqrt(v + eps) * gamma[l] + beta[l],
                                           type_min(to) * s_out, type_max(to) * s_out);
            // Q12 normalized value and the int16 gamma: a few 2^-12 of |gamma| * sqrt(len).
            ASSERT_NEAR(y.at(a, b, c, l) * s_out, want, s_out + 4.0 * gmax * std::sqrt(len) / 4096)
                << "case " << i << " len " << len;
          }
        }
  }
}

TEST(RefRows, ValidatorRefusesBadRowInstructions) {
  TestMemory tm(99);
  isa::Softmax s;
  s.in = tm.tensor(Region::kInput, DType::kInt8, {1, 2, 3, 8}, false);
  s.out = tm.tensor(Region::kOutput, DType::kInt8, {1, 2, 3, 8}, false);
  std::vector<int32_t> table = isa::softmax_exp_table(0.05, &s.table_shift);
  s.table = tm.constants(DType::kInt32, std::vector<int64_t>(table.begin(), table.end()));
  isa::Softmax zero = s;  // table[0] = 0 would divide by zero
  zero.table = tm.constants(DType::kInt32, std::vector<int64_t>(isa::kSoftmaxTableSize, 0));
  const auto check = [&](const isa::Instruction& ins, const isa::MarchInfo* march) {
    RegionLayout l = layout_of(tm);
    l.march = march;
    std::string err;
    return validate_instruction(ins, l, &err) ? std::string() : err;
  };
  EXPECT_EQ(check({isa::Opcode::kSoftmax, s}, isa::find_march("bayes-e")), "");
  EXPECT_NE(check({isa::Opcode::kSoftmax, s}, isa::find_march("bernoulli2")).find("not supported on bernoulli2"),
            std::string::npos);
  EXPECT_NE(check({isa::Opcode::kSoftmax, zero}, nullptr).find("softmax table entry"), std::string::npos);
  isa::Softmax bad = s;
  bad.shift = 32;
  EXPECT_NE(check({isa::Opcode::kSoftmax, bad}, nullptr).find("shift 32 out of range"), std::string::npos);
  bad = s;
  bad.out.dims[3] = 7;
  EXPECT_NE(check({isa::Opcode::kSoftmax, bad}, nullptr).find("dimensions differ"), std::string::npos);
  isa::LayerNorm n;
  n.in = s.in, n.out = s.out;
  n.gamma = tm.constants(DType::kInt32, std::vector<int64_t>(8, 1000));
  EXPECT_EQ(check({isa::Opcode::kLayerNorm, n}, nullptr), "");
  isa::LayerNorm g = n;
  g.gamma = tm.constants(DType::kInt32, std::vector<int64_t>(8, 1 << 16));
  EXPECT_NE(check({isa::Opcode::kLayerNorm, g}, nullptr).find("gamma out of range"), std::string::npos);
  g = n;
  g.gamma.count = 7;
  EXPECT_NE(check({isa::Opcode::kLayerNorm, g}, nullptr).find("expected 8"), std::string::npos);
  g = n;
  g.eps = -1;
  EXPECT_NE(check({isa::Opcode::kLayerNorm, g}, nullptr).find("eps out of range"), std::string::npos);
}

}  // namespace
}  // namespace openbpu::sim::test
