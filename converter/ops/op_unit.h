// SPDX-License-Identifier: Apache-2.0
// BPU operators as units. Each operator the converter can place on the BPU
// is one OpUnit, defined in its family's file (ops/<family>.cc) next to the
// functions it names, and listed once in the table of ops/op_table.cc,
// indexed by its OpId. A unit holds
//   - its placement rule (a named predicate; its message is the reason
//     `hb_mapper checker` prints for CPU nodes) and its line of
//     docs/supported_ops.md,
//   - its quantization rule (output scale, int32 high-precision tail,
//     fusion role),
//   - its emitter (float operator -> BPU instructions).
// The table is checked when first used: every unit with a placement rule has
// an emitter, and the ids are dense and in order (OpTable test). Recipe for
// a new operator: docs/architecture.md, "How to add a BPU operator".
#ifndef OPENBPU_CONVERTER_OPS_OP_UNIT_H_
#define OPENBPU_CONVERTER_OPS_OP_UNIT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bpu_sim/isa/march.h"
#include "converter/codegen/lowering.h"
#include "converter/ir/graph.h"

namespace openbpu::cvt {

enum class OpId : uint16_t {
  // image input conversion
  kPreprocess,
  // convolution family (ops/conv.cc)
  kConv, kConvTranspose,
  // pooling (ops/pool.cc)
  kMaxPool, kAveragePool, kGlobalAveragePool, kGlobalMaxPool, kReduceMean, kReduceSum,
  // element-wise binary (ops/eltwise.cc)
  kAdd, kSub, kMul, kDiv, kMax, kMin,
  // table lookups (ops/lut.cc)
  kRelu, kClip, kLeakyRelu, kPRelu, kSigmoid, kTanh, kHardSigmoid, kHardSwish, kSwish, kGelu, kElu, kSelu,
  kSoftplus, kExp, kErf, kAbs, kNeg, kReciprocal, kSqrt,
  // resize (ops/resize.cc)
  kResize, kUpsample,
  // data movement (ops/data_movement.cc)
  kConcat, kSplit, kSlice, kPad,
  // per-channel affine (ops/conv.cc)
  kBatchNormalization,
  // channel argmax (ops/argmax.cc)
  kArgMax,
  // product of two activations (ops/matmul.cc)
  kMatMul,
  // row reductions (ops/rows.cc)
  kSoftmax, kLayerNormalization,
  // views and layout moves (ops/data_movement.cc)
  kReshape, kFlatten, kSqueeze, kUnsqueeze, kTranspose, kDepthToSpace, kSpaceToDepth,
  // operators that never run on the BPU but matter to placement (passive)
  kIdentity, kGather, kCast, kLogSoftmax,
  kCount
};

// How an operator's output is quantized.
enum class OutputScale : uint8_t {
  kCalibrated,      // its own calibrated scale (the result is requantized)
  kInput,           // the input's scale and type (data movement, max pooling)
  kInputIfNearest,  // kInput for mode "nearest", else kCalibrated (Resize)
  kIndex,           // int32 indices with scale 1 (ArgMax)
};

// Which of an operator's int8 values its emitter quantizes with a zero point
// (optimization asymmetric, codegen/quant_params.cc).
enum class ZeroPoints : uint8_t {
  kNone,
  kOutput,  // its output only
  kAll,     // its activation inputs (a convolution: not a fused residual) and its output
};

// What the fusion pass does with an operator on the BPU.
enum class Fusion : uint8_t {
  kNone,
  kActivation,       // Relu / constant-bound Clip: folds into its producer's output clamp
  kTakesActivation,  // absorbs a following activation (its single consumer)
  kTakesResidual,    // absorbs a following Add of a same-shaped value, then an activation
  kTakesAffine,      // absorbs following Mul / Add / Sub / Div by scalar constants (a table folds them in)
};

// Placement rule: true when the node can run on the BPU of the march, else
// false with the reason.
using PlaceFn = bool (*)(const Graph& g, const Node& n, const isa::MarchInfo& march, std::string* why);
// Emitter: the instructions of one op (a node and what fused into it).
using EmitFn = bool (*)(LoweringContext& ctx, const Op& op, std::string* error);
// Temporary scratch bytes the emitter needs while it runs (0 = none).
using ScratchFn = uint64_t (*)(const Graph& g, const Op& op, int align);
// Per-output-channel weight scales of an op that may keep an int32 output,
// given its input's scale (a channel's bias must fit at s_in * s_w).
using WeightScalesFn = std::vector<float> (*)(const Graph& g, const Node& n, double in_scale);
// The real function a table lookup computes.
using LutFn = std::function<double(double)> (*)(const Graph& g, const Node& n);

struct OpUnit {
  OpId id;
  const char* domain;   // "" for ONNX, "openbpu" for the converter's operators
  const char* op_type;
  // Placement: nullptr place = never on the BPU.
  PlaceFn place;
  const char* table_type;  // the operator name of the checker's and makertbin's tables (HzSQuantizedConv, ...)
  const char* limits;      // its docs/supported_ops.md line
  // Quantization.
  OutputScale output_scale;
  WeightScalesFn int32_tail;  // non-null: may keep an int32 output when only the CPU reads it
  Fusion fusion;
  bool passive;  // only moves data: at the model's head or tail it stays on the CPU
  bool view;     // its output may share the input's memory when the layouts agree (no instruction)
  // Emission.
  EmitFn emit;
  ScratchFn scratch = nullptr;
  LutFn lut = nullptr;  // table-lookup operators
  ZeroPoints zero_points = ZeroPoints::kNone;
};

// ---- the units (defined in the family files) -------------------------------
extern const OpUnit kPreprocessUnit;                                            // preprocess.cc
extern const OpUnit kConvUnit, kConvTransposeUnit, kBatchNormalizationUnit;     // conv.cc
extern const OpUnit kMaxPoolUnit, kAveragePoolUnit, kGlobalAveragePoolUnit, kGlobalMaxPoolUnit,
    kReduceMeanUnit, kReduceSumUnit;                                            // pool.cc
extern const OpUnit kAddUnit, kSubUnit, kMulUnit, kDivUnit, kMaxUnit, kMinUnit;  // eltwise.cc
extern const OpUnit kReluUnit, kClipUnit, kLeakyReluUnit, kPReluUnit, kSigmoidUnit, kTanhUnit, kHardSigmoidUnit,
    kHardSwishUnit, kSwishUnit, kGeluUnit, kEluUnit, kSeluUnit, kSoftplusUnit, kExpUnit, kErfUnit, kAbsUnit,
    kNegUnit, kReciprocalUnit, kSqrtUnit;                                       // lut.cc
extern const OpUnit kResizeUnit, kUpsampleUnit;                                 // resize.cc
extern const OpUnit kConcatUnit, kSplitUnit, kSliceUnit, kPadUnit, kReshapeUnit, kFlattenUnit, kSqueezeUnit,
    kUnsqueezeUnit, kTransposeUnit, kDepthToSpaceUnit, kSpaceToDepthUnit;      // data_movement.cc
extern const OpUnit kArgMaxUnit;                                                // argmax.cc
extern const OpUnit kMatMulUnit;                                                // matmul.cc
extern const OpUnit kSoftmaxUnit, kLayerNormalizationUnit;                      // rows.cc
extern const OpUnit kIdentityUnit, kGatherUnit, kCastUnit, kLogSoftmaxUnit;  // op_table.cc

// ---- the table ---------------------------------------------------------------

// Every unit, in OpId order (aborts at the first use if the table is
// inconsistent; op_table_errors() says why).
const std::vector<const OpUnit*>& op_units();
const OpUnit& op_unit(OpId id);
// The unit of a node (by domain and op_type), nullptr if the converter does
// not know the operator.
const OpUnit* find_op_unit(const Node& n);
// The table's consistency problems (empty when consistent).
std::vector<std::string> op_table_errors();

// The real function a table-lookup op computes: its unit's function, then
// the scalar affine nodes fused after it (Fusion::kTakesAffine); lut.cc.
std::function<double(double)> op_table_function(const Graph& g, const Op& op);

// Markdown of the BPU operators and the limits per march (docs/supported_ops.md).
std::string supported_ops_markdown();

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_OPS_OP_UNIT_H_
