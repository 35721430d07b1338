// SPDX-License-Identifier: Apache-2.0
// Reference eltwise against an independent computation over compact operands
// that are broadcast by explicit index arithmetic (the kernel sees the same
// operands as stride-0 views), plus the half-LSB bound against the real result.
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
using isa::EltwiseKind;
using isa::Region;

const char* kind_name(EltwiseKind k) {
  switch (k) {
    case EltwiseKind::kAdd:
      return "add";
    case EltwiseKind::kSub:
      return "sub";
    case EltwiseKind::kMul:
      return "mul";
    case EltwiseKind::kMax:
      return "max";
    case EltwiseKind::kMin:
      return "min";
  }
  return "?";
}

// An operand of shape `shape` (each dim 1 or the output's) broadcast to out_dims
// through stride 0 on its size-1 dimensions.
isa::TensorRef broadcast_operand(TestMemory& tm, DType t, const std::vector<int>& shape,
                                 bool padded) {
  isa::TensorRef ref = tm.tensor(Region::kInput, t, shape, padded);
  return ref;
}

struct EltCase {
  EltwiseKind kind = EltwiseKind::kAdd;
  std::vector<int> out_dims{2, 3, 4, 5};
  std::vector<int> a_shape, b_shape;  // empty = same as out
  DType a_t = DType::kInt8, b_t = DType::kInt8, out_t = DType::kInt8;
  int32_t ma = 1 << 30, mb = 1 << 30, s = 31;
  int32_t act_min = INT32_MIN, act_max = INT32_MAX;
  bool padded = true;
  bool extreme_inputs = false;
  int32_t za = 0, zb = 0, zo = 0;  // zero points (int8 operands)
};

void run_case(const EltCase& e, uint32_t seed) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s Ma=%d Mb=%d S=%d a_t=%d b_t=%d out_t=%d act=[%d,%d]",
                kind_name(e.kind), e.ma, e.mb, e.s, static_cast<int>(e.a_t),
                static_cast<int>(e.b_t), static_cast<int>(e.out_t), e.act_min, e.act_max);
  SCOPED_TRACE(buf);
  TestMemory tm(seed);
  const std::vector<int> a_shape = e.a_shape.empty() ? e.out_dims : e.a_shape;
  const std::vector<int> b_shape = e.b_shape.empty() ? e.out_dims : e.b_shape;
  isa::Eltwise ins;
  ins.kind = e.kind;
  ins.multiplier_a = e.ma;
  ins.multiplier_b = e.mb;
  ins.shift = e.s;
  ins.act_min = e.act_min;
  ins.act_max = e.act_max;
  ins.zero_a = e.za, ins.zero_b = e.zb, ins.zero_out = e.zo;
  ins.a = broadcast_operand(tm, e.a_t, a_shape, e.padded);
  ins.b = broadcast_operand(tm, e.b_t, b_shape, e.padded);
  ins.out = tm.tensor(Region::kOutput, e.out_t, e.out_dims, e.padded);
  Dense a, b;
  if (e.extreme_inputs) {
    a = tm.fill_random(ins.a, type_min(e.a_t), type_min(e.a_t));
    b = tm.fill_random(ins.b, type_max(e.b_t), type_max(e.b_t));
  } else {
    a = tm.fill_random(ins.a);
    b = tm.fill_random(ins.b);
  }
  // Broadcast: the kernel sees dims = out dims and stride 0 where the operand has 1.
  for (size_t k = 0; k < e.out_dims.size(); ++k) {
    if (a_shape[k] == 1 && e.out_dims[k] != 1) ins.a.strides[k] = 0;
    if (b_shape[k] == 1 && e.out_dims[k] != 1) ins.b.strides[k] = 0;
    ins.a.dims[k] = ins.b.dims[k] = e.out_dims[k];
  }
  const std::vector<uint8_t> before = tm.snapshot(Region::kOutput);
  const Memory mem = tm.bind();
  ref::eltwise(ins, mem);
  const Dense got = tm.read(ins.out);
  tm.expect_only_views_written(Region::kOutput, before, {ins.out});

  const int64_t lo = std::max<int64_t>(e.act_min, type_min(e.out_t));
  const int64_t hi = std::min<int64_t>(e.act_max, type_max(e.out_t));
  auto bidx = [](const Dense& d, const int64_t* idx) {
    int64_t j[isa::kMaxRank];
    for (int k = 0; k < isa::kMaxRank; ++k) j[k] = d.dims[k] == 1 ? 0 : idx[k];
    return d.at(j[0], j[1], j[2], j[3], j[4], j[5]);
  };
  Dense want = got;
  TestMemory::each(ins.out, [&](const int64_t* idx) {
    const int128 x = bidx(a, idx) - e.za, z = bidx(b, idx) - e.zb;
    int128 v = 0;
    long double real = 0;
    const long double xs = std::ldexp(static_cast<long double>(x) * e.ma, -e.s);
    const long double zs = std::ldexp(static_cast<long double>(z) * e.mb, -e.s);
    switch (e.kind) {
      case EltwiseKind::kAdd:
        v = round_div_pow2(x * e.ma + z * e.mb, e.s);
        real = xs + zs;
        break;
      case EltwiseKind::kSub:
        v = round_div_pow2(x * e.ma - z * e.mb, e.s);
        real = xs - zs;
        break;
      case EltwiseKind::kMul:
        v = round_div_pow2(x * z * e.ma, e.s);
        real = std::ldexp(static_cast<long double>(x) * static_cast<long double>(z) * e.ma, -e.s);
        break;
      case EltwiseKind::kMax:
        v = std::max(round_div_pow2(x * e.ma, e.s), round_div_pow2(z * e.mb, e.s));
        real = std::max(xs, zs);
        break;
      case EltwiseKind::kMin:
        v = std::min(round_div_pow2(x * e.ma, e.s), round_div_pow2(z * e.mb, e.s));
        real = std::min(xs, zs);
        break;
    }
    const int64_t i = want.index(idx[0], idx[1], idx[2], idx[3], idx[4], idx[5]);
    v += e.zo, real += e.zo;
    want.v[i] = clamp_to(v, lo, hi);
    real = std::min<long double>(std::max<long double>(real, lo), hi);
    // add/sub/mul round once (<= 0.5); max/min pick one rounded operand (<= 0.5 too).
    EXPECT_LE(std::fabs(static_cast<long double>(got.v[i]) - real), 0.5L + 1e-9L);
  });
  expect_equal(got, want, buf);
}

