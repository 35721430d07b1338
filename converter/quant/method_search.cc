// SPDX-License-Identifier: Apache-2.0
#include "converter/quant/method_search.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "converter/ir/executor.h"
#include "converter/report/report.h"
#include "runtime/core/tensor.h"

namespace openbpu::cvt {

namespace {

// The runtime image bytes of an int8 "_128" sample (train layout NCHW or
// NHWC) for an image input of the quantized graph.
std::vector<uint8_t> image_bytes(const Value& qv, const Value& sample) {
  std::vector<uint8_t> bytes(static_cast<size_t>(qv.byte_size));
  const auto* x = reinterpret_cast<const int8_t*>(sample.data->data());
  const auto& s = sample.shape;
  const bool nhwc_train = s.size() == 4 && s[3] <= 4 && s[1] > 4;
  const int64_t c = nhwc_train ? s[3] : s[1], h = nhwc_train ? s[1] : s[2], w = nhwc_train ? s[2] : s[3];
  auto px = [&](int64_t ch, int64_t y, int64_t xx) -> int {
    return x[nhwc_train ? (y * w + xx) * c + ch : (ch * h + y) * w + xx] + 128;
  };
  if (qv.rt_type == rt::kImgNV12) {
    for (int64_t y = 0; y < h; ++y)
      for (int64_t xx = 0; xx < w; ++xx) bytes[static_cast<size_t>(y * w + xx)] = static_cast<uint8_t>(px(0, y, xx));
    for (int64_t y = 0; y < h / 2; ++y)
      for (int64_t xx = 0; xx < w / 2; ++xx)
        for (int k = 1; k <= 2; ++k) {
          const int sum = px(k, 2 * y, 2 * xx) + px(k, 2 * y, 2 * xx + 1) + px(k, 2 * y + 1, 2 * xx) +
                          px(k, 2 * y + 1, 2 * xx + 1);
          bytes[static_cast<size_t>(h * w + y * w + 2 * xx + (k - 1))] = static_cast<uint8_t>((sum + 2) / 4);
        }
    return bytes;
  }
  const bool nhwc_rt = qv.layout == rt::kNHWC;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t xx = 0; xx < w; ++xx)
        bytes[static_cast<size_t>(nhwc_rt ? (y * w + xx) * c + ch : (ch * h + y) * w + xx)] =
            static_cast<uint8_t>(px(ch, y, xx));
  return bytes;
}

}  // namespace

CalCandidate int16_method() { return {CalMethod::kMax, 1.0, "max"}; }

std::map<std::string, double> int16_thresholds(const Graph& g, const CalibrationStats& stats) {
  std::map<std::string, double> out;
  for (const auto& [v, t] : thresholds_for(g, stats, int16_method()))
    if (stats.values.count(v) && t > 0) out[v] = t;
  return out;
}

std::vector<CalCandidate> calibration_candidates(const std::string& type, std::optional<float> max_percentile,
                                                 bool all_int16) {
  const double pct = max_percentile.value_or(1.0f);
  if (type == "max" || type == "skip")
    return {{pct < 1.0 ? CalMethod::kMaxPercentile : CalMethod::kMax, pct,
             pct < 1.0 ? "max-percentile:percentile=" + fixed(pct, 5) : "max"}};
  if (type == "kl") return {{CalMethod::kKl, 1.0, "kl"}};
  if (type == "mse") return {{CalMethod::kMse, 1.0, "mse"}};
  if (all_int16) return {int16_method()};
  return {{CalMethod::kMaxPercentile, 0.99995, "max-percentile:percentile=0.99995"},
          {CalMethod::kKl, 1.0, "kl"},
          {CalMethod::kMse, 1.0, "mse"},
          {CalMethod::kMax, 1.0, "max"}};
}

std::map<std::string, double> thresholds_for(const Graph& g, const CalibrationStats& stats, const CalCandidate& c) {
  std::map<std::string, double> t;
  for (const auto& [name, v] : g.values)
    if (!v.is_constant()) t[name] = stats.threshold(name, c.method, c.percentile);
  return t;
}

bool quantized_inputs(const CompiledModel& cm, const Sample& sample, Sample* qin, std::string* error) {
  for (const auto& in : cm.graph.inputs) {
    const Value* qv = cm.graph.value(in);
    auto it = sample.find(in);
    if (it == sample.end()) {
      *error = "calibration sample has no input '" + in + "'";
      return false;
    }
    Value v = *qv;
    if (qv->native && rt::is_image_type(qv->rt_type)) {
      // The sample holds the int8 intermediate (value - 128) in the train
      // layout; the quantized model reads the runtime image bytes.
      v.data = std::make_shared<const std::vector<uint8_t>>(image_bytes(*qv, it->second));
    } else {
      v.data = it->second.data;
    }
    (*qin)[in] = v;
  }
  return true;
}

double model_macs(const CompiledModel& cm) {
  double macs = 0;
  for (const auto& sg : cm.subgraphs) macs += static_cast<double>(sg.macs);
  return macs;
}

