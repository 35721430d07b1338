// SPDX-License-Identifier: Apache-2.0
// The explicit table of CPU operators. Adding an operator = one factory in
// its own file + one line here.
#include "runtime/cpu_ops/cpu_op.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

const std::vector<CpuOpEntry>& all_cpu_ops() {
  static const std::vector<CpuOpEntry> table = {
      {"openbpu", "Quantize", create_quantize},
      {"openbpu", "Dequantize", create_dequantize},
      {"openbpu", "LayoutConvert", create_layout_convert},
      {"", "Reshape", create_layout_convert},
      {"", "Flatten", create_layout_convert},
      {"", "Squeeze", create_layout_convert},
      {"", "Unsqueeze", create_layout_convert},
      {"", "Identity", create_layout_convert},
      {"", "Transpose", create_transpose},
      {"", "Softmax", create_softmax},
      {"", "LogSoftmax", create_softmax},
  };
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
  return e->create(def, inputs, outputs, kernel);
}

}  // namespace openbpu::rt
