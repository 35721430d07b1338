// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/status.h"

#include "runtime/core/log.h"

namespace openbpu::rt {

Status error(int32_t code, const std::string& message, const char* file, int line) {
  if (::openbpu::log::enabled(::openbpu::log::Level::kError))
    ::openbpu::log::write(::openbpu::log::Level::kError, file, line, "%s", message.c_str());
  return Status(code, message);
}

}  // namespace openbpu::rt
