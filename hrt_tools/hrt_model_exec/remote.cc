// SPDX-License-Identifier: Apache-2.0
// --remote HOST:PORT: the same command on an hrt_server. The model and
// input files are uploaded (once: the server keeps them by content), the
// server runs its hrt_model_exec with the other options, and its console
// output, exit code, dump files (into --dump_path or the current folder)
// and profiler files (into --profile_path) come back as if the run were
// local.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "dump.h"
#include "hrt_server/client.h"
#include "log.h"

namespace openbpu::tools {

namespace {

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The server names a file plainly or, for --dump_intermediate's per-layer
// files, intermediate/<name>; nothing else may reach outside the folder.
bool valid_name(const std::string& name, std::string* sub) {
  static const std::string kLayers = "intermediate/";
  std::string base = name;
  sub->clear();
  if (name.compare(0, kLayers.size(), kLayers) == 0) {
    *sub = kLayers.substr(0, kLayers.size() - 1);
    base = name.substr(kLayers.size());
  }
  return !base.empty() && base != "." && base != ".." && base.find('/') == std::string::npos;
}

bool write_file(const std::string& dir, const RemoteFile& f) {
  std::string sub;
  if (!valid_name(f.name, &sub)) {
    log_error("the server sent a file named '%s': not written", f.name.c_str());
    return false;
  }
  const std::string folder = sub.empty() ? dir : dir.empty() ? sub : dir + "/" + sub;
  bool existed = false;
  if (!folder.empty() && !make_dirs(folder, &existed)) return false;
  const std::string path = dir.empty() ? f.name : dir + "/" + f.name;
  FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) {
    log_error("cannot write '%s': %s", path.c_str(), std::strerror(errno));
    return false;
  }
  const bool ok = std::fwrite(f.data.data(), 1, f.data.size(), out) == f.data.size();
  if (std::fclose(out) != 0 || !ok) {
    log_error("cannot write '%s'", path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int run_remote(const Options& opt, const char* mode) {
  RemoteClient client;
  RemoteInfo info;
  constexpr int kTimeoutS = 60;
  if (!client.connect(opt.remote, opt.token_file, kTimeoutS, &info)) {
    log_error("--remote %s: %s", opt.remote.c_str(), client.error().c_str());
    return 1;
  }
  RemoteRun run;
  run.mode = mode;
  run.options = passed_options(opt);
  run.profile = !opt.profile_path.empty();
  // perf may run for perf_time minutes on the board.
  run.wait_s = 900 + (opt.perf_time > 0 ? opt.perf_time * 60 : 0);
  for (const std::string& f : split_list(opt.model_file, ',')) {
    std::string sha;
    if (!client.upload_file(f, &sha)) {
      log_error("model file '%s': %s", f.c_str(), client.error().c_str());
      return 1;
    }
    run.models.push_back(sha);
    run.model_names.push_back(base_name(f));
  }
  for (const std::string& f : split_list(opt.input_file, ',')) {
    std::string sha;
    if (!client.upload_file(f, &sha)) {
      log_error("input file '%s': %s", f.c_str(), client.error().c_str());
      return 1;
    }
    run.inputs.emplace_back(sha, base_name(f));
  }
  RemoteResult res;
  if (!client.run(run, &res)) {
    log_error("--remote %s: %s", opt.remote.c_str(), client.error().c_str());
    return 1;
  }
  std::fwrite(res.out.data(), 1, res.out.size(), stdout);
  std::fflush(stdout);
  std::fwrite(res.err.data(), 1, res.err.size(), stderr);
  for (const RemoteFile& f : res.files)
    if (!write_file(f.kind == "profile" ? opt.profile_path : opt.dump_path, f)) return 1;
  return res.exit_code;
}

}  // namespace openbpu::tools
