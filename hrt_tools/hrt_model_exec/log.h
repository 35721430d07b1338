// SPDX-License-Identifier: Apache-2.0
// Console messages of hrt_model_exec. Results (model info, timings, perf
// summary) are plain lines on stdout that scripts parse; diagnostics carry a
// vendor-style "[E]/[W]/[I][hrt_model_exec]" tag, errors and warnings on
// stderr so that stdout stays parseable.
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_LOG_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_LOG_H_

#include <cstdint>
#include <string>

namespace openbpu::tools {

void log_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// "<libdnn description> (<code>)" for a HB_DNN_* / HB_SYS_* status.
std::string dnn_error(int32_t code);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_LOG_H_
