// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/mapper_log.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace openbpu::cvt {

namespace {

// %L as the vendor tool prints it: INFO, WARNING, ERROR, DEBUG.
class UpperLevel final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static const char* const kNames[] = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "OFF"};
    const char* n = kNames[static_cast<int>(msg.level)];
    dest.append(n, n + std::strlen(n));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<UpperLevel>(); }
};

std::unique_ptr<spdlog::formatter> make_formatter() {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<UpperLevel>('*').set_pattern("%Y-%m-%d %H:%M:%S,%e %* %v");
  return f;
}

class SpdLog final : public MapperLog {
 public:
  explicit SpdLog(const std::string& file) {
    auto console = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    console->set_level(spdlog::level::info);
    console->set_formatter(make_formatter());
    std::vector<spdlog::sink_ptr> sinks{console};
    if (!file.empty()) {
      try {
        auto f = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, true);
        f->set_level(spdlog::level::debug);
        f->set_formatter(make_formatter());
        sinks.push_back(f);
      } catch (const spdlog::spdlog_ex&) {
        // Unwritable directory: console only.
      }
    }
    logger_ = std::make_shared<spdlog::logger>("hb_mapper", sinks.begin(), sinks.end());
    logger_->set_level(spdlog::level::debug);
    logger_->flush_on(spdlog::level::debug);
    tty_ = isatty(STDOUT_FILENO) != 0;
  }
  void debug(const std::string& m) override { logger_->debug("{}", m); }
  void info(const std::string& m) override { logger_->info("{}", m); }
  void warn(const std::string& m) override { logger_->warn("{}", m); }
  void error(const std::string& m) override { logger_->error("{}", m); }
  void progress(size_t done, size_t total) override {
    if (!tty_ || total == 0) return;
    const int width = 40;
    const int filled = static_cast<int>(width * done / total);
    std::printf("\r%3zu%%|%s%s| %zu/%zu", done * 100 / total, std::string(static_cast<size_t>(filled), '#').c_str(),
                std::string(static_cast<size_t>(width - filled), ' ').c_str(), done, total);
    if (done == total) std::printf("\n");
    std::fflush(stdout);
  }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  bool tty_ = false;
};

}  // namespace

MapperLog* make_mapper_log(const std::string& file) { return new SpdLog(file); }

}  // namespace openbpu::cvt
