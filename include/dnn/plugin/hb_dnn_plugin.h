// SPDX-License-Identifier: Apache-2.0
// OpenBPU libdnn plugin API: registration of custom CPU layers (C++ linkage),
// source-compatible with <dnn/plugin/hb_dnn_plugin.h>.
#ifndef DNN_PLUGIN_HB_DNN_PLUGIN_H_
#define DNN_PLUGIN_HB_DNN_PLUGIN_H_

#include <cstdint>

#include "hb_dnn_layer.h"

typedef hobot::dnn::Layer *(*hbDNNLayerCreator)();

// Registers a creator for CPU operators of type layerType. Returns 0, or
// HB_DNN_INVALID_ARGUMENT for NULL arguments or a type registered twice.
int32_t hbDNNRegisterLayerCreator(char const *layerType, hbDNNLayerCreator layerCreator);

// Removes a registration. HB_DNN_INVALID_ARGUMENT when none exists.
int32_t hbDNNUnregisterLayerCreator(char const *layerType);

#endif  // DNN_PLUGIN_HB_DNN_PLUGIN_H_
