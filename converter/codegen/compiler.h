// SPDX-License-Identifier: Apache-2.0
// The compiler: placed + calibrated float graph -> quantized graph. The
// quantized graph mirrors the .bin segment by segment: CPU float operators,
// openbpu::Quantize / Dequantize / LayoutConvert at BPU boundaries, and one
// openbpu::BpuSubgraph node per BPU subgraph holding its compiled program.
// Its host execution (FloatExecutor, the same kernels as the simulator) is
// bit-exact with the .bin on the simulator.
#ifndef OPENBPU_CONVERTER_CODEGEN_COMPILER_H_
#define OPENBPU_CONVERTER_CODEGEN_COMPILER_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/isa/march.h"
#include "converter/codegen/lowering.h"
#include "converter/ir/graph.h"
#include "converter/partition/placement.h"

namespace openbpu::cvt {

struct CompileOptions {
  const isa::MarchInfo* march = nullptr;
  double max_time_per_fc_us = 0;  // 0 = one function call per subgraph
  bool int32_tail = true;         // high-precision int32 outputs for tail convolutions
  bool fuse = true;               // fusion pass (activations, residual adds); off at optimize_level O0
  std::string model_name = "model";
  // Debug builds for the similarity report: no scratch reuse, so every
  // intermediate value is still in the scratch arena after a run.
  bool no_scratch_reuse = false;
  // Activations computed in int16 (marches with int16 support): the listed
  // float values, or every activation with all_int16.
  std::set<std::string> int16_values;
  bool all_int16 = false;
  // Values kept int8 even with all_int16 (node_info / optimization int8).
  std::set<std::string> int8_values;
  // 16-bit weights (optimization int16_weights, ours): a convolution reading
  // an int16 value computes with two int8 weight planes (docs/numerics.md
  // "16-bit weights"), except one that already takes a residual or keeps
  // an int32 output.
  bool int16_weights = false;
  // optimization asymmetric: int8 values between operators that take zero
  // points, bounded below by their operator, are asymmetric
  // (QuantOptions::asymmetric).
  bool asymmetric = false;
  // Per-channel means of float values (calibration): convolutions reading a
  // value with known means get empirical bias correction, i.e. the expected
  // error of their rounded weights, sum (w_q - w) * E[x], is removed from
  // their bias.
  std::map<std::string, std::vector<double>> channel_means;
  // Weights rounded for error per node name (shared by the many compilations
  // of the calibration search).
  std::shared_ptr<const std::map<std::string, RoundedWeights>> rounded_weights;
};

// Where a float value of the float graph was computed on the BPU (for the
// per-node similarity report).
struct LayerTrace {
  std::string value;
  int subgraph = -1;
  isa::TensorRef ref;
  QParams q;
};

// The instructions one op (a node and what fused into it) compiled to.
struct LayerSpan {
  std::string node;  // the op's main node
  uint32_t first = 0, count = 0;
  std::string op_type;               // the main node's
  std::vector<std::string> nodes;    // every node fused into the op, the main node first
  // The op's output values and, per value, the name its per-layer dump takes:
  // the node computing it ("_<k>" for the node's output k > 0).
  std::vector<std::string> outputs, output_names;
};

struct CompiledSubgraph {
  std::string name;  // "<MODEL>_subgraph_<k>"
  std::vector<LayerSpan> layers;  // in program order (views have count 0)
  std::vector<isa::Instruction> program;
  std::vector<uint8_t> constants;
  uint64_t scratch_size = 0;
  std::vector<std::array<uint64_t, 3>> fcs;  // first, count, est cycles
  uint64_t macs = 0;
  uint64_t est_cycles = 0;
};

struct CompiledModel {
  Graph graph;  // the quantized graph
  std::vector<CompiledSubgraph> subgraphs;
  std::vector<LayerTrace> traces;
  // Per float value: calibration threshold and the scale used (for tables).
  std::map<std::string, double> thresholds;
  size_t int16_weight_convs = 0;  // convolutions with 16-bit weights (CompileOptions::int16_weights)
};

// thresholds: calibrated |x| threshold per float value (the scale is T / 127).
bool compile(const Graph& float_graph, const Placement& placement, const std::map<std::string, double>& thresholds,
             const CompileOptions& options, CompiledModel* out, std::string* error);

// The values whose scale the compilation takes from their threshold (the
// others follow their input's scale, are int32 or constants).
bool calibrated_values(const Graph& float_graph, const Placement& placement, const CompileOptions& options,
                       std::set<std::string>* values, std::string* error);

// The BpuSubgraph node's program in attribute form (and back), shared by the
// ONNX export of the quantized model, its host kernel and the .bin writer.
void set_program_attrs(const CompiledSubgraph& sg, rt::Attrs* attrs);
bool program_from_attrs(const rt::Attrs& attrs, CompiledSubgraph* sg, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_CODEGEN_COMPILER_H_
