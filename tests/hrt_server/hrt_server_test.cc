// SPDX-License-Identifier: Apache-2.0
// hrt_server on loopback: remote infer / perf / model_info equal local runs
// (and the independently computed expectation); 16 clients x 200 requests
// at once lose nothing; a wrong token or a loose token file is refused;
// oversized, truncated, malformed and random frames close only their own
// connection; the server stops cleanly on SIGTERM (under ASan: no leak).
// Each test starts its own server (gtest_discover_tests runs every test in
// its own process). Environment (defaults from the build): HRT_BIN (folder
// of hrt_server and hrt_model_exec), HRT_TESTDATA (the testgen models),
// HRT_EMULATOR (command prefix running target binaries, cross builds).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hrt_server/client.h"
#include "hrt_server/protocol.h"

extern char** environ;

namespace openbpu::tools {
namespace {

// The environment's value, else the build's.
std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v != nullptr) return v;
  const std::string n = name;
  return n == "HRT_BIN" ? HRT_BIN_DIR : n == "HRT_TESTDATA" ? HRT_TESTDATA_DIR : n == "HRT_EMULATOR" ? HRT_EMULATOR_CMD : "";
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Starts argv (through the emulator) with stdout/stderr to files.
pid_t start(std::vector<std::string> argv, const std::string& out, const std::string& err, const std::string& cwd) {
  std::vector<std::string> full = words(env("HRT_EMULATOR"));
  full.insert(full.end(), argv.begin(), argv.end());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  std::vector<char*> av;
  for (std::string& a : full) av.push_back(&a[0]);
  av.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, av[0], &fa, nullptr, av.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

int wait_exit(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// The names in a folder, sorted (checked here, not by a spawned ls: a cross
// build's spawns go through the emulator).
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Output {
  int code;
  std::string out, err;
};

Output run(const std::vector<std::string>& argv, const std::string& cwd) {
  const std::string o = cwd + "/.out", e = cwd + "/.err";
  const pid_t pid = start(argv, o, e, cwd);
  Output r{pid < 0 ? -1 : wait_exit(pid), slurp(o), slurp(e)};
  return r;
}

void write_token(const std::string& path, const std::string& token, mode_t mode) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, token.data(), token.size()), static_cast<ssize_t>(token.size()));
  ::fchmod(fd, mode);
  ::close(fd);
}

class Server : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = env("HRT_BIN");
    data_ = env("HRT_TESTDATA");
    ASSERT_FALSE(bin_.empty()) << "HRT_BIN not set";
    char tmpl[] = "/tmp/hrt_server_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    token_ = "0123456789abcdef-test-token";
    write_token(dir_ + "/token", token_ + "\n", 0600);
    std::vector<std::string> argv = {bin_ + "/hrt_server", "--port=0", "--bind=127.0.0.1", "--token_file=" + dir_ + "/token",
                                     "--cache_dir=" + dir_ + "/cache", "--port_file=" + dir_ + "/port",
                                     "--exec=" + bin_ + "/hrt_model_exec", "--max_clients=24", "--timeout_s=60"};
    if (!env("HRT_EMULATOR").empty()) argv.push_back("--exec_prefix=" + env("HRT_EMULATOR"));
    pid_ = start(argv, dir_ + "/server.out", dir_ + "/server.err", dir_);
    ASSERT_GT(pid_, 0);
    for (int i = 0; i < 600 && slurp(dir_ + "/port").find('\n') == std::string::npos; ++i) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "hrt_server exited: " << slurp(dir_ + "/server.err");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const std::string port = slurp(dir_ + "/port");
    ASSERT_NE(port.find('\n'), std::string::npos) << slurp(dir_ + "/server.err");
    addr_ = "127.0.0.1:" + port.substr(0, port.find('\n'));
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      EXPECT_EQ(wait_exit(pid_), 0) << slurp(dir_ + "/server.err");
      // Nothing left of the runs, nothing outside the cache's folders.
      EXPECT_TRUE(entries(dir_ + "/cache/runs").empty());
      EXPECT_EQ(entries(dir_ + "/cache"), (std::vector<std::string>{"blobs", "partial", "runs"}));
    }
    // In-process: spawning rm goes through the emulator prefix under qemu
    // and left the folders behind there.
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    EXPECT_FALSE(ec) << dir_ << ": " << ec.message();
  }

  bool connect(RemoteClient* c, RemoteInfo* info = nullptr) {
    RemoteInfo i;
    return c->connect(addr_, dir_ + "/token", 60, info != nullptr ? info : &i);
  }

  std::string exec() const { return bin_ + "/hrt_model_exec"; }

  std::string bin_, data_, dir_, token_, addr_;
  pid_t pid_ = -1;
};

