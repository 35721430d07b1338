// SPDX-License-Identifier: Apache-2.0
// requantize(): hand-computed values (computed with arbitrary-precision
// integers), random values against a division-based floor, and the half-LSB
// bound against the real-valued v*M/2^S.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "bpu_sim/isa/numerics.h"
#include "bpu_sim/reference/kernels.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();

TEST(RefRequantize, KnownValues) {
  struct Case {
    int64_t v;
    int32_t m, s;
    int64_t want;
  } cases[] = {
      {3, 1, 1, 2},    // 1.5 rounds up
      {-3, 1, 1, -1},  // -1.5 rounds up (towards +inf), not away from zero
      {-1, 1, 1, 0},   // -0.5 -> 0
      {1, 1, 1, 1},    // 0.5 -> 1
      {-2, 1, 1, -1},
      {5, 1, 0, 5},  // S = 0: no rounding term
      {-5, 3, 0, -15},
      {100, kI32Max, 31, 100},
      {-100, kI32Max, 31, -100},
      {12345, 1 << 30, 30, 12345},
      {-12345, 1 << 30, 31, -6172},
      {kI64Max, kI32Max, 63, 2147483647},
      {kI64Min, kI32Max, 63, -2147483647},
      {kI64Min, kI32Max, 62, -4294967294},
      {int64_t{1} << 40, kI32Max, 1, kI64Max},  // saturates to int64
      {kI64Min, kI32Max, 0, kI64Min},
      {int64_t{1} << 32, 1 << 30, 63, 1},     // exactly 0.5 at S = 63 rounds up
      {-(int64_t{1} << 32), 1 << 30, 63, 0},  // exactly -0.5 at S = 63 rounds up
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ref::requantize(c.v, c.m, c.s), c.want) << c.v << " * " << c.m << " >> " << c.s;
  }
}

TEST(RefRequantize, RandomAgainstFloorDivision) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    const int bits = static_cast<int>(rng() % 40);
    const int64_t v = static_cast<int64_t>(rng() % (uint64_t{1} << bits)) * ((rng() & 1) ? -1 : 1);
    const int32_t m = static_cast<int32_t>(rng() % kI32Max) + 1;
    const int s = static_cast<int>(rng() % 64);
    const int64_t got = ref::requantize(v, m, s);
    const int128 want = round_div_pow2(static_cast<int128>(v) * m, s);
    ASSERT_EQ(got, clamp_to(want, kI64Min, kI64Max)) << v << " " << m << " " << s;
    if (want != got) continue;  // saturated to int64: no real-valued bound
    // |got - v*M/2^S| <= 1/2 (round half up).
    const long double real = std::ldexp(static_cast<long double>(v) * m, -s);
    ASSERT_LE(std::fabs(static_cast<long double>(got) - real), 0.5L) << v << " " << m << " " << s;
  }
}

TEST(RefRequantize, ConverterMultiplierRule) {
  // M, S from a ratio keep requantize within 1/2 + |v*r| * 2^-24 of v*r.
  std::mt19937_64 rng(43);
  for (int i = 0; i < 20000; ++i) {
    const double r = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng),
                                static_cast<int>(rng() % 40) - 30);
    int32_t m, s;
    derive_multiplier(r, &m, &s);
    // The largest shift keeps 24 significant bits (floats requantize exactly).
    ASSERT_GE(m, 1 << 23);
    ASSERT_LT(m, 1 << 24);
    int32_t m2, s2;
    isa::quantize_multiplier(r, &m2, &s2);  // the one derivation agrees
    ASSERT_EQ(m2, m) << r;
    ASSERT_EQ(s2, s) << r;
    const int64_t v = static_cast<int64_t>(rng() % 2000001) - 1000000;
    const long double real = static_cast<long double>(v) * r;
    // Within 1/2 of v*M/2^S, whose ratio is within 2^-24 of r relatively.
    const long double bound = 0.5L + std::fabs(real) * std::ldexp(1.001L, -24);
    ASSERT_LE(std::fabs(static_cast<long double>(ref::requantize(v, m, s)) - real), bound)
        << v << " r=" << r;
  }
}

TEST(RefRequantize, Clamp) {
  EXPECT_EQ(ref::clamp64(5, -3, 4), 4);
  EXPECT_EQ(ref::clamp64(-5, -3, 4), -3);
  EXPECT_EQ(ref::clamp64(2, -3, 4), 2);
  EXPECT_EQ(ref::clamp64(kI64Min, -128, 127), -128);
  EXPECT_EQ(ref::clamp64(kI64Max, -128, 127), 127);
}


// isa::quantize_value against the rule written with std::round (half away
// from zero, then the clamp): ties, the double just below one half, values
// at and past the range, infinities, NaN, random values of every range.
TEST(RefQuantizeValue, RoundsHalfAwayFromZeroAndClamps) {
  auto rule = [](double v, double s, isa::IntRange r) -> int32_t {
    const double q = v / s;
    if (std::isnan(q)) return 0;
    const double x = std::round(q);
    return static_cast<int32_t>(x <= r.lo ? r.lo : (x >= r.hi ? r.hi : x));
  };
  const double below_half = std::nextafter(0.5, 0.0);
  std::vector<double> vals = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, below_half, -below_half,
                              126.5, 127.5, -127.5, -128.5, 32767.5, -32768.5, 1e300, -1e300,
                              INFINITY, -INFINITY, NAN, 2147483647.5, -2147483648.5, 4e9, -4e9};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-70000.0, 70000.0);
  for (int i = 0; i < 20000; ++i) vals.push_back(i % 4 == 0 ? std::round(u(rng)) + 0.5 : u(rng));
  for (const isa::IntRange r : {isa::int_range(8, true), isa::int_range(16, true), isa::int_range(32, true),
                                isa::int_range(8, false)})
    for (double s : {1.0, 0.25, 0.0078125, 0.05, 3.0})
      for (double v : vals) {
        const double x = v * s;  // ties stay ties for the power-of-two scales
        EXPECT_EQ(isa::quantize_value(x, s, r), rule(x, s, r)) << "v " << x << " scale " << s << " range " << r.lo;
      }
}

}  // namespace
}  // namespace openbpu::sim::test
