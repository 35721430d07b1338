// SPDX-License-Identifier: Apache-2.0
// Model files in the host model tools (hb_model_info, hb_pack, hb_perf,
// hb_model_modifier, hb_verifier): reading with messages that name the
// problem (missing, not a model file, built by the vendor's toolchain,
// damaged), and the tools' shared console/log conventions.
#ifndef OPENBPU_CONVERTER_TOOLS_MODEL_FILE_H_
#define OPENBPU_CONVERTER_TOOLS_MODEL_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "schema/model_generated.h"

namespace openbpu::cvt {

struct LoadedFile {
  std::string path;
  std::vector<uint8_t> bytes;  // the whole file
  fb::ModelFileT file;         // unpacked; BlobRefs relative to `data`
  std::vector<uint8_t> data;   // data section
};

// Reads, verifies and unpacks a model file.
bool load_model_file(const std::string& path, LoadedFile* out, std::string* error);

// A tool's model file argument: refused with "model <path> is not a bin
// model" without a model suffix, else load_model_file.
bool load_bin_argument(const std::string& path, LoadedFile* out, std::string* error);

// True when the path names a model file by its suffix (.bin or .hbm).
bool has_model_suffix(const std::string& path);

// Model name as the tools' -m options take it: a trailing ".bin" removed.
std::string strip_bin_suffix(const std::string& name);

// The file name without directories and without everything from its first
// '.' (hb_perf's and hb_pack's "model name" of a file).
std::string file_stem(const std::string& path);

// The model of a file with this name, nullptr when absent.
const fb::ModelT* find_model(const fb::ModelFileT& file, const std::string& name);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_TOOLS_MODEL_FILE_H_
