// SPDX-License-Identifier: Apache-2.0
#include "hrt_server/server.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <map>
#include <memory>
#include <set>

#include "dnn/hb_dnn.h"
#include "hrt_server/protocol.h"
#include "hrt_server/store.h"
#include "openbpu/version.h"

extern char** environ;

namespace openbpu::tools {

namespace {

using namespace wire;

constexpr size_t kLowWater = 1u << 20;      // refill the socket below this
constexpr size_t kFileChunk = 1u << 20;     // bytes per FileChunk frame
constexpr size_t kMaxConsole = 3u << 20;    // stdout / stderr kept per run (RunResult stays < kMaxFrame)
constexpr int kHandshakeS = 30;

void slog(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void slog(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "[hrt_server] ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

// hrt_model_exec options a client may pass; the file and path options are
// set by the server.
const std::set<std::string>& allowed_options() {
  static const std::set<std::string> s = {
      "model_name", "core_id", "roi_infer", "roi", "frame_count", "dump_intermediate", "enable_dump",
      "dump_precision", "hybrid_dequantize_process", "dump_format", "dump_txt_axis", "enable_cls_post_process",
      "perf_time", "thread_num", "dequantize_process", "remove_padding_process", "input_img_properties",
      "input_valid_shape", "input_stride"};
  return s;
}

struct Server;
struct Conn;

struct Job {
  Server* srv = nullptr;
  Conn* conn = nullptr;  // nullptr once the connection closed (orphan)
  pid_t pid = -1;
  std::string dir;
  int fds[2] = {-1, -1};       // stdout, stderr read ends
  event* evs[2] = {nullptr, nullptr};
  std::string text[2];
  bool truncated[2] = {false, false};
  event* timer = nullptr;
  int timeout_s = 0;
  bool exited = false, killed = false;
  int status = 0;
  ~Job();
};

struct Conn {
  Server* srv = nullptr;
  bufferevent* bev = nullptr;
  uint64_t id = 0;
  std::string peer;
  bool authed = false, closing = false;
  event* auth_timer = nullptr;
  FrameParser parser;
  std::unique_ptr<Job> job;  // running, or finished and streaming its files
  struct Send {
    std::string path;
    uint64_t size;
  };
  std::vector<Send> sends;
  size_t send_index = 0;
  uint64_t send_offset = 0;
  int send_fd = -1;
  bool streaming = false;
};

struct Server {
  ServerOptions opt;
  event_base* base = nullptr;
  evconnlistener* listener = nullptr;
  std::vector<event*> signals;
  BlobStore store;
  std::string token;
  std::map<uint64_t, Conn*> conns;
  std::map<pid_t, Job*> jobs;  // running children (owned by a Conn or orphaned)
  std::set<Job*> orphans;
  uint64_t next_id = 1;
  std::string info_frame;
};

Job::~Job() {
  for (int k = 0; k < 2; ++k) {
    if (evs[k] != nullptr) event_free(evs[k]);
    if (fds[k] >= 0) ::close(fds[k]);
  }
  if (timer != nullptr) event_free(timer);
  if (!dir.empty()) remove_tree(dir);
}

void close_conn(Conn* c);
void process_frames(Conn* c);

timeval seconds(int s) { return timeval{s, 0}; }

void send_frame(Conn* c, const std::string& f) { bufferevent_write(c->bev, f.data(), f.size()); }

// Sends an error; fatal errors close the connection once it is written.
void send_error(Conn* c, int32_t code, const std::string& message, bool fatal) {
  send_frame(c, error_frame(code, message));
  if (fatal) {
    c->closing = true;
    bufferevent_disable(c->bev, EV_READ);
  }
}

std::string build_info() {
  utsname u;
  std::memset(&u, 0, sizeof(u));
  ::uname(&u);
  const char* sim = std::getenv("HB_DNN_SIM_PLATFORM");
  flatbuffers::FlatBufferBuilder b;
  const auto dev = CreateDeviceInfo(b, b.CreateString(u.machine), b.CreateString(std::string(u.sysname) + " " + u.release),
                                    static_cast<uint32_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))),
                                    b.CreateString(sim != nullptr ? sim : ""));
  const auto info = CreateInfo(b, kProtocol, b.CreateString(OPENBPU_VERSION_STRING), b.CreateString(hbDNNGetVersion()), dev);
  b.Finish(CreateMessage(b, Body::Info, info.Union()), MessageIdentifier());
  return frame(b);
}

std::string upload_status(const std::string& sha, uint64_t have, bool complete) {
  flatbuffers::FlatBufferBuilder b;
  const auto s = CreateUploadStatus(b, b.CreateString(sha), have, complete);
  b.Finish(CreateMessage(b, Body::UploadStatus, s.Union()), MessageIdentifier());
  return frame(b);
}

// ---- runs -------------------------------------------------------------------

void finish_job(Conn* c) {
  c->job.reset();
  c->streaming = false;
  c->sends.clear();
  const timeval rt = seconds(c->srv->opt.timeout_s), wt = seconds(c->srv->opt.timeout_s);
  bufferevent_set_timeouts(c->bev, &rt, &wt);
  process_frames(c);
}

// Sends file chunks while the socket's output buffer is low.
void pump(Conn* c) {
  evbuffer* out = bufferevent_get_output(c->bev);
  std::string buf;
  while (c->streaming && evbuffer_get_length(out) < kLowWater) {
    if (c->send_index == c->sends.size()) {
      finish_job(c);
      return;
    }
    const Conn::Send& s = c->sends[c->send_index];
    if (c->send_offset == s.size) {
      if (c->send_fd >= 0) ::close(c->send_fd);
      c->send_fd = -1;
      ++c->send_index;
      c->send_offset = 0;
      continue;
    }
    if (c->send_fd < 0) c->send_fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    buf.resize(static_cast<size_t>(std::min<uint64_t>(kFileChunk, s.size - c->send_offset)));
    const ssize_t n = c->send_fd < 0 ? -1 : ::pread(c->send_fd, &buf[0], buf.size(), static_cast<off_t>(c->send_offset));
    if (n <= 0) {
      slog("connection %llu: cannot read run file '%s'", static_cast<unsigned long long>(c->id), s.path.c_str());
      close_conn(c);
      return;
    }
    flatbuffers::FlatBufferBuilder b;
    const auto data = b.CreateVector(reinterpret_cast<const uint8_t*>(buf.data()), static_cast<size_t>(n));
    const auto chunk = CreateFileChunk(b, static_cast<uint32_t>(c->send_index), c->send_offset, data);
    b.Finish(CreateMessage(b, Body::FileChunk, chunk.Union()), MessageIdentifier());
    send_frame(c, frame(b));
    c->send_offset += static_cast<uint64_t>(n);
  }
}

// Regular files of <run>/<sub>, sorted by name, named <prefix><name>.
void list_files(const std::string& dir, const std::string& sub, const std::string& prefix,
                std::vector<std::pair<std::string, Conn::Send>>* out) {
  DIR* d = ::opendir((dir + "/" + sub).c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) names.push_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const std::string p = dir + "/" + sub + "/" + n;
    struct stat st;
    if (::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      out->push_back({prefix + n, Conn::Send{p, static_cast<uint64_t>(st.st_size)}});
  }
}

void finish_run(Conn* c) {
  Job& j = *c->job;
  int code = 1;
  if (WIFEXITED(j.status)) code = WEXITSTATUS(j.status);
  else if (WIFSIGNALED(j.status)) code = 128 + WTERMSIG(j.status);
  if (j.killed) j.text[1] += "[hrt_server] the run was stopped after " + std::to_string(j.timeout_s) + " s\n";
  for (int k = 0; k < 2; ++k)
    if (j.truncated[k]) j.text[k] += "\n[hrt_server] output truncated to " + std::to_string(kMaxConsole) + " bytes\n";
  std::vector<std::pair<std::string, Conn::Send>> dumps, profiles;
  list_files(j.dir, "dump", "", &dumps);
  // --dump_intermediate's per-layer files (docs/hrt_model_exec.md).
  list_files(j.dir, "dump/intermediate", "intermediate/", &dumps);
  list_files(j.dir, "profile", "", &profiles);
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<OutputFile>> files;
  c->sends.clear();
  for (auto* list : {&dumps, &profiles})
    for (const auto& [name, send] : *list) {
      files.push_back(CreateOutputFile(b, b.CreateString(list == &dumps ? "dump" : "profile"), b.CreateString(name),
                                       send.size));
      c->sends.push_back(send);
    }
  const auto res = CreateRunResult(
      b, code, b.CreateVector(reinterpret_cast<const uint8_t*>(j.text[0].data()), j.text[0].size()),
      b.CreateVector(reinterpret_cast<const uint8_t*>(j.text[1].data()), j.text[1].size()), b.CreateVector(files));
  b.Finish(CreateMessage(b, Body::RunResult, res.Union()), MessageIdentifier());
  send_frame(c, frame(b));
  slog("connection %llu: run finished, exit code %d, %zu file(s)", static_cast<unsigned long long>(c->id), code,
       c->sends.size());
  c->send_index = 0;
  c->send_offset = 0;
  c->streaming = true;
  pump(c);
}

void maybe_finish(Job* j) {
  if (!j->exited || j->fds[0] >= 0 || j->fds[1] >= 0) return;
  if (j->conn == nullptr) {
    j->srv->orphans.erase(j);
    delete j;
    return;
  }
  finish_run(j->conn);
}

void pipe_cb(evutil_socket_t fd, short, void* arg) {
  Job* j = static_cast<Job*>(arg);
  const int k = fd == j->fds[0] ? 0 : 1;
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof(buf));
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    event_free(j->evs[k]);
    j->evs[k] = nullptr;
    ::close(j->fds[k]);
    j->fds[k] = -1;
    maybe_finish(j);
    return;
  }
  const size_t room = kMaxConsole - std::min(kMaxConsole, j->text[k].size());
  j->text[k].append(buf, std::min(room, static_cast<size_t>(n)));
  if (static_cast<size_t>(n) > room) j->truncated[k] = true;
}

