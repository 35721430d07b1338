// SPDX-License-Identifier: Apache-2.0
#include "hrt_server/protocol.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace openbpu::tools::wire {

bool FrameParser::check_header() {
  if (buffered() < 4) return true;
  const auto* p = reinterpret_cast<const uint8_t*>(buf_.data() + pos_);
  const uint32_t n = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
  if (n == 0 || n > max_) {
    error_ = "frame of " + std::to_string(n) + " bytes (limit " + std::to_string(max_) + ")";
    return false;
  }
  return true;
}

bool FrameParser::feed(const uint8_t* data, size_t size) {
  if (!error_.empty()) return false;
  if (pos_ > 0 && pos_ == buf_.size()) buf_.clear(), pos_ = 0;
  buf_.append(reinterpret_cast<const char*>(data), size);
  return check_header();
}

bool FrameParser::next(std::string* payload) {
  if (!error_.empty() || buffered() < 4 || !check_header()) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(buf_.data() + pos_);
  const uint32_t n = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
  if (buffered() < 4 + static_cast<size_t>(n)) return false;
  payload->assign(buf_, pos_ + 4, n);
  pos_ += 4 + n;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > (1u << 20)) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  check_header();  // the next frame's header may already be here
  return true;
}

std::string frame(const flatbuffers::FlatBufferBuilder& b) {
  const uint32_t n = b.GetSize();
  std::string out(4 + n, '\0');
  out[0] = static_cast<char>(n & 0xff);
  out[1] = static_cast<char>((n >> 8) & 0xff);
  out[2] = static_cast<char>((n >> 16) & 0xff);
  out[3] = static_cast<char>((n >> 24) & 0xff);
  std::memcpy(&out[4], b.GetBufferPointer(), n);
  return out;
}

const Message* decode(const std::string& payload, std::string* error) {
  const auto* data = reinterpret_cast<const uint8_t*>(payload.data());
  if (payload.size() < 8 || !flatbuffers::BufferHasIdentifier(data, MessageIdentifier())) {
    *error = "not an hrt_server message (file identifier)";
    return nullptr;
  }
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 16;
  opts.max_tables = 1u << 16;
  flatbuffers::Verifier v(data, payload.size(), opts);
  if (!VerifyMessageBuffer(v)) {
    *error = "malformed message (flatbuffers verifier)";
    return nullptr;
  }
  const Message* m = GetMessage(data);
  if (m->body_type() == Body::NONE || m->body() == nullptr) {
    *error = "message without a body";
    return nullptr;
  }
  return m;
}

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

namespace {

bool fail(std::string* error, const std::string& m) {
  *error = m;
  return false;
}

bool hash_field(const flatbuffers::String* s, const char* what, std::string* error) {
  if (s == nullptr || !is_sha256_hex(s->str()))
    return fail(error, std::string(what) + ": sha256 must be 64 lowercase hex digits");
  return true;
}

// A plain file name: no directory, no NUL, not "." / "..".
bool file_name_ok(const flatbuffers::String* s) {
  if (s == nullptr || s->size() == 0 || s->size() > 255) return false;
  const std::string n = s->str();
  if (n == "." || n == ".." || n.find('/') != std::string::npos || n.find('\0') != std::string::npos) return false;
  return true;
}

bool check_run(const Run& r, std::string* error) {
  const std::string mode = r.mode() ? r.mode()->str() : "";
  if (mode != "model_info" && mode != "infer" && mode != "perf")
    return fail(error, "run: mode must be model_info, infer or perf");
  if (r.models() == nullptr || r.models()->size() == 0 || r.models()->size() > 64)
    return fail(error, "run: 1 to 64 model files");
  for (const auto* h : *r.models())
    if (!hash_field(h, "run: model", error)) return false;
  if (r.model_names() != nullptr) {
    if (r.model_names()->size() != r.models()->size()) return fail(error, "run: one model file name per model");
    for (const auto* n : *r.model_names())
      if (!file_name_ok(n)) return fail(error, "run: model file names are plain file names");
  }
  if (r.inputs() != nullptr) {
    if (r.inputs()->size() > 64) return fail(error, "run: at most 64 input files");
    for (const auto* in : *r.inputs()) {
      if (!hash_field(in->sha256(), "run: input", error)) return false;
      if (!file_name_ok(in->name())) return fail(error, "run: input file names are plain file names");
    }
  }
  if (r.options() != nullptr) {
    if (r.options()->size() > 64) return fail(error, "run: at most 64 options");
    for (const auto* o : *r.options()) {
      if (o->name() == nullptr || o->value() == nullptr || o->name()->size() == 0 || o->name()->size() > 64 ||
          o->value()->size() > 4096)
        return fail(error, "run: options need a name and a value (at most 4096 bytes)");
      for (char c : o->name()->str())
        if (!((c >= 'a' && c <= 'z') || c == '_' || (c >= '0' && c <= '9')))
          return fail(error, "run: option names are lowercase words");
      if (o->value()->str().find('\0') != std::string::npos) return fail(error, "run: option value holds a NUL");
    }
  }
  return true;
}

}  // namespace

