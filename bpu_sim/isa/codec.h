// SPDX-License-Identifier: Apache-2.0
// Binary encoding of BPU programs (see isa.h for the record layout).
// Decoding never trusts its input: every read is bounds-checked, every enum
// checked against its known values; validation of tensor extents against the
// region sizes is separate (bpu_sim/validate.h).
#ifndef OPENBPU_BPU_SIM_ISA_CODEC_H_
#define OPENBPU_BPU_SIM_ISA_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "bpu_sim/isa/isa.h"

namespace openbpu::isa {

namespace detail {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>* out) : out_(out) {}
  template <class T> void operator()(const T& value) {
    if constexpr (std::is_enum_v<T>) {
      (*this)(static_cast<std::underlying_type_t<T>>(value));
    } else {
      static_assert(std::is_integral_v<T>, "ISA fields are integers or enums");
      using U = std::make_unsigned_t<T>;
      U u = static_cast<U>(value);
      for (size_t i = 0; i < sizeof(T); ++i) out_->push_back(static_cast<uint8_t>(u >> (8 * i)));
    }
  }
  // A field added after the first release: the tail fields of a record are
  // written up to the last one that is not zero (zeros before it are held
  // back until then, trailing zeros never written).
  template <class T> void tail(const T& value) {
    if (value == T{}) {
      held_ += sizeof(T);
      return;
    }
    out_->insert(out_->end(), held_, uint8_t{0});
    held_ = 0;
    (*this)(value);
  }

 private:
  std::vector<uint8_t>* out_;
  size_t held_ = 0;  // bytes of zero tail fields not written yet
};

// Reads fields in visit() order; sets ok = false on truncation or a bad enum.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool ok = true;
  std::string error;

  template <class T> void operator()(T& value) {
    if constexpr (std::is_enum_v<T>) {
      std::underlying_type_t<T> raw{};
      (*this)(raw);
      value = static_cast<T>(raw);
      if (ok && !enum_ok(value)) fail("bad enum value " + std::to_string(+raw));
    } else {
      static_assert(std::is_integral_v<T>, "ISA fields are integers or enums");
      if (!ok) return;
      if (static_cast<size_t>(end_ - p_) < sizeof(T)) {
        fail("truncated instruction");
        return;
      }
      using U = std::make_unsigned_t<T>;
      U u = 0;
      for (size_t i = 0; i < sizeof(T); ++i) u |= static_cast<U>(static_cast<U>(p_[i]) << (8 * i));
      p_ += sizeof(T);
      value = static_cast<T>(u);
    }
  }
  // A field added after the first release: read only when the payload holds it.
  template <class T> void tail(T& value) {
    if (ok && remaining() >= sizeof(T)) (*this)(value);
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  void fail(const std::string& why) {
    if (ok) error = why;
    ok = false;
  }
  static bool enum_ok(Region r) { return region_valid(static_cast<uint8_t>(r)); }
  static bool enum_ok(DType t) { return dtype_valid(static_cast<uint8_t>(t)); }
  static bool enum_ok(PoolKind k) { return k == PoolKind::kMax || k == PoolKind::kAvg; }
  static bool enum_ok(EltwiseKind k) {
    auto v = static_cast<uint8_t>(k);
    return v >= 1 && v <= 5;
  }
  static bool enum_ok(ResizeMode m) { return m == ResizeMode::kNearest || m == ResizeMode::kBilinear; }
  static bool enum_ok(ImageFormat f) {
    auto v = static_cast<uint8_t>(f);
    return v >= 1 && v <= 5;
  }
  static bool enum_ok(ColorRange r) { return r == ColorRange::kFull || r == ColorRange::kVideo; }

  const uint8_t* p_;
  const uint8_t* end_;
};

template <class Body>
void encode_record(Opcode op, Body body, std::vector<uint8_t>* out) {
  std::vector<uint8_t> payload;
  ByteWriter pw(&payload);
  body.visit(pw);
  ByteWriter w(out);
  w(static_cast<uint16_t>(op));
  w(static_cast<uint16_t>(0));
  w(static_cast<uint32_t>(payload.size()));
  out->insert(out->end(), payload.begin(), payload.end());
}