void timeout_cb(evutil_socket_t, short, void* arg) {
  Job* j = static_cast<Job*>(arg);
  if (!j->exited && j->pid > 0) {
    ::kill(j->pid, SIGKILL);
    j->killed = true;
  }
}

void sigchld_cb(evutil_socket_t, short, void* arg) {
  Server* s = static_cast<Server*>(arg);
  int st = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &st, WNOHANG)) > 0) {
    auto it = s->jobs.find(pid);
    if (it == s->jobs.end()) continue;
    Job* j = it->second;
    s->jobs.erase(it);
    j->exited = true;
    j->status = st;
    maybe_finish(j);
  }
}

// The child's command line: the blobs and run-folder files replace paths.
bool build_argv(Conn* c, const Run& r, std::vector<std::string>* argv, int* timeout_s, std::string* error) {
  Server* s = c->srv;
  const Job& j = *c->job;
  if (r.options() != nullptr)
    for (const auto* o : *r.options())
      if (!allowed_options().count(o->name()->str())) {
        *error = "option '" + o->name()->str() + "' cannot be passed to the server (file and path options are the server's)";
        return false;
      }
  *argv = s->opt.exec_prefix;
  argv->push_back(s->opt.exec);
  argv->push_back(r.mode()->str());
  bool hbm = false;
  std::string models;
  for (flatbuffers::uoffset_t k = 0; k < r.models()->size(); ++k) {
    const std::string sha = r.models()->Get(k)->str();
    if (!s->store.has(sha)) {
      *error = "model " + sha + " is not on the server: upload it first";
      return false;
    }
    std::string path = s->store.blob_path(sha);
    if (r.model_names() != nullptr) {
      // m<k>_<name> keeps the extension hrt_model_exec hands .hbm models by.
      const std::string name = r.model_names()->Get(k)->str();
      hbm = hbm || (name.size() > 4 && name.compare(name.size() - 4, 4, ".hbm") == 0);
      path = "m" + std::to_string(k) + "_" + name;
      if (::symlink(s->store.blob_path(sha).c_str(), (j.dir + "/" + path).c_str()) != 0) {
        *error = "cannot prepare model '" + r.model_names()->Get(k)->str() + "': " + std::strerror(errno);
        return false;
      }
    }
    models += (models.empty() ? "" : ",") + path;
  }
  // .hbm models run on hrt_model_exec_ucp next to hrt_model_exec, the tool
  // a local hrt_model_exec hands them to (started here directly, so that
  // an exec_prefix emulator runs it too).
  if (hbm) (*argv)[s->opt.exec_prefix.size()] = s->opt.exec.substr(0, s->opt.exec.rfind('/') + 1) + "hrt_model_exec_ucp";
  argv->push_back("--model_file=" + models);
  std::string inputs;
  if (r.inputs() != nullptr)
    for (flatbuffers::uoffset_t k = 0; k < r.inputs()->size(); ++k) {
      const InputFile* in = r.inputs()->Get(k);
      if (!s->store.has(in->sha256()->str())) {
        *error = "input file '" + in->name()->str() + "' is not on the server: upload it first";
        return false;
      }
      // in<k>_<name> keeps the extension hrt_model_exec reads by.
      const std::string link = "in" + std::to_string(k) + "_" + in->name()->str();
      if (::symlink(s->store.blob_path(in->sha256()->str()).c_str(), (j.dir + "/" + link).c_str()) != 0) {
        *error = "cannot prepare input '" + in->name()->str() + "': " + std::strerror(errno);
        return false;
      }
      inputs += (inputs.empty() ? "" : ",") + link;
    }
  if (!inputs.empty()) argv->push_back("--input_file=" + inputs);
  *timeout_s = s->opt.run_timeout_s;
  if (r.options() != nullptr)
    for (const auto* o : *r.options()) {
      const std::string name = o->name()->str(), value = o->value()->str();
      if (name == "perf_time") *timeout_s += static_cast<int>(std::min(std::max(std::atol(value.c_str()), 0L), 10000L)) * 60;
      argv->push_back("--" + name + "=" + value);
    }
  if (r.mode()->str() == "infer") argv->push_back("--dump_path=dump");
  if (r.profile()) argv->push_back("--profile_path=profile");
  return true;
}

