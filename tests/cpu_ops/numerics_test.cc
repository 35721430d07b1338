// SPDX-License-Identifier: Apache-2.0
// Numerics the backend data covers thinly: sgemm (both micro-kernels, all
// edge sizes, transposes, alpha/beta, leading dimensions), and Conv /
// ConvTranspose / pooling against naive double-precision references over
// random configurations (1-D..3-D, groups, depthwise multipliers, dilations,
// strides, asymmetric pads, auto_pad).
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "runtime/cpu_ops/sgemm.h"
#include "tests/cpu_ops/op_test_util.h"

namespace openbpu::rt::test {
namespace {

void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                  const std::string& what, double tol = 1e-4) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << what << " at " << i;
}

void check_sgemm(bool generic) {
  sgemm_force_generic(generic);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(-1, 1);
  const int64_t sizes[] = {1, 2, 5, 6, 7, 8, 13, 16, 17, 31, 97, 100, 260};
  int cases = 0;
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : {1, 3, 16, 255, 257}) {
        if (m * n * k > 2000000) continue;
        const bool ta = (m + n) % 2, tb = (n + k) % 3 == 0;
        const float alpha = (k % 2) ? 1.0f : 0.5f,
                    beta = (m % 3 == 0) ? 0.0f : (m % 3 == 1 ? 1.0f : -2.0f);
        const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2;
        std::vector<float> a((ta ? k : m) * lda), b((tb ? n : k) * ldb), c(m * ldc);
        for (auto& v : a) v = d(rng);
        for (auto& v : b) v = d(rng);
        for (auto& v : c) v = d(rng);
        std::vector<double> want(m * n);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t p = 0; p < k; ++p)
              acc += double(ta ? a[p * lda + i] : a[i * lda + p]) *
                     double(tb ? b[j * ldb + p] : b[p * ldb + j]);
            want[i * n + j] = alpha * acc + (beta == 0.0f ? 0.0 : beta * c[i * ldc + j]);
          }
        sgemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
        std::vector<float> got(m * n);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) got[i * n + j] = c[i * ldc + j];
        expect_close(
            got, want,
            "sgemm m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        ++cases;
      }
  sgemm_force_generic(false);
  EXPECT_GT(cases, 300);
}

TEST(CpuOpsNumerics, SgemmDefaultKernel) { check_sgemm(false); }
TEST(CpuOpsNumerics, SgemmGenericKernel) { check_sgemm(true); }

// Naive Conv in double: X [N,C,S...], W [M,C/G,K...], any spatial rank.
struct ConvCfg {
  std::vector<int64_t> in, k, stride, dil, pad_b, pad_e;
  int64_t n, c, m, g;
};

std::vector<int64_t> conv_out(const ConvCfg& p) {
  std::vector<int64_t> o;
  for (size_t i = 0; i < p.in.size(); ++i)
    o.push_back((p.in[i] + p.pad_b[i] + p.pad_e[i] - ((p.k[i] - 1) * p.dil[i] + 1)) / p.stride[i] +
                1);
  return o;
}

std::vector<double> naive_conv(const ConvCfg& p, const T& x, const T& w, const T& b) {
  const std::vector<int64_t> o = conv_out(p);
  const size_t s = p.in.size();
  const int64_t osz = count_of(o), isz = count_of(p.in), ksz = count_of(p.k);
  const int64_t cg = p.c / p.g, mg = p.m / p.g;
  std::vector<double> y(p.n * p.m * osz);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t m = 0; m < p.m; ++m)
      for (int64_t oi = 0; oi < osz; ++oi) {
        std::vector<int64_t> oc(s);
        for (size_t a = s, r = oi; a-- > 0;) oc[a] = r % o[a], r /= o[a];
        double acc = b.as<float>()[m];
        const int64_t gi = m / mg;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t ki = 0; ki < ksz; ++ki) {
            int64_t off = 0;
            bool inside = true;
            for (size_t a = 0, r = ki, kd = ksz; a < s; ++a) {
              kd /= p.k[a];
              const int64_t kk = r / kd;
              r %= kd;
              const int64_t ii = oc[a] * p.stride[a] - p.pad_b[a] + kk * p.dil[a];
              if (ii < 0 || ii >= p.in[a]) inside = false;
              off = off * p.in[a] + ii;
            }
            if (!inside) continue;
            acc += double(x.as<float>()[(n * p.c + gi * cg + c) * isz + off]) *
                   double(w.as<float>()[(m * cg + c) * ksz + ki]);
          }
        y[(n * p.m + m) * osz + oi] = acc;
      }
  return y;
}