// Removes what legitimately differs between two runs: timings (every
// decimal number).
std::string without_timings(const std::string& s) {
  static const std::regex kTime("[0-9]+\\.[0-9]+");
  return std::regex_replace(s, kTime, "<t>");
}

TEST_F(Server, HandshakeReportsDeviceAndVersion) {
  RemoteClient c;
  RemoteInfo info;
  ASSERT_TRUE(connect(&c, &info)) << c.error();
  EXPECT_EQ(info.protocol, wire::kProtocol);
  EXPECT_FALSE(info.server_version.empty());
  EXPECT_NE(info.dnn_version.find("HBRT"), std::string::npos);
  EXPECT_FALSE(info.machine.empty());
  EXPECT_GE(info.cpus, 1u);
  RemoteInfo again;
  ASSERT_TRUE(c.info(&again)) << c.error();
  EXPECT_EQ(again.dnn_version, info.dnn_version);
}

TEST_F(Server, RemoteInferEqualsLocalAndTheExpectation) {
  const std::vector<std::string> common = {exec(), "infer", "--model_file=" + data_ + "/tiny_cnn.bin",
                                           "--input_file=" + data_ + "/tiny_cnn_input.bin", "--enable_dump",
                                           "--hybrid_dequantize_process", "--frame_count=2"};
  std::vector<std::string> local = common, remote = common;
  local.push_back("--dump_path=local");
  remote.insert(remote.end(), {"--dump_path=remote", "--remote=" + addr_, "--token_file=" + dir_ + "/token"});
  const Output l = run(local, dir_), r = run(remote, dir_);
  ASSERT_EQ(l.code, 0) << l.err;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(without_timings(r.out), without_timings(l.out));
  EXPECT_EQ(r.err, l.err);
  const std::string expected = slurp(data_ + "/tiny_cnn_expected.bin");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(slurp(dir_ + "/remote/model_infer_output_0_output.bin"), expected);
  EXPECT_EQ(slurp(dir_ + "/local/model_infer_output_0_output.bin"), expected);
  EXPECT_EQ(slurp(dir_ + "/remote/model_infer_input_0_data.bin"), slurp(data_ + "/tiny_cnn_input.bin"));
  // The second run finds the files in the cache (nothing uploaded again).
  const Output r2 = run(remote, dir_);
  EXPECT_EQ(r2.code, 0) << r2.err;
  EXPECT_EQ(entries(dir_ + "/cache/blobs").size(), 2u);
}

// --dump_intermediate: the per-layer files, layer_mapping.txt and
// execution_order.txt come back into <dump_path>/intermediate/ as a local run
// writes them.
TEST_F(Server, RemoteLayerDumpEqualsLocal) {
  const std::vector<std::string> common = {exec(), "infer", "--model_file=" + data_ + "/tiny_cnn.bin",
                                           "--input_file=" + data_ + "/tiny_cnn_input.bin",
                                           "--dump_intermediate=2"};
  std::vector<std::string> local = common, remote = common;
  local.push_back("--dump_path=layers_local");
  remote.insert(remote.end(), {"--dump_path=layers_remote", "--remote=" + addr_, "--token_file=" + dir_ + "/token"});
  const Output l = run(local, dir_), r = run(remote, dir_);
  ASSERT_EQ(l.code, 0) << l.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> names = entries(dir_ + "/layers_local/intermediate");
  ASSERT_GT(names.size(), 2u);
  EXPECT_EQ(entries(dir_ + "/layers_remote/intermediate"), names);
  for (const std::string& n : names)
    EXPECT_EQ(slurp(dir_ + "/layers_remote/intermediate/" + n), slurp(dir_ + "/layers_local/intermediate/" + n)) << n;
}