bool spawn(Conn* c, const std::vector<std::string>& args, std::string* error) {
  Job& j = *c->job;
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return *error = std::strerror(errno), false;
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    return *error = std::strerror(errno), false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, j.dir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> av;
  for (const std::string& a : args) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  const int rc = ::posix_spawnp(&j.pid, av[0], &fa, &attr, av.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]), ::close(err[0]);
    j.pid = -1;
    return *error = "cannot start " + args[0] + ": " + std::strerror(rc), false;
  }
  j.fds[0] = out[0];
  j.fds[1] = err[0];
  for (int k = 0; k < 2; ++k) {
    evutil_make_socket_nonblocking(j.fds[k]);
    j.evs[k] = event_new(c->srv->base, j.fds[k], EV_READ | EV_PERSIST, pipe_cb, &j);
    event_add(j.evs[k], nullptr);
  }
  j.timer = evtimer_new(c->srv->base, timeout_cb, &j);
  const timeval tv = seconds(j.timeout_s);
  evtimer_add(j.timer, &tv);
  c->srv->jobs[j.pid] = &j;
  return true;
}

void start_run(Conn* c, const Run& r) {
  c->job = std::make_unique<Job>();
  c->job->srv = c->srv;
  c->job->conn = c;
  std::string error;
  std::vector<std::string> args;
  if (!c->srv->store.make_run_dir(c->id, &c->job->dir, &error) ||
      !build_argv(c, r, &args, &c->job->timeout_s, &error) || !spawn(c, args, &error)) {
    c->job.reset();
    send_error(c, kBadRequest, error, false);
    return;
  }
  slog("connection %llu: %s run (pid %d)", static_cast<unsigned long long>(c->id), r.mode()->c_str(),
       static_cast<int>(c->job->pid));
  // The client waits for the run: no read timeout meanwhile.
  const timeval wt = seconds(c->srv->opt.timeout_s);
  bufferevent_set_timeouts(c->bev, nullptr, &wt);
}

