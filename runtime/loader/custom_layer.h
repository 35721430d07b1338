// SPDX-License-Identifier: Apache-2.0
// User CPU layers (custom operators): a model's CPU operator of domain
// kCustomLayerDomain names, as its op_type, a layer type that the
// application registers with hbDNNRegisterLayerCreator (dnn/plugin/). The C
// API (runtime/c_api/plugin.cc, the only code that sees the plugin headers)
// installs the factory that turns the registered creator into a kernel;
// docs/custom_ops.md describes the flow from the converter to the board.
#ifndef OPENBPU_RUNTIME_LOADER_CUSTOM_LAYER_H_
#define OPENBPU_RUNTIME_LOADER_CUSTOM_LAYER_H_

#include <memory>
#include <vector>

#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::rt {

inline constexpr const char* kCustomLayerDomain = "custom";

using CustomLayerFactory = Status (*)(const CpuOpDef& def, const std::vector<const TensorDesc*>& inputs,
                                      const std::vector<const TensorDesc*>& outputs,
                                      std::unique_ptr<CpuKernel>* kernel);

// Installed by the C API when the first creator is registered.
void set_custom_layer_factory(CustomLayerFactory factory);

// The kernel of a custom layer node; kApiUseError when no creator for its
// type is registered (register before loading the model).
Status create_custom_layer(const CpuOpDef& def, const std::vector<const TensorDesc*>& inputs,
                           const std::vector<const TensorDesc*>& outputs, std::unique_ptr<CpuKernel>* kernel);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_LOADER_CUSTOM_LAYER_H_
