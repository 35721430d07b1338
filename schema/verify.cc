// SPDX-License-Identifier: Apache-2.0
#include "schema/verify.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "schema/model_generated.h"

namespace openbpu::model {

namespace {

// Image types the BPU reads as planes (Y, then interleaved UV for NV12), not
// as a dense tensor of their shape: only BPU programs and the runtime's input
// staging may touch them.
bool planar_image(fb::DataType t) {
  return t == fb::DataType::IMG_Y || t == fb::DataType::IMG_NV12 || t == fb::DataType::IMG_NV12_SEPARATE;
}

bool has_nul(const flatbuffers::String* s) { return std::memchr(s->data(), 0, s->size()) != nullptr; }

class Checker {
 public:
  Checker(const FileHeader& h, const uint8_t* meta, std::string* error, Rejection* why)
      : h_(h), meta_(meta), error_(error), why_(why) {}

  bool file(const fb::ModelFile& f) {
    // A generation this code does not know was built by a newer toolchain.
    if (static_cast<int>(f.generation()) > static_cast<int>(fb::Generation::MAX)) {
      if (why_ != nullptr) *why_ = Rejection::kUnsupportedVersion;
      return fail("unknown model generation " + std::to_string(static_cast<int>(f.generation())) +
                  ": the file was built by a newer OpenBPU toolchain");
    }
    const auto* models = f.models();
    if (models->size() == 0) return fail("file holds no model");
    if (models->size() > static_cast<uint32_t>(kMaxModelsPerFile))
      return fail("file holds " + std::to_string(models->size()) + " models (limit " +
                  std::to_string(kMaxModelsPerFile) + ")");
    std::set<std::string> names;
    for (uint32_t i = 0; i < models->size(); ++i) {
      const auto* m = models->Get(i);
      where_ = "model " + std::to_string(i);
      if (m->name()->size() == 0) return fail("empty model name");
      // The C API hands names out as C strings: a NUL would cut them.
      if (has_nul(m->name())) return fail("model name contains a NUL byte");
      if (!names.insert(m->name()->str()).second)
        return fail("duplicate model name '" + m->name()->str() + "'");
      where_ = "model '" + m->name()->str() + "'";
      if (!model(*m)) return false;
    }
    return true;
  }

 private:
  bool fail(const std::string& what) {
    *error_ = where_.empty() ? what : where_ + ": " + what;
    return false;
  }

  // flatbuffers 2.0.8's verifier checks that a vector's length word is
  // 4-byte aligned, not that 8-byte elements ([long], structs holding a
  // ulong) are 8-byte aligned; they are read in place. The metadata starts
  // 8-byte aligned (parse_header), so an offset from it is enough.
  template <class V>
  bool aligned8(const V* v, const std::string& what) {
    if (v == nullptr || (v->Data() - meta_) % 8 == 0) return true;
    return fail(what + ": vector of 8-byte values is not 8-byte aligned (corrupt metadata)");
  }

  bool blob(const fb::BlobRef* b, const char* what) {
    if (b == nullptr) return fail(std::string(what) + " is missing");
    if (b->offset() > h_.data_size || b->size() > h_.data_size - b->offset())
      return fail(std::string(what) + " lies outside the data section");
    return true;
  }

