// SPDX-License-Identifier: Apache-2.0
// hb_mapper logging: the console gets INFO and above as
// "YYYY-mm-dd HH:MM:SS,ms LEVEL message"; the log file
// (hb_mapper_<command>.log in the current directory) gets DEBUG and above.
#ifndef OPENBPU_CONVERTER_TOOLS_MAPPER_LOG_H_
#define OPENBPU_CONVERTER_TOOLS_MAPPER_LOG_H_

#include <string>

namespace openbpu::cvt {

class MapperLog {
 public:
  virtual ~MapperLog() = default;
  virtual void debug(const std::string& msg) = 0;
  virtual void info(const std::string& msg) = 0;
  virtual void warn(const std::string& msg) = 0;
  virtual void error(const std::string& msg) = 0;
  // Calibration progress (a bar on a terminal, nothing otherwise).
  virtual void progress(size_t done, size_t total) = 0;
};

// Console + file logger. An empty file name logs to the console only.
MapperLog* make_mapper_log(const std::string& file);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_TOOLS_MAPPER_LOG_H_