template <class Body>
bool decode_body(const uint8_t* p, size_t n, Instr* out, std::string* err) {
  Body body;
  ByteReader r(p, n);
  body.visit(r);
  if (r.ok && r.remaining() != 0) {
    r.ok = false;
    r.error = "payload size does not match the opcode's layout";
  }
  if (!r.ok) {
    *err = r.error;
    return false;
  }
  *out = body;
  return true;
}

}  // namespace detail

inline void encode(const Instruction& ins, std::vector<uint8_t>* out) {
  std::visit([&](const auto& body) { detail::encode_record(ins.opcode, body, out); }, ins.body);
}

inline std::vector<uint8_t> encode_program(const std::vector<Instruction>& program) {
  std::vector<uint8_t> out;
  for (const auto& ins : program) encode(ins, &out);
  return out;
}

// Decodes a whole program. On failure returns false with a message naming the
// instruction index and the problem.
inline bool decode_program(const uint8_t* data, size_t size, std::vector<Instruction>* program,
                           std::string* error) {
  program->clear();
  size_t pos = 0;
  while (pos < size) {
    const size_t index = program->size();
    if (size - pos < 8) {
      *error = "instruction " + std::to_string(index) + ": truncated record header";
      return false;
    }
    auto rd16 = [&](size_t at) { return static_cast<uint16_t>(data[at] | (data[at + 1] << 8)); };
    const uint16_t opcode = rd16(pos);
    const uint16_t reserved = rd16(pos + 2);
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i) len |= static_cast<uint32_t>(data[pos + 4 + i]) << (8 * i);
    pos += 8;
    if (reserved != 0) {
      *error = "instruction " + std::to_string(index) + ": reserved field is not zero";
      return false;
    }
    if (len > size - pos) {
      *error = "instruction " + std::to_string(index) + ": payload runs past the end of the program";
      return false;
    }
    Instruction ins;
    ins.opcode = static_cast<Opcode>(opcode);
    std::string why;
    bool ok = false;
    const uint8_t* p = data + pos;
    switch (ins.opcode) {
      case Opcode::kConv:
      case Opcode::kDeconv: ok = detail::decode_body<Conv>(p, len, &ins.body, &why); break;
      case Opcode::kPool: ok = detail::decode_body<Pool>(p, len, &ins.body, &why); break;
      case Opcode::kEltwise: ok = detail::decode_body<Eltwise>(p, len, &ins.body, &why); break;
      case Opcode::kLut: ok = detail::decode_body<Lut>(p, len, &ins.body, &why); break;
      case Opcode::kResize: ok = detail::decode_body<Resize>(p, len, &ins.body, &why); break;
      case Opcode::kMove: ok = detail::decode_body<Move>(p, len, &ins.body, &why); break;
      case Opcode::kFill: ok = detail::decode_body<Fill>(p, len, &ins.body, &why); break;
      case Opcode::kArgMax: ok = detail::decode_body<ArgMax>(p, len, &ins.body, &why); break;
      case Opcode::kPreprocess: ok = detail::decode_body<Preprocess>(p, len, &ins.body, &why); break;
      case Opcode::kMatMul: ok = detail::decode_body<MatMul>(p, len, &ins.body, &why); break;
      case Opcode::kSoftmax: ok = detail::decode_body<Softmax>(p, len, &ins.body, &why); break;
      case Opcode::kLayerNorm: ok = detail::decode_body<LayerNorm>(p, len, &ins.body, &why); break;
      default: why = "unknown opcode " + std::to_string(opcode); break;
    }
    if (!ok) {
      *error = "instruction " + std::to_string(index) + ": " + why;
      return false;
    }
    program->push_back(std::move(ins));
    pos += len;
  }
  return true;
}

}  // namespace openbpu::isa

#endif  // OPENBPU_BPU_SIM_ISA_CODEC_H_
