// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/mapper_log.h"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace openbpu::cvt {

namespace {

class SpdLog final : public MapperLog {
 public:
  explicit SpdLog(const std::string& file) {
    auto console = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    console->set_level(spdlog::level::info);
    console->set_pattern("%Y-%m-%d %H:%M:%S,%e %l %v");
    std::vector<spdlog::sink_ptr> sinks{console};
    if (!file.empty()) {
      try {
        auto f = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, true);
        f->set_level(spdlog::level::debug);
        f->set_pattern("%Y-%m-%d %H:%M:%S,%e %l %v");
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