TEST(CpuOpsNumerics, ConvRandomConfigs) {
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int it = 0; it < 120; ++it) {
    ConvCfg p;
    const size_t s = static_cast<size_t>(pick(1, 3));
    p.n = pick(1, 2);
    p.g = pick(0, 3) == 0 ? pick(2, 4) : 1;
    const bool dw = pick(0, 3) == 0;
    p.c = dw ? pick(2, 6) : p.g * pick(1, 4);
    if (dw) p.g = p.c;
    p.m = p.g * pick(1, 3);
    for (size_t a = 0; a < s; ++a) {
      p.k.push_back(pick(1, s == 3 ? 3 : 5));
      p.stride.push_back(pick(1, 3));
      p.dil.push_back(pick(1, 2));
      p.pad_b.push_back(pick(0, 2));
      p.pad_e.push_back(pick(0, 2));
      const int64_t ext = (p.k.back() - 1) * p.dil.back() + 1;
      p.in.push_back(std::max<int64_t>(ext, pick(1, s == 3 ? 7 : 19)));
    }
    const std::vector<int64_t> o = conv_out(p);
    std::vector<int64_t> xd = {p.n, p.c}, wd = {p.m, p.c / p.g}, yd = {p.n, p.m};
    xd.insert(xd.end(), p.in.begin(), p.in.end());
    wd.insert(wd.end(), p.k.begin(), p.k.end());
    yd.insert(yd.end(), o.begin(), o.end());
    T x = f32(xd), w = f32(wd), b = f32({p.m}), y = f32(yd);
    fill_random(&x, it * 3 + 1);
    fill_random(&w, it * 3 + 2);
    fill_random(&b, it * 3 + 3);
    CpuOpDef d = op("Conv");
    set_ints(&d, "kernel_shape", p.k);
    set_ints(&d, "strides", p.stride);
    set_ints(&d, "dilations", p.dil);
    std::vector<int64_t> pads = p.pad_b;
    pads.insert(pads.end(), p.pad_e.begin(), p.pad_e.end());
    set_ints(&d, "pads", pads);
    set_int(&d, "group", p.g);
    const Status st = run_op(d, {&x, &w, &b}, {&y});
    ASSERT_TRUE(st.ok()) << st.message();
    expect_close(y.floats(), naive_conv(p, x, w, b), "conv config " + std::to_string(it));
  }
}

// The 3-wide depthwise fast path: every stride/pad/width edge combination.
TEST(CpuOpsNumerics, Depthwise3x3EdgeCases) {
  int it = 0;
  for (int64_t width : {1, 2, 3, 4, 5, 9, 17})
    for (int64_t stride : {1, 2, 3})
      for (int64_t pb : {0, 1, 2})
        for (int64_t pe : {0, 1, 2})
          for (int64_t mult : {1, 2}) {
            ConvCfg p;
            p.n = 1, p.c = 3, p.g = 3, p.m = 3 * mult;
            p.in = {4, width};
            p.k = {3, 3};
            p.stride = {1, stride};
            p.dil = {1, 1};
            p.pad_b = {1, pb};
            p.pad_e = {1, pe};
            if (width + pb + pe < 3) continue;
            const std::vector<int64_t> o = conv_out(p);
            T x = f32({1, 3, 4, width}), w = f32({p.m, 1, 3, 3}), b = f32({p.m}),
              y = f32({1, p.m, o[0], o[1]});
            fill_random(&x, ++it);
            fill_random(&w, it + 1000);
            fill_random(&b, it + 2000);
            CpuOpDef d = op("Conv");
            set_ints(&d, "strides", p.stride);
            set_ints(&d, "pads", {1, pb, 1, pe});
            set_int(&d, "group", 3);
            const Status st = run_op(d, {&x, &w, &b}, {&y});
            ASSERT_TRUE(st.ok()) << st.message();
            expect_close(y.floats(), naive_conv(p, x, w, b),
                         "depthwise w=" + std::to_string(width) + " s=" + std::to_string(stride));
          }
}

TEST(CpuOpsNumerics, ConvAutoPadSameLower) {
  // 1-D, kernel 4, stride 1: total pad 3, SAME_LOWER puts 2 at the start.
  T x = f32({1, 1, 5}, {1, 2, 3, 4, 5}), w = f32({1, 1, 4}, {1, 1, 1, 1}), y = f32({1, 1, 5});
  CpuOpDef d = op("Conv");
  set_string(&d, "auto_pad", "SAME_LOWER");
  ASSERT_TRUE(run_op(d, {&x, &w}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{3, 6, 10, 14, 12}));
  set_string(&d, "auto_pad", "SAME_UPPER");
  ASSERT_TRUE(run_op(d, {&x, &w}, {&y}).ok());
  EXPECT_EQ(y.floats(), (std::vector<float>{6, 10, 14, 12, 9}));
}

