// SPDX-License-Identifier: Apache-2.0
#include "converter/quant/calibration.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace openbpu::cvt {

namespace {

constexpr int kBins = 2048;
constexpr int kLevels = 128;

template <class F> void for_each_float(const Value& v, F f) {
  if (v.elem_type != kFloat || !v.data) return;
  const float* p = reinterpret_cast<const float*>(v.data->data());
  const size_t n = v.data->size() / 4;
  for (size_t i = 0; i < n; ++i) f(p[i]);
}

}  // namespace

const char* cal_method_name(CalMethod m) {
  switch (m) {
    case CalMethod::kMax: return "max";
    case CalMethod::kMaxPercentile: return "max-percentile";
    case CalMethod::kKl: return "kl";
    case CalMethod::kMse: return "mse";
  }
  return "?";
}

namespace {

// Pass 0: max |x|, element count and channel sums of one sample's value.
void add_max_and_means(const Value& v, ValueStats* s) {
  if (v.elem_type == kFloat && v.data && v.shape.size() == 4) {
    const int64_t n = v.shape[0], c = v.shape[1], hw = v.shape[2] * v.shape[3];
    if (s->channel_sum.empty()) s->channel_sum.assign(static_cast<size_t>(c), 0.0);
    const float* p = reinterpret_cast<const float*>(v.data->data());
    if (static_cast<int64_t>(v.data->size() / 4) == n * c * hw && static_cast<int64_t>(s->channel_sum.size()) == c) {
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch) {
          double sum = 0;
          for (int64_t k = 0; k < hw; ++k) sum += p[(b * c + ch) * hw + k];
          s->channel_sum[static_cast<size_t>(ch)] += sum;
        }
      s->positions += n * hw;
    }
  }
  s->elements = v.data ? static_cast<int64_t>(v.data->size() / 4) : 0;
  for_each_float(v, [&](float x) {
    const double a = std::fabs(static_cast<double>(x));
    if (std::isfinite(a)) s->max_abs = std::max(s->max_abs, a);
  });
}

// Pass 0, values in moment_inputs: x x^T over the channel axis (axis 1 of
// a 4-D value, else the last), summed over positions, into the moments of
// the even or of the odd samples (finish_moments adds them up).
void add_moments(const Value& v, bool odd, ValueStats* s) {
  if (v.elem_type != kFloat || !v.data || v.shape.empty()) return;
  const bool nchw = v.shape.size() == 4;
  const int64_t c = nchw ? v.shape[1] : v.shape.back();
  const int64_t total = static_cast<int64_t>(v.data->size() / 4);
  if (c <= 0 || total % c != 0) return;
  const int64_t inner = nchw ? v.shape[2] * v.shape[3] : 1, outer = total / c / inner;
  std::vector<double>& sum = odd ? s->odd_moments : s->moments;
  if (sum.empty()) sum.assign(static_cast<size_t>(c * c), 0.0);
  if (static_cast<int64_t>(sum.size()) != c * c) return;
  const float* p = reinterpret_cast<const float*>(v.data->data());
  std::vector<double> x(static_cast<size_t>(c));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < c; ++k) x[static_cast<size_t>(k)] = p[(o * c + k) * inner + i];
      for (int64_t a = 0; a < c; ++a) {
        const double xa = x[static_cast<size_t>(a)];
        if (xa == 0.0) continue;
        double* row = &sum[static_cast<size_t>(a * c)];
        for (int64_t b = 0; b <= a; ++b) row[b] += xa * x[static_cast<size_t>(b)];
      }
    }
  (odd ? s->odd_moment_rows : s->moment_rows) += outer * inner;
}

