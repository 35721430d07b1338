// SPDX-License-Identifier: Apache-2.0
// BPU micro-architectures ("marches"). A march fixes the core count, the data
// alignment of the native layout, the supported data types and the timing
// parameters used by the cost model (bpu_sim/timing.h), and the operator
// limits of its hardware: the converter's placement rules
// (converter/ops/) and the simulator's validator (bpu_sim/validate.h) both
// read them from here.
#ifndef OPENBPU_BPU_SIM_ISA_MARCH_H_
#define OPENBPU_BPU_SIM_ISA_MARCH_H_

#include <cstdint>
#include <string_view>

namespace openbpu::isa {

enum class March : uint8_t {
  kBernoulli2 = 1,  // RDK X3 / J3
  kBayes = 2,       // RDK Ultra / J5
  kBayesE = 3,      // RDK X5
  kNashE = 4,       // J6E / S100
  kNashM = 5,       // J6M / S100P
};

// What the hardware of a march accepts beyond the ISA's structural limits.
struct OpLimits {
  int max_kernel;         // convolution kernel side
  int max_stride;         // convolution / pooling / deconvolution stride
  int max_dilation;       // convolution / pooling / deconvolution dilation
  int max_channels;       // convolution input and output channels
  int max_deconv_kernel;  // deconvolution kernel side
  bool reshape;           // Reshape / Flatten / Squeeze / Unsqueeze map to the BPU
  bool transpose;         // Transpose / DepthToSpace / SpaceToDepth map to the BPU
  bool matmul;            // products of two activations (kMatMul)
  bool rows;              // row reductions: Softmax, LayerNorm (kSoftmax, kLayerNorm)
};

struct MarchInfo {
  March march;
  const char* name;        // as written in yaml / --march
  const char* hw_name;     // as printed by the runtime (BPU platform)
  int cores;
  int channel_align;       // native NHWC channel padding (elements)
  bool int16;             // int16 activations
  bool fp16;
  OpLimits limits;
  // Timing model.
  double clock_mhz;
  double int8_macs_per_cycle;   // peak dense int8 MACs per cycle per core
  double dw_efficiency;         // fraction of peak reached by depthwise conv
  double ddr_bytes_per_cycle;   // sustained DDR bandwidth per core
  double sram_kib;              // on-chip buffer; tensors above it stream from DDR
  double instr_overhead_cycles; // fixed cost per instruction
  double fc_overhead_cycles;    // fixed cost per function call
};

// Table of all marches (index by March value - 1).
const MarchInfo* all_marches(int* count);
// Looks a march up by its yaml name ("bernoulli2", "bayes", "bayes-e", "nash-e",
// "nash-m"); case-insensitive. Returns nullptr when unknown.
const MarchInfo* find_march(std::string_view name);
const MarchInfo& march_info(March m);

inline int align_up(int v, int a) { return (v + a - 1) / a * a; }

}  // namespace openbpu::isa

#endif  // OPENBPU_BPU_SIM_ISA_MARCH_H_
