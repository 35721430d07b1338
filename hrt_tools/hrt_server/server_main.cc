// SPDX-License-Identifier: Apache-2.0
// hrt_server --port P --token_file F [options]: the board-side daemon of
// remote evaluation (docs/hrt_server.md).
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dnn/hb_dnn.h"
#include "hrt_server/server.h"
#include "openbpu/version.h"

namespace {

using openbpu::tools::ServerOptions;

void usage() {
  std::printf(
      "hrt_server (OpenBPU %s): runs hrt_model_exec for hosts (hrt_model_exec --remote, openbpu.RemoteSession)\n"
      "\n"
      "Usage: hrt_server --port=P --token_file=F [options]\n"
      "\n"
      "  --port=P            TCP port (0: a free port, printed)                       (required)\n"
      "  --token_file=F      access token file, readable by its owner only (chmod 600) (required)\n"
      "  --bind=ADDR         address to listen on                                      [0.0.0.0]\n"
      "  --cache_dir=D       cache of uploaded files and run folders  [$XDG_CACHE_HOME or ~/.cache/hrt_server]\n"
      "  --max_clients=N     connections served at once                                [32]\n"
      "  --timeout_s=S       idle read / blocked write limit of a connection            [300]\n"
      "  --run_timeout_s=S   limit of one run (perf adds perf_time)                     [600]\n"
      "  --max_file_mb=M     largest uploaded file                                      [1024]\n"
      "  --exec=PATH         hrt_model_exec to run          [hrt_model_exec next to hrt_server]\n"
      "  --exec_prefix=CMD   command prefix for hrt_model_exec (e.g. an emulator), repeatable\n"
      "  --port_file=F       write the port to F once listening\n"
      "  -v, --version       print the versions\n",
      OPENBPU_VERSION_STRING);
}

bool to_int(const std::string& name, const std::string& v, long lo, long hi, long* out) {
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < lo || x > hi) {
    std::fprintf(stderr, "ERROR: invalid value '%s' for flag '%s': must be in [%ld, %ld]\n", v.c_str(), name.c_str(),
                 lo, hi);
    return false;
  }
  *out = x;
  return true;
}

std::string default_cache() {
  const char* x = std::getenv("XDG_CACHE_HOME");
  if (x != nullptr && x[0] == '/') return std::string(x) + "/hrt_server";
  const char* h = std::getenv("HOME");
  return std::string(h != nullptr && h[0] == '/' ? h : "/tmp") + "/.cache/hrt_server";
}

std::string exe_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.find_last_of('/'));
}

// 0 run, 1 error, 2 help/version printed.
int parse(int argc, char** argv, ServerOptions* o) {
  bool port_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") return usage(), 2;
    if (a == "-v" || a == "--version") {
      std::printf("hrt_server %s, [DNN] Runtime version = %s\n", OPENBPU_VERSION_STRING, hbDNNGetVersion());
      return 2;
    }
    if (a.rfind("--", 0) != 0) {
      std::fprintf(stderr, "ERROR: unexpected argument '%s' (see --help)\n", a.c_str());
      return 1;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "ERROR: flag '%s' is missing its argument\n", name.c_str());
      return 1;
    }
    long v = 0;
    if (name == "port") {
      if (!to_int(name, value, 0, 65535, &v)) return 1;
      o->port = static_cast<int>(v), port_given = true;
    } else if (name == "token_file") {
      o->token_file = value;
    } else if (name == "bind") {
      o->bind = value;
    } else if (name == "cache_dir") {
      o->cache_dir = value;
    } else if (name == "max_clients") {
      if (!to_int(name, value, 1, 1024, &v)) return 1;
      o->max_clients = static_cast<int>(v);
    } else if (name == "timeout_s") {
      if (!to_int(name, value, 1, 86400, &v)) return 1;
      o->timeout_s = static_cast<int>(v);
    } else if (name == "run_timeout_s") {
      if (!to_int(name, value, 1, 604800, &v)) return 1;
      o->run_timeout_s = static_cast<int>(v);
    } else if (name == "max_file_mb") {
      if (!to_int(name, value, 1, 1 << 20, &v)) return 1;
      o->max_file_mb = static_cast<uint64_t>(v);
    } else if (name == "exec") {
      o->exec = value;
    } else if (name == "exec_prefix") {
      for (size_t p = 0; p < value.size();) {  // space separated words
        const size_t e = value.find(' ', p);
        const std::string w = value.substr(p, e == std::string::npos ? std::string::npos : e - p);
        if (!w.empty()) o->exec_prefix.push_back(w);
        if (e == std::string::npos) break;
        p = e + 1;
      }
    } else if (name == "port_file") {
      o->port_file = value;
    } else {
      std::fprintf(stderr, "ERROR: unknown command line flag '%s' (see --help)\n", name.c_str());
      return 1;
    }
  }
  if (!port_given || o->token_file.empty()) {
    std::fprintf(stderr, "ERROR: --port and --token_file are required (see --help)\n");
    return 1;
  }
  if (o->cache_dir.empty()) o->cache_dir = default_cache();
  if (o->exec.empty()) o->exec = exe_dir() + "/hrt_model_exec";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ServerOptions o;
  const int rc = parse(argc, argv, &o);
  if (rc != 0) return rc == 2 ? 0 : 1;
  return openbpu::tools::run_server(o);
}
