// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/model_file.h"

#include <sys/stat.h>

#include "schema/format.h"
#include "schema/verify.h"
#include "schema/writer.h"

namespace openbpu::cvt {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool load_model_file(const std::string& path, LoadedFile* out, std::string* error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *error = "model file " + path + " does not exist";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = path + " is not a file";
    return false;
  }
  out->path = path;
  if (!model::read_file(path, &out->bytes, error)) return false;
  // The flatbuffer is read in place from the vector's (new-aligned) storage.
  static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 8, "model bytes must be 8-byte aligned");
  const uint8_t* p = out->bytes.data();
  switch (model::detect_file_kind(p, out->bytes.size())) {
    case model::FileKind::kVendorHorizon:
      *error = path + " was built by the Horizon/D-Robotics toolchain; OpenBPU reads only models built by its own "
                      "hb_mapper: convert the float model again with OpenBPU's hb_mapper makertbin";
      return false;
    case model::FileKind::kUnknown:
      *error = path + " is not an OpenBPU model file";
      return false;
    case model::FileKind::kOpenBpu:
      break;
  }
  std::string why;
  if (!model::unpack_model_file(p, out->bytes.size(), &out->file, &out->data, &why)) {
    *error = path + " is not a valid model file: " + why;
    return false;
  }
  return true;
}

bool load_bin_argument(const std::string& path, LoadedFile* out, std::string* error) {
  if (!has_model_suffix(path)) {
    *error = "model " + path + " is not a bin model";
    return false;
  }
  return load_model_file(path, out, error);
}

bool has_model_suffix(const std::string& path) { return ends_with(path, ".bin") || ends_with(path, ".hbm"); }

std::string strip_bin_suffix(const std::string& name) {
  return ends_with(name, ".bin") ? name.substr(0, name.size() - 4) : name;
}

std::string file_stem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = base.find('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

const fb::ModelT* find_model(const fb::ModelFileT& file, const std::string& name) {
  for (const auto& m : file.models)
    if (m->name == name) return m.get();
  return nullptr;
}

}  // namespace openbpu::cvt
