// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/log.h"

#include "runtime/core/env.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace openbpu::log {

namespace {

std::atomic<int>& threshold() {
  static std::atomic<int> t{rt::env().log_level};  // HB_DNN_LOG_LEVEL
  return t;
}

spdlog::logger& logger() {
  // Messages go to stderr so tools' stdout stays parseable.
  static std::shared_ptr<spdlog::logger> l = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto lg = std::make_shared<spdlog::logger>("dnn", sink);
    lg->set_pattern("%v");
    lg->set_level(spdlog::level::trace);
    return lg;
  }();
  return *l;
}

const char* tag(Level l) {
  switch (l) {
    case Level::kDebug: return "D";
    case Level::kInfo: return "I";
    case Level::kWarn: return "W";
    case Level::kError: return "E";
    case Level::kFatal: return "F";
  }
  return "?";
}

}  // namespace

bool enabled(Level level) {
  const int t = threshold().load(std::memory_order_relaxed);
  return t != 0 && static_cast<int>(level) >= t;
}

void set_level(int vendor_level) { threshold().store(vendor_level); }

void write(Level level, const char* file, int line, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  // Vendor-style prefix: [E][DNN][file:line][Module](time) message
  logger().log(level >= Level::kError ? spdlog::level::err : spdlog::level::info,
               "[{}][DNN][{}:{}] {}", tag(level), base, line, msg);
}

}  // namespace openbpu::log
