// SPDX-License-Identifier: Apache-2.0
#include "converter/writer/output_files.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

namespace openbpu::cvt {

namespace fs = std::filesystem;

namespace {

std::string stage_name(const std::string& prefix) { return "." + prefix + ".partial."; }

// Staging folders <dir>/.<prefix>.partial.<pid> whose process is gone.
void remove_stale_stages(const std::string& dir, const std::string& prefix) {
  const std::string head = stage_name(prefix);
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, head.size(), head) != 0) continue;
    const std::string pid = name.substr(head.size());
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;
    stale.push_back(it->path());
  }
  for (const auto& p : stale) fs::remove_all(p, ec);
}

}  // namespace

OutputFiles::~OutputFiles() {
  if (stage_.empty()) return;
  std::error_code ec;
  fs::remove_all(stage_, ec);
}

bool OutputFiles::open(const std::string& working_dir, const std::string& prefix, std::string* error) {
  std::error_code ec;
  fs::create_directories(working_dir, ec);
  if (ec) {
    *error = "model_parameters.working_dir: cannot create '" + working_dir + "': " + ec.message();
    return false;
  }
  remove_stale_stages(working_dir, prefix);
  const std::string stage = working_dir + "/" + stage_name(prefix) + std::to_string(::getpid());
  fs::remove_all(stage, ec);
  if (!fs::create_directory(stage, ec)) {
    *error = "model_parameters.working_dir: cannot create '" + stage + "': " +
             (ec ? ec.message() : std::string("it exists"));
    return false;
  }
  dir_ = working_dir;
  prefix_ = prefix;
  stage_ = stage;
  return true;
}

bool OutputFiles::commit(std::string* error) {
  std::error_code ec;
  std::vector<fs::path> staged;
  for (fs::directory_iterator it(stage_, ec), end; !ec && it != end; it.increment(ec)) staged.push_back(it->path());
  if (ec) {
    *error = "cannot list '" + stage_ + "': " + ec.message();
    return false;
  }
  for (const auto& p : staged) {
    const fs::path target = fs::path(dir_) / p.filename();
    // rename() replaces a file atomically; a folder must be empty to be replaced.
    if (fs::is_directory(p, ec) && fs::is_directory(fs::symlink_status(target, ec))) fs::remove_all(target, ec);
    fs::rename(p, target, ec);
    if (ec) {
      *error = "cannot move '" + p.string() + "' to '" + target.string() + "': " + ec.message();
      return false;
    }
  }
  return true;
}

}  // namespace openbpu::cvt
