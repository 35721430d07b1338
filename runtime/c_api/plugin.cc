// SPDX-License-Identifier: Apache-2.0
// dnn/plugin/*.h: custom CPU layer registration (C++ linkage) and TypeSize.
#include <map>
#include <mutex>
#include <string>

#include "dnn/hb_dnn_status.h"
#include "dnn/plugin/hb_dnn_dtype.h"
#include "dnn/plugin/hb_dnn_plugin.h"
#include "runtime/c_api/api.h"

namespace hobot {
namespace dnn {
__attribute__((visibility("default"))) size_t TypeSize[static_cast<uint32_t>(TypeFlag::kUnused) + 1U] = {
    1U, 1U, 1U, 2U, 2U, 4U, 4U, 8U, 8U, 2U, 4U, 8U, 0U};
}  // namespace dnn
}  // namespace hobot

namespace {
std::mutex g_mu;
std::map<std::string, hbDNNLayerCreator>& creators() {
  static auto* m = new std::map<std::string, hbDNNLayerCreator>();
  return *m;
}
}  // namespace

__attribute__((visibility("default"))) int32_t hbDNNRegisterLayerCreator(char const* layerType,
                                                                          hbDNNLayerCreator layerCreator) {
  using openbpu::rt::capi::fail;
  if (layerType == nullptr || layerCreator == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRegisterLayerCreator: NULL argument");
  std::lock_guard<std::mutex> lk(g_mu);
  if (!creators().emplace(layerType, layerCreator).second)
    return fail(HB_DNN_INVALID_ARGUMENT, std::string("hbDNNRegisterLayerCreator: '") + layerType +
                                             "' is already registered");
  return HB_DNN_SUCCESS;
}

__attribute__((visibility("default"))) int32_t hbDNNUnregisterLayerCreator(char const* layerType) {
  using openbpu::rt::capi::fail;
  if (layerType == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNUnregisterLayerCreator: NULL argument");
  std::lock_guard<std::mutex> lk(g_mu);
  if (creators().erase(layerType) == 0)
    return fail(HB_DNN_INVALID_ARGUMENT, std::string("hbDNNUnregisterLayerCreator: '") + layerType +
                                             "' is not registered");
  return HB_DNN_SUCCESS;
}
