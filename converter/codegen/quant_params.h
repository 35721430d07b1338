// SPDX-License-Identifier: Apache-2.0
// Compiler stage 2, quantization-parameter assignment: the data type and
// scale of every value on the BPU, from the calibrated thresholds and each
// operator unit's quantization rule (own scale, the input's, int32 indices),
// and the int32 high-precision tail rule.
#ifndef OPENBPU_CONVERTER_CODEGEN_QUANT_PARAMS_H_
#define OPENBPU_CONVERTER_CODEGEN_QUANT_PARAMS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/codegen/fusion.h"
#include "converter/codegen/lowering.h"
#include "converter/ir/graph.h"
#include "converter/partition/placement.h"

namespace openbpu::cvt {

struct QuantOptions {
  bool int32_tail = true;               // high-precision int32 outputs for tail convolutions
  std::set<std::string> int16_values;   // activations computed in int16
  bool all_int16 = false;
  std::set<std::string> int8_values;    // int8 even with all_int16
  // optimization asymmetric: int8 values between operators whose units
  // quantize with zero points (OpUnit::zero_points) in one subgraph take the
  // range [min(0, b), T] of their operator's lower bound b (a table's lowest
  // entry, a fused Relu/Clip's bound) and threshold T, narrowed to where
  // their readers' tables are not flat when only table lookups read them,
  // with a zero point, when the range is at most 1.25 T wide (quant_params.cc).
  bool asymmetric = false;
};

// The asymmetric int8 parameters of a value with threshold t for the range
// [min(0, lo), hi] (QuantOptions::asymmetric), or false when they gain too
// little (the range is wider than 1.25 t).
bool asymmetric_params(double t, double lo, double hi, QParams* q);

// The scale of value v from its calibrated threshold T (a missing one counts
// as 1): T / 127, or T / 32767 for an int16 value.
double value_scale(const std::map<std::string, double>& thresholds, const std::string& v, bool int16);
// The threshold whose int8 scale (value_scale) is `scale`: scale * 127.
double int8_threshold(double scale);

// thresholds: calibrated |x| threshold per float value; the scale of an int8
// (int16) value is T / 127 (T / 32767), a missing threshold counts as 1.
// `calibrated`, when given, receives every value whose scale comes from its
// threshold.
std::map<std::string, QParams> assign_qparams(const Graph& g, const Placement& placement,
                                              const std::vector<SubgraphPlan>& plans,
                                              const std::map<std::string, double>& thresholds,
                                              const QuantOptions& options,
                                              std::set<std::string>* calibrated = nullptr);

// The int32 tail rule: an op whose unit allows it (OpUnit::int32_tail), with
// no residual and no activation but Relu, whose output only the CPU reads,
// keeps the int32 accumulator with per-channel scales s_in * s_w[c].
bool int32_tail_applies(const Graph& g, const Placement& placement, const Op& op, const std::string& output);
QParams int32_tail_params(const Graph& g, const Op& op, float input_scale);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_CODEGEN_QUANT_PARAMS_H_
