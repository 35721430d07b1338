// SPDX-License-Identifier: Apache-2.0
// The dnn/hb_dnn.h and dnn/hb_dnn_status.h C API: argument validation and
// translation to the runtime's internals. The only code that includes the
// public headers.
#include "dnn/hb_dnn.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dnn/hb_dnn_status.h"
#include "openbpu/version.h"
#include "runtime/c_api/api.h"
#include "runtime/c_api/handles.h"
#include "runtime/core/env.h"
#include "runtime/core/log.h"
#include "runtime/engine/engine.h"
#include "runtime/profiler/profiler.h"

using openbpu::rt::Code;
using openbpu::rt::Model;
using openbpu::rt::Pack;
using openbpu::rt::Status;
using openbpu::rt::capi::ModelPin;
using openbpu::rt::capi::PackPin;
using openbpu::rt::capi::Registry;

static_assert(int32_t{HB_DNN_SUCCESS} == int32_t{Code::kOk} && int32_t{HB_DNN_INVALID_ARGUMENT} == int32_t{Code::kInvalidArgument} &&
                  int32_t{HB_DNN_INVALID_MODEL} == int32_t{Code::kInvalidModel} &&
                  int32_t{HB_DNN_MODEL_NUMBER_EXCEED_LIMIT} == int32_t{Code::kModelNumberExceedLimit} &&
                  int32_t{HB_DNN_INVALID_PACKED_DNN_HANDLE} == int32_t{Code::kInvalidPackedHandle} &&
                  int32_t{HB_DNN_INVALID_DNN_HANDLE} == int32_t{Code::kInvalidDnnHandle} &&
                  int32_t{HB_DNN_CAN_NOT_OPEN_FILE} == int32_t{Code::kCanNotOpenFile} &&
                  int32_t{HB_DNN_OUT_OF_MEMORY} == int32_t{Code::kOutOfMemory} && int32_t{HB_DNN_TIMEOUT} == int32_t{Code::kTimeout} &&
                  int32_t{HB_DNN_TASK_NUM_EXCEED_LIMIT} == int32_t{Code::kTaskNumExceedLimit} &&
                  int32_t{HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT} == int32_t{Code::kTaskBatchSizeExceedLimit} &&
                  int32_t{HB_DNN_INVALID_TASK_HANDLE} == int32_t{Code::kInvalidTaskHandle} &&
                  int32_t{HB_DNN_RUN_TASK_FAILED} == int32_t{Code::kRunTaskFailed} &&
                  int32_t{HB_DNN_MODEL_IS_RUNNING} == int32_t{Code::kModelIsRunning} &&
                  int32_t{HB_DNN_INCOMPATIBLE_MODEL} == int32_t{Code::kIncompatibleModel} &&
                  int32_t{HB_DNN_API_USE_ERROR} == int32_t{Code::kApiUseError} &&
                  int32_t{HB_DNN_MULTI_PROGRESS_USE_ERROR} == int32_t{Code::kMultiProgressUseError},
              "internal status codes must equal the public ones");
static_assert(sizeof(hbDNNTensorProperties) == 176 && sizeof(hbDNNTensor) == 272 &&
                  sizeof(hbDNNInferCtrlParam) == 32 && sizeof(hbSysMem) == 24,
              "struct layouts must match the vendor ABI (LP64)");

