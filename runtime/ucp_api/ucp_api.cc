// SPDX-License-Identifier: Apache-2.0
// hobot/hb_ucp.h, hb_ucp_sys.h, hb_ucp_status.h: task scheduling, memory,
// versions and status texts of the UCP generation (libhbucp.so).
#include <cstdlib>
#include <string>

#include "bpu_sim/isa/march.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"
#include "openbpu/openbpu.h"
#include "runtime/c_api/handles.h"
#include "runtime/core/env.h"
#include "runtime/core/log.h"
#include "runtime/device/device_manager.h"
#include "runtime/device/memory.h"
#include "runtime/engine/engine.h"
#include "runtime/profiler/profiler.h"
#include "runtime/ucp_api/bridge.h"
#include "runtime/ucp_api/status.h"

namespace openbpu::ucp {

namespace {

using rt::capi::Registry;

// HB_UCP_LOG_LEVEL (or HB_NN_LOG_LEVEL, runtime/core/env.h): 0 trace .. 3
// warn (default) .. 6 never; our levels are the 1.x scale (0 none, 1 debug
// ... 5 fatal). A malformed value fails the first model load or allocation.
int apply_log_level() {
  const int l = rt::env().ucp_log_level;
  if (l < 0) return 0;
  log::set_level(l == 6 ? 0 : (l == 0 ? 1 : l));
  return 1;
}
const int kLogLevelApplied = apply_log_level();

// Simulated SoC names (docs/ucp.md): the board's device-tree model string
// with the simulator named, so that apps matching "S100"/"S100P" pick the
// right platform.
const char* soc_name(const isa::MarchInfo* m) {
  if (m == nullptr || m->march == isa::March::kNashE) return "D-Robotics RDK S100 (OpenBPU simulator, nash-e)";
  if (m->march == isa::March::kNashM) return "D-Robotics RDK S100P (OpenBPU simulator, nash-m)";
  static const std::string other = std::string("OpenBPU simulator (") + m->name + ")";
  return other.c_str();
}

std::shared_ptr<rt::Task> task_of(hbUCPTaskHandle_t h) {
  return h == nullptr ? nullptr : Registry::get().task(h);
}

// hbUCPSchedParam -> the engine's control: priorities 254 and 255 are the
// preemptive level; the backend must name the BPU (any core, or cores of the
// device); deviceId 0.
int32_t to_ctrl(const hbUCPSchedParam& p, rt::CtrlParam* ctrl) {
  if (p.priority < HB_UCP_PRIORITY_LOWEST || p.priority > HB_UCP_PRIORITY_HIGHEST)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbUCPSubmitTask: priority " + std::to_string(p.priority) +
                                             " out of range 0..255");
  if (p.deviceId != 0)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbUCPSubmitTask: deviceId " + std::to_string(p.deviceId) +
                                             " does not exist (one BPU device, 0)");
  const uint64_t bpu = HB_UCP_BPU_CORE_0 | HB_UCP_BPU_CORE_1 | HB_UCP_BPU_CORE_2 | HB_UCP_BPU_CORE_3;
  if (p.backend != HB_UCP_CORE_ANY && (p.backend & (bpu | HB_UCP_BPU_CORE_ANY)) == 0)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbUCPSubmitTask: op BPU has no proper backend, user expect " +
                                             std::to_string(p.backend) + " (no BPU core in the mask)");
  ctrl->core_mask = (p.backend & HB_UCP_BPU_CORE_ANY) != 0 ? 0u : static_cast<uint32_t>(p.backend & bpu);
  const isa::MarchInfo* march = rt::platform_march();
  const int cores = march == nullptr ? 1 : march->cores;
  if (ctrl->core_mask >> cores != 0)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbUCPSubmitTask: backend " + std::to_string(p.backend) +
                                             " names a BPU core the simulated " +
                                             (march == nullptr ? std::string("platform") : march->hw_name) +
                                             " does not have (" + std::to_string(cores) + " core(s))");
  ctrl->priority = p.priority >= 254 ? drv::kPreemptPriority : p.priority;
  ctrl->custom_id = p.customId;
  return HB_UCP_SUCCESS;
}

