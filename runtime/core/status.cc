// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/status.h"

#include "runtime/core/log.h"

namespace openbpu::rt {

Status error(int32_t code, const std::string& message) {
  OBPU_LOGE("%s", message.c_str());
  return Status(code, message);
}

}  // namespace openbpu::rt