std::string scored_value(const Graph& g, const Placement& pl, const std::string& output) {
  const Node* p = g.producer(output);
  if (p == nullptr || p->op_type != "Softmax" || p->inputs.size() != 1) return output;
  const auto i = static_cast<size_t>(p - g.nodes.data());
  return i < pl.nodes.size() && pl.nodes[i].device == Device::kCpu ? p->inputs[0] : output;
}

bool OutputScorer::init(const Graph& g, const std::vector<Sample>& samples, size_t n, std::string* error,
                        const Placement* logits) {
  samples_ = &samples;
  for (const auto& o : g.outputs)
    outputs_.push_back(logits != nullptr ? scored_value(g, *logits, o) : o), keep_.insert(outputs_.back());
  n_ = std::min(samples.size(), n);
  FloatExecutor fexec;
  if (!fexec.prepare(g, error)) return false;
  for (size_t k = 0; k < n_; ++k) {
    Sample vals;
    if (!fexec.run(samples[k], &vals, error, &keep_)) return false;
    std::vector<std::vector<double>> outs;
    for (const auto& o : outputs_) {
      auto it = vals.find(o);
      outs.push_back(it == vals.end() ? std::vector<double>{} : it->second.to_doubles());
    }
    ref_.push_back(std::move(outs));
  }
  return true;
}

bool OutputScorer::score(const CompiledModel& cm, double* out, std::string* error) const {
  FloatExecutor qexec;
  if (!qexec.prepare(cm.graph, error)) return false;
  double total = 0;
  for (size_t k = 0; k < n_; ++k) {
    Sample qin, qvals;
    if (!quantized_inputs(cm, (*samples_)[k], &qin, error) || !qexec.run(qin, &qvals, error, &keep_)) return false;
    double sc = 0;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      auto it = qvals.find(outputs_[i]);
      if (it == qvals.end()) {
        if (error) *error = "scoring: the compiled model has no value " + outputs_[i];
        return false;
      }
      sc += cosine_similarity(ref_[k][i], it->second.to_doubles());
    }
    total += sc / static_cast<double>(std::max<size_t>(1, outputs_.size()));
  }
  *out = n_ ? total / static_cast<double>(n_) : 1.0;
  return true;
}

bool choose_calibration(const Graph& g, const Placement& placement, const CalibrationStats& stats,
                        const std::vector<Sample>& samples, const CompileOptions& options,
                        const std::vector<CalCandidate>& candidates,
                        const std::function<void(const std::string&)>& debug, CalibrationChoice* choice,
                        std::string* error, int jobs) {
  const size_t n = candidates.size();
  OutputScorer scorer;
  if (n > 1 && !scorer.init(g, samples, kScoringSamples, error, &placement)) return false;
  std::vector<CalibrationChoice> results(n);
  std::vector<double> scores(n, 1.0);
  std::vector<std::string> errors(n);
  std::vector<char> ok(n, 0);
  auto evaluate = [&](size_t i) {
    results[i].thresholds = thresholds_for(g, stats, candidates[i]);
    results[i].label = candidates[i].label;
    ok[i] = compile(g, placement, results[i].thresholds, options, &results[i].model, &errors[i]) &&
            (n == 1 || scorer.score(results[i].model, &scores[i], &errors[i]));
  };
  const size_t batch = static_cast<size_t>(std::max(1, jobs));
  for (size_t first = 0; first < n; first += batch) {
    std::vector<std::thread> threads;
    for (size_t i = first + 1; i < std::min(n, first + batch); ++i) threads.emplace_back(evaluate, i);
    evaluate(first);
    for (auto& t : threads) t.join();
  }
  size_t best = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!ok[i]) {
      *error = errors[i];
      return false;
    }
    if (n > 1 && debug) debug("calibration method " + candidates[i].label + ": mean output cosine " + fixed(scores[i]));
    if (scores[i] > scores[best]) best = i;
  }
  *choice = std::move(results[best]);
  choice->score = scores[best];
  return true;
}

void choose_asymmetric(const Graph& g, const Placement& placement, const CalibrationStats& stats,
                       const std::vector<Sample>& samples, const std::vector<CalCandidate>& candidates,
                       CompileOptions* options, CalibrationChoice* choice,
                       const std::function<void(const std::string&)>& info, int jobs) {
  CompileOptions asym = *options;
  asym.asymmetric = true;
  CalibrationChoice best;
  std::string why;
  if (!choose_calibration(g, placement, stats, samples, asym, candidates, nullptr, &best, &why, jobs)) {
    info("Activations: symmetric (asymmetric does not compile: " + why + ").");
    return;  // (a zero point the bias cannot take)
  }
  const bool gains = best.score > choice->score + kMinScoreGain;
  info(std::string("Activations: ") + (gains ? "asymmetric" : "symmetric") +
       " (chosen by the scoring samples; best mean output cosine: asymmetric " + fixed(best.score) + " (" +
       best.label + "), symmetric " + fixed(choice->score) + " (" + choice->label + ")).");
  if (!gains) return;
  best.label += ", asymmetric";
  *choice = std::move(best);
  options->asymmetric = true;
}

}  // namespace openbpu::cvt
