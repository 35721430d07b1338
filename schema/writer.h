// SPDX-License-Identifier: Apache-2.0
// Writing model files. Build a fb::ModelFileT (flatbuffers object API; see
// schema/model.fbs), put large blobs (BPU code, constants, CPU op weights)
// into the data section with add_blob(), then finish() gives the file bytes.
#ifndef OPENBPU_SCHEMA_WRITER_H_
#define OPENBPU_SCHEMA_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "schema/model_generated.h"

namespace openbpu::model {

class ModelFileWriter {
 public:
  // Appends a blob to the data section (64-byte aligned) and returns where.
  fb::BlobRef add_blob(const void* data, size_t size);
  fb::BlobRef add_blob(const std::vector<uint8_t>& bytes) {
    return add_blob(bytes.data(), bytes.size());
  }
  // Serializes header + metadata + data section. KeyValue vectors are sorted
  // by key as the schema requires.
  std::vector<uint8_t> finish(fb::ModelFileT* file);

 private:
  std::vector<uint8_t> data_;
};

// Writes bytes to `path` through a temporary file in the same directory and a
// rename, so a failure never leaves a partial file behind.
bool write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes,
                       std::string* error);

// Reads a whole file. Returns false with a message when it cannot.
bool read_file(const std::string& path, std::vector<uint8_t>* bytes, std::string* error);

// Unpacks a verified model file (verify_model_file) into the object API plus
// its data section, e.g. to pack or modify models. BlobRefs stay relative to
// `data_section`.
bool unpack_model_file(const uint8_t* data, size_t size, fb::ModelFileT* file,
                       std::vector<uint8_t>* data_section, std::string* error);

// Copies every blob a model references from `src_data` into `writer` and
// rewrites the model's BlobRefs to the new locations.
bool relocate_blobs(fb::ModelT* model, const std::vector<uint8_t>& src_data,
                    ModelFileWriter* writer, std::string* error);

// Packed files (hb_pack): several models in one file, marked with the
// tool_versions key kPackToolKey. A packed file is never packed again.
inline constexpr const char* kPackToolKey = "hb_pack";
bool is_packed(const fb::ModelFileT& file);
// Packs files of one model each into one file (every model's blobs
// relocated). Fails naming the problem: a damaged or packed input, two
// models of the same name, more models than a file may hold.
bool pack_model_files(const std::vector<std::vector<uint8_t>>& files, const std::string& pack_version,
                      std::vector<uint8_t>* out, std::string* error);

// Helpers to fill the object API.
void set_metadata(fb::ModelT* model, const std::string& key, const std::string& value);
std::string get_metadata(const fb::ModelT& model, const std::string& key);

}  // namespace openbpu::model

#endif  // OPENBPU_SCHEMA_WRITER_H_
