// SPDX-License-Identifier: Apache-2.0
// Dispatch of one instruction to its reference kernel. An instruction whose
// body does not match its opcode is rejected by the validator; it does nothing.
#include <variant>

#include "bpu_sim/reference/kernels.h"

namespace openbpu::sim::ref {

void execute(const isa::Instruction& ins, const Memory& mem) {
  using isa::Opcode;
  const isa::Instr& b = ins.body;
  switch (ins.opcode) {
    case Opcode::kConv:
      if (auto* c = std::get_if<isa::Conv>(&b)) conv(*c, mem);
      return;
    case Opcode::kDeconv:
      if (auto* c = std::get_if<isa::Conv>(&b)) deconv(*c, mem);
      return;
    case Opcode::kPool:
      if (auto* c = std::get_if<isa::Pool>(&b)) pool(*c, mem);
      return;
    case Opcode::kEltwise:
      if (auto* c = std::get_if<isa::Eltwise>(&b)) eltwise(*c, mem);
      return;
    case Opcode::kLut:
      if (auto* c = std::get_if<isa::Lut>(&b)) lut(*c, mem);
      return;
    case Opcode::kResize:
      if (auto* c = std::get_if<isa::Resize>(&b)) resize(*c, mem);
      return;
    case Opcode::kMove:
      if (auto* c = std::get_if<isa::Move>(&b)) move(*c, mem);
      return;
    case Opcode::kFill:
      if (auto* c = std::get_if<isa::Fill>(&b)) fill(*c, mem);
      return;
    case Opcode::kArgMax:
      if (auto* c = std::get_if<isa::ArgMax>(&b)) argmax(*c, mem);
      return;
    case Opcode::kPreprocess:
      if (auto* c = std::get_if<isa::Preprocess>(&b)) preprocess(*c, mem);
      return;
    case Opcode::kMatMul:
      if (auto* c = std::get_if<isa::MatMul>(&b)) matmul(*c, mem);
      return;
    case Opcode::kSoftmax:
      if (auto* c = std::get_if<isa::Softmax>(&b)) softmax(*c, mem);
      return;
    case Opcode::kLayerNorm:
      if (auto* c = std::get_if<isa::LayerNorm>(&b)) layernorm(*c, mem);
      return;
  }
}

}  // namespace openbpu::sim::ref
