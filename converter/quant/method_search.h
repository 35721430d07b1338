// SPDX-License-Identifier: Apache-2.0
// The calibration-method search of makertbin: the threshold methods a
// calibration_type tries, and the choice among them by the mean output
// cosine of the compiled model against the float model on a few samples
// (what the vendor's default and mix calibration maximize).
#ifndef OPENBPU_CONVERTER_QUANT_METHOD_SEARCH_H_
#define OPENBPU_CONVERTER_QUANT_METHOD_SEARCH_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "converter/codegen/compiler.h"
#include "converter/ir/graph.h"
#include "converter/partition/placement.h"
#include "converter/quant/calibration.h"

namespace openbpu::cvt {

using Sample = std::map<std::string, Value>;  // graph input -> data

struct CalCandidate {
  CalMethod method = CalMethod::kMax;
  double percentile = 1.0;
  std::string label;  // as logged ("max", "kl", "max-percentile:percentile=0.99995", ...)
};

// The methods a calibration_type tries: one for max/skip/kl/mse, the
// default set (max-percentile, kl, mse, max) for default and mix, max only
// when every activation is int16 (clipping only hurts with 16 bits).
std::vector<CalCandidate> calibration_candidates(const std::string& calibration_type,
                                                 std::optional<float> max_percentile, bool all_int16);

// Threshold of every non-constant value of the graph by one method.
std::map<std::string, double> thresholds_for(const Graph& g, const CalibrationStats& stats, const CalCandidate& c);

// The method of int16 activations: max (16 bits have resolution to spare
// and clipping only hurts); calibration_candidates' only one for all-int16.
CalCandidate int16_method();

// The int16 threshold of every value with calibration statistics and a
// positive threshold (for values promoted to int16 after an int8 method's
// choice; empty without statistics, e.g. calibration_type load).
std::map<std::string, double> int16_thresholds(const Graph& g, const CalibrationStats& stats);

// The inputs of the quantized graph for a calibration sample: image inputs
// the BPU reads natively get the runtime image bytes (NV12 from 2x2-averaged
// chroma), other inputs the sample's data.
bool quantized_inputs(const CompiledModel& cm, const Sample& sample, Sample* qin, std::string* error);

// Multiply-accumulates of one run of all BPU subgraphs of a compiled model
// (the unit of the searches' compute budgets).
double model_macs(const CompiledModel& cm);

// The value the method choice and the threshold search score a model
// output by: the input of a Softmax the CPU runs (its logits, a value of
// the compiled graph: the probabilities saturate on confident samples,
// where a few scoring samples then tell the candidates apart by the rare
// ambiguous one only), else the output itself.
std::string scored_value(const Graph& g, const Placement& pl, const std::string& output);

// Mean cosine similarity of the model outputs, float graph vs a compiled
// model, over the first n samples. The float outputs are computed once.
// Samples the default/mix scoring uses (one is noisy).
constexpr size_t kScoringSamples = 16;
// A score gain below this is noise of the few scoring samples, not a better
// choice (accepting it overfits the calibration set): the per-value
// threshold search and the cross-layer equalization candidate need more.
constexpr double kMinScoreGain = 2e-5;

class OutputScorer {
 public:
  size_t samples() const { return n_; }
  // logits (the placement): a Softmax output by its logits (scored_value).
  bool init(const Graph& g, const std::vector<Sample>& samples, size_t n, std::string* error,
            const Placement* logits = nullptr);
  bool score(const CompiledModel& cm, double* out, std::string* error) const;

 private:
  const std::vector<Sample>* samples_ = nullptr;
  std::vector<std::string> outputs_;  // the scored values (scored_value)
  std::set<std::string> keep_;
  size_t n_ = 0;
  std::vector<std::vector<std::vector<double>>> ref_;  // sample -> output -> values
};

struct CalibrationChoice {
  CompiledModel model;                       // compiled with the chosen thresholds
  std::map<std::string, double> thresholds;  // per float value
  std::string label;                         // the chosen method
  double score = 1.0;                        // its mean output cosine (1 when not scored)
};

// Compiles the graph with each candidate's thresholds and keeps the best by
// the output score (the only candidate without scoring; the first of equal
// scores). `debug` receives one line per scored candidate, in candidate
// order. Up to `jobs` candidates are compiled and scored at once.
bool choose_calibration(const Graph& g, const Placement& placement, const CalibrationStats& stats,
                        const std::vector<Sample>& samples, const CompileOptions& options,
                        const std::vector<CalCandidate>& candidates,
                        const std::function<void(const std::string&)>& debug, CalibrationChoice* choice,
                        std::string* error, int jobs = 1);

// calibration_type default and mix without optimization asymmetric: the method
// choice runs again with asymmetric activations; when its best scores higher
// on the scoring samples (by more than kMinScoreGain) it replaces `choice`
// (options->asymmetric set), so number format and method are chosen
// together. An asymmetric model that does not compile keeps the symmetric
// choice. `info` receives the comparison. (The vendor's default chooses
// asymmetric quantization itself.) Before values read only by tables took
// the tables' windows (quant_params.cc) this overrated asymmetric values on
// the PP-OCR classifier (0.99981 on the samples, 94.5 % held-out agreement
// against 97.5 % symmetric), and the format was decided at the symmetric
// choice's thresholds first.
void choose_asymmetric(const Graph& g, const Placement& placement, const CalibrationStats& stats,
                       const std::vector<Sample>& samples, const std::vector<CalCandidate>& candidates,
                       CompileOptions* options, CalibrationChoice* choice,
                       const std::function<void(const std::string&)>& info, int jobs = 1);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_METHOD_SEARCH_H_