int32_t alloc(hbUCPSysMem* mem, uint64_t size, int32_t device_id, bool cached, const char* fn) {
  if (mem == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": NULL mem");
  mem->phyAddr = 0;
  mem->virAddr = nullptr;
  mem->memSize = 0;
  if (size == 0) return fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": size 0");
  if (device_id != 0)
    return fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": deviceId " + std::to_string(device_id) +
                                             " does not exist (one BPU device, 0)");
  drv::DmaBuffer b;
  const rt::Status st = rt::memory::allocate(size, cached, &b);
  if (st.code() == rt::kInvalidArgument) return fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": " + st.message());
  if (!st.ok()) return fail(HB_UCP_MEM_ALLOC_FAIL, std::string(fn) + ": " + st.message());
  mem->phyAddr = b.phy;
  mem->virAddr = b.vir;
  mem->memSize = size;
  return HB_UCP_SUCCESS;
}

}  // namespace

}  // namespace openbpu::ucp

using openbpu::ucp::fail;

OBPU_UCP_API const char* hbUCPGetVersion() {
  static const std::string v = std::to_string(HB_UCP_VERSION_MAJOR) + "." + std::to_string(HB_UCP_VERSION_MINOR) +
                               "." + std::to_string(HB_UCP_VERSION_PATCH);
  return v.c_str();
}

OBPU_UCP_API const char* hbUCPGetSocName() { return openbpu::ucp::soc_name(openbpu::rt::platform_march()); }

