// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/isa/march.h"

#include <cctype>

namespace openbpu::isa {

namespace {
// Timing parameters: bernoulli2 is calibrated so that MobileNetV1 224x224 nv12
// estimates to the reference measurement on RDK X3 (BPU subgraph 3.43 ms),
// see tests/bpu_sim/timing_test.cc. The other marches scale from their
// published peak throughput.
const MarchInfo kMarches[] = {
    // march, name, hw, cores, align, int16, fp16, MHz, MAC/cyc, dw eff, DDR B/cyc, SRAM KiB, instr, fc
    {March::kBernoulli2, "bernoulli2", "BERNOULLI2", 2, 8, false, false, 1000.0, 210.0, 0.25, 8.0, 1024.0, 200.0, 400.0},
    {March::kBayes, "bayes", "BAYES", 2, 16, true, false, 1000.0, 1700.0, 0.25, 24.0, 4096.0, 150.0, 300.0},
    {March::kBayesE, "bayes-e", "BAYES-E", 1, 16, true, false, 1000.0, 420.0, 0.25, 12.0, 2048.0, 150.0, 300.0},
    {March::kNashE, "nash-e", "NASH-E", 1, 32, true, true, 1200.0, 2000.0, 0.25, 32.0, 8192.0, 120.0, 240.0},
    {March::kNashM, "nash-m", "NASH-M", 1, 32, true, true, 1200.0, 4000.0, 0.25, 48.0, 16384.0, 120.0, 240.0},
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
