// SPDX-License-Identifier: Apache-2.0
// Automatic int16 promotion and the accuracy gate (calibration_parameters
// min_output_cosine, docs/converter.md "Accuracy budget"): when the mean
// output cosine of the compiled model on the budget's samples is below the
// budget, the int8 activations are ranked by sensitivity and the shortest
// prefix of that ranking whose promotion to int16 meets the budget is
// promoted (found by bisection, every prefix compiled and scored).
// Sensitivity is measured (each candidate promoted alone, compiled and
// scored) when that fits a compute budget; larger models rank candidates by
// their local error on one sample (the drop of the per-value cosine across
// the node that produces them).
#ifndef OPENBPU_CONVERTER_QUANT_INT16_PROMOTION_H_
#define OPENBPU_CONVERTER_QUANT_INT16_PROMOTION_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "converter/quant/method_search.h"

namespace openbpu::cvt {

struct PromotionStep {
  std::string value;    // the activation promoted to int16
  double rank = 0;      // output cosine gain when promoted alone, or local error
  double extra_us = 0;  // estimated BPU time it adds (timing model)
};

struct PromotionResult {
  double score_before = 0, score_after = 0;
  double us_before = 0, us_after = 0;  // estimated BPU time of all subgraphs
  bool met = false;                    // score_after >= the budget
  bool measured_ranking = false;       // false: ranked by local error
  int candidates = 0, evaluated = 0;   // int8 values that could be promoted; compilations scored
  size_t samples = 0, first_sample = 0;  // the budget's samples: [first, first + samples)
  std::vector<PromotionStep> steps;
};

// Calibration samples the budget is measured on: up to this many after the
// method choice's and the threshold search's kScoringSamples (the gate must
// hold on data they were not tuned on: on their own samples they overstate
// the cosine), when at least kMinHeldOutSamples are left; else the first
// ones, tuned on or not.
constexpr size_t kBudgetScoringSamples = 32;
constexpr size_t kMinHeldOutSamples = 8;
// Scoring work (model MACs x scoring samples x candidates) up to which the
// ranking is measured rather than estimated.
constexpr double kMeasuredRankingBudgetMacs = 128e9;

// `co` gains the promoted values in int16_values; `choice` gets the model
// compiled with them, its thresholds and its score. A promoted value takes
// its threshold from int16_thresholds (the calibration maximum, as with
// set_all_nodes_int16), not the int8 method's clipping threshold. With
// `can_promote` false (a march without int16) nothing is promoted and the
// result says whether the budget is met.
bool promote_to_int16(const Graph& g, const Placement& placement, const std::vector<Sample>& samples,
                      double min_cosine, bool can_promote, const std::map<std::string, double>& int16_thresholds,
                      const std::function<void(const std::string&)>& log,
                      CompileOptions* co, CalibrationChoice* choice, PromotionResult* result, std::string* error);

// Estimated BPU time of all subgraphs of a compiled model, in microseconds.
double estimated_bpu_us(const CompiledModel& cm, const isa::MarchInfo& march);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_INT16_PROMOTION_H_
