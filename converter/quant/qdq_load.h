// SPDX-License-Identifier: Apache-2.0
// calibration_type load: the thresholds of a QDQ model (QuantizeLinear /
// DequantizeLinear pairs, e.g. a PyTorch quantization-aware-training export
// or our own *_calibrated_model.onnx) instead of calibration.
#ifndef OPENBPU_CONVERTER_QUANT_QDQ_LOAD_H_
#define OPENBPU_CONVERTER_QUANT_QDQ_LOAD_H_

#include <map>
#include <string>
#include <vector>

#include "converter/codegen/compiler.h"
#include "converter/ir/graph.h"
#include "converter/partition/placement.h"

namespace openbpu::cvt {

struct QdqModel {
  // Activation thresholds (int8 scale * 127) per float value.
  std::map<std::string, double> thresholds;
  int pairs = 0;            // activation Q -> DQ pairs removed
  int weights = 0;          // constant weights dequantized
  int weights_kept = 0;     // of those, with scales our max/127 rule gives again
  std::vector<std::string> notes;  // one line per weight requantized with our rule
};

// Removes the Q/DQ pairs of the model, leaving the float graph: an
// activation pair becomes the threshold of the value it sits on; a
// constant's (QuantizeLinear of a float initializer, or DequantizeLinear of
// an int8/uint8/int32 one) becomes its dequantized float values. Errors name
// the node: zero point not 0 (int8) or 128 (uint8), per-axis activation
// scales, scale <= 0 / not finite, a QuantizeLinear not read by
// DequantizeLinear alone, a DequantizeLinear of neither.
bool strip_qdq(Graph* g, QdqModel* qdq, std::string* error);

// The thresholds the compilation needs, on the optimized graph: the loaded
// ones; a value without a pair takes the one of its neighbour through
// data-movement operators, Relu/Clip, average pools (forward) and the
// preprocess of an input; a value still without one is an error naming it.
// `derived` receives "value <- from (operator)".
bool loaded_thresholds(const Graph& g, const Placement& pl, const CompileOptions& co, const QdqModel& qdq,
                       std::map<std::string, double>* thresholds, std::vector<std::string>* derived,
                       std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_QDQ_LOAD_H_