// ConvTranspose == gradient of Conv: y[o] += x[i] * w at o = i*s - p + k*d.
TEST(CpuOpsNumerics, ConvTransposeRandomConfigs) {
  std::mt19937 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int it = 0; it < 60; ++it) {
    const int64_t n = 1, g = pick(1, 2), c = g * pick(1, 3), mg = pick(1, 3), m = g * mg;
    const int64_t in = pick(1, 6), k = pick(1, 4), s = pick(1, 3), dil = pick(1, 2),
                  pb = pick(0, 1), pe = pick(0, 1);
    const int64_t opad = pick(0, std::min<int64_t>(s, dil) - 1);
    const int64_t out = s * (in - 1) + opad + (k - 1) * dil + 1 - pb - pe;
    if (out < 1) continue;
    T x = f32({n, c, in, in}), w = f32({c, mg, k, k}), b = f32({m}), y = f32({n, m, out, out});
    fill_random(&x, it + 100);
    fill_random(&w, it + 200);
    fill_random(&b, it + 300);
    CpuOpDef d = op("ConvTranspose");
    set_ints(&d, "strides", {s, s});
    set_ints(&d, "dilations", {dil, dil});
    set_ints(&d, "pads", {pb, pb, pe, pe});
    set_ints(&d, "output_padding", {opad, opad});
    set_int(&d, "group", g);
    const Status st = run_op(d, {&x, &w, &b}, {&y});
    ASSERT_TRUE(st.ok()) << st.message();
    std::vector<double> want(n * m * out * out);
    for (int64_t mm = 0; mm < m; ++mm)
      for (int64_t i = 0; i < out * out; ++i) want[mm * out * out + i] = b.as<float>()[mm];
    for (int64_t cc = 0; cc < c; ++cc)
      for (int64_t j = 0; j < mg; ++j) {
        const int64_t mm = (cc / (c / g)) * mg + j;
        for (int64_t ih = 0; ih < in; ++ih)
          for (int64_t iw = 0; iw < in; ++iw)
            for (int64_t kh = 0; kh < k; ++kh)
              for (int64_t kw = 0; kw < k; ++kw) {
                const int64_t oh = ih * s - pb + kh * dil, ow = iw * s - pb + kw * dil;
                if (oh < 0 || oh >= out || ow < 0 || ow >= out) continue;
                want[(mm * out + oh) * out + ow] +=
                    double(x.as<float>()[(cc * in + ih) * in + iw]) *
                    w.as<float>()[((cc * mg + j) * k + kh) * k + kw];
              }
      }
    expect_close(y.floats(), want, "convtranspose config " + std::to_string(it));
  }
}

TEST(CpuOpsNumerics, PoolingRandomConfigs) {
  std::mt19937 rng(5);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int it = 0; it < 80; ++it) {
    const int64_t k = pick(1, 4), s = pick(1, 3), pb = pick(0, k - 1), pe = pick(0, k - 1),
                  h = pick(k, 12);
    const bool avg = it % 2, include = pick(0, 1), ceil_mode = pick(0, 1);
    const int64_t span = h + pb + pe - k;
    int64_t o = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
    if (ceil_mode && (o - 1) * s >= h + pb) --o;
    T x = f32({1, 2, h, h}), y = f32({1, 2, o, o});
    fill_random(&x, it + 50);
    CpuOpDef d = op(avg ? "AveragePool" : "MaxPool");
    set_ints(&d, "kernel_shape", {k, k});
    set_ints(&d, "strides", {s, s});
    set_ints(&d, "pads", {pb, pb, pe, pe});
    set_int(&d, "ceil_mode", ceil_mode);
    set_int(&d, "count_include_pad", include);
    const Status st = run_op(d, {&x}, {&y});
    ASSERT_TRUE(st.ok()) << st.message();
    std::vector<double> want;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t oh = 0; oh < o; ++oh)
        for (int64_t ow = 0; ow < o; ++ow) {
          double mx = -INFINITY, sum = 0;
          int64_t cnt = 0, padded = 0;
          for (int64_t kh = 0; kh < k; ++kh)
            for (int64_t kw = 0; kw < k; ++kw) {
              const int64_t ih = oh * s - pb + kh, iw = ow * s - pb + kw;
              if (ih < h + pe && iw < h + pe) ++padded;
              if (ih < 0 || iw < 0 || ih >= h || iw >= h) continue;
              const double v = x.as<float>()[(c * h + ih) * h + iw];
              mx = std::max(mx, v), sum += v, ++cnt;
            }
          want.push_back(avg ? sum / (include ? padded : cnt) : mx);
        }
    expect_close(y.floats(), want, "pool config " + std::to_string(it), 1e-5);
  }
}

}  // namespace
}  // namespace openbpu::rt::test
