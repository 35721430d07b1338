// SPDX-License-Identifier: Apache-2.0
// Reference move and fill: random 6-D copies with type changes and
// requantization, transposes, concat into channel slices, slices and
// broadcasts expressed purely through strides; fill with saturation.
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

int64_t expected_move(int64_t x, bool requant, int32_t m, int32_t s, DType out_t) {
  const int128 v = requant ? round_div_pow2(static_cast<int128>(x) * m, s) : x;
  return clamp_to(v, type_min(out_t), type_max(out_t));
}

TEST(RefMove, RandomCopiesWithTypeChanges) {
  std::mt19937 rng(555);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const DType types[] = {DType::kInt8, DType::kInt16, DType::kInt32};
  for (int i = 0; i < 300; ++i) {
    TestMemory tm(700 + i);
    const int rank = ri(1, 6);
    std::vector<int> dims(rank);
    for (int& d : dims) d = ri(1, rank > 3 ? 4 : 9);
    isa::Move ins;
    ins.in = tm.tensor(Region::kInput, types[ri(0, 2)], dims, ri(0, 3) != 0);
    ins.out = tm.tensor(Region::kOutput, types[ri(0, 2)], dims, ri(0, 3) != 0);
    ins.requantize = ri(0, 1);
    ins.multiplier = ri(1, INT32_MAX);
    ins.shift = ri(0, 63);
    if (ri(0, 1))
      derive_multiplier(std::ldexp(1.0, ri(-20, 10)) * (0.5 + ri(0, 100) / 100.0), &ins.multiplier,
                        &ins.shift);
    const Dense x = tm.fill_random(ins.in);
    const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
    const Memory mem = tm.bind();
    ref::move(ins, mem);
    tm.expect_only_views_written(Region::kOutput, before, {ins.out});
    Dense want = x;
    for (int64_t& v : want.v) {
      v = expected_move(v, ins.requantize, ins.multiplier, ins.shift, ins.out.dtype);
    }
    expect_equal(tm.read(ins.out), want, "move " + std::to_string(i));
    if (HasFailure()) return;
  }
}

TEST(RefMove, TransposeNhwcToNchw) {
  TestMemory tm(1);
  const int n = 2, h = 3, w = 5, c = 7;
  const isa::TensorRef phys = tm.tensor(Region::kInput, DType::kInt8, {n, h, w, c}, true);
  const Dense x = tm.fill_random(phys);
  isa::Move ins;
  ins.in = phys;  // viewed as [N, C, H, W]
  ins.in.dims[1] = c;
  ins.in.dims[2] = h;
  ins.in.dims[3] = w;
  ins.in.strides[1] = phys.strides[3];
  ins.in.strides[2] = phys.strides[1];
  ins.in.strides[3] = phys.strides[2];
  ins.out = tm.tensor(Region::kOutput, DType::kInt8, {n, c, h, w}, true);
  const Memory mem = tm.bind();
  ref::move(ins, mem);
  const Dense y = tm.read(ins.out);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < c; ++b)
      for (int d = 0; d < h; ++d)
        for (int e = 0; e < w; ++e) ASSERT_EQ(y.at(a, b, d, e), x.at(a, d, e, b));
}

TEST(RefMove, ConcatIntoChannelSlicesWithRequant) {
  TestMemory tm(2);
  const int h = 4, w = 3, c1 = 5, c2 = 11;
  isa::Move m1, m2;
  m1.in = tm.tensor(Region::kInput, DType::kInt8, {1, h, w, c1}, true);
  m2.in = tm.tensor(Region::kInput, DType::kInt16, {1, h, w, c2}, true);
  const isa::TensorRef cat = tm.tensor(Region::kOutput, DType::kInt8, {1, h, w, c1 + c2}, true);
  m1.out = cat;
  m1.out.dims[3] = c1;
  m2.out = cat;
  m2.out.dims[3] = c2;
  m2.out.offset += c1 * cat.strides[3];  // int8: one byte per element
  m1.requantize = 0;
  m2.requantize = 1;
  derive_multiplier(1.0 / 256, &m2.multiplier, &m2.shift);
  const Dense a = tm.fill_random(m1.in), b = tm.fill_random(m2.in);
  const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
  const Memory mem = tm.bind();
  ref::move(m1, mem);
  ref::move(m2, mem);
  tm.expect_only_views_written(Region::kOutput, before, {cat});
  const Dense y = tm.read(cat);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j)
      for (int k = 0; k < c1 + c2; ++k) {
        const int64_t want = k < c1 ? a.at(0, i, j, k)
                                    : expected_move(b.at(0, i, j, k - c1), true, m2.multiplier,
                                                    m2.shift, DType::kInt8);
        ASSERT_EQ(y.at(0, i, j, k), want) << i << "," << j << "," << k;
      }
}

