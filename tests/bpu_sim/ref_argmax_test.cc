// SPDX-License-Identifier: Apache-2.0
// Reference argmax against std::max_element (which returns the first maximum),
// with many ties (values drawn from small ranges) and channel counts 1..64.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "bpu_sim/reference/kernels.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

using isa::DType;
using isa::Region;

TEST(RefArgMax, RandomShapesAndTies) {
  std::mt19937 rng(99);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 300; ++i) {
    TestMemory tm(2000 + i);
    const int n = ri(1, 2), h = ri(1, 6), w = ri(1, 6);
    const int c = i < 64 ? i + 1 : ri(1, 64);
    const DType t = ri(0, 1) ? DType::kInt16 : DType::kInt8;
    isa::ArgMax ins;
    ins.in = tm.tensor(Region::kInput, t, {n, h, w, c}, ri(0, 3) != 0);
    ins.out = tm.tensor(Region::kOutput, DType::kInt32, {n, h, w, 1}, ri(0, 3) != 0);
    const int64_t lo = type_min(t), hi = type_max(t);
    Dense x;
    switch (ri(0, 3)) {
      case 0:
        x = tm.fill_random(ins.in);
        break;
      case 1:
        x = tm.fill_random(ins.in, -1, 1);
        break;  // many ties
      case 2:
        x = tm.fill_random(ins.in, lo, lo);
        break;  // all equal -> 0
      default:
        x = tm.fill_random(ins.in, hi - 1, hi);
        break;  // ties at the maximum
    }
    const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
    const Memory mem = tm.bind();
    ref::argmax(ins, mem);
    tm.expect_only_views_written(Region::kOutput, before, {ins.out});
    const Dense y = tm.read(ins.out);
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < h; ++b)
        for (int d = 0; d < w; ++d) {
          std::vector<int64_t> px(c);
          for (int k = 0; k < c; ++k) px[k] = x.at(a, b, d, k);
          const int64_t want = std::max_element(px.begin(), px.end()) - px.begin();
          ASSERT_EQ(y.at(a, b, d, 0), want) << "case " << i;
        }
  }
}

}  // namespace
}  // namespace openbpu::sim::test
