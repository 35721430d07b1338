// SPDX-License-Identifier: Apache-2.0
// The host side of hrt_server (libevent): connect with the access token,
// upload files into the server's cache (skipped when it holds them,
// resumed when partly uploaded), run hrt_model_exec there and receive its
// console output and files. Used by hrt_model_exec --remote and the Python
// package. One client is one connection; use one per thread.
#ifndef OPENBPU_HRT_TOOLS_HRT_SERVER_CLIENT_H_
#define OPENBPU_HRT_TOOLS_HRT_SERVER_CLIENT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

struct event_base;
struct bufferevent;

namespace openbpu::tools {

struct RemoteInfo {
  uint32_t protocol = 0;
  std::string server_version, dnn_version;
  std::string machine, system, sim_platform;
  uint32_t cpus = 0;
};

struct RemoteFile {
  std::string kind;  // "dump" or "profile"
  std::string name;
  std::string data;
};

struct RemoteRun {
  std::string mode;                                          // model_info | infer | perf
  std::vector<std::pair<std::string, std::string>> options;  // hrt_model_exec options (not file/path ones)
  std::vector<std::string> models;                           // sha256 of uploaded model files
  std::vector<std::string> model_names;                      // their file names (optional; .hbm: UCP tool)
  std::vector<std::pair<std::string, std::string>> inputs;   // (sha256, file name)
  bool profile = false;                                      // return profiler.log / profiler.csv
  int wait_s = 900;                                          // how long to wait for the result
};

struct RemoteResult {
  int exit_code = 0;
  std::string out, err;
  std::vector<RemoteFile> files;
};

class RemoteClient {
 public:
  RemoteClient();
  ~RemoteClient();
  RemoteClient(const RemoteClient&) = delete;
  RemoteClient& operator=(const RemoteClient&) = delete;

  // Connects to "HOST:PORT", sends the token of token_file and reads the
  // server's Info. timeout_s bounds every wait for the server.
  bool connect(const std::string& host_port, const std::string& token_file, int timeout_s, RemoteInfo* info);
  // The same with the token given (tests).
  bool connect_with_token(const std::string& host_port, const std::string& token, int timeout_s, RemoteInfo* info);
  bool info(RemoteInfo* info);
  // Uploads a file or bytes unless the server holds them; *sha256 names them.
  bool upload_file(const std::string& path, std::string* sha256);
  bool upload_bytes(const std::string& bytes, std::string* sha256);
  bool run(const RemoteRun& run, RemoteResult* result);
  void close();

  // A TCP connection without the handshake, raw frames (tests of the
  // server's robustness).
  bool open_connection(const std::string& host_port, int timeout_s);
  bool send_raw(const std::string& bytes);
  bool receive(std::string* payload, int timeout_s);

  const std::string& error() const { return error_; }

  struct Impl;  // libevent state (client.cc)

 private:
  bool fail(const std::string& message);
  bool request(const std::string& frame, std::string* payload, int timeout_s);
  bool upload(const std::string& sha, uint64_t total, const std::string* bytes, const std::string* path);
  bool wait_for(const std::string& what, int timeout_s, bool (*done)(RemoteClient*));

  Impl* impl_;
  std::string error_;
  int timeout_s_ = 60;
};

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_SERVER_CLIENT_H_