// The lower triangles add_moments summed, mirrored; the even samples'
// moments plus the odd ones' give all samples' moments.
void finish_moments(ValueStats* s) {
  for (std::vector<double>* m : {&s->moments, &s->odd_moments}) {
    const auto c = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(m->size()))));
    for (int64_t a = 0; a < c; ++a)
      for (int64_t b = 0; b < a; ++b) (*m)[static_cast<size_t>(b * c + a)] = (*m)[static_cast<size_t>(a * c + b)];
  }
  if (s->odd_moments.size() != s->moments.size()) return;  // one sample: no odd ones
  for (size_t i = 0; i < s->moments.size(); ++i) s->moments[i] += s->odd_moments[i];
  s->moment_rows += s->odd_moment_rows;
}

// Pass 1: the |x| histogram over [0, max].
void add_histogram(const Value& v, ValueStats* s) {
  if (s->hist.empty()) {
    s->hist.assign(kBins, 0.0);
    s->hist_max = s->max_abs > 0 ? s->max_abs : 1e-8;
  }
  const double scale = kBins / s->hist_max;
  for_each_float(v, [&](float x) {
    const double a = std::fabs(static_cast<double>(x));
    if (!std::isfinite(a)) return;
    const int b = std::min(kBins - 1, static_cast<int>(a * scale));
    s->hist[static_cast<size_t>(b)] += 1.0;
  });
}

// Every value of the graph for samples [first, first + count), computed on
// `count` threads.
bool run_samples(const FloatExecutor& exec, const std::vector<std::map<std::string, Value>>& samples, size_t first,
                 size_t count, std::vector<std::map<std::string, Value>>* values, std::string* error) {
  values->assign(count, {});
  std::vector<std::string> errors(count);
  std::vector<char> ok(count, 0);
  auto one = [&](size_t k) {
    const auto& sample = samples[first + k];
    ok[k] = exec.run(sample, &(*values)[k], &errors[k], nullptr, true);
    for (const auto& [name, v] : sample) (*values)[k][name] = v;
  };
  std::vector<std::thread> threads;
  for (size_t k = 1; k < count; ++k) threads.emplace_back(one, k);
  one(0);
  for (auto& t : threads) t.join();
  for (size_t k = 0; k < count; ++k)
    if (!ok[k]) {
      *error = errors[k];
      return false;
    }
  return true;
}

}  // namespace

bool collect_stats(const FloatExecutor& exec, const std::vector<std::map<std::string, Value>>& samples,
                   CalibrationStats* stats, std::string* error, const std::function<void(size_t, size_t)>& progress,
                   int jobs) {
  const size_t total = samples.size() * 2, batch = static_cast<size_t>(std::max(1, jobs));
  size_t done = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t first = 0; first < samples.size(); first += batch) {
      std::vector<std::map<std::string, Value>> values;
      const size_t count = std::min(batch, samples.size() - first);
      if (!run_samples(exec, samples, first, count, &values, error)) return false;
      for (size_t k = 0; k < values.size(); ++k) {  // in sample order
        for (const auto& [name, v] : values[k]) {
          if (pass == 0)
            add_max_and_means(v, &stats->values[name]);
          else
            add_histogram(v, &stats->values[name]);
          if (pass == 0 && first + k < kMomentSamples && stats->moment_inputs.count(name))
            add_moments(v, (first + k) % 2 == 1, &stats->values[name]);
        }
        if (progress) progress(++done, total);
      }
    }
  }
  for (const auto& name : stats->moment_inputs) {
    auto it = stats->values.find(name);
    if (it != stats->values.end() && (!it->second.moments.empty() || !it->second.odd_moments.empty()))
      finish_moments(&it->second);
  }
  return true;
}

double percentile_threshold(const std::vector<double>& hist, double hist_max, double percentile) {
  double total = 0;
  for (double h : hist) total += h;
  if (total <= 0 || hist.empty()) return hist_max;
  const double target = total * percentile;
  double acc = 0;
  for (size_t i = 0; i < hist.size(); ++i) {
    acc += hist[i];
    if (acc >= target) return hist_max * static_cast<double>(i + 1) / static_cast<double>(hist.size());
  }
  return hist_max;
}

