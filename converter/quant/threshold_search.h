// SPDX-License-Identifier: Apache-2.0
// Per-value threshold search (the vendor's `mix` idea, and part of
// `default`): starting from the thresholds of the best calibration method,
// each activation the BPU quantizes with its own scale may take the
// threshold another method computed for it, if that raises the model's
// output score on the calibration samples by more than a margin. One greedy
// pass in program order.
#ifndef OPENBPU_CONVERTER_QUANT_THRESHOLD_SEARCH_H_
#define OPENBPU_CONVERTER_QUANT_THRESHOLD_SEARCH_H_

#include <functional>
#include <string>
#include <vector>

#include "converter/quant/method_search.h"

namespace openbpu::cvt {

struct ThresholdSearchResult {
  double score_before = 0;
  double score_after = 0;
  int searched = 0;   // values with at least one alternative
  int evaluated = 0;  // compiled and scored alternatives
  int candidates = 0;  // values with alternatives in the whole model
  size_t samples = 0;  // scoring samples
  bool budget_exhausted = false;
  int changed = 0;    // values whose threshold changed
  // Order of the values searched: "program", or where a budget cannot cover
  // every value and it scored higher, "disagreement" (the values whose
  // thresholds the methods disagree on most first).
  std::string order = "program";
};

// Whether a calibration_type runs the search: default and mix, unless every
// activation is int16 (then max is the only method).
bool threshold_search_applies(const std::string& calibration_type, bool all_int16);

// The compute budget of the search in multiply-accumulates of scoring runs
// (model MACs x scoring samples per alternative): default stops when the next
// alternative would exceed kDefaultSearchBudgetMacs (a small model gets the
// full pass, a large one as many values as that covers, twice: in program
// order and with the methods' widest disagreement first, the better kept;
// or none); mix has no budget.
constexpr double kDefaultSearchBudgetMacs = 128e9;
double threshold_search_budget(const std::string& calibration_type);

// Alternatives per value: the thresholds of `methods` (deduplicated, those
// within 1% of the current one skipped). `choice` holds the starting point
// (with its score on the first kScoringSamples `samples`) and receives the
// result; `budget_macs` bounds the scoring work (0: unbounded). Nothing is
// run when the budget does not cover the first value.
bool search_thresholds(const Graph& g, const Placement& placement, const CalibrationStats& stats,
                       const CompileOptions& options, const std::vector<CalCandidate>& methods,
                       const std::vector<Sample>& samples, double budget_macs,
                       const std::function<void(const std::string&)>& debug,
                       CalibrationChoice* choice, ThresholdSearchResult* result, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_THRESHOLD_SEARCH_H_
