// SPDX-License-Identifier: Apache-2.0
// openbpu/openbpu.h: our extensions (profiler sessions, model metadata, BPU cores).
#include "openbpu/openbpu.h"

#include "dnn/hb_dnn_status.h"
#include "runtime/c_api/api.h"
#include "runtime/engine/engine.h"
#include "runtime/profiler/profiler.h"

using openbpu::rt::Model;
using openbpu::rt::capi::fail;
using openbpu::rt::capi::model_of;

OBPU_API int32_t obpuProfilerStart(char const* directory) {
  if (directory == nullptr || *directory == '\0')
    return fail(HB_DNN_INVALID_ARGUMENT, "obpuProfilerStart: NULL or empty directory");
  return openbpu::rt::profiler::start(directory).code();
}

OBPU_API int32_t obpuProfilerSetRunningCondition(char const* modelName, int32_t coreId, int32_t frameCount,
                                                 int32_t threadNum, double runTimeMs, double fps,
                                                 double averageLatencyMs) {
  if (modelName == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "obpuProfilerSetRunningCondition: NULL model name");
  if (!openbpu::rt::profiler::enabled())
    return fail(HB_DNN_API_USE_ERROR, "obpuProfilerSetRunningCondition: no profiler session is open");
  openbpu::rt::profiler::set_running_condition(modelName, coreId, frameCount, threadNum, runTimeMs, fps,
                                               averageLatencyMs);
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t obpuProfilerStop(void) { return openbpu::rt::profiler::stop().code(); }

OBPU_API int32_t obpuGetModelMarch(char const** march, void* dnnHandle) {
  if (march == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "obpuGetModelMarch: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "obpuGetModelMarch: invalid model handle");
  *march = m->march.c_str();
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t obpuGetModelMetadata(char const** value, void* dnnHandle, char const* key) {
  if (value == nullptr || key == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "obpuGetModelMetadata: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "obpuGetModelMetadata: invalid model handle");
  auto it = m->metadata.find(key);
  *value = it == m->metadata.end() ? nullptr : it->second.c_str();
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t obpuGetBpuCoreNum(int32_t* coreNum, void* dnnHandle) {
  if (coreNum == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "obpuGetBpuCoreNum: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "obpuGetBpuCoreNum: invalid model handle");
  *coreNum = m->device->info().cores;
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t obpuGetModelCoreNum(int32_t* coreNum, void* dnnHandle) {
  if (coreNum == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "obpuGetModelCoreNum: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "obpuGetModelCoreNum: invalid model handle");
  *coreNum = m->core_num;
  return HB_DNN_SUCCESS;
}