// ---- requests ---------------------------------------------------------------

void handle_hello(Conn* c, const Hello& h) {
  if (c->authed) return send_error(c, kBadRequest, "already authenticated", false);
  if (h.protocol() != kProtocol)
    return send_error(c, kProtocolMismatch,
                      "protocol version " + std::to_string(h.protocol()) + " is not supported (the server speaks " +
                          std::to_string(kProtocol) + "): use tools of the same OpenBPU version",
                      true);
  if (!same_token(h.token()->str(), c->srv->token)) {
    slog("connection %llu from %s: wrong access token", static_cast<unsigned long long>(c->id), c->peer.c_str());
    return send_error(c, kUnauthorized, "access token refused", true);
  }
  c->authed = true;
  if (c->auth_timer != nullptr) event_del(c->auth_timer);
  send_frame(c, c->srv->info_frame);
}

void handle(Conn* c, const std::string& payload) {
  std::string error;
  const Message* m = decode(payload, &error);
  if (m == nullptr) {
    slog("connection %llu: %s; closing it", static_cast<unsigned long long>(c->id), error.c_str());
    return close_conn(c);
  }
  if (!c->authed && m->body_type() != Body::Hello) {
    slog("connection %llu: request before the handshake; closing it", static_cast<unsigned long long>(c->id));
    return close_conn(c);
  }
  if (!check_request(*m, &error)) return send_error(c, kBadRequest, error, !c->authed);
  switch (m->body_type()) {
    case Body::Hello: return handle_hello(c, *m->body_as_Hello());
    case Body::InfoRequest: return send_frame(c, c->srv->info_frame);
    case Body::Query: {
      bool complete = false;
      const std::string sha = m->body_as_Query()->sha256()->str();
      const uint64_t have = c->srv->store.held(sha, &complete);
      return send_frame(c, upload_status(sha, have, complete));
    }
    case Body::Upload: {
      const Upload* u = m->body_as_Upload();
      bool complete = false;
      const std::string sha = u->sha256()->str();
      const int32_t rc = c->srv->store.append(sha, u->total_size(), u->offset(), u->data() ? u->data()->data() : nullptr,
                                              u->data() ? u->data()->size() : 0, c->id,
                                              c->srv->opt.max_file_mb << 20, &complete, &error);
      if (rc != 0) return send_error(c, rc, error, false);
      bool done = false;
      return send_frame(c, upload_status(sha, c->srv->store.held(sha, &done), complete));
    }
    case Body::Run: return start_run(c, *m->body_as_Run());
    default: return send_error(c, kBadRequest, "not a request", false);
  }
}

