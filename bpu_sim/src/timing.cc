// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/timing.h"

#include <algorithm>
#include <iterator>

namespace openbpu::sim {

namespace {

constexpr double kVectorLanes = 64.0;

uint64_t bytes_of(const isa::TensorRef& t) {
  return static_cast<uint64_t>(t.elements()) * static_cast<uint64_t>(isa::dtype_size(t.dtype));
}

double int16_factor(const isa::TensorRef& t) { return t.dtype == isa::DType::kInt16 ? 4.0 : 1.0; }

// The board's application CPU per march (docs/timing.md). bernoulli2 is
// fitted to the RDK X3 MobileNetV1 profile of the reference documents
// (Dequantize of 1000 values 0.123 ms, Softmax of 1000 values 0.134 ms, whole
// model 4.00 ms with a 3.43 ms BPU subgraph); the others are that fit scaled
// by their CPUs' relative speed (not calibrated: no public figure).
struct CpuTiming {
  isa::March march;
  double op_overhead_us;   // fixed cost of one CPU operator
  double ns_per_element;   // per output element (x2 for transcendental ops)
  double task_overhead_us; // per model run
};
constexpr CpuTiming kCpuTiming[] = {
    {isa::March::kBernoulli2, 112.0, 11.0, 320.0},  // 4x Cortex-A53 @ 1.2 GHz (RDK X3)
    {isa::March::kBayes, 73.0, 7.0, 210.0},         // 8x Cortex-A55 @ 1.5 GHz (J5)
    {isa::March::kBayesE, 73.0, 7.0, 210.0},        // 8x Cortex-A55 @ 1.5 GHz (RDK X5)
    {isa::March::kNashE, 34.0, 3.3, 96.0},          // Cortex-A78AE (J6E)
    {isa::March::kNashM, 34.0, 3.3, 96.0},          // Cortex-A78AE (J6M)
};

const CpuTiming& cpu_timing(const isa::MarchInfo& m) {
  for (const CpuTiming& c : kCpuTiming)
    if (c.march == m.march) return c;
  return kCpuTiming[0];
}

bool transcendental(std::string_view op) {
  static constexpr std::string_view kOps[] = {"Softmax", "LogSoftmax", "Exp", "Log", "Sigmoid", "Tanh",
                                              "Erf", "Gelu", "Pow", "Sqrt", "Reciprocal", "Softplus"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

}  // namespace

Cost estimate_cost(const isa::Instruction& ins, const isa::MarchInfo& m) {
  Cost c;
  double compute = 0.0;
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, isa::Conv>) {
          const uint64_t cin_g = static_cast<uint64_t>(b.in.dims[3] / b.groups);
          c.macs = static_cast<uint64_t>(isa::conv_macs(b, ins.opcode == isa::Opcode::kDeconv));
          const bool depthwise = cin_g == 1 && b.groups > 1;
          const double eff = depthwise ? m.dw_efficiency : 1.0;
          compute = c.macs * int16_factor(b.in) / (m.int8_macs_per_cycle * eff);
          c.loaded = bytes_of(b.in) + b.weight.count + 4ull * b.bias.count +
                     (b.has_residual ? bytes_of(b.residual) : 0);
          c.stored = bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          c.macs = static_cast<uint64_t>(b.out.elements()) * b.kernel_h * b.kernel_w;
          compute = c.macs / kVectorLanes;
          c.loaded = bytes_of(b.in);
          c.stored = bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Eltwise>) {
          c.macs = static_cast<uint64_t>(b.out.elements());
          compute = c.macs / kVectorLanes;
          c.loaded = bytes_of(b.a) + bytes_of(b.b);
          c.stored = bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Resize>) {
          c.macs = static_cast<uint64_t>(b.out.elements()) *
                   (b.mode == isa::ResizeMode::kBilinear ? 4 : 1);
          compute = c.macs / kVectorLanes;
          c.loaded = bytes_of(b.in);
          c.stored = bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Fill>) {
          compute = b.out.elements() / kVectorLanes;
          c.stored = bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::MatMul>) {
          // The convolution datapath with the second operand streamed as weights.
          c.macs = static_cast<uint64_t>(b.out.elements()) * static_cast<uint64_t>(b.a.dims[3]);
          compute = c.macs * std::max(int16_factor(b.a), int16_factor(b.b)) / m.int8_macs_per_cycle;
          c.loaded = bytes_of(b.a) + bytes_of(b.b);
          c.stored = bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Softmax> || std::is_same_v<T, isa::LayerNorm>) {
          // Two passes over each row (reduce, then normalize) on the vector unit.
          c.macs = static_cast<uint64_t>(b.in.elements()) * 2;
          compute = c.macs / kVectorLanes;
          c.loaded = bytes_of(b.in);
          c.stored = bytes_of(b.out);
        } else if constexpr (std::is_same_v<T, isa::Preprocess>) {
          c.macs = static_cast<uint64_t>(b.out.elements()) * 3;
          compute = c.macs / kVectorLanes;
          c.loaded = bytes_of(b.in);
          c.stored = bytes_of(b.out);
        } else {  // Lut, Move, ArgMax
          c.macs = static_cast<uint64_t>(b.in.elements());
          compute = c.macs / kVectorLanes;
          c.loaded = bytes_of(b.in);
          c.stored = bytes_of(b.out);
        }
      },
      ins.body);
  c.bytes = c.loaded + c.stored;
  const double memory = static_cast<double>(c.bytes) / m.ddr_bytes_per_cycle;
  c.cycles = static_cast<uint64_t>(m.instr_overhead_cycles + std::max(compute, memory) + 0.5);
  return c;
}

double cycles_to_us(uint64_t cycles, const isa::MarchInfo& m) {
  return static_cast<double>(cycles) / m.clock_mhz;
}

double estimate_cpu_op_us(std::string_view op_type, uint64_t elements, const isa::MarchInfo& march) {
  const CpuTiming& c = cpu_timing(march);
  const double per = c.ns_per_element * (transcendental(op_type) ? 2.0 : 1.0);
  return c.op_overhead_us + static_cast<double>(elements) * per / 1000.0;
}

double task_overhead_us(const isa::MarchInfo& march) { return cpu_timing(march).task_overhead_us; }

double estimate_model_us(const std::vector<SegmentCost>& segments, const isa::MarchInfo& march) {
  double us = task_overhead_us(march);
  for (const SegmentCost& s : segments)
    us += s.bpu ? cycles_to_us(s.cycles, march) : estimate_cpu_op_us(s.op_type, s.elements, march);
  return us;
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