  bool tensor(const fb::Tensor& t, uint32_t idx) {
    const std::string tn = "tensor " + std::to_string(idx) + " '" + t.name()->str() + "'";
    // hbDNNGetInputName/hbDNNGetOutputName hand tensor names out as C strings.
    if (has_nul(t.name())) return fail("tensor " + std::to_string(idx) + ": name contains a NUL byte");
    const int esize = data_type_size(static_cast<int>(t.data_type()));
    if (esize == 0) return fail(tn + ": unknown data type");
    const auto* valid = t.valid_shape();
    const auto* aligned = t.aligned_shape();
    if (valid->size() > static_cast<uint32_t>(kMaxRank))
      return fail(tn + ": rank " + std::to_string(valid->size()) + " out of range 0..8");
    if (aligned->size() != valid->size())
      return fail(tn + ": aligned shape rank differs from valid shape rank");
    int64_t elems = 1;
    for (uint32_t d = 0; d < valid->size(); ++d) {
      const int64_t v = valid->Get(d), a = aligned->Get(d);
      if (v < 1 || v > kMaxDim || a < v || a > kMaxDim)
        return fail(tn + ": dimension " + std::to_string(d) + " out of range (valid " +
                    std::to_string(v) + ", aligned " + std::to_string(a) + ")");
      elems *= a;
      if (elems * esize > kMaxTensorBytes) return fail(tn + ": tensor too large");
    }
    if (t.aligned_byte_size() < 0 || t.aligned_byte_size() > kMaxTensorBytes)
      return fail(tn + ": aligned byte size out of range");
    // NV12/Y hold image planes, not their (1,3,H,W) shape: the loader checks
    // model inputs against the image size, and nothing reads them densely
    // (model()). Every other type, RGB/BGR/YUV444 included, is dense.
    const bool planar = planar_image(t.data_type());
    if (!planar && t.aligned_byte_size() < elems * esize)
      return fail(tn + ": aligned byte size smaller than the aligned shape");
    if (const auto* strides = t.strides()) {
      if (strides->size() != valid->size() && strides->size() != 0)
        return fail(tn + ": stride count differs from the rank");
      if (!aligned8(strides, tn + ": strides")) return false;
      // The last element's byte (sum over d of (aligned[d]-1)*stride[d]) must
      // lie inside the tensor; a stride of 0 makes the runtime use dense
      // strides, counted here as 0. At most 8 * 2^24 * 2^34 < 2^63.
      int64_t last = 0;
      for (uint32_t d = 0; d < strides->size(); ++d) {
        const int64_t s = strides->Get(d);
        if (s < 0 || s > kMaxTensorBytes) return fail(tn + ": stride out of range");
        last += (aligned->Get(d) - 1) * s;
      }
      if (!planar && last + esize > t.aligned_byte_size())
        return fail(tn + ": strides run past the aligned byte size (last element at byte " +
                    std::to_string(last) + " of " + std::to_string(t.aligned_byte_size()) + ")");
    }
    if (const auto* c = t.constant()) {
      if (!blob(c, (tn + ": constant data").c_str())) return false;
      if (static_cast<int64_t>(c->size()) < t.aligned_byte_size())
        return fail(tn + ": constant data smaller than the tensor");
      // CPU operators read constants in place as typed arrays; the data
      // section is 64-byte aligned in memory (the writer aligns every blob).
      if (c->offset() % static_cast<uint64_t>(esize) != 0)
        return fail(tn + ": constant data at offset " + std::to_string(c->offset()) +
                    " of the data section is not aligned to its " + std::to_string(esize) +
                    "-byte elements");
    }
    if (const auto* q = t.quant()) {
      const uint32_t ns = q->scales() ? q->scales()->size() : 0;
      const uint32_t nsh = q->shifts() ? q->shifts()->size() : 0;
      const uint32_t nz = q->zero_points() ? q->zero_points()->size() : 0;
      if (q->axis() < 0 || (q->axis() >= static_cast<int>(valid->size()) && valid->size() != 0))
        return fail(tn + ": quantize axis out of range");
      const int64_t axis_len = valid->size() == 0 ? 1 : valid->Get(static_cast<uint32_t>(q->axis()));
      auto len_ok = [&](uint32_t n) { return n == 0 || n == 1 || n == axis_len; };
      if (!len_ok(ns) || !len_ok(nsh))
        return fail(tn + ": scale/shift count must be 1 or the size of the quantize axis");
      if (nz != 0 && nz != ns) return fail(tn + ": zero point count differs from scale count");
      if (q->type() == fb::QuantType::SCALE && ns == 0) return fail(tn + ": SCALE without scales");
      if (q->type() == fb::QuantType::SHIFT && nsh == 0) return fail(tn + ": SHIFT without shifts");
      if (static_cast<int>(q->type()) > 2) return fail(tn + ": unknown quantization type");
      if (nsh != 0)
        for (uint32_t i = 0; i < nsh; ++i)
          if (q->shifts()->Get(i) > 31) return fail(tn + ": shift value out of range");
    }
    return true;
  }

