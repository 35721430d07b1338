// SPDX-License-Identifier: Apache-2.0
// Editing model files for robustness tests and the fuzz corpora: header
// fields at byte level, and the flatbuffer through the object API (unpack,
// edit, re-serialize with the writer). The original data section is re-added
// first, at offset 0, so every BlobRef of the unpacked file stays valid;
// replacement blobs (a new program, new constants) are appended after it.
#ifndef OPENBPU_TESTS_ROBUSTNESS_MODEL_EDIT_H_
#define OPENBPU_TESTS_ROBUSTNESS_MODEL_EDIT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bpu_sim/isa/codec.h"
#include "schema/writer.h"

namespace openbpu::testing {

using Bytes = std::vector<uint8_t>;

// Byte offsets of the header fields (schema/format.h): u16 major/minor, u32
// header size, u64 for the rest.
enum HeaderField : size_t {
  kMajor = 8,
  kMinor = 10,
  kHeaderSize = 12,
  kMetaOffset = 16,
  kMetaSize = 24,
  kDataOffset = 32,
  kDataSize = 40,
  kFileSize = 48,
};

inline uint64_t get_le(const Bytes& b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{b[at + static_cast<size_t>(i)]} << (8 * i);
  return v;
}
inline void put_le(Bytes* b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) (*b)[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}
inline int field_width(HeaderField f) {
  return f == kMajor || f == kMinor ? 2 : (f == kHeaderSize ? 4 : 8);
}
inline Bytes with_field(const Bytes& b, HeaderField f, uint64_t v) {
  Bytes out = b;
  put_le(&out, f, v, field_width(f));
  return out;
}

class ModelEdit {
 public:
  explicit ModelEdit(const Bytes& bytes) {
    ok_ = model::unpack_model_file(bytes.data(), bytes.size(), &file_, &data_, &error_);
    if (!data_.empty()) writer_.add_blob(data_);
  }

  // False when the input did not verify (error() says why).
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  fb::ModelFileT& file() { return file_; }
  fb::ModelT& model(size_t i = 0) { return *file_.models.at(i); }
  fb::SegmentT& segment(size_t s, size_t m = 0) { return *model(m).segments.at(s); }
  fb::TensorT& tensor(size_t t, size_t m = 0) { return *model(m).tensors.at(t); }

  // The first BPU program of model m (nullptr when it has none).
  fb::BpuProgramT* find_bpu(size_t m = 0) {
    for (auto& s : model(m).segments)
      if (auto* p = s->kind.AsBpuProgram()) return p;
    return nullptr;
  }
  fb::BpuProgramT& bpu(size_t m = 0) { return *find_bpu(m); }

  // Bytes of a blob of the original data section.
  Bytes blob(const fb::BlobRef& ref) const {
    const auto* p = data_.data() + ref.offset();
    return Bytes(p, p + ref.size());
  }
  Bytes code(size_t m = 0) { return blob(*bpu(m).code); }
  Bytes constants(size_t m = 0) { return blob(*bpu(m).constants); }

  // The decoded program (empty, with error() set, when it does not decode).
  std::vector<isa::Instruction> program(size_t m = 0) {
    std::vector<isa::Instruction> p;
    const Bytes c = code(m);
    if (!isa::decode_program(c.data(), c.size(), &p, &error_)) p.clear();
    return p;
  }

  fb::BlobRef add_blob(const Bytes& bytes) { return writer_.add_blob(bytes); }
  void set_code(const Bytes& code, size_t m = 0) {
    bpu(m).code = std::make_unique<fb::BlobRef>(writer_.add_blob(code));
  }
  void set_constants(const Bytes& c, size_t m = 0) {
    bpu(m).constants = std::make_unique<fb::BlobRef>(writer_.add_blob(c));
  }
  // Replaces the program; with refit, one function call covers all of it.
  void set_program(const std::vector<isa::Instruction>& p, bool refit = false, size_t m = 0) {
    set_code(isa::encode_program(p), m);
    if (refit) bpu(m).fcs = {fb::FunctionCall(0, static_cast<uint32_t>(p.size()), 1000)};
  }

  // Serializes the edited file (once).
  Bytes finish() { return writer_.finish(&file_); }

 private:
  bool ok_ = false;
  std::string error_;
  fb::ModelFileT file_;
  Bytes data_;
  model::ModelFileWriter writer_;
};

// A dense tensor (layout NCHW or NONE) with strides and byte size filled in.
inline std::unique_ptr<fb::TensorT> dense_tensor(const std::string& name, fb::DataType type, int esize,
                                                 std::vector<int32_t> shape,
                                                 fb::Layout layout = fb::Layout::NCHW) {
  auto t = std::make_unique<fb::TensorT>();
  t->name = name;
  t->data_type = type;
  t->layout = layout;
  t->valid_shape = shape;
  t->aligned_shape = shape;
  int64_t acc = esize;
  t->strides.assign(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    t->strides[i] = acc;
    acc *= shape[i];
  }
  t->aligned_byte_size = acc;
  return t;
}

// A CPU segment.
inline std::unique_ptr<fb::SegmentT> cpu_segment(const std::string& name, const std::string& domain,
                                                 const std::string& op_type, std::vector<uint32_t> in,
                                                 std::vector<uint32_t> out,
                                                 std::vector<std::unique_ptr<fb::AttrT>> attrs = {}) {
  auto s = std::make_unique<fb::SegmentT>();
  s->name = name;
  s->inputs = std::move(in);
  s->outputs = std::move(out);
  fb::CpuOpT op;
  op.op_type = op_type;
  op.domain = domain;
  op.attrs = std::move(attrs);
  s->kind.Set(std::move(op));
  return s;
}

inline std::unique_ptr<fb::AttrT> ints_attr(const std::string& name, std::vector<int64_t> v) {
  auto a = std::make_unique<fb::AttrT>();
  a->name = name;
  a->type = v.size() == 1 ? fb::AttrType::INT : fb::AttrType::INTS;
  if (v.size() == 1) a->i = v[0];
  else a->ints = std::move(v);
  return a;
}

}  // namespace openbpu::testing

#endif  // OPENBPU_TESTS_ROBUSTNESS_MODEL_EDIT_H_
