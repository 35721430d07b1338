// SPDX-License-Identifier: Apache-2.0
#include "bpu_driver/device.h"

namespace openbpu::drv {

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kOutOfMemory: return "out of memory";
    case Status::kInvalidProgram: return "invalid program";
    case Status::kFault: return "device fault";
    case Status::kTimeout: return "function call timeout";
    case Status::kCancelled: return "cancelled";
  }
  return "unknown";
}

}  // namespace openbpu::drv
