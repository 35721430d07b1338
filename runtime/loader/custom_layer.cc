// SPDX-License-Identifier: Apache-2.0
#include "runtime/loader/custom_layer.h"

#include <atomic>

namespace openbpu::rt {

namespace {
std::atomic<CustomLayerFactory> g_factory{nullptr};
}  // namespace

void set_custom_layer_factory(CustomLayerFactory factory) { g_factory.store(factory); }

Status create_custom_layer(const CpuOpDef& def, const std::vector<const TensorDesc*>& inputs,
                           const std::vector<const TensorDesc*>& outputs, std::unique_ptr<CpuKernel>* kernel) {
  const CustomLayerFactory factory = g_factory.load();
  if (factory == nullptr)
    return error(kApiUseError, "node '" + def.name + "' is the custom layer '" + def.op_type +
                                   "': register its creator with hbDNNRegisterLayerCreator before loading the model");
  return factory(def, inputs, outputs, kernel);
}

}  // namespace openbpu::rt
