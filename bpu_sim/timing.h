// SPDX-License-Identifier: Apache-2.0
// First-order timing model of the BPU: estimated cycles per instruction from
// its MACs, the bytes it moves and the march's parameters. The compiler uses
// it to size function calls (max_time_per_fc) and the tools report board-time
// estimates from it. Formula (docs/numerics.md, "Timing model"):
//   cycles = instr_overhead + max(compute, bytes / ddr_bytes_per_cycle)
//   compute = macs / (int8_macs_per_cycle * eff)   (eff = dw_efficiency for
//             depthwise, 1 otherwise; int16 operands cost 4x)
//   element-wise work counts one MAC per element on a 64-lane vector unit.
#ifndef OPENBPU_BPU_SIM_TIMING_H_
#define OPENBPU_BPU_SIM_TIMING_H_

#include <cstdint>
#include <vector>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/isa/march.h"

namespace openbpu::sim {

struct Cost {
  uint64_t macs = 0;
  uint64_t bytes = 0;
  uint64_t cycles = 0;
};

Cost estimate_cost(const isa::Instruction& ins, const isa::MarchInfo& march);

// Microseconds for a cycle count on a march.
double cycles_to_us(uint64_t cycles, const isa::MarchInfo& march);

// Splits a program into function calls whose estimated time stays at or below
// max_us (0 = one function call for the whole program). Each fc holds at least
// one instruction. Returns (first, count, cycles) triples.
struct FcSplit {
  uint32_t first;
  uint32_t count;
  uint64_t cycles;
};
std::vector<FcSplit> split_function_calls(const std::vector<isa::Instruction>& program,
                                          const isa::MarchInfo& march, double max_us);

}  // namespace openbpu::sim

#endif  // OPENBPU_BPU_SIM_TIMING_H_
