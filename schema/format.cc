// SPDX-License-Identifier: Apache-2.0
#include "schema/format.h"

#include <cstring>
#include <string_view>

namespace openbpu::model {

namespace {

void put16(uint8_t* p, uint16_t v) {
  for (int i = 0; i < 2; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

bool contains(const uint8_t* data, size_t size, std::string_view needle) {
  std::string_view hay(reinterpret_cast<const char*>(data), size);
  return hay.find(needle) != std::string_view::npos;
}

}  // namespace

void encode_header(const FileHeader& h, uint8_t out[kHeaderSize]) {
  std::memset(out, 0, kHeaderSize);
  std::memcpy(out, kMagic, sizeof(kMagic));
  put16(out + 8, h.format_major);
  put16(out + 10, h.format_minor);
  put32(out + 12, h.header_size);
  put64(out + 16, h.meta_offset);
  put64(out + 24, h.meta_size);
  put64(out + 32, h.data_offset);
  put64(out + 40, h.data_size);
  put64(out + 48, h.file_size);
}

FileKind detect_file_kind(const uint8_t* data, size_t size) {
  if (size >= sizeof(kMagic) && std::memcmp(data, kMagic, sizeof(kMagic)) == 0)
    return FileKind::kOpenBpu;
  // Vendor .bin files are one protobuf ModelProto whose BPU code sits in an
  // initializer named PACKED_HBM_MODEL and whose metadata names the hbdk
  // toolchain; bare .hbm blobs start with "HBM". Look at the first 64 MiB.
  const size_t window = size < (64u << 20) ? size : (64u << 20);
  if (contains(data, window, "PACKED_HBM_MODEL") || contains(data, window, "HBDK_VERSION") ||
      contains(data, window, "BUILDER_VERSION") || contains(data, window, "HBDK_RUNTIME_VERSION"))
    return FileKind::kVendorHorizon;
  if (size >= 3 && std::memcmp(data, "HBM", 3) == 0) return FileKind::kVendorHorizon;
  return FileKind::kUnknown;
}

bool parse_header(const uint8_t* data, size_t size, FileHeader* out, std::string* error,
                  Rejection* why) {
  if (why != nullptr) *why = Rejection::kInvalid;
  if (size < kHeaderSize) {
    *error = "file is too small for a model header (" + std::to_string(size) + " bytes)";
    return false;
  }
  if (std::memcmp(data, kMagic, sizeof(kMagic)) != 0) {
    *error = "bad magic: not an OpenBPU model file";
    return false;
  }
  FileHeader h;
  h.format_major = get16(data + 8);
  h.format_minor = get16(data + 10);
  h.header_size = get32(data + 12);
  h.meta_offset = get64(data + 16);
  h.meta_size = get64(data + 24);
  h.data_offset = get64(data + 32);
  h.data_size = get64(data + 40);
  h.file_size = get64(data + 48);
  if (h.format_major != kFormatMajor) {
    // Another major version is another toolchain's file, not a damaged one.
    *error = "unsupported model format version " + std::to_string(h.format_major) + "." +
             std::to_string(h.format_minor) + " (this runtime reads " + std::to_string(kFormatMajor) +
             ".x): " +
             (h.format_major > kFormatMajor
                  ? "the file was built by a newer OpenBPU toolchain; upgrade the runtime or rebuild "
                    "the model with the hb_mapper of this release"
                  : "the file was built by an older OpenBPU toolchain; rebuild the model with the "
                    "hb_mapper of this release");
    if (why != nullptr) *why = Rejection::kUnsupportedVersion;
    return false;
  }
  if (h.header_size != kHeaderSize) {
    *error = "bad header size " + std::to_string(h.header_size);
    return false;
  }
  if (h.file_size != size) {
    *error = "file size " + std::to_string(size) + " does not match the header (" +
             std::to_string(h.file_size) + " bytes): truncated or extended file";
    return false;
  }
  auto in_file = [size](uint64_t off, uint64_t len) {
    return off <= size && len <= size - off;
  };
  if (h.meta_offset < kHeaderSize || !in_file(h.meta_offset, h.meta_size) || h.meta_size < 8) {
    *error = "metadata range out of the file";
    return false;
  }
  // flatbuffers aligns scalars relative to the buffer start, up to 8 bytes
  // (verify.cc relies on it for [long] vectors).
  if (h.meta_offset % 8 != 0) {
    *error = "metadata offset " + std::to_string(h.meta_offset) + " is not 8-byte aligned";
    return false;
  }
  if (h.data_offset % kBlobAlign != 0 || !in_file(h.data_offset, h.data_size) ||
      (h.data_size != 0 && h.data_offset < h.meta_offset + h.meta_size)) {
    *error = "data section range out of the file or misaligned";
    return false;
  }
  *out = h;
  return true;
}

}  // namespace openbpu::model
