// SPDX-License-Identifier: Apache-2.0
// Lowering of a BPU subgraph of the float graph to a BPU program: the
// context shared by the per-operator emitters.
//
// Every float value on the BPU is stored in the native layout: its shape is
// seen as 4-D logical NCHW (rank < 4 shapes get trailing 1s, rank 1 [K] is
// [1, K, 1, 1]) and laid out NHWC with the channel count padded to the
// march's alignment. Quantization: int8 (or int16) with one scale per
// tensor, symmetric, or for int8 values between convolutions and table
// lookups asymmetric with a zero point (optimization asymmetric); or int32
// with one scale per channel for high-precision tail convolutions.
#ifndef OPENBPU_CONVERTER_CODEGEN_LOWERING_H_
#define OPENBPU_CONVERTER_CODEGEN_LOWERING_H_

#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "bpu_sim/isa/program_builder.h"
#include "converter/ir/graph.h"

namespace openbpu::cvt {

using Dims4 = std::array<int64_t, 4>;  // logical N, C, H, W

Dims4 logical4(const std::vector<int64_t>& shape);
// Logical axis of an ONNX axis of a rank-r tensor (negative axes allowed).
int logical_axis4(int rank, int64_t axis);

// x = (q - zero_point) * scale
struct QParams {
  isa::DType dtype = isa::DType::kInt8;
  float scale = 1.0f;                  // int8 / int16
  std::vector<float> channel_scales;   // int32 outputs
  int32_t zero_point = 0;              // int8 asymmetric values (quant_params.h)
  // Every reader is a table lookup that is constant below / above these
  // (quant_params.cc table_window): what the value holds outside them
  // changes nothing, and its error is measured on the float value clamped
  // to them (report/similarity.cc).
  double flat_below = -INFINITY, flat_above = INFINITY;
};

// Native element strides of logical dims (N, C, H, W) of a NHWC tensor.
std::array<int64_t, 4> native_strides(const Dims4& d, int align);
// The 4-D NHWC view of a value stored at (region, index, offset).
isa::TensorRef native_ref(isa::Region region, uint16_t index, uint64_t offset, const Dims4& d, isa::DType t,
                          int align);
uint64_t native_bytes(const Dims4& d, isa::DType t, int align);

struct OpUnit;  // converter/ops/op_unit.h

// A node or a fused group of nodes that becomes instructions.
struct Op {
  std::vector<size_t> nodes;          // graph node indices (first = main node)
  std::vector<std::string> inputs;    // float values read
  std::vector<std::string> outputs;   // float values written
  const OpUnit* unit = nullptr;       // the main node's operator unit
  // Fusion details for convolutions.
  int act_min_node = -1;              // Relu/Clip fused after conv (or after the residual add)
  std::string residual;               // value added before the activation
  uint64_t scratch_offset = 0;        // temporary scratch of the emitter (OpUnit::scratch), from the memory plan
  // A convolution reading int16 with 16-bit weights, two int8 planes
  // (CompileOptions::int16_weights; the conv emitter's emit_low_plane).
  bool int16_weights = false;
};

// int8 weights of one node rounded for its output error on the calibration
// data (quant/weight_rounding.h), rows = output channels (a conv's Cout, a
// MatMul's columns N), each row in input-channel order, with the per-row
// scales they were rounded at (max |w| / 127). The emitters use each row
// whose scale is theirs; other rows stay rounded to nearest.
struct RoundedWeights {
  std::vector<float> scales;
  std::vector<int8_t> q;  // [rows][inputs]
};

class LoweringContext {
 public:
  LoweringContext(const Graph& g, const isa::MarchInfo& march) : graph(g), pb(march) {}
  const Graph& graph;
  isa::ProgramBuilder pb;
  std::map<std::string, QParams> q;            // every value on the BPU
  std::map<std::string, isa::TensorRef> refs;  // where each value lives (after allocation)
  const std::map<std::string, std::vector<double>>* channel_means = nullptr;  // bias correction
  const std::map<std::string, RoundedWeights>* rounded_weights = nullptr;     // may be null
  // The rounded weights of node `n` with `rows` rows, or null. They are used
  // row by row (row_rounded_at): a row whose scale differs (an all-zero row
  // whose scale the bias sets) stays nearest without costing the others.
  const RoundedWeights* rounded(const std::string& node, size_t rows) const {
    if (rounded_weights == nullptr) return nullptr;
    auto it = rounded_weights->find(node);
    return it != rounded_weights->end() && it->second.scales.size() == rows ? &it->second : nullptr;
  }
  static bool row_rounded_at(const RoundedWeights* rw, size_t row, float scale) {
    return rw != nullptr && rw->scales[row] == scale;
  }

  int align() const { return pb.align(); }
  const Value& value(const std::string& n) const { return *graph.value(n); }
  Dims4 dims(const std::string& n) const { return logical4(value(n).shape); }
  const isa::TensorRef& ref(const std::string& n) const { return refs.at(n); }
  const QParams& qp(const std::string& n) const { return q.at(n); }
  // Constant of a node input as floats.
  std::vector<float> floats(const std::string& n) const;
  // Adds a quantized constant tensor (broadcastable operand) in the const
  // region, laid out with the logical dims d (its shape right-aligned to the
  // rank of the tensor it is combined with, then seen as 4-D).
  isa::TensorRef const_tensor(const std::string& n, const Dims4& d, float* scale);
};

// Range of a dtype (bpu_sim/isa/numerics.h).
int32_t qmin(isa::DType t);
int32_t qmax(isa::DType t);
// Quantizes a real value to a dtype with a scale (isa::quantize_value).
int32_t quantize(double v, float scale, isa::DType t);
// Quantizes a real value to a value's parameters (its zero point added,
// clamped to the dtype's range).
int32_t quantize(double v, const QParams& q);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_CODEGEN_LOWERING_H_
