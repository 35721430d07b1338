// SPDX-License-Identifier: Apache-2.0
#include "hrt_server/client.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "hrt_server/protocol.h"
#include "openbpu/version.h"

namespace openbpu::tools {

using namespace wire;

struct RemoteClient::Impl {
  event_base* base = nullptr;
  bufferevent* bev = nullptr;
  FrameParser parser;
  std::deque<std::string> frames;
  bool connected = false;
  bool timed_out = false;
  std::string net_error;
};

namespace {

void read_cb(bufferevent* bev, void* arg) {
  auto* im = static_cast<RemoteClient::Impl*>(arg);
  evbuffer* in = bufferevent_get_input(bev);
  uint8_t buf[65536];
  int n;
  while ((n = evbuffer_remove(in, buf, sizeof(buf))) > 0) {
    if (!im->parser.feed(buf, static_cast<size_t>(n))) {
      im->net_error = "bad frame from the server: " + im->parser.error();
      return;
    }
    std::string p;
    while (im->parser.next(&p)) im->frames.push_back(std::move(p));
  }
}

void event_cb(bufferevent*, short what, void* arg) {
  auto* im = static_cast<RemoteClient::Impl*>(arg);
  if (what & BEV_EVENT_CONNECTED) {
    im->connected = true;
  } else if (what & BEV_EVENT_EOF) {
    im->net_error = "the server closed the connection";
  } else if (what & BEV_EVENT_ERROR) {
    im->net_error = evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR());
  }
}

void timer_cb(evutil_socket_t, short, void* arg) { static_cast<RemoteClient::Impl*>(arg)->timed_out = true; }

std::string server_error(const Message* m) {
  const Error* e = m->body_as_Error();
  return "server: " + (e->message() ? e->message()->str() : std::string("error ")) + " (code " +
         std::to_string(e->code()) + ")";
}

}  // namespace

RemoteClient::RemoteClient() : impl_(new Impl) {}

RemoteClient::~RemoteClient() {
  close();
  delete impl_;
}

void RemoteClient::close() {
  if (impl_->bev != nullptr) bufferevent_free(impl_->bev);
  if (impl_->base != nullptr) event_base_free(impl_->base);
  impl_->bev = nullptr;
  impl_->base = nullptr;
  impl_->connected = false;
  impl_->frames.clear();
  impl_->parser = FrameParser();
}

bool RemoteClient::fail(const std::string& message) {
  error_ = message;
  return false;
}

bool RemoteClient::wait_for(const std::string& what, int timeout_s, bool (*done)(RemoteClient*)) {
  if (impl_->base == nullptr) return fail("not connected");
  impl_->timed_out = false;
  event* t = evtimer_new(impl_->base, timer_cb, impl_);
  const timeval tv{timeout_s, 0};
  evtimer_add(t, &tv);
  while (!done(this) && impl_->net_error.empty() && !impl_->timed_out) event_base_loop(impl_->base, EVLOOP_ONCE);
  event_free(t);
  if (done(this)) return true;
  if (!impl_->net_error.empty()) return fail(what + ": " + impl_->net_error);
  return fail(what + ": no answer from the server within " + std::to_string(timeout_s) + " s");
}

bool RemoteClient::open_connection(const std::string& host_port, int timeout_s) {
  close();
  timeout_s_ = timeout_s;
  impl_->net_error.clear();
  std::string host, err;
  uint16_t port = 0;
  if (!parse_host_port(host_port, &host, &port, &err)) return fail("--remote " + err);
  evutil_addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  evutil_addrinfo* ai = nullptr;
  const int rc = evutil_getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &ai);
  if (rc != 0 || ai == nullptr) return fail("cannot resolve '" + host + "': " + evutil_gai_strerror(rc));
  impl_->base = event_base_new();
  impl_->bev = bufferevent_socket_new(impl_->base, -1, BEV_OPT_CLOSE_ON_FREE);
  bufferevent_setcb(impl_->bev, read_cb, nullptr, event_cb, impl_);
  bufferevent_enable(impl_->bev, EV_READ | EV_WRITE);
  const int crc = bufferevent_socket_connect(impl_->bev, ai->ai_addr, static_cast<int>(ai->ai_addrlen));
  evutil_freeaddrinfo(ai);
  if (crc != 0) return fail("cannot connect to " + host_port);
  return wait_for("connecting to " + host_port, timeout_s, [](RemoteClient* c) { return c->impl_->connected; });
}