  bool model(const fb::Model& m) {
    const auto* tensors = m.tensors();
    const uint32_t nt = tensors->size();
    for (uint32_t i = 0; i < nt; ++i)
      if (!tensor(*tensors->Get(i), i)) return false;
    if (m.inputs()->size() == 0) return fail("model has no input");
    if (m.outputs()->size() == 0) return fail("model has no output");
    if (m.segments()->size() == 0) return fail("model has no segment");
    std::vector<bool> ready(nt, false);
    std::set<uint32_t> io;
    for (uint32_t i = 0; i < nt; ++i)
      if (tensors->Get(i)->constant() != nullptr) ready[i] = true;
    for (uint32_t i = 0; i < m.inputs()->size(); ++i) {
      const auto* in = m.inputs()->Get(i);
      if (in->tensor() >= nt) return fail("input " + std::to_string(i) + " tensor index out of range");
      if (!io.insert(in->tensor()).second) return fail("tensor used twice as model input");
      if (tensors->Get(in->tensor())->constant() != nullptr) return fail("a model input cannot be a constant");
      if (static_cast<int>(in->source()) > 2) return fail("unknown input source");
      ready[in->tensor()] = true;
    }
    for (uint32_t i = 0; i < m.outputs()->size(); ++i) {
      const auto* out = m.outputs()->Get(i);
      if (out->tensor() >= nt)
        return fail("output " + std::to_string(i) + " tensor index out of range");
      // Outputs are copied out as dense tensors of their shape.
      if (planar_image(tensors->Get(out->tensor())->data_type()))
        return fail("output " + std::to_string(i) + ": tensor " + std::to_string(out->tensor()) + " '" +
                    tensors->Get(out->tensor())->name()->str() + "' is an NV12/Y image, not a model output type");
    }
    for (uint32_t s = 0; s < m.segments()->size(); ++s) {
      const auto* seg = m.segments()->Get(s);
      const std::string sn = "segment " + std::to_string(s) + " '" + seg->name()->str() + "'";
      const auto* ins = seg->inputs();
      const auto* outs = seg->outputs();
      if (ins != nullptr)
        for (uint32_t k = 0; k < ins->size(); ++k) {
          // kAbsentInput marks an omitted optional input of a CPU operator.
          if (ins->Get(k) == kAbsentInput && seg->kind_type() == fb::SegmentKind::CpuOp) continue;
          if (ins->Get(k) >= nt) return fail(sn + ": input tensor index out of range");
          if (!ready[ins->Get(k)])
            return fail(sn + ": input tensor " + std::to_string(ins->Get(k)) +
                        " is used before it is produced");
        }
      if (outs == nullptr || outs->size() == 0) return fail(sn + ": segment has no output");
      uint32_t present = 0;
      for (uint32_t k = 0; k < outs->size(); ++k) present += outs->Get(k) != kAbsentInput ? 1 : 0;
      if (present == 0) return fail(sn + ": segment has no output");
      for (uint32_t k = 0; k < outs->size(); ++k) {
        // kAbsentInput also marks an omitted optional output of a CPU operator.
        if (outs->Get(k) == kAbsentInput && seg->kind_type() == fb::SegmentKind::CpuOp) continue;
        if (outs->Get(k) >= nt) return fail(sn + ": output tensor index out of range");
        if (tensors->Get(outs->Get(k))->constant() != nullptr)
          return fail(sn + ": writes to a constant tensor");
        ready[outs->Get(k)] = true;
      }
      switch (seg->kind_type()) {
        case fb::SegmentKind::BpuProgram: {
          const auto* p = seg->kind_as_BpuProgram();
          if (p->isa_version() > kIsaVersion) {
            // A newer instruction set: another toolchain's file, not a damaged one.
            if (why_ != nullptr) *why_ = Rejection::kUnsupportedVersion;
            return fail(sn + ": BPU program ISA version " + std::to_string(p->isa_version()) +
                        " is not supported (this runtime runs ISA version " + std::to_string(kIsaVersion) +
                        "): the model was built by a newer OpenBPU toolchain; upgrade the runtime or "
                        "rebuild the model with the hb_mapper of this release");
          }
          if (p->isa_version() != kIsaVersion)
            return fail(sn + ": BPU program ISA version " + std::to_string(p->isa_version()) +
                        " is not supported");
          if (!blob(p->code(), (sn + ": code").c_str())) return false;
          if (!blob(p->constants(), (sn + ": constants").c_str())) return false;
          if (p->scratch_size() > static_cast<uint64_t>(kMaxTensorBytes))
            return fail(sn + ": scratch size out of range");
          if (p->fcs()->size() == 0) return fail(sn + ": program has no function call");
          if (!aligned8(p->fcs(), sn + ": function calls")) return false;
          break;
        }
        case fb::SegmentKind::CpuOp: {
          const auto* op = seg->kind_as_CpuOp();
          // CPU operators compute on dense tensors of their shape; NV12/Y
          // planes are smaller than that (H*W*3/2 bytes for (1,3,H,W)).
          for (const auto* list : {ins, outs}) {
            if (list == nullptr) continue;
            for (uint32_t k = 0; k < list->size(); ++k) {
              const uint32_t t = list->Get(k);
              if (t == kAbsentInput || !planar_image(tensors->Get(t)->data_type())) continue;
              return fail(sn + " (" + op->op_type()->str() + "): " + (list == ins ? "input " : "output ") +
                          std::to_string(k) + " is tensor " + std::to_string(t) + " '" +
                          tensors->Get(t)->name()->str() +
                          "', an NV12/Y image; CPU operators read and write dense tensors only");
            }
          }
          if (op->attrs() != nullptr)
            for (uint32_t a = 0; a < op->attrs()->size(); ++a) {
              const auto* attr = op->attrs()->Get(a);
              const std::string an = sn + ": attribute " + std::to_string(a) + " '" + attr->name()->str() + "'";
              if (attr->type() < fb::AttrType::MIN || attr->type() > fb::AttrType::MAX)
                return fail(an + ": unknown attribute type " + std::to_string(static_cast<int>(attr->type())));
              if (!aligned8(attr->ints(), an)) return false;
              if (attr->type() == fb::AttrType::BLOB &&
                  !blob(attr->blob(), (sn + ": attribute blob").c_str()))
                return false;
            }
          break;
        }
        default: return fail(sn + ": unknown segment kind");
      }
    }
    for (uint32_t i = 0; i < m.outputs()->size(); ++i)
      if (!ready[m.outputs()->Get(i)->tensor()])
        return fail("output " + std::to_string(i) + " is never produced");
    if (m.layers() != nullptr)
      for (uint32_t l = 0; l < m.layers()->size(); ++l)
        if (!layer(m, *m.layers()->Get(l), "layer record " + std::to_string(l))) return false;
    return true;
  }