TEST_F(Server, RemoteModelInfoAndPerfEqualLocal) {
  const std::vector<std::string> auth = {"--remote=" + addr_, "--token_file=" + dir_ + "/token"};
  std::vector<std::string> info = {exec(), "model_info", "--model_file=" + data_ + "/packed.bin"};
  const Output li = run(info, dir_);
  info.insert(info.end(), auth.begin(), auth.end());
  const Output ri = run(info, dir_);
  ASSERT_EQ(li.code, 0) << li.err;
  EXPECT_EQ(ri.code, 0) << ri.err;
  EXPECT_EQ(without_timings(ri.out), without_timings(li.out));
  std::vector<std::string> perf = {exec(), "perf", "--model_file=" + data_ + "/tiny_cnn.bin", "--frame_count=20",
                                   "--thread_num=2", "--profile_path=prof"};
  const Output lp = run(perf, dir_);
  run({"rm", "-rf", "prof"}, dir_);
  perf.insert(perf.end(), auth.begin(), auth.end());
  const Output rp = run(perf, dir_);
  ASSERT_EQ(lp.code, 0) << lp.err;
  ASSERT_EQ(rp.code, 0) << rp.err;
  EXPECT_EQ(without_timings(rp.out), without_timings(lp.out));
  EXPECT_NE(rp.out.find("  Frame count   is: 20\n"), std::string::npos) << rp.out;
  EXPECT_NE(slurp(dir_ + "/prof/profiler.log").find("***"), std::string::npos);
  // A failing run reports the server's error and exit code.
  std::vector<std::string> bad = {exec(), "infer", "--model_file=" + data_ + "/tiny_cnn.bin",
                                  "--input_file=" + data_ + "/tiny_cnn_expected.bin"};
  const Output lb = run(bad, dir_);
  bad.insert(bad.end(), auth.begin(), auth.end());
  const Output rb = run(bad, dir_);
  EXPECT_NE(lb.code, 0);
  EXPECT_EQ(rb.code, lb.code);
  EXPECT_NE(rb.err.find("[E][hrt_model_exec]"), std::string::npos) << rb.err;
}

// A .hbm model keeps its extension on the server, which runs it on
// hrt_model_exec_ucp as a local hrt_model_exec does; the UCP tool itself
// runs --remote the same way. (The local reference runs hrt_model_exec_ucp:
// hrt_model_exec's hand-over cannot run through a cross emulator.)
TEST_F(Server, RemoteHbmRunsEqualLocal) {
  const std::vector<std::string> auth = {"--remote=" + addr_, "--token_file=" + dir_ + "/token"};
  const std::string ucp = exec() + "_ucp";
  for (const std::string& tool : {exec(), ucp}) {
    const std::vector<std::string> args = {"infer", "--model_file=" + data_ + "/tiny_cnn.hbm",
                                           "--input_file=" + data_ + "/tiny_cnn_input.bin", "--enable_dump",
                                           "--frame_count=2"};
    std::vector<std::string> local = {ucp}, remote = {tool};
    local.insert(local.end(), args.begin(), args.end());
    remote.insert(remote.end(), args.begin(), args.end());
    local.push_back("--dump_path=hbm_local");
    remote.push_back("--dump_path=hbm_remote");
    remote.insert(remote.end(), auth.begin(), auth.end());
    const Output l = run(local, dir_), r = run(remote, dir_);
    ASSERT_EQ(l.code, 0) << l.err;
    ASSERT_EQ(r.code, 0) << tool << ": " << r.err;
    EXPECT_EQ(without_timings(r.out), without_timings(l.out)) << tool;
    const std::string expected = slurp(data_ + "/tiny_cnn_expected.bin");
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(slurp(dir_ + "/hbm_remote/model_infer_output_0_output.bin"), expected) << tool;
    EXPECT_EQ(slurp(dir_ + "/hbm_local/model_infer_output_0_output.bin"), expected) << tool;
    const Output li = run({ucp, "model_info", "--model_file=" + data_ + "/tiny_cnn.hbm"}, dir_);
    std::vector<std::string> info = {tool, "model_info", "--model_file=" + data_ + "/tiny_cnn.hbm"};
    info.insert(info.end(), auth.begin(), auth.end());
    const Output ri = run(info, dir_);
    ASSERT_EQ(li.code, 0) << li.err;
    EXPECT_EQ(ri.code, 0) << ri.err;
    EXPECT_EQ(without_timings(ri.out), without_timings(li.out)) << tool;
  }
}