bool RemoteClient::connect_with_token(const std::string& host_port, const std::string& token, int timeout_s,
                                      RemoteInfo* info) {
  if (!open_connection(host_port, timeout_s)) return false;
  flatbuffers::FlatBufferBuilder b;
  const auto h = CreateHello(b, kProtocol, b.CreateString(token), b.CreateString("openbpu " OPENBPU_VERSION_STRING));
  b.Finish(CreateMessage(b, Body::Hello, h.Union()), MessageIdentifier());
  std::string payload;
  if (!request(frame(b), &payload, timeout_s)) return false;
  const Message* m = GetMessage(payload.data());
  if (m->body_type() != Body::Info) return fail("unexpected answer to the handshake");
  const Info* i = m->body_as_Info();
  info->protocol = i->protocol();
  info->server_version = i->server_version() ? i->server_version()->str() : "";
  info->dnn_version = i->dnn_version() ? i->dnn_version()->str() : "";
  if (const DeviceInfo* d = i->device()) {
    info->machine = d->machine() ? d->machine()->str() : "";
    info->system = d->system() ? d->system()->str() : "";
    info->sim_platform = d->sim_platform() ? d->sim_platform()->str() : "";
    info->cpus = d->cpus();
  }
  return true;
}

bool RemoteClient::connect(const std::string& host_port, const std::string& token_file, int timeout_s,
                           RemoteInfo* info) {
  std::string token, err;
  if (!read_token_file(token_file, &token, &err)) return fail(err);
  return connect_with_token(host_port, token, timeout_s, info);
}

bool RemoteClient::send_raw(const std::string& bytes) {
  if (impl_->bev == nullptr) return fail("not connected");
  if (!impl_->net_error.empty()) return fail(impl_->net_error);
  return bufferevent_write(impl_->bev, bytes.data(), bytes.size()) == 0 || fail("cannot send");
}

bool RemoteClient::receive(std::string* payload, int timeout_s) {
  if (!wait_for("waiting for the server", timeout_s, [](RemoteClient* c) { return !c->impl_->frames.empty(); }))
    return false;
  *payload = std::move(impl_->frames.front());
  impl_->frames.pop_front();
  return true;
}

// Sends a request and returns its verified answer; an Error answer fails.
// An empty frame only receives (the next file chunk).
bool RemoteClient::request(const std::string& f, std::string* payload, int timeout_s) {
  if ((!f.empty() && !send_raw(f)) || !receive(payload, timeout_s)) return false;
  std::string err;
  const Message* m = decode(*payload, &err);
  if (m == nullptr) return fail("bad answer from the server: " + err);
  if (m->body_type() == Body::Error) return fail(server_error(m));
  return true;
}

bool RemoteClient::info(RemoteInfo* info) {
  flatbuffers::FlatBufferBuilder b;
  b.Finish(CreateMessage(b, Body::InfoRequest, CreateInfoRequest(b).Union()), MessageIdentifier());
  std::string payload;
  if (!request(frame(b), &payload, timeout_s_)) return false;
  const Message* m = GetMessage(payload.data());
  if (m->body_type() != Body::Info) return fail("unexpected answer to an info request");
  info->protocol = m->body_as_Info()->protocol();
  info->server_version = m->body_as_Info()->server_version() ? m->body_as_Info()->server_version()->str() : "";
  info->dnn_version = m->body_as_Info()->dnn_version() ? m->body_as_Info()->dnn_version()->str() : "";
  return true;
}

bool RemoteClient::upload(const std::string& sha, uint64_t total, const std::string* bytes, const std::string* path) {
  flatbuffers::FlatBufferBuilder b;
  b.Finish(CreateMessage(b, Body::Query, CreateQuery(b, b.CreateString(sha)).Union()), MessageIdentifier());
  std::string payload;
  if (!request(frame(b), &payload, timeout_s_)) return false;
  const Message* m = GetMessage(payload.data());
  if (m->body_type() != Body::UploadStatus) return fail("unexpected answer to a query");
  if (m->body_as_UploadStatus()->complete()) return true;
  uint64_t offset = m->body_as_UploadStatus()->have();
  if (offset > total) offset = 0;
  int fd = -1;
  if (path != nullptr && (fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC)) < 0)
    return fail("cannot read '" + *path + "': " + std::strerror(errno));
  std::string chunk;
  bool ok = true;
  do {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, total - offset));
    if (bytes != nullptr) {
      chunk.assign(*bytes, static_cast<size_t>(offset), n);
    } else {
      chunk.resize(n);
      if (::pread(fd, &chunk[0], n, static_cast<off_t>(offset)) != static_cast<ssize_t>(n)) {
        ok = fail("cannot read '" + *path + "' (changed while uploading?)");
        break;
      }
    }
    flatbuffers::FlatBufferBuilder u;
    const auto data = u.CreateVector(reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size());
    const auto up = CreateUpload(u, u.CreateString(sha), total, offset, data);
    u.Finish(CreateMessage(u, Body::Upload, up.Union()), MessageIdentifier());
    if (!request(frame(u), &payload, timeout_s_)) {
      ok = false;
      break;
    }
    const Message* r = GetMessage(payload.data());
    if (r->body_type() != Body::UploadStatus) {
      ok = fail("unexpected answer to an upload");
      break;
    }
    offset += n;
    if (r->body_as_UploadStatus()->complete()) break;
    if (r->body_as_UploadStatus()->have() != offset) {
      ok = fail("the server holds " + std::to_string(r->body_as_UploadStatus()->have()) + " bytes, expected " +
                std::to_string(offset));
      break;
    }
  } while (offset < total);
  if (fd >= 0) ::close(fd);
  return ok;
}

