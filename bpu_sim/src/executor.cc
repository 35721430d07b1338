// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/executor.h"

#include <cstdlib>
#include <cstring>

#include "bpu_sim/reference/kernels.h"

namespace openbpu::sim {

const KernelTable& reference_kernels() {
  static const KernelTable table = {
      "reference", ref::conv,   ref::deconv, ref::pool,     ref::eltwise,   ref::lut,
      ref::resize, ref::move,   ref::fill,   ref::argmax,   ref::preprocess,
  };
  return table;
}

const KernelTable& best_kernels() {
  // Optimized kernel tables register here per CPU feature (issue: fast
  // simulator kernels); until one is present the reference table is the
  // fastest bit-exact path.
  static const KernelTable* best = [] {
    const char* force = std::getenv("OPENBPU_SIM_KERNELS");
    (void)force;
    return &reference_kernels();
  }();
  return *best;
}

void execute(const isa::Instruction& ins, const Memory& mem, const KernelTable& k) {
  using isa::Opcode;
  switch (ins.opcode) {
    case Opcode::kConv: k.conv(std::get<isa::Conv>(ins.body), mem); break;
    case Opcode::kDeconv: k.deconv(std::get<isa::Conv>(ins.body), mem); break;
    case Opcode::kPool: k.pool(std::get<isa::Pool>(ins.body), mem); break;
    case Opcode::kEltwise: k.eltwise(std::get<isa::Eltwise>(ins.body), mem); break;
    case Opcode::kLut: k.lut(std::get<isa::Lut>(ins.body), mem); break;
    case Opcode::kResize: k.resize(std::get<isa::Resize>(ins.body), mem); break;
    case Opcode::kMove: k.move(std::get<isa::Move>(ins.body), mem); break;
    case Opcode::kFill: k.fill(std::get<isa::Fill>(ins.body), mem); break;
    case Opcode::kArgMax: k.argmax(std::get<isa::ArgMax>(ins.body), mem); break;
    case Opcode::kPreprocess: k.preprocess(std::get<isa::Preprocess>(ins.body), mem); break;
  }
}

}  // namespace openbpu::sim
