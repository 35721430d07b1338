// SPDX-License-Identifier: Apache-2.0
// Calibration: statistics of every float value of the optimized graph over
// the calibration set, and thresholds per method (max, max-percentile, KL).
#ifndef OPENBPU_CONVERTER_QUANT_CALIBRATION_H_
#define OPENBPU_CONVERTER_QUANT_CALIBRATION_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/ir/executor.h"

namespace openbpu::cvt {

struct ValueStats {
  double max_abs = 0.0;
  int64_t elements = 0;  // per sample
  // Sum per channel (axis 1) of 4-D values over samples and positions, and
  // the number of positions summed: channel means for bias correction.
  std::vector<double> channel_sum;
  int64_t positions = 0;
  std::vector<double> channel_mean() const {
    std::vector<double> m(channel_sum);
    for (double& x : m) x = positions ? x / static_cast<double>(positions) : 0.0;
    return m;
  }
  std::vector<double> hist;  // histogram of |x| over [0, hist_max]
  double hist_max = 0.0;
  // Values in CalibrationStats::moment_inputs: the sum over the first
  // kMomentSamples samples' rows of x x^T over the channel axis (C x C,
  // row-major) and the number of rows (positions) summed; the same over
  // the odd-numbered ones of those samples alone (the weight rounding is
  // cross-validated between the even and the odd samples).
  std::vector<double> moments;
  int64_t moment_rows = 0;
  std::vector<double> odd_moments;
  int64_t odd_moment_rows = 0;
};

// Samples the channel second moments are taken from.
inline constexpr size_t kMomentSamples = 32;

enum class CalMethod { kMax, kMaxPercentile, kKl, kMse };
const char* cal_method_name(CalMethod m);

struct CalibrationStats {
  std::map<std::string, ValueStats> values;
  // Values whose channel second moments collect_stats adds (axis 1 of a
  // 4-D value, else the last axis), set before it runs.
  std::set<std::string> moment_inputs;
  // Threshold (the largest magnitude mapped to 127) of a value by a method.
  // Tensors too small for a meaningful histogram (e.g. squeeze-excitation
  // vectors) always use the max.
  double threshold(const std::string& value, CalMethod method, double percentile) const;
};

// Runs the float graph over the samples (each a map of graph input -> data)
// twice: max |x| first, then histograms over [0, max]. `progress` is called
// with (done, total) for the progress bar. `jobs` samples run at once on
// their own threads (compiler_parameters.jobs); their statistics are merged
// in sample order, so the result does not depend on `jobs`.
bool collect_stats(const FloatExecutor& exec, const std::vector<std::map<std::string, Value>>& samples,
                   CalibrationStats* stats, std::string* error,
                   const std::function<void(size_t, size_t)>& progress = nullptr, int jobs = 1);

// Threshold minimizing the KL divergence between the |x| histogram and its
// 128-level quantization (entropy calibration).
double kl_threshold(const std::vector<double>& hist, double hist_max);
double percentile_threshold(const std::vector<double>& hist, double hist_max, double percentile);
// Threshold minimizing the expected squared error of symmetric int8
// quantization (rounding inside, clipping outside) over the histogram.
double mse_threshold(const std::vector<double>& hist, double hist_max);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_CALIBRATION_H_