namespace openbpu::rt::capi {

int32_t fail(int32_t code, const std::string& msg, const char* file, int line) {
  if (::openbpu::log::enabled(::openbpu::log::Level::kError))
    ::openbpu::log::write(::openbpu::log::Level::kError, file, line, "%s", msg.c_str());
  return code;
}

ModelPin model_of(hbDNNHandle_t h) { return h == nullptr ? nullptr : Registry::get().model(h); }

void fill_properties(const TensorDesc& d, hbDNNTensorProperties* p) {
  std::memset(p, 0, sizeof(*p));
  p->validShape.numDimensions = d.rank();
  p->alignedShape.numDimensions = d.rank();
  for (int i = 0; i < d.rank() && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) {
    p->validShape.dimensionSize[i] = d.valid[static_cast<size_t>(i)];
    p->alignedShape.dimensionSize[i] = d.aligned[static_cast<size_t>(i)];
    p->stride[i] = i < static_cast<int>(d.strides.size())
                       ? static_cast<int32_t>(d.strides[static_cast<size_t>(i)])
                       : 0;
  }
  p->tensorLayout = d.layout;
  p->tensorType = d.data_type;
  p->quantiType = static_cast<hbDNNQuantiType>(d.quant.type);
  p->quantizeAxis = d.quant.axis;
  if (!d.quant.shifts.empty()) {
    p->shift.shiftLen = static_cast<int32_t>(d.quant.shifts.size());
    p->shift.shiftData = const_cast<uint8_t*>(d.quant.shifts.data());
  }
  if (!d.quant.scales.empty()) {
    p->scale.scaleLen = static_cast<int32_t>(d.quant.scales.size());
    p->scale.scaleData = const_cast<float*>(d.quant.scales.data());
  }
  if (!d.quant.zero_points.empty()) {
    p->scale.zeroPointLen = static_cast<int32_t>(d.quant.zero_points.size());
    p->scale.zeroPointData = const_cast<int8_t*>(d.quant.zero_points.data());
  }
  p->alignedByteSize = d.aligned_byte_size > std::numeric_limits<int32_t>::max()
                           ? std::numeric_limits<int32_t>::max()
                           : static_cast<int32_t>(d.aligned_byte_size);
}

namespace {

bool read_shape(const hbDNNTensorShape& s, std::vector<int32_t>* out) {
  if (s.numDimensions < 1 || s.numDimensions > HB_DNN_TENSOR_MAX_DIMENSIONS) return false;
  out->assign(s.dimensionSize, s.dimensionSize + s.numDimensions);
  return true;
}

}  // namespace

int32_t to_io(const hbDNNTensor& t, const char* what, size_t index, IoBuffer* io) {
  const std::string w = std::string(what) + " tensor " + std::to_string(index);
  if (!read_shape(t.properties.validShape, &io->valid) || !read_shape(t.properties.alignedShape, &io->aligned))
    return fail(HB_DNN_INVALID_ARGUMENT, w + ": numDimensions out of range 1..8");
  io->data[0] = static_cast<uint8_t*>(t.sysMem[0].virAddr);
  io->size[0] = t.sysMem[0].memSize;
  io->data[1] = static_cast<uint8_t*>(t.sysMem[1].virAddr);
  io->size[1] = t.sysMem[1].memSize;
  io->data_type = t.properties.tensorType;
  io->layout = t.properties.tensorLayout;
  return HB_DNN_SUCCESS;
}

}  // namespace openbpu::rt::capi

using namespace openbpu::rt::capi;  // NOLINT

namespace {

int32_t load(std::vector<std::unique_ptr<openbpu::rt::FileData>> files, hbPackedDNNHandle_t* out) {
  // A malformed environment variable fails every load (the log names it).
  if (const Status env = openbpu::rt::env_status(); !env.ok()) return env.code();
  openbpu::rt::profiler::start_from_env();
  std::unique_ptr<Pack> pack;
  const Status st = openbpu::rt::load_pack(std::move(files), &pack);
  if (!st.ok()) return st.code();
  *out = Registry::get().add_pack(std::move(pack));
  return HB_DNN_SUCCESS;
}

}  // namespace

OBPU_API char const* hbDNNGetVersion() {
  static const std::string v = std::to_string(HB_DNN_VERSION_MAJOR) + "." + std::to_string(HB_DNN_VERSION_MINOR) +
                               "." + std::to_string(HB_DNN_VERSION_PATCH) + "_(" OPENBPU_VERSION_STRING " HBRT)";
  return v.c_str();
}

OBPU_API int32_t hbDNNInitializeFromFiles(hbPackedDNNHandle_t* packedDNNHandle, char const** modelFileNames,
                                          int32_t modelFileCount) {
  if (packedDNNHandle == nullptr || modelFileNames == nullptr || modelFileCount <= 0)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNInitializeFromFiles: NULL argument or file count <= 0");
  *packedDNNHandle = nullptr;
  std::vector<std::unique_ptr<openbpu::rt::FileData>> files;
  for (int32_t i = 0; i < modelFileCount; ++i) {
    if (modelFileNames[i] == nullptr)
      return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNInitializeFromFiles: file name " + std::to_string(i) + " is NULL");
    std::unique_ptr<openbpu::rt::FileData> f;
    const Status st = openbpu::rt::FileData::open(modelFileNames[i], &f);
    if (!st.ok()) return st.code();
    files.push_back(std::move(f));
  }
  return load(std::move(files), packedDNNHandle);
}

