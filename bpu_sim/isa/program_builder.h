// SPDX-License-Identifier: Apache-2.0
// Helpers to assemble BPU programs: views of native NHWC tensors in a region,
// constant pool and scratch allocation (the multiplier/shift derivation is in
// numerics.h). Used by the converter's compiler and by tests.
#ifndef OPENBPU_BPU_SIM_ISA_PROGRAM_BUILDER_H_
#define OPENBPU_BPU_SIM_ISA_PROGRAM_BUILDER_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/isa/march.h"
#include "bpu_sim/isa/numerics.h"

namespace openbpu::isa {

// Byte size of a native NHWC tensor with channels padded to `align`.
inline uint64_t nhwc_bytes(int n, int h, int w, int c, DType t, int align) {
  return static_cast<uint64_t>(n) * h * w * static_cast<uint64_t>(align_up(c, align)) *
         static_cast<uint64_t>(dtype_size(t));
}

// View of a native NHWC tensor [n, h, w, c] with the pixel stride padded to
// `align` channels, starting at `offset` in a region.
TensorRef nhwc_view(Region region, uint16_t index, uint64_t offset, int n, int h, int w, int c, DType t,
                    int align);

class ProgramBuilder {
 public:
  explicit ProgramBuilder(const MarchInfo& march) : march_(march) {}

  const MarchInfo& march() const { return march_; }
  int align() const { return march_.channel_align; }

  // A native tensor in the scratch region (64-byte aligned allocation).
  TensorRef scratch_nhwc(int n, int h, int w, int c, DType t);
  // Raw scratch bytes.
  uint64_t alloc_scratch(uint64_t bytes);

  ConstRef add_const(const void* data, uint64_t bytes, uint32_t count);
  template <class T> ConstRef add_const(const std::vector<T>& values) {
    return add_const(values.data(), values.size() * sizeof(T), static_cast<uint32_t>(values.size()));
  }

  void emit(Opcode op, Instr body) { program_.push_back(Instruction{op, std::move(body)}); }

  const std::vector<Instruction>& program() const { return program_; }
  const std::vector<uint8_t>& constants() const { return constants_; }
  uint64_t scratch_size() const { return scratch_; }

 private:
  const MarchInfo& march_;
  std::vector<Instruction> program_;
  std::vector<uint8_t> constants_;
  uint64_t scratch_ = 0;
};

}  // namespace openbpu::isa

#endif  // OPENBPU_BPU_SIM_ISA_PROGRAM_BUILDER_H_
