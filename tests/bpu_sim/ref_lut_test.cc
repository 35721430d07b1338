// SPDX-License-Identifier: Apache-2.0
// Reference table lookup: int8 exhaustively against direct indexing, int16
// exhaustively (all 65536 inputs) against real-valued linear interpolation
// rounded half up in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bpu_sim/reference/kernels.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

using isa::DType;
using isa::Region;

// Runs a Lut over the given inputs (laid out as [1, rows, cols, ch] with padded
// strides) and returns the output values in input order.
std::vector<int64_t> run(TestMemory& tm, DType in_t, DType out_t, const std::vector<int64_t>& x,
                         const std::vector<int64_t>& table, std::vector<int> dims) {
  isa::Lut ins;
  ins.in = tm.tensor(Region::kInput, in_t, dims, true);
  ins.out = tm.tensor(Region::kOutput, out_t, dims, true);
  ins.table = tm.constants(out_t, table);
  tm.write(ins.in, x);
  const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
  const Memory mem = tm.bind();
  ref::lut(ins, mem);
  tm.expect_only_views_written(Region::kOutput, before, {ins.out});
  return tm.read(ins.out).v;
}

TEST(RefLut, Int8AllInputs) {
  for (DType out_t : {DType::kInt8, DType::kInt16}) {
    TestMemory tm(1);
    std::vector<int64_t> table(256), x(256);
    for (auto& t : table) t = tm.rand_i64(type_min(out_t), type_max(out_t));
    for (int i = 0; i < 256; ++i) x[i] = i - 128;
    std::shuffle(x.begin(), x.end(), tm.rng());
    const std::vector<int64_t> y = run(tm, DType::kInt8, out_t, x, table, {1, 8, 4, 8});
    for (int i = 0; i < 256; ++i) EXPECT_EQ(y[i], table[x[i] + 128]) << x[i];
  }
}

TEST(RefLut, Int16InterpolationAllInputs) {
  for (DType out_t : {DType::kInt8, DType::kInt16}) {
    for (int table_kind = 0; table_kind < 3; ++table_kind) {
      TestMemory tm(2 + table_kind);
      std::vector<int64_t> table(513);
      for (int i = 0; i < 513; ++i) {
        const double u = (i - 256) / 256.0;
        switch (table_kind) {
          case 0:  // random, with full-range jumps between neighbours
            table[i] = tm.rand_i64(type_min(out_t), type_max(out_t));
            break;
          case 1:  // tanh
            table[i] = std::lround(std::tanh(4 * u) * type_max(out_t));
            break;
          default:  // alternating extremes: the largest interpolation steps
            table[i] = (i & 1) ? type_max(out_t) : type_min(out_t);
            break;
        }
      }
      std::vector<int64_t> x(65536);
      for (int i = 0; i < 65536; ++i) x[i] = i - 32768;
      const std::vector<int64_t> y = run(tm, DType::kInt16, out_t, x, table, {1, 64, 32, 32});
      for (int i = 0; i < 65536; ++i) {
        const int u = i, idx = u / 128, f = u % 128;
        const double t0 = static_cast<double>(table[idx]), t1 = static_cast<double>(table[idx + 1]);
        const double real = t0 + (t1 - t0) * f / 128.0;  // exact in double
        ASSERT_EQ(y[i], static_cast<int64_t>(std::floor(real + 0.5))) << "x=" << x[i];
        ASSERT_LE(std::fabs(y[i] - real), 0.5);
      }
    }
  }
}

TEST(RefLut, InPlace) {
  TestMemory tm(9);
  isa::Lut ins;
  ins.in = tm.tensor(Region::kScratch, DType::kInt8, {2, 3, 5, 9}, true);
  ins.out = ins.in;
  std::vector<int64_t> table(256);
  for (int i = 0; i < 256; ++i) table[i] = 127 - i;  // x -> -1 - x
  ins.table = tm.constants(DType::kInt8, table);
  const Dense x = tm.fill_random(ins.in);
  const Memory mem = tm.bind();
  ref::lut(ins, mem);
  const Dense y = tm.read(ins.out);
  for (size_t i = 0; i < x.v.size(); ++i) EXPECT_EQ(y.v[i], -1 - x.v[i]);
}

}  // namespace
}  // namespace openbpu::sim::test
