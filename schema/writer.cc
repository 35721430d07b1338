// SPDX-License-Identifier: Apache-2.0
#include "schema/writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schema/format.h"
#include "schema/verify.h"

namespace openbpu::model {

namespace {

void sort_key_values(std::vector<std::unique_ptr<fb::KeyValueT>>* kv) {
  std::stable_sort(kv->begin(), kv->end(),
                   [](const auto& a, const auto& b) { return a->key < b->key; });
}

}  // namespace

fb::BlobRef ModelFileWriter::add_blob(const void* data, size_t size) {
  const size_t offset = (data_.size() + kBlobAlign - 1) / kBlobAlign * kBlobAlign;
  data_.resize(offset + size);
  if (size != 0) std::memcpy(data_.data() + offset, data, size);
  return fb::BlobRef(offset, size);
}

std::vector<uint8_t> ModelFileWriter::finish(fb::ModelFileT* file) {
  sort_key_values(&file->tool_versions);
  for (auto& m : file->models) sort_key_values(&m->metadata);

  flatbuffers::FlatBufferBuilder fbb(1 << 16);
  fbb.Finish(fb::ModelFile::Pack(fbb, file), fb::ModelFileIdentifier());

  FileHeader h;
  if (file->generation != fb::Generation::A || !file->desc.empty()) h.format_minor = kFormatMinorGenerations;
  h.meta_offset = kHeaderSize;
  h.meta_size = fbb.GetSize();
  h.data_offset = (h.meta_offset + h.meta_size + kBlobAlign - 1) / kBlobAlign * kBlobAlign;
  h.data_size = data_.size();
  h.file_size = h.data_offset + h.data_size;

  std::vector<uint8_t> out(h.file_size, 0);
  encode_header(h, out.data());
  std::memcpy(out.data() + h.meta_offset, fbb.GetBufferPointer(), h.meta_size);
  if (!data_.empty()) std::memcpy(out.data() + h.data_offset, data_.data(), data_.size());
  return out;
}

bool write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes,
                       std::string* error) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "cannot write " + tmp + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot write " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool read_file(const std::string& path, std::vector<uint8_t>* bytes, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = path + " is not a regular file";
    ::close(fd);
    return false;
  }
  bytes->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes->size()) {
    const ssize_t n = ::read(fd, bytes->data() + done, bytes->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != bytes->size()) {
    *error = "short read on " + path;
    return false;
  }
  return true;
}

bool unpack_model_file(const uint8_t* data, size_t size, fb::ModelFileT* file,
                       std::vector<uint8_t>* data_section, std::string* error) {
  FileHeader h;
  if (!verify_model_file(data, size, &h, error)) return false;
  const auto* root = fb::GetModelFile(data + h.meta_offset);
  root->UnPackTo(file);
  data_section->assign(data + h.data_offset, data + h.data_offset + h.data_size);
  return true;
}

bool relocate_blobs(fb::ModelT* model, const std::vector<uint8_t>& src_data,
                    ModelFileWriter* writer, std::string* error) {
  auto move_blob = [&](fb::BlobRef* ref) {
    if (ref->offset() > src_data.size() || ref->size() > src_data.size() - ref->offset()) {
      *error = "blob out of the data section";
      return false;
    }
    *ref = writer->add_blob(src_data.data() + ref->offset(), ref->size());
    return true;
  };
  for (auto& t : model->tensors)
    if (t->constant && !move_blob(t->constant.get())) return false;
  for (auto& seg : model->segments) {
    if (auto* bpu = seg->kind.AsBpuProgram()) {
      if (bpu->code && !move_blob(bpu->code.get())) return false;
      if (bpu->constants && !move_blob(bpu->constants.get())) return false;
    } else if (auto* cpu = seg->kind.AsCpuOp()) {
      for (auto& a : cpu->attrs)
        if (a->blob && !move_blob(a->blob.get())) return false;
    }
  }
  return true;
}

bool is_packed(const fb::ModelFileT& file) {
  if (file.models.size() > 1) return true;
  for (const auto& kv : file.tool_versions)
    if (kv->key == kPackToolKey) return true;
  return false;
}

bool pack_model_files(const std::vector<std::vector<uint8_t>>& files, const std::string& pack_version,
                      std::vector<uint8_t>* out, std::string* error) {
  ModelFileWriter writer;
  fb::ModelFileT packed;
  packed.builder = "openbpu hb_pack";
  std::set<std::string> names;
  for (size_t i = 0; i < files.size(); ++i) {
    fb::ModelFileT f;
    std::vector<uint8_t> data;
    std::string why;
    if (!unpack_model_file(files[i].data(), files[i].size(), &f, &data, &why)) {
      *error = "file " + std::to_string(i) + ": " + why;
      return false;
    }
    if (is_packed(f)) {
      *error = "file " + std::to_string(i) + " is a packed model";
      return false;
    }
    for (auto& m : f.models) {
      if (!names.insert(m->name).second) {
        *error = "two models are named '" + m->name + "'";
        return false;
      }
      if (!relocate_blobs(m.get(), data, &writer, &why)) {
        *error = "model '" + m->name + "': " + why;
        return false;
      }
      packed.models.push_back(std::move(m));
    }
  }
  if (packed.models.size() > static_cast<size_t>(kMaxModelsPerFile)) {
    *error = std::to_string(packed.models.size()) + " models; a file holds at most " +
             std::to_string(kMaxModelsPerFile);
    return false;
  }
  auto kv = std::make_unique<fb::KeyValueT>();
  kv->key = kPackToolKey;
  kv->value = pack_version;
  packed.tool_versions.push_back(std::move(kv));
  *out = writer.finish(&packed);
  return true;
}

void set_metadata(fb::ModelT* model, const std::string& key, const std::string& value) {
  for (auto& kv : model->metadata) {
    if (kv->key == key) {
      kv->value = value;
      return;
    }
  }
  auto kv = std::make_unique<fb::KeyValueT>();
  kv->key = key;
  kv->value = value;
  model->metadata.push_back(std::move(kv));
}

std::string get_metadata(const fb::ModelT& model, const std::string& key) {
  for (const auto& kv : model.metadata)
    if (kv->key == key) return kv->value;
  return {};
}

}  // namespace openbpu::model