OBPU_API int32_t hbDNNInitializeFromDDR(hbPackedDNNHandle_t* packedDNNHandle, const void** modelData,
                                        int32_t* modelDataLengths, int32_t modelDataCount) {
  if (packedDNNHandle == nullptr || modelData == nullptr || modelDataLengths == nullptr || modelDataCount <= 0)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNInitializeFromDDR: NULL argument or count <= 0");
  *packedDNNHandle = nullptr;
  std::vector<std::unique_ptr<openbpu::rt::FileData>> files;
  for (int32_t i = 0; i < modelDataCount; ++i) {
    if (modelData[i] == nullptr || modelDataLengths[i] <= 0)
      return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNInitializeFromDDR: model data " + std::to_string(i) +
                                               " is NULL or has length <= 0");
    std::unique_ptr<openbpu::rt::FileData> f;
    const Status st =
        openbpu::rt::FileData::copy(modelData[i], static_cast<size_t>(modelDataLengths[i]), &f);
    if (!st.ok()) return st.code();
    files.push_back(std::move(f));
  }
  return load(std::move(files), packedDNNHandle);
}

OBPU_API int32_t hbDNNRelease(hbPackedDNNHandle_t packedDNNHandle) {
  int live = 0;
  bool log_refusal = false;
  const Registry::Release r = packedDNNHandle == nullptr
                                  ? Registry::Release::kNotFound
                                  : Registry::get().release_pack(packedDNNHandle, &live, &log_refusal);
  if (r == Registry::Release::kNotFound)
    return fail(HB_DNN_INVALID_PACKED_DNN_HANDLE, "hbDNNRelease: invalid packed handle");
  if (r == Registry::Release::kRunning) {
    // Logged once per pack: applications retry in a loop.
    if (!log_refusal) return HB_DNN_MODEL_IS_RUNNING;
    return fail(HB_DNN_MODEL_IS_RUNNING, "hbDNNRelease: " + std::to_string(live) +
                                             " task(s) of this pack are not released yet (logged once per pack)");
  }
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetModelNameList(char const*** modelNameList, int32_t* modelNameCount,
                                       hbPackedDNNHandle_t packedDNNHandle) {
  if (modelNameList == nullptr || modelNameCount == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetModelNameList: NULL argument");
  const PackPin p = packedDNNHandle == nullptr ? nullptr : Registry::get().pack(packedDNNHandle);
  if (p == nullptr) return fail(HB_DNN_INVALID_PACKED_DNN_HANDLE, "hbDNNGetModelNameList: invalid packed handle");
  *modelNameList = const_cast<char const**>(p->name_list.data());
  *modelNameCount = static_cast<int32_t>(p->name_list.size());
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetModelHandle(hbDNNHandle_t* dnnHandle, hbPackedDNNHandle_t packedDNNHandle,
                                     char const* modelName) {
  if (dnnHandle == nullptr || modelName == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetModelHandle: NULL argument");
  if (packedDNNHandle == nullptr || !Registry::get().find_model(packedDNNHandle, modelName, dnnHandle))
    return fail(HB_DNN_INVALID_PACKED_DNN_HANDLE, "hbDNNGetModelHandle: invalid packed handle");
  if (*dnnHandle != nullptr) return HB_DNN_SUCCESS;
  return fail(HB_DNN_INVALID_ARGUMENT, std::string("hbDNNGetModelHandle: no model named '") + modelName + "'");
}

#define OBPU_GET_MODEL(fn, h)                                                  \
  const ModelPin m = model_of(h);                                              \
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, fn ": invalid model handle")

OBPU_API int32_t hbDNNGetInputCount(int32_t* inputCount, hbDNNHandle_t dnnHandle) {
  if (inputCount == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputCount: NULL argument");
  OBPU_GET_MODEL("hbDNNGetInputCount", dnnHandle);
  *inputCount = static_cast<int32_t>(m->inputs.size());
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetOutputCount(int32_t* outputCount, hbDNNHandle_t dnnHandle) {
  if (outputCount == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputCount: NULL argument");
  OBPU_GET_MODEL("hbDNNGetOutputCount", dnnHandle);
  *outputCount = static_cast<int32_t>(m->outputs.size());
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetInputName(char const** name, hbDNNHandle_t dnnHandle, int32_t inputIndex) {
  if (name == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputName: NULL argument");
  OBPU_GET_MODEL("hbDNNGetInputName", dnnHandle);
  if (inputIndex < 0 || inputIndex >= static_cast<int32_t>(m->inputs.size()))
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputName: input index out of range");
  *name = m->tensors[m->inputs[static_cast<size_t>(inputIndex)].tensor].name.c_str();
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetOutputName(char const** name, hbDNNHandle_t dnnHandle, int32_t outputIndex) {
  if (name == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputName: NULL argument");
  OBPU_GET_MODEL("hbDNNGetOutputName", dnnHandle);
  if (outputIndex < 0 || outputIndex >= static_cast<int32_t>(m->outputs.size()))
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputName: output index out of range");
  *name = m->tensors[m->outputs[static_cast<size_t>(outputIndex)].tensor].name.c_str();
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle,
                                               int32_t inputIndex) {
  if (properties == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputTensorProperties: NULL argument");
  OBPU_GET_MODEL("hbDNNGetInputTensorProperties", dnnHandle);
  if (inputIndex < 0 || inputIndex >= static_cast<int32_t>(m->inputs.size()))
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputTensorProperties: input index out of range");
  fill_properties(m->tensors[m->inputs[static_cast<size_t>(inputIndex)].tensor], properties);
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle,
                                                int32_t outputIndex) {
  if (properties == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputTensorProperties: NULL argument");
  OBPU_GET_MODEL("hbDNNGetOutputTensorProperties", dnnHandle);
  if (outputIndex < 0 || outputIndex >= static_cast<int32_t>(m->outputs.size()))
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputTensorProperties: output index out of range");
  fill_properties(m->tensors[m->outputs[static_cast<size_t>(outputIndex)].tensor], properties);
  return HB_DNN_SUCCESS;
}

namespace openbpu::rt::capi {

namespace {

int32_t check_ctrl(const hbDNNInferCtrlParam& p, CtrlParam* ctrl) {
  if (p.bpuCoreId < 0) return fail(HB_DNN_INVALID_ARGUMENT, "bpuCoreId must not be negative");
  if (p.priority < HB_DNN_PRIORITY_LOWEST || p.priority > HB_DNN_PRIORITY_HIGHEST)
    return fail(HB_DNN_INVALID_ARGUMENT, "priority " + std::to_string(p.priority) + " out of range 0..255");
  ctrl->core_mask = static_cast<uint32_t>(p.bpuCoreId);
  ctrl->priority = p.priority;
  ctrl->custom_id = p.customId;
  return HB_DNN_SUCCESS;
}

}  // namespace

int32_t submit_to_task(hbDNNTaskHandle_t* taskHandle, const char* fn, Model* m, const std::vector<RunBuffers>& runs,
                       const hbDNNInferCtrlParam& p) {
  std::shared_ptr<Task> task;
  if (*taskHandle != nullptr) {
    task = Registry::get().task(*taskHandle);
    if (!task)
      return fail(HB_DNN_INVALID_TASK_HANDLE,
                  std::string(fn) + ": *taskHandle is not a task (set it to NULL for a new task)");
  }
  CtrlParam ctrl;
  const int32_t rc = check_ctrl(p, &ctrl);
  if (rc != HB_DNN_SUCCESS) return rc;
  const bool is_new = !task;
  const Status st = submit_runs(&task, m, runs, ctrl, p.more != 0);
  if (!st.ok()) return st.code();
  if (is_new) *taskHandle = Registry::get().add_task(task);
  return HB_DNN_SUCCESS;
}

}  // namespace openbpu::rt::capi

OBPU_API int32_t hbDNNInfer(hbDNNTaskHandle_t* taskHandle, hbDNNTensor** output, hbDNNTensor const* input,
                            hbDNNHandle_t dnnHandle, hbDNNInferCtrlParam* inferCtrlParam) {
  if (taskHandle == nullptr || output == nullptr || *output == nullptr || input == nullptr ||
      inferCtrlParam == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNInfer: NULL argument");
  OBPU_GET_MODEL("hbDNNInfer", dnnHandle);
  std::vector<openbpu::rt::RunBuffers> run(1);
  run[0].inputs.resize(m->inputs.size());
  run[0].outputs.resize(m->outputs.size());
  int32_t rc = HB_DNN_SUCCESS;
  for (size_t i = 0; i < run[0].inputs.size(); ++i)
    if ((rc = to_io(input[i], "input", i, &run[0].inputs[i])) != HB_DNN_SUCCESS) return rc;
  for (size_t i = 0; i < run[0].outputs.size(); ++i)
    if ((rc = to_io((*output)[i], "output", i, &run[0].outputs[i])) != HB_DNN_SUCCESS) return rc;
  return submit_to_task(taskHandle, "hbDNNInfer", m.get(), run, *inferCtrlParam);
}

OBPU_API int32_t hbDNNSetTaskDoneCb(hbDNNTaskHandle_t taskHandle, hbDNNTaskDoneCb cb, void* userdata) {
  auto task = taskHandle == nullptr ? nullptr : Registry::get().task(taskHandle);
  if (!task) return fail(HB_DNN_INVALID_TASK_HANDLE, "hbDNNSetTaskDoneCb: invalid task handle");
  if (cb == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNSetTaskDoneCb: NULL callback");
  void* handle = taskHandle;
  return openbpu::rt::set_task_callback(task, [cb, handle, userdata](int32_t status) { cb(handle, status, userdata); })
      .code();
}

OBPU_API int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t taskHandle, int32_t timeout) {
  auto task = taskHandle == nullptr ? nullptr : Registry::get().task(taskHandle);
  if (!task) return fail(HB_DNN_INVALID_TASK_HANDLE, "hbDNNWaitTaskDone: invalid task handle");
  return openbpu::rt::wait_task(task.get(), timeout).code();
}

OBPU_API int32_t hbDNNReleaseTask(hbDNNTaskHandle_t taskHandle) {
  auto task = taskHandle == nullptr ? nullptr : Registry::get().take_task(taskHandle);
  if (!task) return fail(HB_DNN_INVALID_TASK_HANDLE, "hbDNNReleaseTask: invalid task handle");
  openbpu::rt::release_task(task);
  return HB_DNN_SUCCESS;
}

OBPU_API char const* hbDNNGetErrorDesc(int32_t errorCode) {
  switch (errorCode) {
    case HB_DNN_SUCCESS: return "success";
    case HB_DNN_INVALID_ARGUMENT: return "invalid argument";
    case HB_DNN_INVALID_MODEL: return "invalid model: the model data is damaged or malformed";
    case HB_DNN_MODEL_NUMBER_EXCEED_LIMIT: return "too many models loaded";
    case HB_DNN_INVALID_PACKED_DNN_HANDLE: return "invalid packed model handle";
    case HB_DNN_INVALID_DNN_HANDLE: return "invalid model handle";
    case HB_DNN_CAN_NOT_OPEN_FILE: return "cannot open the model file";
    case HB_DNN_OUT_OF_MEMORY: return "out of memory";
    case HB_DNN_TIMEOUT: return "timed out waiting for the task";
    case HB_DNN_TASK_NUM_EXCEED_LIMIT: return "too many live tasks (limit 32)";
    case HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT: return "too many model runs chained in one task (limit 255)";
    case HB_DNN_INVALID_TASK_HANDLE: return "invalid task handle";
    case HB_DNN_RUN_TASK_FAILED: return "task execution failed or was cancelled";
    case HB_DNN_MODEL_IS_RUNNING: return "the model still has tasks that are not released";
    case HB_DNN_INCOMPATIBLE_MODEL:
      return "incompatible model: built by another toolchain or for another BPU march";
    case HB_DNN_API_USE_ERROR: return "API used in the wrong order or way";
    case HB_DNN_MULTI_PROGRESS_USE_ERROR: return "multi-process usage error";
    case HB_SYS_INVALID_ARGUMENT: return "system memory: invalid argument";
    case HB_SYS_OUT_OF_MEMORY: return "system memory: out of memory";
    case HB_SYS_REGISTER_MEM_FAILED: return "system memory: registering external memory failed";
    default: return "unknown error code";
  }
}
