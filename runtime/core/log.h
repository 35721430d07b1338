// SPDX-License-Identifier: Apache-2.0
// Logging for libdnn and the tools. printf-style so that only log.cc pulls in
// spdlog. Level from HB_DNN_LOG_LEVEL (vendor scale: 0 none ... 3 warning
// (default) 4 error 5 fatal; lower numbers are more verbose: 1 debug, 2 info).
#ifndef OPENBPU_RUNTIME_CORE_LOG_H_
#define OPENBPU_RUNTIME_CORE_LOG_H_

namespace openbpu::log {

enum class Level { kDebug = 1, kInfo = 2, kWarn = 3, kError = 4, kFatal = 5 };

bool enabled(Level level);
void write(Level level, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// Overrides the environment (tools' --log_level).
void set_level(int vendor_level);

}  // namespace openbpu::log

#define OBPU_LOG(level, ...)                                                        \
  do {                                                                              \
    if (::openbpu::log::enabled(level))                                             \
      ::openbpu::log::write(level, __FILE__, __LINE__, __VA_ARGS__);                \
  } while (0)
#define OBPU_LOGD(...) OBPU_LOG(::openbpu::log::Level::kDebug, __VA_ARGS__)
#define OBPU_LOGI(...) OBPU_LOG(::openbpu::log::Level::kInfo, __VA_ARGS__)
#define OBPU_LOGW(...) OBPU_LOG(::openbpu::log::Level::kWarn, __VA_ARGS__)
#define OBPU_LOGE(...) OBPU_LOG(::openbpu::log::Level::kError, __VA_ARGS__)

#endif  // OPENBPU_RUNTIME_CORE_LOG_H_
