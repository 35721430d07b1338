// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/executor.h"

#include <cstring>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/reference/kernels.h"

namespace openbpu::sim {

namespace kern {
void pin_constants_impl(const uint8_t* base, uint64_t size);
void unpin_constants_impl(const uint8_t* base);
}  // namespace kern

const KernelTable& reference_kernels() {
  static const KernelTable table = {
      .name = "reference", .conv = ref::conv, .deconv = ref::deconv, .pool = ref::pool, .eltwise = ref::eltwise,
      .lut = ref::lut, .resize = ref::resize, .move = ref::move, .fill = ref::fill, .argmax = ref::argmax,
      .preprocess = ref::preprocess, .matmul = ref::matmul, .softmax = ref::softmax, .layernorm = ref::layernorm,
  };
  return table;
}

std::vector<const KernelTable*> available_kernels() {
  kern::TableEntry entries[8];
  const size_t n = kern::kernel_tables(entries, 8);
  std::vector<const KernelTable*> out;
  for (size_t i = 0; i < n && i < 8; ++i)
    if (entries[i].supported) out.push_back(entries[i].table);
  out.push_back(&reference_kernels());
  return out;
}

const KernelTable* find_kernels(const char* name) {
  for (const KernelTable* t : available_kernels())
    if (std::strcmp(t->name, name) == 0) return t;
  return nullptr;
}

const KernelTable& best_kernels() {
  // The first supported optimized table (libdnn's OPENBPU_SIM_KERNELS picks
  // another one through find_kernels).
  static const KernelTable* best = available_kernels().front();
  return *best;
}

int sim_threads() { return kern::conv_threads(); }
void set_sim_threads(int n) { kern::set_conv_threads(n); }

void pin_constants(const uint8_t* base, uint64_t size) { kern::pin_constants_impl(base, size); }
void unpin_constants(const uint8_t* base) { kern::unpin_constants_impl(base); }

void execute(const isa::Instruction& ins, const Memory& mem, const KernelTable& k) {
  using isa::Opcode;
  switch (ins.opcode) {
    case Opcode::kConv:
      k.conv(std::get<isa::Conv>(ins.body), mem);
      break;
    case Opcode::kDeconv:
      k.deconv(std::get<isa::Conv>(ins.body), mem);
      break;
    case Opcode::kPool:
      k.pool(std::get<isa::Pool>(ins.body), mem);
      break;
    case Opcode::kEltwise:
      k.eltwise(std::get<isa::Eltwise>(ins.body), mem);
      break;
    case Opcode::kLut:
      k.lut(std::get<isa::Lut>(ins.body), mem);
      break;
    case Opcode::kResize:
      k.resize(std::get<isa::Resize>(ins.body), mem);
      break;
    case Opcode::kMove:
      k.move(std::get<isa::Move>(ins.body), mem);
      break;
    case Opcode::kFill:
      k.fill(std::get<isa::Fill>(ins.body), mem);
      break;
    case Opcode::kArgMax:
      k.argmax(std::get<isa::ArgMax>(ins.body), mem);
      break;
    case Opcode::kPreprocess:
      k.preprocess(std::get<isa::Preprocess>(ins.body), mem);
      break;
    case Opcode::kMatMul:
      k.matmul(std::get<isa::MatMul>(ins.body), mem);
      break;
    case Opcode::kSoftmax:
      k.softmax(std::get<isa::Softmax>(ins.body), mem);
      break;
    case Opcode::kLayerNorm:
      k.layernorm(std::get<isa::LayerNorm>(ins.body), mem);
      break;
  }
}

}  // namespace openbpu::sim
