// SPDX-License-Identifier: Apache-2.0
// Region bindings of one BPU program execution: where kInput[i], kOutput[i],
// kConst and kScratch live in host memory for this run.
#ifndef OPENBPU_BPU_SIM_MEMORY_H_
#define OPENBPU_BPU_SIM_MEMORY_H_

#include <cstdint>
#include <vector>

#include "bpu_sim/isa/isa.h"

namespace openbpu::sim {

struct Buffer {
  uint8_t* data = nullptr;
  uint64_t size = 0;
};

struct Memory {
  std::vector<Buffer> inputs;
  std::vector<Buffer> outputs;
  Buffer constants;
  Buffer scratch;

  // Base of the region a reference points to; nullptr when the index does not
  // exist. Callers only resolve references of validated programs.
  const Buffer* region(isa::Region r, uint16_t index) const {
    switch (r) {
      case isa::Region::kInput: return index < inputs.size() ? &inputs[index] : nullptr;
      case isa::Region::kOutput: return index < outputs.size() ? &outputs[index] : nullptr;
      case isa::Region::kConst: return &constants;
      case isa::Region::kScratch: return &scratch;
    }
    return nullptr;
  }
  uint8_t* ptr(const isa::TensorRef& t) const { return region(t.region, t.index)->data + t.offset; }
  const uint8_t* ptr(const isa::ConstRef& c) const { return constants.data + c.offset; }
};

}  // namespace openbpu::sim

#endif  // OPENBPU_BPU_SIM_MEMORY_H_