TEST_F(Server, SixteenClientsTimesTwoHundredRequests) {
  const int kClients = 16, kRequests = 200;
  std::atomic<int> ok{0};
  std::vector<std::string> failures(kClients);
  std::string model_sha;
  {
    RemoteClient c;
    ASSERT_TRUE(connect(&c)) << c.error();
    ASSERT_TRUE(c.upload_file(data_ + "/tiny_cnn.bin", &model_sha)) << c.error();
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t)
    threads.emplace_back([&, t] {
      RemoteClient c;
      if (!connect(&c)) {
        failures[t] = "connect: " + c.error();
        return;
      }
      for (int i = 0; i < kRequests; ++i) {
        bool good = false;
        std::string sha;
        RemoteInfo info;
        if (i % 50 == 49) {
          RemoteRun r;
          r.mode = "model_info";
          r.models = {model_sha};
          RemoteResult res;
          good = c.run(r, &res) && res.exit_code == 0 && res.out.find("tiny_cnn") != std::string::npos;
        } else if (i % 3 == 0) {
          good = c.info(&info) && info.protocol == wire::kProtocol;
        } else {
          // Distinct and shared contents (the shared ones race between clients).
          const std::string bytes = i % 3 == 1 ? "client " + std::to_string(t) + " blob " + std::to_string(i)
                                               : "shared blob " + std::to_string(i % 7);
          good = c.upload_bytes(bytes, &sha) && wire::is_sha256_hex(sha);
        }
        if (!good) {
          failures[t] = "request " + std::to_string(i) + ": " + c.error();
          return;
        }
        ++ok;
      }
    });
  for (auto& th : threads) th.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
  EXPECT_EQ(ok.load(), kClients * kRequests);
}

TEST_F(Server, WrongTokenAndLooseTokenFilesAreRefused) {
  RemoteClient c;
  RemoteInfo info;
  EXPECT_FALSE(c.connect_with_token(addr_, "not-the-token-0123456789", 60, &info));
  EXPECT_NE(c.error().find("access token refused"), std::string::npos) << c.error();
  write_token(dir_ + "/loose", token_, 0644);
  EXPECT_FALSE(c.connect(addr_, dir_ + "/loose", 60, &info));
  EXPECT_NE(c.error().find("readable by its owner only"), std::string::npos) << c.error();
  write_token(dir_ + "/short", "short", 0600);
  EXPECT_FALSE(c.connect(addr_, dir_ + "/short", 60, &info));
  EXPECT_NE(c.error().find("characters"), std::string::npos) << c.error();
  const Output o = run({exec(), "model_info", "--model_file=x.bin", "--remote=" + addr_, "--token_file=" + dir_ + "/loose"},
                       dir_);
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("chmod 600"), std::string::npos) << o.err;
  // The server refuses to start with a loose token file.
  const Output s = run({bin_ + "/hrt_server", "--port=0", "--token_file=" + dir_ + "/loose", "--cache_dir=c2"}, dir_);
  EXPECT_EQ(s.code, 1);
  EXPECT_NE(s.err.find("chmod 600"), std::string::npos) << s.err;
  // The good token still works.
  ASSERT_TRUE(connect(&c)) << c.error();
}