TEST(RefMove, SliceAndBroadcast) {
  TestMemory tm(3);
  const isa::TensorRef big = tm.tensor(Region::kInput, DType::kInt16, {1, 9, 8, 6}, true);
  const Dense x = tm.fill_random(big);
  // Slice rows 2..6 (step 2), columns 1..4, channels 3..5.
  isa::Move slice;
  slice.in = big;
  slice.in.offset += (2 * big.strides[1] + 1 * big.strides[2] + 3 * big.strides[3]) * 2;
  slice.in.dims[1] = 3;
  slice.in.strides[1] = 2 * big.strides[1];
  slice.in.dims[2] = 4;
  slice.in.dims[3] = 3;
  slice.out = tm.tensor(Region::kOutput, DType::kInt16, {1, 3, 4, 3}, true);
  // Broadcast one pixel's channels over a 5x2 image (stride 0 over H and W).
  isa::Move tile;
  tile.in = big;
  tile.in.dims[1] = 5;
  tile.in.dims[2] = 2;
  tile.in.strides[1] = tile.in.strides[2] = 0;
  tile.out = tm.tensor(Region::kOutput, DType::kInt32, {1, 5, 2, 6}, true);
  const Memory mem = tm.bind();
  ref::move(slice, mem);
  ref::move(tile, mem);
  const Dense s = tm.read(slice.out), t = tm.read(tile.out);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(s.at(0, i, j, k), x.at(0, 2 + 2 * i, 1 + j, 3 + k));
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 6; ++k) EXPECT_EQ(t.at(0, i, j, k), x.at(0, 0, 0, k));
}

TEST(RefMove, SaturatingExtremes) {
  for (int s : {0, 63}) {
    for (bool requant : {false, true}) {
      TestMemory tm(4);
      isa::Move ins;
      ins.in = tm.tensor(Region::kInput, DType::kInt32, {1, 2, 2, 5}, true);
      ins.out = tm.tensor(Region::kOutput, DType::kInt8, {1, 2, 2, 5}, true);
      tm.write(ins.in, {INT32_MIN,     INT32_MAX,     -129, 128, -128, 127, 0,  1,   -1,   2,
                        INT32_MIN + 1, INT32_MAX - 1, -300, 300, 5,    -5,  64, -64, 1000, -1000});
      ins.requantize = requant;
      ins.multiplier = INT32_MAX;
      ins.shift = s;
      const Dense x = tm.read(ins.in);
      const Memory mem = tm.bind();
      ref::move(ins, mem);
      const Dense y = tm.read(ins.out);
      for (size_t i = 0; i < x.v.size(); ++i) {
        EXPECT_EQ(y.v[i], expected_move(x.v[i], requant, INT32_MAX, s, DType::kInt8)) << i;
      }
    }
  }
}

TEST(RefMove, ShiftZeroMultipliesExactly) {
  TestMemory tm(5);
  isa::Move ins;
  ins.in = tm.tensor(Region::kInput, DType::kInt8, {1, 1, 1, 6}, true);
  ins.out = tm.tensor(Region::kOutput, DType::kInt16, {1, 1, 1, 6}, true);
  tm.write(ins.in, {-128, -3, 0, 1, 5, 127});
  ins.requantize = 1;
  ins.multiplier = 3;
  ins.shift = 0;
  const Memory mem = tm.bind();
  ref::move(ins, mem);
  EXPECT_EQ(tm.read(ins.out).v, (std::vector<int64_t>{-384, -9, 0, 3, 15, 381}));
}

TEST(RefFill, SaturatesToTheViewType) {
  const DType types[] = {DType::kInt8, DType::kInt16, DType::kInt32};
  const int32_t values[] = {0, -1, 77, 1000, -1000, 100000, -100000, INT32_MAX, INT32_MIN};
  uint32_t seed = 10;
  for (DType t : types) {
    for (int32_t v : values) {
      TestMemory tm(++seed);
      isa::Fill ins;
      ins.out = tm.tensor(Region::kOutput, t, {2, 3, 1, 4, 2, 3}, true);
      ins.value = v;
      const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
      const Memory mem = tm.bind();
      ref::fill(ins, mem);
      tm.expect_only_views_written(Region::kOutput, before, {ins.out});
      for (int64_t y : tm.read(ins.out).v) ASSERT_EQ(y, clamp_to(v, type_min(t), type_max(t)));
    }
  }
}

}  // namespace
}  // namespace openbpu::sim::test