double kl_threshold(const std::vector<double>& hist, double hist_max) {
  const int bins = static_cast<int>(hist.size());
  if (bins < kLevels) return hist_max;
  double best_kl = INFINITY;
  int best_i = bins;
  for (int i = kLevels; i <= bins; i += 8) {
    // Reference distribution: the first i bins, the tail folded into the
    // last. Bin 0 is dropped: exact zeros (relu outputs) quantize exactly
    // and would otherwise dominate the divergence.
    std::vector<double> raw(hist.begin(), hist.begin() + i);
    raw[0] = 0.0;
    std::vector<double> p = raw;
    for (int k = i; k < bins; ++k) p[static_cast<size_t>(i - 1)] += hist[static_cast<size_t>(k)];
    double psum = 0;
    for (double v : p) psum += v;
    if (psum <= 0) continue;
    // Quantized distribution: merge the i bins into kLevels levels, then
    // spread each level uniformly over its non-empty source bins.
    std::vector<double> q(static_cast<size_t>(i), 0.0);
    const double step = static_cast<double>(i) / kLevels;
    for (int l = 0; l < kLevels; ++l) {
      const int start = static_cast<int>(std::floor(l * step));
      const int end = std::max(start + 1, static_cast<int>(std::floor((l + 1) * step)));
      double sum = 0;
      int nonzero = 0;
      // Quantized from the bins without the clipped tail (the divergence
      // then measures the clipping).
      for (int k = std::max(start, 1); k < end && k < i; ++k) {
        sum += raw[static_cast<size_t>(k)];
        nonzero += raw[static_cast<size_t>(k)] > 0 ? 1 : 0;
      }
      for (int k = std::max(start, 1); k < end && k < i; ++k)
        if (raw[static_cast<size_t>(k)] > 0) q[static_cast<size_t>(k)] = sum / nonzero;
    }
    double qsum = 0;
    for (double v : q) qsum += v;
    if (qsum <= 0) continue;
    double kl = 0;
    for (int k = 0; k < i; ++k) {
      const double pk = p[static_cast<size_t>(k)] / psum;
      if (pk <= 0) continue;
      const double qk = q[static_cast<size_t>(k)] / qsum;
      kl += pk * std::log(pk / std::max(qk, 1e-12));
    }
    if (kl < best_kl) {
      best_kl = kl;
      best_i = i;
    }
  }
  return hist_max * (best_i + 0.5) / bins;
}

double mse_threshold(const std::vector<double>& hist, double hist_max) {
  const int bins = static_cast<int>(hist.size());
  if (bins == 0 || hist_max <= 0) return hist_max;
  const double width = hist_max / bins;
  double best_err = INFINITY, best_t = hist_max;
  // Candidates from 10% of the max up to the max.
  for (int i = bins / 10; i <= bins; i += 4) {
    const double t = i * width;
    const double step = t / 127.0;
    double err = 0;
    for (int k = 0; k < bins; ++k) {
      if (hist[static_cast<size_t>(k)] <= 0) continue;
      const double c = (k + 0.5) * width;
      const double e = c > t ? c - t : c - step * std::round(c / step);
      err += hist[static_cast<size_t>(k)] * e * e;
    }
    if (err < best_err) best_err = err, best_t = t;
  }
  return best_t;
}

double CalibrationStats::threshold(const std::string& value, CalMethod method, double percentile) const {
  auto it = values.find(value);
  if (it == values.end()) return 1.0;
  const ValueStats& s = it->second;
  double t = s.max_abs;
  constexpr int64_t kMinHistogramElements = 4096;
  if (s.elements < kMinHistogramElements) return t > 0 ? t : 1e-6;
  if (method == CalMethod::kMaxPercentile && !s.hist.empty()) t = percentile_threshold(s.hist, s.hist_max, percentile);
  if (method == CalMethod::kKl && !s.hist.empty()) t = kl_threshold(s.hist, s.hist_max);
  if (method == CalMethod::kMse && !s.hist.empty()) t = mse_threshold(s.hist, s.hist_max);
  return t > 0 ? t : 1e-6;
}

}  // namespace openbpu::cvt
