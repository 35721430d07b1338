// SPDX-License-Identifier: Apache-2.0
// Factories of the CPU operators (one family per file); the table is
// registry.cc.
#ifndef OPENBPU_RUNTIME_CPU_OPS_OPS_H_
#define OPENBPU_RUNTIME_CPU_OPS_OPS_H_

#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::rt {

#define OBPU_DECLARE_CPU_OP(fn)                                                \
  Status fn(const CpuOpDef& def, const std::vector<const TensorDesc*>& inputs, \
            const std::vector<const TensorDesc*>& outputs, std::unique_ptr<CpuKernel>* kernel)

OBPU_DECLARE_CPU_OP(create_quantize);  // quantize.cc
OBPU_DECLARE_CPU_OP(create_dequantize);
OBPU_DECLARE_CPU_OP(create_layout_convert);  // layout.cc (+ Reshape Flatten Squeeze ... Dropout)
OBPU_DECLARE_CPU_OP(create_transpose);
OBPU_DECLARE_CPU_OP(create_depth_space);
OBPU_DECLARE_CPU_OP(create_softmax);  // softmax.cc (+ LogSoftmax Hardmax)
OBPU_DECLARE_CPU_OP(create_unary);    // elementwise_unary.cc
OBPU_DECLARE_CPU_OP(create_binary);   // elementwise_binary.cc
OBPU_DECLARE_CPU_OP(create_where);
OBPU_DECLARE_CPU_OP(create_gemm);  // gemm.cc
OBPU_DECLARE_CPU_OP(create_matmul);
OBPU_DECLARE_CPU_OP(create_conv);  // conv.cc
OBPU_DECLARE_CPU_OP(create_conv_transpose);
OBPU_DECLARE_CPU_OP(create_pool);  // pool.cc
OBPU_DECLARE_CPU_OP(create_global_pool);
OBPU_DECLARE_CPU_OP(create_max_unpool);
OBPU_DECLARE_CPU_OP(create_batch_norm);  // normalization.cc
OBPU_DECLARE_CPU_OP(create_instance_norm);
OBPU_DECLARE_CPU_OP(create_layer_norm);
OBPU_DECLARE_CPU_OP(create_group_norm);
OBPU_DECLARE_CPU_OP(create_axes_norm);  // LpNormalization, MeanVarianceNormalization
OBPU_DECLARE_CPU_OP(create_lrn);
OBPU_DECLARE_CPU_OP(create_reduce);  // reduce.cc
OBPU_DECLARE_CPU_OP(create_arg);
OBPU_DECLARE_CPU_OP(create_concat);  // concat_split.cc
OBPU_DECLARE_CPU_OP(create_split);
OBPU_DECLARE_CPU_OP(create_slice);   // slice.cc
OBPU_DECLARE_CPU_OP(create_pad);     // pad.cc
OBPU_DECLARE_CPU_OP(create_expand);  // expand_tile.cc
OBPU_DECLARE_CPU_OP(create_tile);
OBPU_DECLARE_CPU_OP(create_gather);    // gather_scatter.cc
OBPU_DECLARE_CPU_OP(create_elements);  // GatherElements ScatterElements Scatter
OBPU_DECLARE_CPU_OP(create_nd);        // GatherND ScatterND
OBPU_DECLARE_CPU_OP(create_shape);     // generator.cc (+ Size)
OBPU_DECLARE_CPU_OP(create_constant_of_shape);
OBPU_DECLARE_CPU_OP(create_constant);
OBPU_DECLARE_CPU_OP(create_range);
OBPU_DECLARE_CPU_OP(create_eye_like);
OBPU_DECLARE_CPU_OP(create_cast);         // cast.cc (+ CastLike)
OBPU_DECLARE_CPU_OP(create_resize);       // resize.cc (+ Upsample)
OBPU_DECLARE_CPU_OP(create_grid_sample);  // grid_sample.cc
OBPU_DECLARE_CPU_OP(create_topk);         // topk.cc
OBPU_DECLARE_CPU_OP(create_cumsum);       // cumsum.cc
OBPU_DECLARE_CPU_OP(create_trilu);        // trilu.cc
OBPU_DECLARE_CPU_OP(create_onehot);       // onehot.cc
OBPU_DECLARE_CPU_OP(create_qlinear);      // quantize_linear.cc
OBPU_DECLARE_CPU_OP(create_dynamic_quantize);
OBPU_DECLARE_CPU_OP(create_einsum);  // einsum.cc
OBPU_DECLARE_CPU_OP(create_loss);    // loss.cc (NLL, SoftmaxCrossEntropy)
OBPU_DECLARE_CPU_OP(create_select);  // select.cc (Compress NonZero ReverseSequence)
OBPU_DECLARE_CPU_OP(create_det);     // det.cc
OBPU_DECLARE_CPU_OP(create_rnn);     // rnn.cc (RNN GRU LSTM)

#undef OBPU_DECLARE_CPU_OP

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CPU_OPS_OPS_H_
