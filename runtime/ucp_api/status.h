// SPDX-License-Identifier: Apache-2.0
// The UCP generation's status codes: the runtime's internal statuses (the 1.x
// numbers, runtime/core/status.h) mapped to hbUCPStatus, and the logging
// helper of the UCP C API.
#ifndef OPENBPU_RUNTIME_UCP_API_STATUS_H_
#define OPENBPU_RUNTIME_UCP_API_STATUS_H_

#include <cstdint>
#include <string>

#include "runtime/core/status.h"

namespace openbpu::ucp {

// hbUCPStatus value of an internal status code.
int32_t to_ucp(int32_t internal_code);
inline int32_t to_ucp(const rt::Status& st) { return to_ucp(st.code()); }

// Logs "<msg>" at error level with the caller's source location and returns
// code.
int32_t fail(int32_t code, const std::string& msg, const char* file = __builtin_FILE(), int line = __builtin_LINE());

// Description of a UCP code (hbUCPGetErrorDesc, hbDNNGetErrorDesc).
const char* error_desc(int32_t code);

}  // namespace openbpu::ucp

#endif  // OPENBPU_RUNTIME_UCP_API_STATUS_H_
