// SPDX-License-Identifier: Apache-2.0
// Internal status: an HB_DNN_* / HB_SYS_* code plus a message. The numeric
// values equal the public ones (c_api static_asserts it); internal code does
// not include the public headers.
#ifndef OPENBPU_RUNTIME_CORE_STATUS_H_
#define OPENBPU_RUNTIME_CORE_STATUS_H_

#include <cstdint>
#include <string>
#include <utility>

namespace openbpu::rt {

enum Code : int32_t {
  kOk = 0,
  kInvalidArgument = -6000001,
  kInvalidModel = -6000002,
  kModelNumberExceedLimit = -6000003,
  kInvalidPackedHandle = -6000004,
  kInvalidDnnHandle = -6000005,
  kCanNotOpenFile = -6000006,
  kOutOfMemory = -6000007,
  kTimeout = -6000008,
  kTaskNumExceedLimit = -6000009,
  kTaskBatchSizeExceedLimit = -6000010,
  kInvalidTaskHandle = -6000011,
  kRunTaskFailed = -6000012,
  kModelIsRunning = -6000013,
  kIncompatibleModel = -6000014,
  kApiUseError = -6000015,
  kMultiProgressUseError = -6000016,
  kSysInvalidArgument = -6000129,
  kSysOutOfMemory = -6000130,
  kSysRegisterMemFailed = -6000131,
};

class Status {
 public:
  Status() = default;
  Status(int32_t code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == kOk; }
  int32_t code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  int32_t code_ = kOk;
  std::string message_;
};

// Logs the message at error level with the caller's source location (not
// this helper's) and returns the status.
Status error(int32_t code, const std::string& message, const char* file = __builtin_FILE(),
             int line = __builtin_LINE());

#define OBPU_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::openbpu::rt::Status _st = (expr);     \
    if (!_st.ok()) return _st;              \
  } while (0)

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CORE_STATUS_H_
