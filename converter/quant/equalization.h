// SPDX-License-Identifier: Apache-2.0
// Cross-layer equalization (Nagel et al., "Data-free quantization", 2019)
// of consecutive BPU convolutions A -> [Relu] -> B: channel c of A's output
// is scaled by t_c and B's input channel c by 1 / t_c, which leaves the
// float model's function unchanged (Relu is positively homogeneous) but
// gives the activation between them, quantized with one scale per tensor,
// channels of similar range. The ranges come from a float run over a few
// calibration samples.
#ifndef OPENBPU_CONVERTER_QUANT_EQUALIZATION_H_
#define OPENBPU_CONVERTER_QUANT_EQUALIZATION_H_

#include <map>
#include <string>
#include <vector>

#include "converter/ir/graph.h"
#include "converter/partition/placement.h"

namespace openbpu::cvt {

// Samples whose per-channel maxima set the scales.
inline constexpr size_t kEqualizationSamples = 16;
// Bound of a channel's scale (a nearly dead channel is not blown up).
inline constexpr double kMaxEqualizationScale = 64.0;

struct EqualizedPair {
  std::string first, second;  // node names A, B
  double max_scale = 1;       // largest t_c (or 1 / smallest)
};

// Equalizes every pair of BPU convolutions A -> [Relu] -> B whose
// intermediate values have no other reader: B depthwise (one input channel
// per group) takes every channel to the largest range of the activation
// (B's per-output-channel weight scales absorb it); otherwise
// t_c = sqrt(r_w(c) / r_x(c)) (r_w: B's largest |weight| of input channel c,
// r_x: the activation's largest |x| of channel c), both ranges meeting at
// sqrt(r_w r_x). Returns the pairs equalized.
bool equalize_cross_layer(Graph* g, const Placement& pl, const std::vector<std::map<std::string, Value>>& samples,
                          std::vector<EqualizedPair>* pairs, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_EQUALIZATION_H_