OBPU_UCP_API int32_t hbUCPSubmitTask(hbUCPTaskHandle_t taskHandle, hbUCPSchedParam* schedParam) {
  auto task = openbpu::ucp::task_of(taskHandle);
  if (!task) return fail(HB_UCP_TASK_HANDLE_INVALID, "hbUCPSubmitTask: invalid task handle");
  if (schedParam == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbUCPSubmitTask: NULL schedParam");
  openbpu::rt::CtrlParam ctrl;
  const int32_t rc = openbpu::ucp::to_ctrl(*schedParam, &ctrl);
  if (rc != HB_UCP_SUCCESS) return rc;
  if (openbpu::rt::task_started(task.get()))
    return fail(HB_UCP_API_USE_ERROR, "hbUCPSubmitTask: the task was submitted already");
  return openbpu::ucp::to_ucp(openbpu::rt::start_task(task, ctrl));
}

OBPU_UCP_API int32_t hbUCPWaitTaskDone(hbUCPTaskHandle_t taskHandle, int32_t timeout) {
  auto task = openbpu::ucp::task_of(taskHandle);
  if (!task) return fail(HB_UCP_TASK_HANDLE_INVALID, "hbUCPWaitTaskDone: invalid task handle");
  if (!openbpu::rt::task_started(task.get()))
    return fail(HB_UCP_API_USE_ERROR,
                "Should first call the `hbUCPSubmitTask` to the taskHandle before calling `hbUCPWaitTaskDone`");
  return openbpu::ucp::to_ucp(openbpu::rt::wait_task(task.get(), timeout));
}

OBPU_UCP_API int32_t hbUCPSetTaskDoneCb(hbUCPTaskHandle_t taskHandle, hbUCPTaskDoneCb taskDoneCb, void* userdata) {
  auto task = openbpu::ucp::task_of(taskHandle);
  if (!task) return fail(HB_UCP_TASK_HANDLE_INVALID, "hbUCPSetTaskDoneCb: invalid task handle");
  std::function<void(int32_t)> cb;
  if (taskDoneCb != nullptr) {
    void* handle = taskHandle;
    cb = [taskDoneCb, handle, userdata](int32_t status) {
      taskDoneCb(handle, openbpu::ucp::to_ucp(status), userdata);
    };
  }
  return openbpu::ucp::to_ucp(openbpu::rt::set_task_callback(task, cb));
}

OBPU_UCP_API int32_t hbUCPReleaseTask(hbUCPTaskHandle_t taskHandle) {
  auto task = taskHandle == nullptr ? nullptr : openbpu::rt::capi::Registry::get().take_task(taskHandle);
  if (!task) return fail(HB_UCP_TASK_HANDLE_INVALID, "hbUCPReleaseTask: invalid task handle");
  openbpu::rt::release_task(task);
  return HB_UCP_SUCCESS;
}

OBPU_UCP_API int32_t hbUCPMalloc(hbUCPSysMem* mem, uint64_t size, int32_t deviceId) {
  return openbpu::ucp::alloc(mem, size, deviceId, false, "hbUCPMalloc");
}

OBPU_UCP_API int32_t hbUCPMallocCached(hbUCPSysMem* mem, uint64_t size, int32_t deviceId) {
  return openbpu::ucp::alloc(mem, size, deviceId, true, "hbUCPMallocCached");
}

OBPU_UCP_API int32_t hbUCPMemFlush(hbUCPSysMem const* mem, int32_t flag) {
  if (mem == nullptr || mem->virAddr == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbUCPMemFlush: NULL memory");
  if (flag != HB_SYS_MEM_CACHE_INVALIDATE && flag != HB_SYS_MEM_CACHE_CLEAN)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbUCPMemFlush: unknown flag " + std::to_string(flag));
  const openbpu::rt::Status st = openbpu::rt::memory::flush(mem->virAddr, mem->memSize, flag == HB_SYS_MEM_CACHE_CLEAN);
  if (!st.ok()) return fail(HB_UCP_MEM_IS_INVALID, "hbUCPMemFlush: " + st.message());
  return HB_UCP_SUCCESS;
}

OBPU_UCP_API int32_t hbUCPFree(hbUCPSysMem* mem) {
  if (mem == nullptr || mem->virAddr == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbUCPFree: NULL memory");
  const openbpu::rt::Status st = openbpu::rt::memory::release(mem->virAddr);
  if (!st.ok()) return fail(HB_UCP_MEM_FREE_FAIL, "hbUCPFree: " + st.message());
  mem->phyAddr = 0;
  mem->virAddr = nullptr;
  mem->memSize = 0;
  return HB_UCP_SUCCESS;
}

OBPU_UCP_API char const* hbUCPGetErrorDesc(int32_t errorCode) { return openbpu::ucp::error_desc(errorCode); }

// openbpu/openbpu.h's profiler session (hrt_model_exec perf --profile_path),
// returning this generation's codes. The engine records the same task and
// node times for both generations.
OBPU_UCP_API int32_t obpuProfilerStart(char const* directory) {
  if (directory == nullptr || *directory == '\0')
    return fail(HB_UCP_INVALID_ARGUMENT, "obpuProfilerStart: NULL or empty directory");
  return openbpu::ucp::to_ucp(openbpu::rt::profiler::start(directory));
}

OBPU_UCP_API int32_t obpuProfilerSetRunningCondition(char const* modelName, int32_t coreId, int32_t frameCount,
                                                     int32_t threadNum, double runTimeMs, double fps,
                                                     double averageLatencyMs) {
  if (modelName == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "obpuProfilerSetRunningCondition: NULL model name");
  if (!openbpu::rt::profiler::enabled())
    return fail(HB_UCP_API_USE_ERROR, "obpuProfilerSetRunningCondition: no profiler session is open");
  openbpu::rt::profiler::set_running_condition(modelName, coreId, frameCount, threadNum, runTimeMs, fps,
                                               averageLatencyMs);
  return HB_UCP_SUCCESS;
}

OBPU_UCP_API int32_t obpuProfilerStop(void) { return openbpu::ucp::to_ucp(openbpu::rt::profiler::stop()); }
