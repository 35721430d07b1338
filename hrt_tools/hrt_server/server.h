// SPDX-License-Identifier: Apache-2.0
// hrt_server: the board-side daemon a host drives over TCP
// (docs/hrt_server.md). One libevent loop serves every connection: the
// handshake (protocol version and access token), uploads into the
// content-addressed cache, device/version reports, and runs of
// hrt_model_exec (a child process per run, in its own folder of the cache,
// its console output and dump/profile files sent back).
#ifndef OPENBPU_HRT_TOOLS_HRT_SERVER_SERVER_H_
#define OPENBPU_HRT_TOOLS_HRT_SERVER_SERVER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::tools {

struct ServerOptions {
  std::string bind = "0.0.0.0";
  int port = 0;                  // 0: any free port (printed)
  std::string token_file;
  std::string cache_dir;
  int max_clients = 32;
  int timeout_s = 300;           // idle read / blocked write limit of a connection
  int run_timeout_s = 600;       // limit of one run (plus perf_time minutes)
  uint64_t max_file_mb = 1024;   // largest uploaded file
  std::string exec;              // hrt_model_exec (default: next to hrt_server)
  std::vector<std::string> exec_prefix;  // e.g. an emulator for cross-built tests
  std::string port_file;         // written with the port once listening
};

// Runs until SIGINT or SIGTERM; returns the process exit code.
int run_server(const ServerOptions& options);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_SERVER_SERVER_H_
