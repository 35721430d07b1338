// SPDX-License-Identifier: Apache-2.0
// Compiler stage 3, the memory plan of one BPU subgraph: where every value
// lives (input / output regions, or first-fit offsets in the scratch arena
// with liveness reuse), which values are views of others (a Reshape whose
// layout agrees with its input), and each emitter's temporary scratch.
#ifndef OPENBPU_CONVERTER_CODEGEN_MEMORY_PLAN_H_
#define OPENBPU_CONVERTER_CODEGEN_MEMORY_PLAN_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/codegen/fusion.h"
#include "converter/codegen/lowering.h"

namespace openbpu::cvt {

// First-fit allocator over the scratch region (64-byte blocks).
class ScratchArena {
 public:
  uint64_t alloc(uint64_t size);
  void free(uint64_t offset);
  uint64_t peak() const { return peak_; }

 private:
  struct Block {
    uint64_t offset, size;
  };
  std::vector<Block> live_;
  uint64_t peak_ = 0;
};

struct MemoryPlan {
  std::map<std::string, isa::TensorRef> refs;     // every value the subgraph reads or writes
  std::map<std::string, std::string> alias_of;    // view -> the value whose memory it shares
  std::vector<uint64_t> scratch_offset;           // per op: its emitter's temporary scratch
  uint64_t scratch_size = 0;                      // at least 64
  // The value a view finally shares its memory with.
  std::string root(std::string v) const;
};

struct MemoryOptions {
  int align = 8;                // the march's channel alignment
  bool no_reuse = false;        // keep every value alive (debug builds for the similarity report)
};

// image_inputs: graph inputs read by a Preprocess (runtime image bytes).
MemoryPlan plan_memory(const Graph& g, const SubgraphPlan& plan, const std::map<std::string, QParams>& q,
                       const std::set<std::string>& image_inputs, const MemoryOptions& options);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_CODEGEN_MEMORY_PLAN_H_
