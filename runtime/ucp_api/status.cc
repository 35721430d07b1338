// SPDX-License-Identifier: Apache-2.0
#include "runtime/ucp_api/status.h"

#include "hobot/hb_ucp_status.h"
#include "runtime/core/log.h"

namespace openbpu::ucp {

int32_t to_ucp(int32_t c) {
  using namespace rt;  // NOLINT
  switch (c) {
    case kOk: return HB_UCP_SUCCESS;
    case kInvalidArgument:
    case kInvalidPackedHandle:
    case kInvalidDnnHandle:
    case kSysInvalidArgument: return HB_UCP_INVALID_ARGUMENT;
    case kInvalidModel: return HB_UCP_MODEL_INVALID;
    case kModelNumberExceedLimit: return HB_UCP_MODEL_NUMBER_EXCEED_LIMIT;
    case kCanNotOpenFile: return HB_UCP_FILE_OPEN_FAILED;
    case kOutOfMemory:
    case kSysOutOfMemory: return HB_UCP_MEM_ALLOC_FAIL;
    case kTimeout: return HB_UCP_TASK_TIMEOUT;
    case kTaskNumExceedLimit:
    case kTaskBatchSizeExceedLimit: return HB_UCP_TASK_NUMBER_EXCEED_LIMIT;
    case kInvalidTaskHandle: return HB_UCP_TASK_HANDLE_INVALID;
    case kRunTaskFailed: return HB_UCP_TASK_RUN_FAILED;
    case kModelIsRunning: return HB_UCP_MODEL_IS_INUSE;
    case kIncompatibleModel: return HB_UCP_MODEL_INCOMPATIBLE;
    case kApiUseError:
    case kMultiProgressUseError: return HB_UCP_API_USE_ERROR;
    default: return HB_UCP_UNKNOWN_ERROR;
  }
}

int32_t fail(int32_t code, const std::string& msg, const char* file, int line) {
  if (::openbpu::log::enabled(::openbpu::log::Level::kError))
    ::openbpu::log::write(::openbpu::log::Level::kError, file, line, "%s", msg.c_str());
  return code;
}

const char* error_desc(int32_t code) {
  switch (code) {
    case HB_UCP_SUCCESS: return "Success";
    case HB_UCP_INVALID_ARGUMENT: return "Invalid argument (a NULL pointer, a bad handle, index or value); see the error log";
    case HB_UCP_API_USE_ERROR: return "API used in the wrong order or way; see the error log";
    case HB_UCP_INIT_FAILED: return "UCP initialization failed; see the error log";
    case HB_UCP_UNKNOWN_ERROR: return "Unknown UCP error; see the error log";
    case HB_UCP_TASK_NUMBER_EXCEED_LIMIT: return "Too many tasks exist (limit 32): release finished tasks";
    case HB_UCP_TASK_TIMEOUT: return "The task did not finish within the timeout";
    case HB_UCP_TASK_RUN_FAILED: return "The task failed or was cancelled; see the error log";
    case HB_UCP_TASK_HANDLE_INVALID: return "Invalid task handle (never created, or released)";
    case HB_UCP_OP_NUMBER_EXCEED_LIMIT: return "Too many operators in one task";
    case HB_UCP_OP_NOT_REGISTER: return "Operator not registered";
    case HB_UCP_OP_CMD_UNAVAILABLE: return "Operator command unavailable";
    case HB_UCP_MEM_ALLOC_FAIL: return "Memory allocation failed";
    case HB_UCP_MEM_FREE_FAIL: return "Freeing memory failed: not allocated by hbUCPMalloc* or freed already";
    case HB_UCP_MEM_FLUSH_FAIL: return "Flushing memory failed";
    case HB_UCP_MEM_INVALIDATE_FAIL: return "Invalidating memory failed";
    case HB_UCP_MEM_IS_INVALID: return "The memory was not allocated by hbUCPMalloc*";
    case HB_UCP_MEM_MAP_FAIL: return "Mapping memory failed";
    case HB_UCP_MEM_UNMAP_FAIL: return "Unmapping memory failed";
    case HB_UCP_FILE_OPEN_FAILED: return "Cannot open the file";
    case HB_UCP_MODEL_NUMBER_EXCEED_LIMIT: return "Too many models";
    case HB_UCP_MODEL_INVALID: return "Invalid model: the model data is damaged or malformed";
    case HB_UCP_MODEL_IS_INUSE: return "The model still has tasks that are not released";
    case HB_UCP_MODEL_INCOMPATIBLE:
      return "Incompatible model: another generation, toolchain version or BPU march; see the error log";
    default: break;
  }
  if (code <= -700001 && code >= -700009) return "DSP error (no DSP backend in OpenBPU)";
  if (code <= -800001 && code >= -800006) return "Codec error (no codec backend in OpenBPU)";
  if (code == -900001 || code == -900002) return "ISP error (no ISP backend in OpenBPU)";
  return "Unknown error code";
}

}  // namespace openbpu::ucp
