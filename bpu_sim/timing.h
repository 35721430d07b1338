// SPDX-License-Identifier: Apache-2.0
// First-order timing model of the BPU: estimated cycles per instruction from
// its MACs, the bytes it moves and the march's parameters. The compiler uses
// it to size function calls (max_time_per_fc) and the tools report board-time
// estimates from it (docs/timing.md: formulas, calibration, errors):
//   cycles = instr_overhead + max(compute, bytes / ddr_bytes_per_cycle)
//   compute = macs / (int8_macs_per_cycle * eff)   (eff = dw_efficiency for
//             depthwise, 1 otherwise; int16 operands cost 4x)
//   element-wise work counts one MAC per element on a 64-lane vector unit.
#ifndef OPENBPU_BPU_SIM_TIMING_H_
#define OPENBPU_BPU_SIM_TIMING_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/isa/march.h"

namespace openbpu::sim {

struct Cost {
  uint64_t macs = 0;
  uint64_t bytes = 0;   // loaded + stored
  uint64_t loaded = 0;  // read: inputs, weights, bias, residual
  uint64_t stored = 0;  // written: the output
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

// ---- The rest of a model run on the board (docs/timing.md) ----------------
// A CPU operator on the board's application CPU:
//   us = op_overhead_us + elements * ns_per_element * (2 for transcendental
//        operators such as Softmax, Exp, Sigmoid; 1 otherwise) / 1000
// with `elements` the number of output elements. A model run adds
// task_overhead_us (task submission, input/output layout work, wait).
double estimate_cpu_op_us(std::string_view op_type, uint64_t elements, const isa::MarchInfo& march);
double task_overhead_us(const isa::MarchInfo& march);

// One segment of a model for estimate_model_us: a BPU program (its fc
// cycles) or a CPU operator (type and output elements).
struct SegmentCost {
  bool bpu = false;
  uint64_t cycles = 0;
  std::string_view op_type;
  uint64_t elements = 0;
};
// Estimated board latency of one run of a model: its segments in sequence
// plus the task overhead.
double estimate_model_us(const std::vector<SegmentCost>& segments, const isa::MarchInfo& march);

}  // namespace openbpu::sim

#endif  // OPENBPU_BPU_SIM_TIMING_H_