  // A debug record: a BPU segment's instruction range and outputs that lie
  // inside the segment's scratch area or output tensors.
  bool layer(const fb::Model& m, const fb::LayerDebug& l, std::string ln) {
    ln += " '" + l.name()->str() + "'";
    if (l.segment() >= m.segments()->size()) return fail(ln + ": segment index out of range");
    const auto* seg = m.segments()->Get(l.segment());
    const auto* p = seg->kind_as_BpuProgram();
    if (p == nullptr) return fail(ln + ": segment " + std::to_string(l.segment()) + " is not a BPU program");
    uint64_t end = 0;
    for (const auto* fc : *p->fcs()) end = std::max<uint64_t>(end, uint64_t{fc->first()} + fc->count());
    if (uint64_t{l.first_instruction()} + l.instruction_count() > end)
      return fail(ln + ": instructions beyond the program's " + std::to_string(end));
    if (l.outputs() == nullptr) return true;
    for (uint32_t k = 0; k < l.outputs()->size(); ++k) {
      const auto* o = l.outputs()->Get(k);
      const std::string on = ln + " output " + std::to_string(k) + " '" + o->name()->str() + "'";
      int64_t size = 0;
      if (o->region() == 4) {
        size = static_cast<int64_t>(p->scratch_size());
      } else if (o->region() == 2 && o->index() < seg->outputs()->size() &&
                 seg->outputs()->Get(o->index()) < m.tensors()->size()) {
        size = m.tensors()->Get(seg->outputs()->Get(o->index()))->aligned_byte_size();
      } else {
        return fail(on + ": not in the segment's scratch area or outputs");
      }
      const int es = data_type_size(static_cast<int>(o->data_type()));
      if (o->data_type() != fb::DataType::S8 && o->data_type() != fb::DataType::S16 &&
          o->data_type() != fb::DataType::S32)
        return fail(on + ": data type is not S8, S16 or S32");
      if (o->dims() == nullptr || o->strides() == nullptr || o->dims()->size() != 4 || o->strides()->size() != 4)
        return fail(on + ": needs 4 dims and 4 strides");
      if (o->offset() > static_cast<uint64_t>(kMaxTensorBytes)) return fail(on + ": offset out of range");
      int64_t last = static_cast<int64_t>(o->offset());
      for (uint32_t d = 0; d < 4; ++d) {
        const int32_t n = o->dims()->Get(d);
        const int64_t st = o->strides()->Get(d);
        if (n <= 0 || st < 0 || st > kMaxTensorBytes || (n > 1 && st > kMaxTensorBytes / (n - 1)))
          return fail(on + ": dims or strides out of range");
        last += (n - 1) * st;
      }
      if (last + es > size)
        return fail(on + ": ends at byte " + std::to_string(last + es) + " of a " + std::to_string(size) +
                    "-byte region");
      const auto* q = o->quant();
      const uint32_t nsc = q != nullptr && q->scales() != nullptr ? q->scales()->size() : 0;
      if (q == nullptr || q->type() != fb::QuantType::SCALE ||
          (nsc != 1 && nsc != static_cast<uint32_t>(o->dims()->Get(3))))
        return fail(on + ": needs SCALE quantization with 1 or C scales");
      if (q->zero_points() != nullptr && q->zero_points()->size() != 0 && q->zero_points()->size() != nsc)
        return fail(on + ": zero point count differs from scale count");
    }
    return true;
  }

