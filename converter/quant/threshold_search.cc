// SPDX-License-Identifier: Apache-2.0
#include "converter/quant/threshold_search.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "bpu_sim/isa/numerics.h"
#include "converter/report/report.h"

namespace openbpu::cvt {

namespace {

// Alternatives closer than this (relative) to the current threshold change
// nothing worth a compilation.
constexpr double kMinRelativeChange = 0.01;

// The values whose scale the compiled model derives from their own
// threshold (an operator that keeps its input's scale is not searched).
std::vector<std::string> searchable_values(const CompiledModel& cm, const std::map<std::string, double>& thr) {
  std::vector<std::string> out;
  for (const LayerTrace& t : cm.traces) {
    if (t.q.dtype != isa::DType::kInt8 && t.q.dtype != isa::DType::kInt16) continue;
    auto it = thr.find(t.value);
    if (it == thr.end() || it->second <= 0) continue;
    const double qmax = static_cast<double>(isa::dtype_range(t.q.dtype).hi);
    const double s = it->second / qmax;
    // (an asymmetric value's scale always comes from its threshold)
    if (t.q.zero_point != 0 || std::fabs(static_cast<double>(t.q.scale) - s) <= 1e-4 * s) out.push_back(t.value);
  }
  return out;
}

std::vector<double> alternatives(double current, const std::vector<std::map<std::string, double>>& per_method,
                                 const std::string& value) {
  std::vector<double> alts;
  for (const auto& m : per_method) {
    auto it = m.find(value);
    if (it == m.end()) continue;
    const double t = it->second;
    auto near = [&](double u) { return std::fabs(t - u) <= kMinRelativeChange * std::max(t, u); };
    if (near(current) || std::any_of(alts.begin(), alts.end(), near)) continue;
    alts.push_back(t);
  }
  return alts;
}

// Ratio of the largest to the smallest threshold among the current one and
// its alternatives.
double spread(double current, const std::vector<double>& alts) {
  double lo = current, hi = current;
  for (double t : alts) lo = std::min(lo, t), hi = std::max(hi, t);
  return hi / lo;
}

using Work = std::vector<std::pair<std::string, std::vector<double>>>;

// What one greedy pass over the values needs besides the work list.
struct PassContext {
  const Graph& g;
  const Placement& pl;
  const CompileOptions& options;
  const OutputScorer& scorer;
  double cost, budget_macs;
  const std::function<void(const std::string&)>& debug;
};

// One greedy pass over `work` in its order from `choice`: an alternative is
// kept when it raises the score by more than kMinScoreGain; stops where the
// budget would be exceeded.
bool greedy_pass(const PassContext& c, const Work& work, CalibrationChoice* choice,
                 ThresholdSearchResult* result, std::string* error) {
  std::map<std::string, double> thr = choice->thresholds;
  double best = choice->score, spent = 0;
  for (const auto& [v, alts] : work) {
    if (c.budget_macs > 0 && spent + c.cost * static_cast<double>(alts.size()) > c.budget_macs) {
      result->budget_exhausted = true;
      break;
    }
    spent += c.cost * static_cast<double>(alts.size());
    const double current = thr[v];
    ++result->searched;
    for (double t : alts) {
      thr[v] = t;
      CompiledModel cm;
      double score = 0;
      if (!compile(c.g, c.pl, thr, c.options, &cm, error) || !c.scorer.score(cm, &score, error)) return false;
      ++result->evaluated;
      if (score > best + kMinScoreGain) {
        if (c.debug)
          c.debug("threshold of " + v + ": " + fixed(choice->thresholds[v], 6) + " -> " + fixed(t, 6) +
                  ", output cosine " + fixed(best, 6) + " -> " + fixed(score, 6));
        best = score;
        choice->thresholds[v] = t;
        choice->model = std::move(cm);
      }
      thr[v] = choice->thresholds[v];
    }
    if (choice->thresholds[v] != current) ++result->changed;
  }
  result->score_after = choice->score = best;
  return true;
}

}  // namespace

bool threshold_search_applies(const std::string& calibration_type, bool all_int16) {
  return (calibration_type == "default" || calibration_type == "mix") && !all_int16;
}

double threshold_search_budget(const std::string& calibration_type) {
  return calibration_type == "mix" ? 0.0 : kDefaultSearchBudgetMacs;
}

bool search_thresholds(const Graph& g, const Placement& pl, const CalibrationStats& stats,
                       const CompileOptions& options, const std::vector<CalCandidate>& methods,
                       const std::vector<Sample>& samples, double budget_macs,
                       const std::function<void(const std::string&)>& debug,
                       CalibrationChoice* choice, ThresholdSearchResult* result, std::string* error) {
  std::vector<std::map<std::string, double>> per_method;
  for (const auto& m : methods) per_method.push_back(thresholds_for(g, stats, m));
  result->score_before = result->score_after = choice->score;
  std::map<std::string, double> thr = choice->thresholds;
  result->samples = std::min(samples.size(), kScoringSamples);
  const double cost = model_macs(choice->model) * static_cast<double>(result->samples);
  Work work;
  size_t alts_total = 0;
  for (const std::string& v : searchable_values(choice->model, thr)) {
    std::vector<double> alts = alternatives(thr[v], per_method, v);
    alts_total += alts.size();
    if (!alts.empty()) work.emplace_back(v, std::move(alts));
  }
  result->candidates = static_cast<int>(work.size());
  if (work.empty() || (budget_macs > 0 && cost * static_cast<double>(work[0].second.size()) > budget_macs)) {
    result->budget_exhausted = !work.empty();
    return true;
  }
  OutputScorer scorer;
  if (!scorer.init(g, samples, kScoringSamples, error, &pl)) return false;
  const PassContext ctx{g, pl, options, scorer, cost, budget_macs, debug};
  if (budget_macs <= 0 || cost * static_cast<double>(alts_total) <= budget_macs)
    return greedy_pass(ctx, work, choice, result, error);  // every value, in program order
  // A budget that cannot cover every value: one pass in program order (the
  // PP-OCRv4 recognizer's gains are in its first convolutions) and one that
  // takes the widest disagreement between the methods first (the detector's
  // are in residual sums deep in the network); the better score is kept.
  CalibrationChoice other = *choice;
  ThresholdSearchResult other_result = *result;
  if (!greedy_pass(ctx, work, choice, result, error)) return false;
  std::stable_sort(work.begin(), work.end(), [&](const auto& a, const auto& b) {
    return spread(thr[a.first], a.second) > spread(thr[b.first], b.second);
  });
  const std::function<void(const std::string&)> debug2 = [&](const std::string& m) {
    if (debug) debug("(disagreement order) " + m);
  };
  const PassContext ctx2{g, pl, options, scorer, cost, budget_macs, debug2};
  if (!greedy_pass(ctx2, work, &other, &other_result, error)) return false;
  if (debug)
    debug("budgeted search: program order " + fixed(result->score_after, 6) + ", disagreement order " +
          fixed(other_result.score_after, 6));
  if (other_result.score_after > result->score_after) {
    *choice = std::move(other);
    *result = other_result;
    result->order = "disagreement";
  }
  return true;
}

}  // namespace openbpu::cvt
