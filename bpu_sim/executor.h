// SPDX-License-Identifier: Apache-2.0
// Runs ranges of a validated program against bound memory with one kernel
// table. Every table must be bit-exact to the reference kernels; which table
// is fastest on this CPU is chosen once at run time.
#ifndef OPENBPU_BPU_SIM_EXECUTOR_H_
#define OPENBPU_BPU_SIM_EXECUTOR_H_

#include <cstddef>
#include <vector>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/memory.h"

namespace openbpu::sim {

struct KernelTable {
  const char* name;
  void (*conv)(const isa::Conv&, const Memory&);
  void (*deconv)(const isa::Conv&, const Memory&);
  void (*pool)(const isa::Pool&, const Memory&);
  void (*eltwise)(const isa::Eltwise&, const Memory&);
  void (*lut)(const isa::Lut&, const Memory&);
  void (*resize)(const isa::Resize&, const Memory&);
  void (*move)(const isa::Move&, const Memory&);
  void (*fill)(const isa::Fill&, const Memory&);
  void (*argmax)(const isa::ArgMax&, const Memory&);
  void (*preprocess)(const isa::Preprocess&, const Memory&);
};

const KernelTable& reference_kernels();
// The fastest bit-exact table for this CPU (environment OPENBPU_SIM_KERNELS=
// reference forces the reference kernels).
const KernelTable& best_kernels();

void execute(const isa::Instruction& ins, const Memory& mem, const KernelTable& kernels);

inline void execute_range(const std::vector<isa::Instruction>& program, size_t first, size_t count,
                          const Memory& mem, const KernelTable& kernels) {
  for (size_t i = first; i < first + count && i < program.size(); ++i)
    execute(program[i], mem, kernels);
}

}  // namespace openbpu::sim

#endif  // OPENBPU_BPU_SIM_EXECUTOR_H_