void process_frames(Conn* c) {
  std::string payload;
  const uint64_t id = c->id;
  Server* s = c->srv;
  while (!c->closing && !c->job && c->parser.next(&payload)) {
    handle(c, payload);
    if (s->conns.count(id) == 0) return;  // closed: c is gone
  }
  if (!c->parser.error().empty()) {
    slog("connection %llu: %s; closing it", static_cast<unsigned long long>(id), c->parser.error().c_str());
    close_conn(c);
  }
}

// ---- connections ------------------------------------------------------------

void read_cb(bufferevent* bev, void* arg) {
  Conn* c = static_cast<Conn*>(arg);
  evbuffer* in = bufferevent_get_input(bev);
  uint8_t buf[65536];
  int n;
  while ((n = evbuffer_remove(in, buf, sizeof(buf))) > 0)
    if (!c->parser.feed(buf, static_cast<size_t>(n))) break;
  // Requests queued behind a run are bounded.
  if (c->parser.buffered() > 2u * kMaxFrame) {
    slog("connection %llu: too much data queued behind a run; closing it", static_cast<unsigned long long>(c->id));
    return close_conn(c);
  }
  process_frames(c);
}

void write_cb(bufferevent* bev, void* arg) {
  Conn* c = static_cast<Conn*>(arg);
  if (c->closing && evbuffer_get_length(bufferevent_get_output(bev)) == 0) return close_conn(c);
  if (c->streaming) pump(c);
}