std::string le32(uint32_t n) {
  return std::string{static_cast<char>(n & 255), static_cast<char>((n >> 8) & 255), static_cast<char>((n >> 16) & 255),
                     static_cast<char>(n >> 24)};
}

TEST_F(Server, BadFramesCloseOnlyTheirConnection) {
  RemoteClient good;
  ASSERT_TRUE(connect(&good)) << good.error();
  std::mt19937 rng(1234);
  std::vector<std::string> attacks = {
      le32(0xffffffffu) + "x",                        // oversized
      le32(wire::kMaxFrame + 1),                      // just above the limit
      le32(0),                                        // empty frame
      le32(100) + std::string(50, 'a'),               // truncated, then the client goes away
      le32(16) + std::string(16, '\0'),               // not a message
      le32(12) + std::string("xxxxOBRSxxxx"),         // identifier right, table wrong
  };
  for (int k = 0; k < 40; ++k) {
    std::string r(1 + rng() % 300, '\0');
    for (char& ch : r) ch = static_cast<char>(rng());
    attacks.push_back(r);
  }
  for (size_t k = 0; k < attacks.size(); ++k) {
    const std::string& a = attacks[k];
    const bool truncated = a.compare(0, 4, le32(100)) == 0;
    // Before the handshake (odd k) and after it (even k).
    RemoteClient raw;
    RemoteInfo info;
    if (k % 2 == 0) {
      ASSERT_TRUE(connect(&raw, &info)) << raw.error();
    } else {
      ASSERT_TRUE(raw.open_connection(addr_, 20)) << raw.error();
    }
    ASSERT_TRUE(raw.send_raw(a));
    std::string payload;
    if (truncated) {
      EXPECT_FALSE(raw.receive(&payload, 1));  // the server waits for the rest
      raw.close();                             // and the client leaves
      continue;
    }
    // An error answer may come first; then the connection is closed.
    bool closed = false;
    for (int i = 0; i < 3 && !closed; ++i) closed = !raw.receive(&payload, 20);
    EXPECT_TRUE(closed) << "the server kept a connection that sent " << a.size() << " bad bytes";
    EXPECT_NE(raw.error().find("closed"), std::string::npos) << raw.error();
  }
  // A request before the handshake closes the connection.
  {
    RemoteClient raw;
    ASSERT_TRUE(raw.open_connection(addr_, 20)) << raw.error();
    flatbuffers::FlatBufferBuilder b;
    b.Finish(wire::CreateMessage(b, wire::Body::InfoRequest, wire::CreateInfoRequest(b).Union()),
             wire::MessageIdentifier());
    ASSERT_TRUE(raw.send_raw(wire::frame(b)));
    std::string payload;
    EXPECT_FALSE(raw.receive(&payload, 20));
    EXPECT_NE(raw.error().find("closed"), std::string::npos) << raw.error();
  }
  // A request that is well formed but wrong gets an error and the
  // connection stays.
  std::string sha;
  EXPECT_FALSE(good.upload_file(dir_ + "/does-not-exist", &sha));
  RemoteRun run;
  run.mode = "infer";
  run.models = {std::string(64, 'a')};
  RemoteResult res;
  EXPECT_FALSE(good.run(run, &res));
  EXPECT_NE(good.error().find("is not on the server"), std::string::npos) << good.error();
  run.mode = "model_info";
  run.options = {{"model_file", "/etc/passwd"}};
  EXPECT_FALSE(good.run(run, &res));
  EXPECT_NE(good.error().find("cannot be passed"), std::string::npos) << good.error();
  run.options.clear();
  run.model_names = {"../x.hbm"};
  EXPECT_FALSE(good.run(run, &res));
  EXPECT_NE(good.error().find("plain file names"), std::string::npos) << good.error();
  run.model_names = {"a.hbm", "b.hbm"};
  EXPECT_FALSE(good.run(run, &res));
  EXPECT_NE(good.error().find("one model file name per model"), std::string::npos) << good.error();
  // The first client was never disturbed.
  RemoteInfo info;
  EXPECT_TRUE(good.info(&info)) << good.error();
}

}  // namespace
}  // namespace openbpu::tools