TEST(RefEltwise, ZeroPointsOfInt8Operands) {
  std::mt19937 rng(4242);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const EltwiseKind kinds[] = {EltwiseKind::kAdd, EltwiseKind::kSub, EltwiseKind::kMul,
                               EltwiseKind::kMax, EltwiseKind::kMin};
  for (int i = 0; i < 100; ++i) {
    EltCase e;
    e.kind = kinds[i % 5];
    e.out_dims = {1, ri(1, 4), ri(1, 4), ri(1, 20)};
    e.za = ri(-128, 127), e.zb = i % 3 == 0 ? 0 : ri(-128, 127), e.zo = ri(-128, 127);
    e.ma = ri(1 << 28, INT32_MAX), e.mb = ri(1 << 28, INT32_MAX), e.s = e.kind == EltwiseKind::kMul ? 38 : 31;
    run_case(e, 500 + static_cast<uint32_t>(i));
  }
}

TEST(RefEltwise, AllKindsRandomShapesAndBroadcasts) {
  std::mt19937 rng(31337);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const EltwiseKind kinds[] = {EltwiseKind::kAdd, EltwiseKind::kSub, EltwiseKind::kMul,
                               EltwiseKind::kMax, EltwiseKind::kMin};
  const DType types[] = {DType::kInt8, DType::kInt16};
  for (int i = 0; i < 1000; ++i) {
    EltCase e;
    e.kind = kinds[i % 5];
    const int rank = ri(1, 6);
    e.out_dims.assign(rank, 1);
    for (int k = 0; k < rank; ++k) e.out_dims[k] = ri(1, rank > 4 ? 3 : 7);
    e.a_shape = e.out_dims;
    e.b_shape = e.out_dims;
    // Broadcast: each operand dim is 1 with probability 1/4.
    for (int k = 0; k < rank; ++k) {
      if (ri(0, 3) == 0) e.a_shape[k] = 1;
      if (ri(0, 3) == 0) e.b_shape[k] = 1;
    }
    e.a_t = types[ri(0, 1)];
    e.b_t = types[ri(0, 1)];
    e.out_t = types[ri(0, 1)];
    const double range_a = e.a_t == DType::kInt16 ? 32768 : 128;
    const double range_b = e.b_t == DType::kInt16 ? 32768 : 128;
    const double range_o = e.out_t == DType::kInt16 ? 32768 : 128;
    std::uniform_real_distribution<double> u(0.2, 1.2);
    if (e.kind == EltwiseKind::kMul) {
      derive_multiplier(range_o / (range_a * range_b) * u(rng), &e.ma, &e.s);
    } else {
      // Ma and Mb share S: derive S from the larger ratio.
      const double ra = range_o / range_a * u(rng), rb = range_o / range_b * u(rng);
      int32_t s_a, s_b, m_tmp;
      derive_multiplier(ra, &m_tmp, &s_a);
      derive_multiplier(rb, &m_tmp, &s_b);
      e.s = std::min(s_a, s_b);
      e.ma = static_cast<int32_t>(std::lround(std::ldexp(ra, e.s)));
      e.mb = static_cast<int32_t>(std::lround(std::ldexp(rb, e.s)));
    }
    if (ri(0, 5) == 0) {
      e.ma = ri(1, INT32_MAX);
      e.mb = ri(1, INT32_MAX);
      e.s = ri(0, 63);
    }
    if (ri(0, 3) == 0) {
      e.act_min = 0;
      e.act_max = ri(0, 127);
    }
    e.padded = ri(0, 3) != 0;
    run_case(e, 9000 + i);
    if (HasFailure()) return;
  }
}

