// SPDX-License-Identifier: Apache-2.0
// The model file's fixed 64-byte header (little-endian), in front of the
// flatbuffer metadata and the aligned data section. See docs/model_format.md.
#ifndef OPENBPU_SCHEMA_FORMAT_H_
#define OPENBPU_SCHEMA_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace openbpu::model {

inline constexpr char kMagic[8] = {'O', 'B', 'P', 'U', 'M', 'D', 'L', '\0'};
inline constexpr uint16_t kFormatMajor = 1;
// Newest minor this code reads and writes; the writer uses the lowest minor
// that holds the file (kFormatMinorGenerations when it sets
// ModelFile.generation or desc), so older files keep their bytes.
inline constexpr uint16_t kFormatMinor = 1;
inline constexpr uint16_t kFormatMinorBase = 0;
inline constexpr uint16_t kFormatMinorGenerations = 1;
inline constexpr uint32_t kHeaderSize = 64;
inline constexpr uint64_t kBlobAlign = 64;

struct FileHeader {
  uint16_t format_major = kFormatMajor;
  uint16_t format_minor = kFormatMinorBase;
  uint32_t header_size = kHeaderSize;
  uint64_t meta_offset = 0;
  uint64_t meta_size = 0;
  uint64_t data_offset = 0;
  uint64_t data_size = 0;
  uint64_t file_size = 0;
};

void encode_header(const FileHeader& h, uint8_t out[kHeaderSize]);

enum class FileKind {
  kOpenBpu,        // starts with our magic
  kVendorHorizon,  // a Horizon/D-Robotics toolchain .bin / .hbm (protobuf + HBM)
  kUnknown,
};

// Classifies a file by its first bytes (and, for vendor files, the strings a
// vendor model always carries). Cheap; does not validate anything.
FileKind detect_file_kind(const uint8_t* data, size_t size);

// Why a file was rejected: damaged (or not a model file at all), or well
// formed but of a format or BPU instruction-set version this runtime does not
// read, i.e. built by another OpenBPU toolchain version (the loader reports
// that as HB_DNN_INCOMPATIBLE_MODEL).
enum class Rejection { kInvalid, kUnsupportedVersion };

// Parses and checks the header: magic, major version, header size, and that
// the metadata and data ranges lie inside `size` bytes (overflow-safe), the
// metadata 8-byte and the data section 64-byte aligned. Returns false with a
// message (and, when `why` is not null, the kind of rejection) otherwise.
bool parse_header(const uint8_t* data, size_t size, FileHeader* out, std::string* error,
                  Rejection* why = nullptr);

}  // namespace openbpu::model

#endif  // OPENBPU_SCHEMA_FORMAT_H_