bool RemoteClient::upload_file(const std::string& path, std::string* sha256) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return fail("'" + path + "' is not a readable file");
  std::string err;
  if (!sha256_file(path, sha256, &err)) return fail(err);
  return upload(*sha256, static_cast<uint64_t>(st.st_size), nullptr, &path);
}

bool RemoteClient::upload_bytes(const std::string& bytes, std::string* sha256) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  *sha256 = h.hex();
  return upload(*sha256, bytes.size(), &bytes, nullptr);
}

bool RemoteClient::run(const RemoteRun& r, RemoteResult* out) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<Option>> opts;
  for (const auto& [n, v] : r.options) opts.push_back(CreateOption(b, b.CreateString(n), b.CreateString(v)));
  std::vector<flatbuffers::Offset<flatbuffers::String>> models;
  for (const auto& m : r.models) models.push_back(b.CreateString(m));
  std::vector<flatbuffers::Offset<flatbuffers::String>> names;
  for (const auto& n : r.model_names) names.push_back(b.CreateString(n));
  // Absent (not empty) without names: the server then names models by hash.
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> model_names;
  if (!names.empty()) model_names = b.CreateVector(names);
  std::vector<flatbuffers::Offset<InputFile>> inputs;
  for (const auto& [sha, name] : r.inputs) inputs.push_back(CreateInputFile(b, b.CreateString(sha), b.CreateString(name)));
  const auto run = CreateRun(b, b.CreateString(r.mode), b.CreateVector(opts), b.CreateVector(models),
                             b.CreateVector(inputs), r.profile, model_names);
  b.Finish(CreateMessage(b, Body::Run, run.Union()), MessageIdentifier());
  std::string payload;
  if (!request(frame(b), &payload, r.wait_s)) return false;
  const Message* m = GetMessage(payload.data());
  if (m->body_type() != Body::RunResult) return fail("unexpected answer to a run");
  const RunResult* res = m->body_as_RunResult();
  out->exit_code = res->exit_code();
  out->out.assign(res->stdout_text() ? reinterpret_cast<const char*>(res->stdout_text()->data()) : "",
                  res->stdout_text() ? res->stdout_text()->size() : 0);
  out->err.assign(res->stderr_text() ? reinterpret_cast<const char*>(res->stderr_text()->data()) : "",
                  res->stderr_text() ? res->stderr_text()->size() : 0);
  out->files.clear();
  std::vector<uint64_t> sizes;
  if (res->files() != nullptr)
    for (const OutputFile* f : *res->files()) {
      if (f->kind() == nullptr || f->name() == nullptr) return fail("bad file list from the server");
      out->files.push_back({f->kind()->str(), f->name()->str(), std::string()});
      sizes.push_back(f->size());
    }
  for (size_t k = 0; k < out->files.size(); ++k) {
    while (out->files[k].data.size() < sizes[k]) {
      if (!request(std::string(), &payload, timeout_s_)) return false;
      const Message* c = GetMessage(payload.data());
      const FileChunk* ch = c->body_type() == Body::FileChunk ? c->body_as_FileChunk() : nullptr;
      if (ch == nullptr || ch->index() != k || ch->offset() != out->files[k].data.size() || ch->data() == nullptr ||
          ch->data()->size() > sizes[k] - ch->offset())
        return fail("file data out of order from the server");
      out->files[k].data.append(reinterpret_cast<const char*>(ch->data()->data()), ch->data()->size());
    }
  }
  return true;
}

}  // namespace openbpu::tools
