// SPDX-License-Identifier: Apache-2.0
#include "log.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>

#include "api.h"

namespace openbpu::tools {

namespace {

// perf threads may report concurrently; one lock keeps lines whole.
std::mutex g_log_mu;

void vlog(FILE* f, const char* tag, const char* fmt, va_list ap) {
  char msg[2048];
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  std::lock_guard<std::mutex> lk(g_log_mu);
  // Flush stdout first so that messages and results keep their order when
  // both streams go to the same terminal or file.
  std::fflush(stdout);
  std::fprintf(f, "[%s][hrt_model_exec] %s\n", tag, msg);
  std::fflush(f);
}

}  // namespace

void log_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(stderr, "E", fmt, ap);
  va_end(ap);
}

void log_warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(stderr, "W", fmt, ap);
  va_end(ap);
}

void log_info(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(stdout, "I", fmt, ap);
  va_end(ap);
}

std::string dnn_error(int32_t code) {
  return std::string(hbDNNGetErrorDesc(code)) + " (" + std::to_string(code) + ")";
}

}  // namespace openbpu::tools