void event_cb(bufferevent*, short what, void* arg) {
  Conn* c = static_cast<Conn*>(arg);
  if (what & BEV_EVENT_TIMEOUT)
    slog("connection %llu: timeout; closing it", static_cast<unsigned long long>(c->id));
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) close_conn(c);
}

void auth_timeout_cb(evutil_socket_t, short, void* arg) {
  Conn* c = static_cast<Conn*>(arg);
  slog("connection %llu from %s: no handshake; closing it", static_cast<unsigned long long>(c->id), c->peer.c_str());
  close_conn(c);
}

void close_conn(Conn* c) {
  Server* s = c->srv;
  if (c->job && !c->job->exited && c->job->pid > 0) {
    // The child is killed; the job is freed once it is reaped.
    ::kill(c->job->pid, SIGKILL);
    Job* j = c->job.release();
    j->conn = nullptr;
    s->orphans.insert(j);
  }
  c->job.reset();
  if (c->send_fd >= 0) ::close(c->send_fd);
  if (c->auth_timer != nullptr) event_free(c->auth_timer);
  s->store.release(c->id);
  bufferevent_free(c->bev);
  s->conns.erase(c->id);
  delete c;
}

std::string peer_name(const sockaddr* sa) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (sa->sa_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
    port = ntohs(a->sin_port);
  } else if (sa->sa_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
    port = ntohs(a->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

void accept_cb(evconnlistener*, evutil_socket_t fd, sockaddr* sa, int, void* arg) {
  Server* s = static_cast<Server*>(arg);
  Conn* c = new Conn;
  c->srv = s;
  c->id = s->next_id++;
  c->peer = peer_name(sa);
  c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
  if (c->bev == nullptr) {
    evutil_closesocket(fd);
    delete c;
    return;
  }
  size_t active = 0;
  for (const auto& [id, other] : s->conns) active += other->closing ? 0 : 1;
  s->conns[c->id] = c;
  bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
  const timeval rt = seconds(s->opt.timeout_s), wt = seconds(s->opt.timeout_s);
  bufferevent_set_timeouts(c->bev, &rt, &wt);
  bufferevent_setwatermark(c->bev, EV_WRITE, kLowWater / 2, 0);
  bufferevent_enable(c->bev, EV_READ | EV_WRITE);
  if (active >= static_cast<size_t>(s->opt.max_clients)) {
    slog("connection %llu from %s: refused, %zu clients connected", static_cast<unsigned long long>(c->id),
         c->peer.c_str(), active);
    return send_error(c, kBusy, "server busy: " + std::to_string(active) + " clients connected", true);
  }
  c->auth_timer = evtimer_new(s->base, auth_timeout_cb, c);
  const timeval hs = seconds(std::min(kHandshakeS, s->opt.timeout_s));
  evtimer_add(c->auth_timer, &hs);
}

void stop_cb(evutil_socket_t sig, short, void* arg) {
  slog("signal %d: stopping", static_cast<int>(sig));
  event_base_loopexit(static_cast<Server*>(arg)->base, nullptr);
}

bool listen_on(Server* s, std::string* error) {
  sockaddr_storage ss;
  std::memset(&ss, 0, sizeof(ss));
  int len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, s->opt.bind.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(s->opt.port));
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, s->opt.bind.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(s->opt.port));
    len = sizeof(sockaddr_in6);
  } else {
    *error = "--bind: '" + s->opt.bind + "' is not an IPv4 or IPv6 address";
    return false;
  }
  const std::string spec = s->opt.bind + " port " + std::to_string(s->opt.port);
  s->listener = evconnlistener_new_bind(s->base, accept_cb, s, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
                                        64, reinterpret_cast<sockaddr*>(&ss), len);
  if (s->listener == nullptr) {
    *error = "cannot listen on " + spec + ": " + std::strerror(errno);
    return false;
  }
  sockaddr_storage bound;
  socklen_t blen = sizeof(bound);
  ::getsockname(evconnlistener_get_fd(s->listener), reinterpret_cast<sockaddr*>(&bound), &blen);
  const int port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                               : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  std::printf("hrt_server %s listening on %s:%d (cache %s)\n", OPENBPU_VERSION_STRING, s->opt.bind.c_str(), port,
              s->store.root().c_str());
  std::fflush(stdout);
  if (!s->opt.port_file.empty()) {
    FILE* f = std::fopen(s->opt.port_file.c_str(), "w");
    if (f == nullptr || std::fprintf(f, "%d\n", port) < 0 || std::fclose(f) != 0) {
      *error = "cannot write --port_file '" + s->opt.port_file + "'";
      return false;
    }
  }
  return true;
}