bool check_request(const Message& m, std::string* error) {
  switch (m.body_type()) {
    case Body::Hello: {
      const Hello* h = m.body_as_Hello();
      if (h->token() == nullptr || h->token()->size() > kMaxTokenLength) return fail(error, "hello: no token");
      return true;
    }
    case Body::InfoRequest: return true;
    case Body::Query: return hash_field(m.body_as_Query()->sha256(), "query", error);
    case Body::Upload: {
      const Upload* u = m.body_as_Upload();
      if (!hash_field(u->sha256(), "upload", error)) return false;
      const uint64_t len = u->data() ? u->data()->size() : 0;
      if (u->offset() > u->total_size() || len > u->total_size() - u->offset())
        return fail(error, "upload: chunk beyond total_size");
      if (len == 0 && u->total_size() != 0) return fail(error, "upload: empty chunk");
      return true;
    }
    case Body::Run: return check_run(*m.body_as_Run(), error);
    default: return fail(error, std::string("'") + EnumNameBody(m.body_type()) + "' is not a request");
  }
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr); }
Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }
void Sha256::update(const void* data, size_t size) { EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, size); }
std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &n);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) out += kHex[md[i] >> 4], out += kHex[md[i] & 15];
  return out;
}

bool sha256_file(const std::string& path, std::string* hex, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(error, "cannot read '" + path + "': " + std::strerror(errno));
  Sha256 h;
  char buf[1 << 16];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) h.update(buf, static_cast<size_t>(n));
  const int err = errno;
  ::close(fd);
  if (n < 0) return fail(error, "cannot read '" + path + "': " + std::strerror(err));
  *hex = h.hex();
  return true;
}

bool read_token_file(const std::string& path, std::string* token, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return fail(error, "token file '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(error, "token file '" + path + "' is not a regular file");
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    ::close(fd);
    return fail(error, "token file '" + path + "' must belong to you and be readable by its owner only (chmod 600)");
  }
  std::string text(kMaxTokenLength + 2, '\0');
  const ssize_t n = ::read(fd, &text[0], text.size());
  ::close(fd);
  if (n < 0) return fail(error, "token file '" + path + "': " + std::strerror(errno));
  text.resize(static_cast<size_t>(n));
  text = text.substr(0, text.find('\n'));
  const size_t b = text.find_first_not_of(" \t\r");
  const size_t e = text.find_last_not_of(" \t\r");
  *token = b == std::string::npos ? "" : text.substr(b, e - b + 1);
  if (token->size() < kMinTokenLength || token->size() > kMaxTokenLength)
    return fail(error, "token file '" + path + "': the token must have " + std::to_string(kMinTokenLength) + " to " +
                           std::to_string(kMaxTokenLength) + " characters");
  return true;
}

bool same_token(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool parse_host_port(const std::string& text, std::string* host, uint16_t* port, std::string* error) {
  size_t colon;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return fail(error, "'" + text + "': expected [ipv6]:port");
    *host = text.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) return fail(error, "'" + text + "': expected HOST:PORT");
    *host = text.substr(0, colon);
  }
  const std::string p = text.substr(colon + 1);
  char* end = nullptr;
  const long v = std::strtol(p.c_str(), &end, 10);
  if (p.empty() || *end != '\0' || v < 1 || v > 65535) return fail(error, "'" + text + "': port must be 1..65535");
  *port = static_cast<uint16_t>(v);
  return true;
}

std::string error_frame(int32_t code, const std::string& message) {
  flatbuffers::FlatBufferBuilder b;
  const auto e = CreateError(b, code, b.CreateString(message));
  b.Finish(CreateMessage(b, Body::Error, e.Union()), MessageIdentifier());
  return frame(b);
}

}  // namespace openbpu::tools::wire
