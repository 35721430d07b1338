// SPDX-License-Identifier: Apache-2.0
#include "converter/quant/weight_rounding.h"

#include <algorithm>
#include <cmath>

#include "converter/passes/pass_util.h"
#include "converter/quant/calibration.h"

namespace openbpu::cvt {

namespace {

// The weight matrix of a node whose weights are rounded for error, rows =
// output channels: a 1x1 one-group Conv's [Cout][Cin], a MatMul's constant
// [K, N] transposed. Empty for other nodes.
std::vector<double> weight_rows(const Graph& g, const Node& n, int64_t* rows, int64_t* inputs) {
  const Value* w = n.inputs.size() > 1 ? g.value(n.inputs[1]) : nullptr;
  const Value* x = g.value(n.inputs[0]);
  if (w == nullptr || !w->is_constant() || w->elem_type != kFloat || x == nullptr || x->is_constant()) return {};
  const std::vector<float> v = const_floats(g, n.inputs[1]);
  if (n.op_type == "Conv" && w->shape.size() == 4 && w->shape[2] == 1 && w->shape[3] == 1 &&
      n.attrs.get_int("group", 1) == 1 && w->shape[1] > 1) {
    *rows = w->shape[0], *inputs = w->shape[1];
    return std::vector<double>(v.begin(), v.end());
  }
  if (n.op_type == "MatMul" && w->shape.size() == 2 && w->shape[0] > 1) {
    *rows = w->shape[1], *inputs = w->shape[0];
    std::vector<double> t(v.size());
    for (int64_t k = 0; k < *inputs; ++k)
      for (int64_t c = 0; c < *rows; ++c) t[static_cast<size_t>(c * *inputs + k)] = v[static_cast<size_t>(k * *rows + c)];
    return t;
  }
  return {};
}

// Lower Cholesky factor of a symmetric positive definite n x n matrix (in
// place); false when it is not positive definite.
bool cholesky(std::vector<double>* a, int64_t n) {
  auto at = [&](int64_t i, int64_t j) -> double& { return (*a)[static_cast<size_t>(i * n + j)]; };
  for (int64_t j = 0; j < n; ++j) {
    double d = at(j, j);
    for (int64_t k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
    if (!(d > 0)) return false;
    at(j, j) = std::sqrt(d);
    for (int64_t i = j + 1; i < n; ++i) {
      double s = at(i, j);
      for (int64_t k = 0; k < j; ++k) s -= at(i, k) * at(j, k);
      at(i, j) = s / at(j, j);
    }
    for (int64_t k = j + 1; k < n; ++k) at(j, k) = 0;
  }
  return true;
}

// U upper triangular with U^T U = H^-1 (GPTQ's factor), from H.
bool inverse_factor(std::vector<double> h, int64_t n, std::vector<double>* u) {
  if (!cholesky(&h, n)) return false;  // H = L L^T
  // L^-1 (lower), by forward substitution column by column.
  std::vector<double> li(static_cast<size_t>(n * n), 0.0);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t i = c; i < n; ++i) {
      double s = i == c ? 1.0 : 0.0;
      for (int64_t k = c; k < i; ++k) s -= h[static_cast<size_t>(i * n + k)] * li[static_cast<size_t>(k * n + c)];
      li[static_cast<size_t>(i * n + c)] = s / h[static_cast<size_t>(i * n + i)];
    }
  // H^-1 = L^-T L^-1, then its lower factor M (H^-1 = M M^T) and U = M^T.
  std::vector<double> inv(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = 0;
      for (int64_t k = i; k < n; ++k) s += li[static_cast<size_t>(k * n + i)] * li[static_cast<size_t>(k * n + j)];
      inv[static_cast<size_t>(i * n + j)] = inv[static_cast<size_t>(j * n + i)] = s;
    }
  if (!cholesky(&inv, n)) return false;
  u->assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) (*u)[static_cast<size_t>(j * n + i)] = inv[static_cast<size_t>(i * n + j)];
  return true;
}

int8_t round_clamped(double x) { return static_cast<int8_t>(std::clamp(std::round(x), -127.0, 127.0)); }

// Moments sum / rows.
std::vector<double> mean_moments(std::vector<double> m, int64_t rows) {
  for (double& x : m) x /= static_cast<double>(rows);
  return m;
}

// Output error of int8 weights q at scales s against w, on inputs with
// moments h: sum over rows of d^T h d, d = q * s - w.
double output_error(const std::vector<double>& w, const std::vector<int8_t>& q, const std::vector<float>& s,
                    const std::vector<double>& h, int64_t rows, int64_t n) {
  double e = 0;
  std::vector<double> d(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      const size_t i = static_cast<size_t>(r * n + j);
      d[static_cast<size_t>(j)] = q[i] * static_cast<double>(s[static_cast<size_t>(r)]) - w[i];
    }
    for (int64_t a = 0; a < n; ++a) {
      double t = 0;
      for (int64_t b = 0; b < n; ++b) t += h[static_cast<size_t>(a * n + b)] * d[static_cast<size_t>(b)];
      e += d[static_cast<size_t>(a)] * t;
    }
  }
  return e;
}

}  // namespace

