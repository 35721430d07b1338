// SPDX-License-Identifier: Apache-2.0
// hrt_server's wire protocol, shared by the server, its clients
// (hrt_model_exec --remote, the Python binding) and the frame fuzz target:
// frames (4-byte little-endian length + flatbuffers Message of wire.fbs)
// with a hard size limit, message verification, the access token file and
// the SHA-256 names of the content-addressed cache. docs/hrt_server.md.
#ifndef OPENBPU_HRT_TOOLS_HRT_SERVER_PROTOCOL_H_
#define OPENBPU_HRT_TOOLS_HRT_SERVER_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "hrt_server/wire_generated.h"

namespace openbpu::tools::wire {

inline constexpr uint32_t kProtocol = 1;
// Hard limit of one frame's payload; larger data travels in chunks.
inline constexpr uint32_t kMaxFrame = 8u << 20;
inline constexpr uint32_t kChunk = 4u << 20;
inline constexpr size_t kMinTokenLength = 16;
inline constexpr size_t kMaxTokenLength = 4096;

// Error.code values.
enum ErrorCode : int32_t {
  kBadRequest = 1,    // a well-formed message the server cannot serve
  kUnauthorized = 2,  // wrong token: the connection is closed
  kProtocolMismatch = 3,
  kBusy = 4,          // too many clients: the connection is closed
  kNotFound = 5,      // unknown blob
  kTooLarge = 6,
  kInternal = 7,
};

// Splits a byte stream into frame payloads.
class FrameParser {
 public:
  explicit FrameParser(uint32_t max_frame = kMaxFrame) : max_(max_frame) {}
  // Appends received bytes. False once a frame header announces a payload
  // above the limit (or 0 bytes); the stream is then unusable.
  bool feed(const uint8_t* data, size_t size);
  // Moves the next complete payload into *payload; false when none is complete.
  bool next(std::string* payload);
  size_t buffered() const { return buf_.size() - pos_; }
  const std::string& error() const { return error_; }

 private:
  bool check_header();
  uint32_t max_;
  std::string buf_;
  size_t pos_ = 0;
  std::string error_;
};

// Length prefix + the finished builder's bytes.
std::string frame(const flatbuffers::FlatBufferBuilder& b);

// The verified Message of a payload (pointing into it), or nullptr with a
// reason: flatbuffers verifier, file identifier, missing body.
const Message* decode(const std::string& payload, std::string* error);

// Semantic checks of a client request beyond the verifier: required
// fields present, SHA-256 names well formed, sizes and file names sane.
bool check_request(const Message& m, std::string* error);

bool is_sha256_hex(const std::string& s);

// Streaming SHA-256 (OpenSSL), hex digest.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t size);
  std::string hex();  // finishes; call once

 private:
  void* ctx_;
};

// SHA-256 of a whole file; false with a message when it cannot be read.
bool sha256_file(const std::string& path, std::string* hex, std::string* error);

// Reads the access token: the file's first line without surrounding
// blanks. The file must be a regular file of the current user that nobody
// else may read or write (chmod 600), and the token at least
// kMinTokenLength characters.
bool read_token_file(const std::string& path, std::string* token, std::string* error);

// Constant-time comparison of two tokens.
bool same_token(const std::string& a, const std::string& b);

// "host:port" or "[v6]:port".
bool parse_host_port(const std::string& text, std::string* host, uint16_t* port, std::string* error);

// Builders of the messages both sides send.
std::string error_frame(int32_t code, const std::string& message);

}  // namespace openbpu::tools::wire

#endif  // OPENBPU_HRT_TOOLS_HRT_SERVER_PROTOCOL_H_
