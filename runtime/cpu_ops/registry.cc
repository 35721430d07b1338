// SPDX-License-Identifier: Apache-2.0
// The explicit table of CPU operators. Adding an operator = one factory in
// its own file + one line here. Domain "" = ONNX semantics (opsets 7..19,
// see docs/cpu_ops.md), "openbpu" = the runtime's own operators.
#include <iterator>

#include "runtime/cpu_ops/cpu_op.h"
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

// Constant-initialized (pointers only), so no static-initialization order.
constexpr CpuOpEntry kCpuOps[] = {
    {"openbpu", "Quantize", create_quantize},
    {"openbpu", "Dequantize", create_dequantize},
    {"openbpu", "LayoutConvert", create_layout_convert},
    {"openbpu", "Swish", create_unary},  // x * sigmoid(x): the converter's fused SiLU on the CPU
    // Data movement.
    {"", "Reshape", create_layout_convert},
    {"", "Flatten", create_layout_convert},
    {"", "Squeeze", create_layout_convert},
    {"", "Unsqueeze", create_layout_convert},
    {"", "Identity", create_layout_convert},
    {"", "Dropout", create_layout_convert},
    {"", "Transpose", create_transpose},
    {"", "DepthToSpace", create_depth_space},
    {"", "SpaceToDepth", create_depth_space},
    {"", "Concat", create_concat},
    {"", "Split", create_split},
    {"", "Slice", create_slice},
    {"", "Pad", create_pad},
    {"", "Expand", create_expand},
    {"", "Tile", create_tile},
    {"", "Gather", create_gather},
    {"", "GatherElements", create_elements},
    {"", "ScatterElements", create_elements},
    {"", "Scatter", create_elements},
    {"", "GatherND", create_nd},
    {"", "ScatterND", create_nd},
    {"", "Trilu", create_trilu},
    {"", "Compress", create_select},
    {"", "NonZero", create_select},
    {"", "ReverseSequence", create_select},
    // Tensors from shapes and attributes.
    {"", "Shape", create_shape},
    {"", "Size", create_shape},
    {"", "ConstantOfShape", create_constant_of_shape},
    {"", "Constant", create_constant},
    {"", "Range", create_range},
    {"", "EyeLike", create_eye_like},
    {"", "OneHot", create_onehot},
    {"", "Cast", create_cast},
    {"", "CastLike", create_cast},
    // Convolution, matrix products, pooling, resizing.
    {"", "Conv", create_conv},
    {"", "ConvTranspose", create_conv_transpose},
    {"", "Gemm", create_gemm},
    {"", "MatMul", create_matmul},
    {"", "Einsum", create_einsum},
    {"", "Det", create_det},
    {"", "RNN", create_rnn},
    {"", "GRU", create_rnn},
    {"", "LSTM", create_rnn},
    {"", "MaxPool", create_pool},
    {"", "AveragePool", create_pool},
    {"", "LpPool", create_pool},
    {"", "GlobalAveragePool", create_global_pool},
    {"", "GlobalMaxPool", create_global_pool},
    {"", "GlobalLpPool", create_global_pool},
    {"", "MaxUnpool", create_max_unpool},
    {"", "Resize", create_resize},
    {"", "Upsample", create_resize},
    {"", "GridSample", create_grid_sample},
    // Normalization.
    {"", "BatchNormalization", create_batch_norm},
    {"", "InstanceNormalization", create_instance_norm},
    {"", "LayerNormalization", create_layer_norm},
    {"", "GroupNormalization", create_group_norm},
    {"", "LpNormalization", create_axes_norm},
    {"", "MeanVarianceNormalization", create_axes_norm},
    {"", "LRN", create_lrn},
    {"", "Softmax", create_softmax},
    {"", "LogSoftmax", create_softmax},
    {"", "Hardmax", create_softmax},
    // Reductions and scans.
    {"", "ReduceSum", create_reduce},
    {"", "ReduceMean", create_reduce},
    {"", "ReduceMax", create_reduce},
    {"", "ReduceMin", create_reduce},
    {"", "ReduceProd", create_reduce},
    {"", "ReduceL1", create_reduce},
    {"", "ReduceL2", create_reduce},
    {"", "ReduceSumSquare", create_reduce},
    {"", "ReduceLogSum", create_reduce},
    {"", "ReduceLogSumExp", create_reduce},
    {"", "ArgMax", create_arg},
    {"", "ArgMin", create_arg},
    {"", "TopK", create_topk},
    {"", "CumSum", create_cumsum},
    // Element-wise, broadcasting.
    {"", "Add", create_binary},
    {"", "Sub", create_binary},
    {"", "Mul", create_binary},
    {"", "Div", create_binary},
    {"", "Pow", create_binary},
    {"", "Mod", create_binary},
    {"", "Max", create_binary},
    {"", "Min", create_binary},
    {"", "Sum", create_binary},
    {"", "Mean", create_binary},
    {"", "PRelu", create_binary},
    {"", "Equal", create_binary},
    {"", "Greater", create_binary},
    {"", "Less", create_binary},
    {"", "GreaterOrEqual", create_binary},
    {"", "LessOrEqual", create_binary},
    {"", "And", create_binary},
    {"", "Or", create_binary},
    {"", "Xor", create_binary},
    {"", "BitShift", create_binary},
    {"", "Where", create_where},
    // Element-wise, unary.
    {"", "Relu", create_unary},
    {"", "LeakyRelu", create_unary},
    {"", "Elu", create_unary},
    {"", "Selu", create_unary},
    {"", "Celu", create_unary},
    {"", "Sigmoid", create_unary},
    {"", "HardSigmoid", create_unary},
    {"", "HardSwish", create_unary},
    {"", "Tanh", create_unary},
    {"", "Softplus", create_unary},
    {"", "Softsign", create_unary},
    {"", "Mish", create_unary},
    {"", "Gelu", create_unary},
    {"", "ThresholdedRelu", create_unary},
    {"", "Shrink", create_unary},
    {"", "Clip", create_unary},
    {"", "Exp", create_unary},
    {"", "Log", create_unary},
    {"", "Sqrt", create_unary},
    {"", "Reciprocal", create_unary},
    {"", "Neg", create_unary},
    {"", "Abs", create_unary},
    {"", "Floor", create_unary},
    {"", "Ceil", create_unary},
    {"", "Round", create_unary},
    {"", "Sign", create_unary},
    {"", "Erf", create_unary},
    {"", "Sin", create_unary},
    {"", "Cos", create_unary},
    {"", "Tan", create_unary},
    {"", "Asin", create_unary},
    {"", "Acos", create_unary},
    {"", "Atan", create_unary},
    {"", "Sinh", create_unary},
    {"", "Cosh", create_unary},
    {"", "Asinh", create_unary},
    {"", "Acosh", create_unary},
    {"", "Atanh", create_unary},
    {"", "Not", create_unary},
    {"", "IsNaN", create_unary},
    {"", "IsInf", create_unary},
    // Quantization (ONNX QDQ).
    {"", "QuantizeLinear", create_qlinear},
    {"", "DequantizeLinear", create_qlinear},
    {"", "DynamicQuantizeLinear", create_dynamic_quantize},
    // Training losses (also used by exported evaluation graphs).
    {"", "NegativeLogLikelihoodLoss", create_loss},
    {"", "SoftmaxCrossEntropyLoss", create_loss},
};

}  // namespace

