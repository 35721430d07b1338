// SPDX-License-Identifier: Apache-2.0
// Factories of the CPU operators (one per file); the table is registry.cc.
#ifndef OPENBPU_RUNTIME_CPU_OPS_OPS_H_
#define OPENBPU_RUNTIME_CPU_OPS_OPS_H_

#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::rt {

#define OBPU_DECLARE_CPU_OP(fn)                                                           \
  Status fn(const CpuOpDef& def, const std::vector<const TensorDesc*>& inputs,           \
            const std::vector<const TensorDesc*>& outputs, std::unique_ptr<CpuKernel>* kernel)

OBPU_DECLARE_CPU_OP(create_quantize);
OBPU_DECLARE_CPU_OP(create_dequantize);
OBPU_DECLARE_CPU_OP(create_layout_convert);  // also Reshape/Flatten/Squeeze/Unsqueeze/Identity
OBPU_DECLARE_CPU_OP(create_transpose);
OBPU_DECLARE_CPU_OP(create_softmax);

#undef OBPU_DECLARE_CPU_OP

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CPU_OPS_OPS_H_
