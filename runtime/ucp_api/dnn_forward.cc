// SPDX-License-Identifier: Apache-2.0
// libdnn.so of the UCP generation: the 20 hbDNN* functions of
// hobot/dnn/hb_dnn.h and hb_dnn_status.h. The model functions forward to
// libhbucp.so through the bridge (bridge.h), which owns the runtime.
#include <cstdio>
#include <string>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "openbpu/version.h"
#include "runtime/ucp_api/bridge.h"

namespace {

// The bridge, or nullptr when libhbucp.so is of another build (logged once).
const openbpu::ucp::DnnApi* api() {
  static const openbpu::ucp::DnnApi* a = [] {
    const openbpu::ucp::DnnApi* t = openbpu_ucp_dnn_api(openbpu::ucp::kBridgeVersion);
    if (t == nullptr)
      std::fprintf(stderr, "[E][DNN] libdnn.so and libhbucp.so come from different OpenBPU builds\n");
    return t;
  }();
  return a;
}

}  // namespace

#define OBPU_FORWARD(member, ...) \
  (api() == nullptr ? static_cast<int32_t>(HB_DNN_API_USE_ERROR) : api()->member(__VA_ARGS__))

OBPU_UCP_API char const* hbDNNGetVersion() {
  static const std::string v = std::to_string(HB_UCP_VERSION_MAJOR) + "." + std::to_string(HB_UCP_VERSION_MINOR) +
                               "." + std::to_string(HB_UCP_VERSION_PATCH) + "_(" OPENBPU_VERSION_STRING " HBRT)";
  return v.c_str();
}

OBPU_UCP_API char const* hbDNNGetErrorDesc(int32_t errorCode) { return hbUCPGetErrorDesc(errorCode); }

OBPU_UCP_API int32_t hbDNNInitializeFromFiles(hbDNNPackedHandle_t* dnnPackedHandle, char const** modelFileNames,
                                              int32_t modelFileCount) {
  return OBPU_FORWARD(initialize_from_files, dnnPackedHandle, modelFileNames, modelFileCount);
}

OBPU_UCP_API int32_t hbDNNInitializeFromDDR(hbDNNPackedHandle_t* dnnPackedHandle, const void** modelData,
                                            int32_t* modelDataLengths, int32_t modelDataCount) {
  return OBPU_FORWARD(initialize_from_ddr, dnnPackedHandle, modelData, modelDataLengths, modelDataCount);
}

OBPU_UCP_API int32_t hbDNNRelease(hbDNNPackedHandle_t dnnPackedHandle) {
  return OBPU_FORWARD(release, dnnPackedHandle);
}

OBPU_UCP_API int32_t hbDNNGetModelNameList(char const*** modelNameList, int32_t* modelNameCount,
                                           hbDNNPackedHandle_t dnnPackedHandle) {
  return OBPU_FORWARD(get_model_name_list, modelNameList, modelNameCount, dnnPackedHandle);
}

OBPU_UCP_API int32_t hbDNNGetModelHandle(hbDNNHandle_t* dnnHandle, hbDNNPackedHandle_t dnnPackedHandle,
                                         char const* modelName) {
  return OBPU_FORWARD(get_model_handle, dnnHandle, dnnPackedHandle, modelName);
}

OBPU_UCP_API int32_t hbDNNGetInputCount(int32_t* inputCount, hbDNNHandle_t dnnHandle) {
  return OBPU_FORWARD(get_input_count, inputCount, dnnHandle);
}

OBPU_UCP_API int32_t hbDNNGetInputName(char const** name, hbDNNHandle_t dnnHandle, int32_t inputIndex) {
  return OBPU_FORWARD(get_input_name, name, dnnHandle, inputIndex);
}

OBPU_UCP_API int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle,
                                                   int32_t inputIndex) {
  return OBPU_FORWARD(get_input_tensor_properties, properties, dnnHandle, inputIndex);
}

OBPU_UCP_API int32_t hbDNNGetOutputCount(int32_t* outputCount, hbDNNHandle_t dnnHandle) {
  return OBPU_FORWARD(get_output_count, outputCount, dnnHandle);
}

OBPU_UCP_API int32_t hbDNNGetOutputName(char const** name, hbDNNHandle_t dnnHandle, int32_t outputIndex) {
  return OBPU_FORWARD(get_output_name, name, dnnHandle, outputIndex);
}

OBPU_UCP_API int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle,
                                                    int32_t outputIndex) {
  return OBPU_FORWARD(get_output_tensor_properties, properties, dnnHandle, outputIndex);
}

OBPU_UCP_API int32_t hbDNNGetInputDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle,
                                       int32_t inputIndex) {
  return OBPU_FORWARD(get_input_desc, desc, size, type, dnnHandle, inputIndex);
}

OBPU_UCP_API int32_t hbDNNGetOutputDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle,
                                        int32_t outputIndex) {
  return OBPU_FORWARD(get_output_desc, desc, size, type, dnnHandle, outputIndex);
}

OBPU_UCP_API int32_t hbDNNGetModelDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle) {
  return OBPU_FORWARD(get_model_desc, desc, size, type, dnnHandle);
}

OBPU_UCP_API int32_t hbDNNGetCompileBpuCoreNum(int32_t* bpuCoreNum, hbDNNHandle_t dnnHandle) {
  return OBPU_FORWARD(get_compile_bpu_core_num, bpuCoreNum, dnnHandle);
}

OBPU_UCP_API int32_t hbDNNGetHBMDesc(char const** desc, uint32_t* size, int32_t* type,
                                     hbDNNPackedHandle_t dnnPackedHandle, int32_t index) {
  return OBPU_FORWARD(get_hbm_desc, desc, size, type, dnnPackedHandle, index);
}

OBPU_UCP_API int32_t hbDNNInferV2(hbUCPTaskHandle_t* taskHandle, hbDNNTensor* output, hbDNNTensor const* input,
                                  hbDNNHandle_t dnnHandle) {
  return OBPU_FORWARD(infer_v2, taskHandle, output, input, dnnHandle);
}

OBPU_UCP_API int32_t hbDNNGetTaskOutputTensorProperties(hbDNNTensorProperties* properties,
                                                        hbUCPTaskHandle_t taskHandle, int32_t subTaskIndex,
                                                        int32_t outputIndex) {
  return OBPU_FORWARD(get_task_output_tensor_properties, properties, taskHandle, subTaskIndex, outputIndex);
}