const std::vector<CpuOpEntry>& all_cpu_ops() {
  static const std::vector<CpuOpEntry> table(std::begin(kCpuOps), std::end(kCpuOps));
  return table;
}

const CpuOpEntry* find_cpu_op(const std::string& domain, const std::string& op_type) {
  for (const auto& e : all_cpu_ops())
    if (domain == e.domain && op_type == e.op_type) return &e;
  return nullptr;
}

Status create_cpu_kernel(const CpuOpDef& def, const std::vector<const TensorDesc*>& inputs,
                         const std::vector<const TensorDesc*>& outputs,
                         std::unique_ptr<CpuKernel>* kernel) {
  const CpuOpEntry* e = find_cpu_op(def.domain, def.op_type);
  if (e == nullptr)
    return error(kInvalidModel, "node '" + def.name + "': CPU operator " +
                                    (def.domain.empty() ? "" : def.domain + "::") + def.op_type +
                                    " is not supported by this runtime");
  // Absent inputs/outputs reach the kernels as nullptr whichever form the
  // caller used (a default TensorDesc is accepted too, see is_absent): the
  // kernels test required ones with !in[i] and reject them naming the node.
  std::vector<const TensorDesc*> in(inputs), out(outputs);
  for (auto& d : in)
    if (is_absent(d)) d = nullptr;
  for (auto& d : out)
    if (is_absent(d)) d = nullptr;
  return e->create(def, in, out, kernel);
}

}  // namespace openbpu::rt
