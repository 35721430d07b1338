// SPDX-License-Identifier: Apache-2.0
// Weight rounding chosen to minimise the layer's output error on the
// calibration data (GPTQ / optimal brain quantization): the int8 weights of
// BPU 1x1 convolutions (one group) and of MatMuls with a constant [K, N]
// operand, given the second moments E[x x^T] of their input's channels.
#ifndef OPENBPU_CONVERTER_QUANT_WEIGHT_ROUNDING_H_
#define OPENBPU_CONVERTER_QUANT_WEIGHT_ROUNDING_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/codegen/compiler.h"
#include "converter/ir/graph.h"
#include "converter/partition/placement.h"

namespace openbpu::cvt {

struct CalibrationStats;

// Inputs whose channel second moments the calibration collects: the first
// input of every BPU node whose weights round_weights_for_error handles.
std::set<std::string> weight_rounding_inputs(const Graph& g, const Placement& pl);

// Rounds every such node's weights (node name -> weights) from the moments
// in `stats`; nodes whose input has no moments (or more than
// kMaxRoundingInputs channels), and those whose rounding does not lower
// the output error by kMinRoundingGain on the samples it was not rounded
// from (cross_validated_gain), are left out, i.e. rounded to nearest.
// `log` (may be empty) gets each node's cross-validated gain.
std::map<std::string, RoundedWeights> round_weights_for_error(
    const Graph& g, const Placement& pl, const CalibrationStats& stats,
    const std::function<void(const std::string&, double)>& log = {});

// 1 - (output error of the rounding for error) / (that of nearest
// rounding), each rounded from one half's moments (even, odd: mean x x^T
// of the even and of the odd calibration samples) and measured on the
// other's, both ways summed. > 0 when the rounding generalises.
double cross_validated_gain(const std::vector<double>& w, const std::vector<float>& s, const std::vector<double>& even,
                            const std::vector<double>& odd, int64_t rows, int64_t n);

// One weight matrix w [rows][n] (row-major) at per-row scales s, input
// moments h [n][n]: each input channel in turn is rounded to nearest and
// its error, weighted by the inverse moments, moved onto the channels not
// rounded yet (GPTQ, dampened by 1 % of the mean diagonal).
std::vector<int8_t> round_for_error(const std::vector<double>& w, const std::vector<float>& s,
                                    const std::vector<double>& h, int64_t rows, int64_t n);

inline constexpr int64_t kMaxRoundingInputs = 1024;  // O(n^3) factorisation per layer
inline constexpr int64_t kMinRowsPerInput = 2;       // moment rows (positions x samples) per input channel
inline constexpr double kMinRoundingGain = 0.0;      // cross-validated gain a rounding must exceed

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_WEIGHT_ROUNDING_H_
