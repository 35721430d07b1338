// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/timing.h"

#include <algorithm>

namespace openbpu::sim {

namespace {

constexpr double kVectorLanes = 64.0;

uint64_t bytes_of(const isa::TensorRef& t) {
  return static_cast<uint64_t>(t.elements()) * static_cast<uint64_t>(isa::dtype_size(t.dtype));
}

double int16_factor(const isa::TensorRef& t) { return t.dtype == isa::DType::kInt16 ? 4.0 : 1.0; }

}  // namespace

Cost estimate_cost(const isa::Instruction& ins, const isa::MarchInfo& m) {
  Cost c;
  double compute = 0.0;
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, isa::Conv>) {
          const uint64_t cin_g = static_cast<uint64_t>(b.in.dims[3] / b.groups);
          // Deconv: every input tap meets every kernel tap.
          const auto& spatial = ins.opcode == isa::Opcode::kDeconv ? b.in : b.out;
          const uint64_t out_c = static_cast<uint64_t>(b.out.dims[3]);
          c.macs = static_cast<uint64_t>(spatial.dims[0]) * spatial.dims[1] * spatial.dims[2] *
                   out_c * b.kernel_h * b.kernel_w * cin_g;
          const bool depthwise = cin_g == 1 && b.groups > 1;
          const double eff = depthwise ? m.dw_efficiency : 1.0;
          compute = c.macs * int16_factor(b.in) / (m.int8_macs_per_cycle * eff);
          c.bytes = bytes_of(b.in) + bytes_of(b.out) + b.weight.count + 4ull * b.bias.count +
                    (b.has_residual ? bytes_of(b.residual) : 0);
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          c.macs = static_cast<uint64_t>(b.out.elements()) * b.kernel_h * b.kernel_w;
          compute = c.macs / kVectorLanes;
          c.bytes = bytes_of(b.in) + bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Eltwise>) {
          c.macs = static_cast<uint64_t>(b.out.elements());
          compute = c.macs / kVectorLanes;
          c.bytes = bytes_of(b.a) + bytes_of(b.b) + bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Resize>) {
          c.macs = static_cast<uint64_t>(b.out.elements()) *
                   (b.mode == isa::ResizeMode::kBilinear ? 4 : 1);
          compute = c.macs / kVectorLanes;
          c.bytes = bytes_of(b.in) + bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Fill>) {
          compute = b.out.elements() / kVectorLanes;
          c.bytes = bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Preprocess>) {
          c.macs = static_cast<uint64_t>(b.out.elements()) * 3;
          compute = c.macs / kVectorLanes;
          c.bytes = bytes_of(b.in) + bytes_of(b.out);
        } else {  // Lut, Move, ArgMax
          c.macs = static_cast<uint64_t>(b.in.elements());
          compute = c.macs / kVectorLanes;
          c.bytes = bytes_of(b.in) + bytes_of(b.out);
        }
      },
      ins.body);
  const double memory = static_cast<double>(c.bytes) / m.ddr_bytes_per_cycle;
  c.cycles = static_cast<uint64_t>(m.instr_overhead_cycles + std::max(compute, memory) + 0.5);
  return c;
}

double cycles_to_us(uint64_t cycles, const isa::MarchInfo& m) {
  return static_cast<double>(cycles) / m.clock_mhz;
}

std::vector<FcSplit> split_function_calls(const std::vector<isa::Instruction>& program,
                                          const isa::MarchInfo& march, double max_us) {
  std::vector<FcSplit> fcs;
  const double budget = max_us > 0 ? max_us * march.clock_mhz : 0.0;
  FcSplit cur{0, 0, static_cast<uint64_t>(march.fc_overhead_cycles)};
  for (uint32_t i = 0; i < program.size(); ++i) {
    const uint64_t cyc = estimate_cost(program[i], march).cycles;
    if (budget > 0 && cur.count > 0 && static_cast<double>(cur.cycles + cyc) > budget) {
      fcs.push_back(cur);
      cur = FcSplit{i, 0, static_cast<uint64_t>(march.fc_overhead_cycles)};
    }
    cur.count++;
    cur.cycles += cyc;
  }
  if (cur.count > 0 || fcs.empty()) fcs.push_back(cur);
  return fcs;
}

}  // namespace openbpu::sim