  const FileHeader& h_;
  const uint8_t* meta_;
  std::string* error_;
  Rejection* why_;
  std::string where_;
};

}  // namespace

int data_type_size(int t) {
  switch (t) {
    case 0: case 1: case 2: case 3: case 4: case 5:  // images
    case 6: case 7: case 8: case 9: return 1;
    case 10: case 11: case 12: return 2;
    case 13: case 14: case 15: return 4;
    case 16: case 17: case 18: return 8;
    case 19: return 1;  // BOOL8 (CPU operators)
    default: return 0;
  }
}

bool verify_model_file(const uint8_t* data, size_t size, FileHeader* header, std::string* error,
                       Rejection* why) {
  FileHeader h;
  if (!parse_header(data, size, &h, error, why)) return false;
  const uint8_t* meta = data + h.meta_offset;
  if (!flatbuffers::BufferHasIdentifier(meta, fb::ModelFileIdentifier())) {
    *error = "metadata does not carry the OBPU identifier";
    return false;
  }
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 64;
  opts.max_tables = 1000000;
  opts.check_alignment = true;
  flatbuffers::Verifier verifier(meta, static_cast<size_t>(h.meta_size), opts);
  if (!fb::VerifyModelFileBuffer(verifier)) {
    *error = "metadata failed flatbuffers verification (corrupt or truncated file)";
    return false;
  }
  Checker checker(h, meta, error, why);
  if (!checker.file(*fb::GetModelFile(meta))) return false;
  if (header != nullptr) *header = h;
  return true;
}

}  // namespace openbpu::model
