// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/isa/march.h"

#include <cctype>

namespace openbpu::isa {

namespace {
// Operator limits per hardware generation (X3: bernoulli2; J5/X5: bayes,
// bayes-e; J6: nash-e, nash-m).
constexpr OpLimits kLimitsX3 = {.max_kernel = 7, .max_stride = 4, .max_dilation = 16, .max_channels = 2048,
                                .max_deconv_kernel = 14, .reshape = false, .transpose = false, .matmul = false, .rows = false};
constexpr OpLimits kLimitsJ5 = {.max_kernel = 15, .max_stride = 8, .max_dilation = 32, .max_channels = 8192,
                                .max_deconv_kernel = 14, .reshape = true, .transpose = true, .matmul = true, .rows = true};
constexpr OpLimits kLimitsJ6 = {.max_kernel = 31, .max_stride = 8, .max_dilation = 32, .max_channels = 16384,
                                .max_deconv_kernel = 31, .reshape = true, .transpose = true, .matmul = true, .rows = true};

// Timing parameters (docs/timing.md): bernoulli2's int8 MACs per cycle is
// fitted so that the converter's MobileNetV1 224x224 nv12 estimates to the
// reference measurement on RDK X3 (BPU subgraph 3.43 ms; tests/tools and
// tests/bpu_sim/timing_test.cc). The other marches scale from their published
// peak throughput (not calibrated: no public measurement).
constexpr MarchInfo kMarches[] = {
    {.march = March::kBernoulli2, .name = "bernoulli2", .hw_name = "BERNOULLI2", .cores = 2, .channel_align = 8,
     .int16 = false, .fp16 = false, .limits = kLimitsX3, .clock_mhz = 1000.0, .int8_macs_per_cycle = 216.0,
     .dw_efficiency = 0.25, .ddr_bytes_per_cycle = 8.0, .sram_kib = 1024.0, .instr_overhead_cycles = 200.0,
     .fc_overhead_cycles = 400.0},
    {.march = March::kBayes, .name = "bayes", .hw_name = "BAYES", .cores = 2, .channel_align = 16, .int16 = true,
     .fp16 = false, .limits = kLimitsJ5, .clock_mhz = 1000.0, .int8_macs_per_cycle = 1700.0, .dw_efficiency = 0.25,
     .ddr_bytes_per_cycle = 24.0, .sram_kib = 4096.0, .instr_overhead_cycles = 150.0, .fc_overhead_cycles = 300.0},
    {.march = March::kBayesE, .name = "bayes-e", .hw_name = "BAYES-E", .cores = 1, .channel_align = 16,
     .int16 = true, .fp16 = false, .limits = kLimitsJ5, .clock_mhz = 1000.0, .int8_macs_per_cycle = 420.0,
     .dw_efficiency = 0.25, .ddr_bytes_per_cycle = 12.0, .sram_kib = 2048.0, .instr_overhead_cycles = 150.0,
     .fc_overhead_cycles = 300.0},
    {.march = March::kNashE, .name = "nash-e", .hw_name = "NASH-E", .cores = 1, .channel_align = 32, .int16 = true,
     .fp16 = true, .limits = kLimitsJ6, .clock_mhz = 1200.0, .int8_macs_per_cycle = 2000.0, .dw_efficiency = 0.25,
     .ddr_bytes_per_cycle = 32.0, .sram_kib = 8192.0, .instr_overhead_cycles = 120.0, .fc_overhead_cycles = 240.0},
    {.march = March::kNashM, .name = "nash-m", .hw_name = "NASH-M", .cores = 1, .channel_align = 32, .int16 = true,
     .fp16 = true, .limits = kLimitsJ6, .clock_mhz = 1200.0, .int8_macs_per_cycle = 4000.0, .dw_efficiency = 0.25,
     .ddr_bytes_per_cycle = 48.0, .sram_kib = 16384.0, .instr_overhead_cycles = 120.0, .fc_overhead_cycles = 240.0},
};
}  // namespace

const MarchInfo* all_marches(int* count) {
  *count = static_cast<int>(sizeof(kMarches) / sizeof(kMarches[0]));
  return kMarches;
}

const MarchInfo* find_march(std::string_view name) {
  for (const auto& m : kMarches) {
    std::string_view n(m.name);
    if (n.size() != name.size()) continue;
    bool eq = true;
    for (size_t i = 0; i < n.size() && eq; ++i)
      eq = std::tolower(static_cast<unsigned char>(name[i])) == n[i];
    if (eq) return &m;
  }
  return nullptr;
}

const MarchInfo& march_info(March m) {
  int idx = static_cast<int>(m) - 1;
  if (idx < 0 || idx >= static_cast<int>(sizeof(kMarches) / sizeof(kMarches[0]))) idx = 0;
  return kMarches[idx];
}

}  // namespace openbpu::isa