void shutdown(Server* s) {
  while (!s->conns.empty()) close_conn(s->conns.begin()->second);
  // Reap the killed children, then free their jobs.
  for (const auto& [pid, job] : s->jobs) {
    int st = 0;
    ::waitpid(pid, &st, 0);
  }
  s->jobs.clear();
  for (Job* j : s->orphans) delete j;
  s->orphans.clear();
  if (s->listener != nullptr) evconnlistener_free(s->listener);
  for (event* e : s->signals) event_free(e);
  if (s->base != nullptr) event_base_free(s->base);
  libevent_global_shutdown();
}

}  // namespace

int run_server(const ServerOptions& opt) {
  Server s;
  s.opt = opt;
  std::string error;
  if (!read_token_file(opt.token_file, &s.token, &error) || !s.store.open(opt.cache_dir, &error)) {
    std::fprintf(stderr, "[hrt_server] ERROR: %s\n", error.c_str());
    return 1;
  }
  if (::access(opt.exec.c_str(), X_OK) != 0 && opt.exec_prefix.empty()) {
    std::fprintf(stderr, "[hrt_server] ERROR: --exec: '%s' is not an executable (hrt_model_exec)\n", opt.exec.c_str());
    return 1;
  }
  ::signal(SIGPIPE, SIG_IGN);
  s.info_frame = build_info();
  s.base = event_base_new();
  if (s.base == nullptr) {
    std::fprintf(stderr, "[hrt_server] ERROR: cannot create the event loop\n");
    return 1;
  }
  for (int sig : {SIGINT, SIGTERM}) s.signals.push_back(evsignal_new(s.base, sig, stop_cb, &s));
  s.signals.push_back(evsignal_new(s.base, SIGCHLD, sigchld_cb, &s));
  for (event* e : s.signals) event_add(e, nullptr);
  if (!listen_on(&s, &error)) {
    std::fprintf(stderr, "[hrt_server] ERROR: %s\n", error.c_str());
    shutdown(&s);
    return 1;
  }
  event_base_dispatch(s.base);
  shutdown(&s);
  return 0;
}

}  // namespace openbpu::tools
