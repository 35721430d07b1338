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
  int changed = 0;    // values whose threshold changed
};

// Whether a calibration_type runs the search: mix, unless every activation
// is int16 (then max is the only method).
bool threshold_search_applies(const std::string& calibration_type, bool all_int16);

// Alternatives per value: the thresholds of `methods` (deduplicated, those
// within 1% of the current one skipped). `choice` holds the starting point
// and receives the result; `scorer` measures.
bool search_thresholds(const Graph& g, const Placement& placement, const CalibrationStats& stats,
                       const CompileOptions& options, const std::vector<CalCandidate>& methods,
                       const OutputScorer& scorer, const std::function<void(const std::string&)>& debug,
                       CalibrationChoice* choice, ThresholdSearchResult* result, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_THRESHOLD_SEARCH_H_