TEST(RefEltwise, ScalarAndChannelBroadcast) {
  for (EltwiseKind k : {EltwiseKind::kAdd, EltwiseKind::kSub, EltwiseKind::kMul, EltwiseKind::kMax,
                        EltwiseKind::kMin}) {
    EltCase e;
    e.kind = k;
    e.out_dims = {2, 5, 3, 19};
    e.b_shape = {1, 1, 1, 19};  // per-channel
    run_case(e, 1);
    e.b_shape = {1, 1, 1, 1};  // scalar
    run_case(e, 2);
    e.a_shape = {2, 5, 3, 1};  // a broadcast over C, b scalar
    run_case(e, 3);
  }
}

TEST(RefEltwise, SaturatingExtremes) {
  for (EltwiseKind k : {EltwiseKind::kAdd, EltwiseKind::kSub, EltwiseKind::kMul, EltwiseKind::kMax,
                        EltwiseKind::kMin}) {
    for (int s : {0, 1, 62, 63}) {
      for (DType t : {DType::kInt8, DType::kInt16}) {
        EltCase e;
        e.kind = k;
        e.a_t = e.b_t = e.out_t = t;
        e.ma = e.mb = INT32_MAX;
        e.s = s;
        e.extreme_inputs = true;
        run_case(e, 4);
        e.extreme_inputs = false;
        run_case(e, 5);
      }
    }
  }
}

TEST(RefEltwise, InPlaceOnIdenticalView) {
  TestMemory tm(11);
  isa::Eltwise ins;
  ins.kind = EltwiseKind::kAdd;
  ins.a = tm.tensor(Region::kScratch, DType::kInt8, {1, 3, 3, 7}, true);
  ins.b = tm.tensor(Region::kScratch, DType::kInt8, {1, 3, 3, 7}, true);
  ins.out = ins.a;
  ins.multiplier_a = ins.multiplier_b = 1;
  ins.shift = 1;
  const Dense a = tm.fill_random(ins.a), b = tm.fill_random(ins.b);
  const Memory mem = tm.bind();
  ref::eltwise(ins, mem);
  const Dense got = tm.read(ins.out);
  for (size_t i = 0; i < got.v.size(); ++i) {
    EXPECT_EQ(got.v[i], static_cast<int64_t>(floor_div(a.v[i] + b.v[i] + 1, 2)));
  }
}

}  // namespace
}  // namespace openbpu::sim::test