double cross_validated_gain(const std::vector<double>& w, const std::vector<float>& s, const std::vector<double>& even,
                            const std::vector<double>& odd, int64_t rows, int64_t n) {
  std::vector<int8_t> nearest(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j)
      nearest[static_cast<size_t>(r * n + j)] = round_clamped(w[static_cast<size_t>(r * n + j)] / s[static_cast<size_t>(r)]);
  const double e_near = output_error(w, nearest, s, even, rows, n) + output_error(w, nearest, s, odd, rows, n);
  const double e_fit = output_error(w, round_for_error(w, s, even, rows, n), s, odd, rows, n) +
                       output_error(w, round_for_error(w, s, odd, rows, n), s, even, rows, n);
  return e_near > 0 ? 1.0 - e_fit / e_near : 0.0;
}

std::vector<int8_t> round_for_error(const std::vector<double>& w0, const std::vector<float>& s,
                                    const std::vector<double>& h0, int64_t rows, int64_t n) {
  std::vector<int8_t> q(static_cast<size_t>(rows * n));
  std::vector<double> h = h0, u;
  double mean_diag = 0;
  for (int64_t i = 0; i < n; ++i) mean_diag += h[static_cast<size_t>(i * n + i)] / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) h[static_cast<size_t>(i * n + i)] += 0.01 * mean_diag + 1e-12;
  if (!inverse_factor(h, n, &u)) {  // degenerate moments: nearest
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j)
        q[static_cast<size_t>(r * n + j)] = round_clamped(w0[static_cast<size_t>(r * n + j)] / s[static_cast<size_t>(r)]);
    return q;
  }
  std::vector<double> w = w0;
  for (int64_t r = 0; r < rows; ++r) {
    double* row = &w[static_cast<size_t>(r * n)];
    const double sr = s[static_cast<size_t>(r)];
    for (int64_t j = 0; j < n; ++j) {
      const int8_t v = round_clamped(row[j] / sr);
      q[static_cast<size_t>(r * n + j)] = v;
      const double e = (row[j] - v * sr) / u[static_cast<size_t>(j * n + j)];
      const double* uj = &u[static_cast<size_t>(j * n)];
      for (int64_t k = j + 1; k < n; ++k) row[k] -= e * uj[k];
    }
  }
  return q;
}

std::set<std::string> weight_rounding_inputs(const Graph& g, const Placement& pl) {
  std::set<std::string> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    int64_t rows = 0, inputs = 0;
    if (pl.nodes[i].device == Device::kBpu && !weight_rows(g, g.nodes[i], &rows, &inputs).empty() &&
        inputs <= kMaxRoundingInputs)
      out.insert(g.nodes[i].inputs[0]);
  }
  return out;
}

std::map<std::string, RoundedWeights> round_weights_for_error(const Graph& g, const Placement& pl,
                                                             const CalibrationStats& stats,
                                                             const std::function<void(const std::string&, double)>& log) {
  std::map<std::string, RoundedWeights> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    int64_t rows = 0, inputs = 0;
    if (pl.nodes[i].device != Device::kBpu) continue;
    const std::vector<double> w = weight_rows(g, n, &rows, &inputs);
    auto st = stats.values.find(n.inputs[0]);
    // Fewer rows than twice the inputs (a squeeze-excite vector, 1 row per
    // sample) estimate the moments too poorly: the rounding would fit the
    // calibration samples, not the data.
    if (w.empty() || st == stats.values.end() || st->second.moment_rows < kMinRowsPerInput * inputs ||
        static_cast<int64_t>(st->second.moments.size()) != inputs * inputs ||
        st->second.odd_moments.size() != st->second.moments.size() || st->second.odd_moment_rows == 0 ||
        st->second.odd_moment_rows == st->second.moment_rows)
      continue;
    RoundedWeights r;
    r.scales.resize(static_cast<size_t>(rows));
    for (int64_t c = 0; c < rows; ++c) {
      float mx = 0.0f;
      for (int64_t k = 0; k < inputs; ++k) mx = std::max(mx, static_cast<float>(std::fabs(w[static_cast<size_t>(c * inputs + k)])));
      // (the emitters' scale of an all-zero row: conv 1e-8, MatMul 1)
      r.scales[static_cast<size_t>(c)] = mx > 0 ? mx / 127.0f : (n.op_type == "Conv" ? 1e-8f : 1.0f);
    }
    // Kept where it lowers the output error on the samples it was not
    // rounded from (even <-> odd), else nearest.
    const ValueStats& vs = st->second;
    std::vector<double> even(vs.moments);
    for (size_t k = 0; k < even.size(); ++k) even[k] -= vs.odd_moments[k];
    const double gain = cross_validated_gain(w, r.scales, mean_moments(even, vs.moment_rows - vs.odd_moment_rows),
                                             mean_moments(vs.odd_moments, vs.odd_moment_rows), rows, inputs);
    if (log) log(n.name, gain);
    if (!(gain > kMinRoundingGain)) continue;
    r.q = round_for_error(w, r.scales, mean_moments(vs.moments, vs.moment_rows), rows, inputs);
    out[n.name] = std::move(r);
  }
  return out;
}

}  // namespace openbpu::cvt
