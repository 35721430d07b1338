// SPDX-License-Identifier: Apache-2.0
// Runs ranges of a validated program against bound memory with one kernel
// table. Every table must be bit-exact to the reference kernels; which table
// is fastest on this CPU is chosen once at run time.
#ifndef OPENBPU_BPU_SIM_EXECUTOR_H_
#define OPENBPU_BPU_SIM_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/memory.h"

namespace openbpu::sim {

struct KernelTable {
  const char* name;
  void (*conv)(const isa::Conv&, const Memory&);
  void (*deconv)(const isa::Conv&, const Memory&);
  void (*pool)(const isa::Pool&, const Memory&);
  void (*eltwise)(const isa::Eltwise&, const Memory&);
  void (*lut)(const isa::Lut&, const Memory&);
  void (*resize)(const isa::Resize&, const Memory&);
  void (*move)(const isa::Move&, const Memory&);
  void (*fill)(const isa::Fill&, const Memory&);
  void (*argmax)(const isa::ArgMax&, const Memory&);
  void (*preprocess)(const isa::Preprocess&, const Memory&);
  void (*matmul)(const isa::MatMul&, const Memory&);
  void (*softmax)(const isa::Softmax&, const Memory&);
  void (*layernorm)(const isa::LayerNorm&, const Memory&);
  // Optional: build what conv / deconv cache per instruction (packed
  // weights) ahead of the first run; nonneg_input: the input is known to
  // hold no negative value.
  void (*prepare_conv)(const isa::Conv&, const Memory&, bool transposed, bool nonneg_input) = nullptr;
};

const KernelTable& reference_kernels();
// The fastest bit-exact table for this CPU, chosen once at run time from the
// compiled-in optimized tables (avx512vnni, avx2 | neondot, neon | portable;
// docs/kernels.md). libdnn's OPENBPU_SIM_KERNELS (runtime/core/env.h) makes
// its device use another one, by name.
const KernelTable& best_kernels();
// Every table usable on this CPU (the reference one last): what the
// differential tests and the benchmarks iterate over.
std::vector<const KernelTable*> available_kernels();
// The usable table of that name, or nullptr.
const KernelTable* find_kernels(const char* name);

// Host threads the optimized kernels may use per executing thread to split
// one large convolution (default 1; libdnn sets it from OPENBPU_SIM_THREADS).
int sim_threads();
void set_sim_threads(int n);
// Convolutions of fewer multiply-accumulates run on one thread whatever
// sim_threads says (default 2^21: below it handing tasks to the helpers
// costs more than it saves; the differential tests set 0 to split all).
int64_t sim_split_min_macs();
void set_sim_split_min_macs(int64_t macs);
// How long those helpers, and the thread waiting for them, poll before they
// sleep (bpu_sim/spin.h; libdnn sets it from OPENBPU_SPIN_US; 0: at once).
void set_sim_spin_ns(uint64_t ns);

// Packed-weight cache lifetime (optional). The optimized convolutions pack
// their weights once per instruction and cache them keyed by the constant
// blob's address; without pinning, every execution re-checks a 64-bit
// fingerprint of the instruction's constants (one read pass, so a new program
// whose constants reuse a freed blob's address is never served stale
// weights). A loader that pins its blob for as long as it is bound (its bytes
// do not change until unpin) skips that check; unpin drops the blob's plans.
void pin_constants(const uint8_t* base, uint64_t size);
void unpin_constants(const uint8_t* base);
// Convolution plans in that cache (for tests and diagnostics).
size_t conv_plan_count();

// Builds each instruction's cached state (the convolutions' packed weights)
// before the first run, so that run costs what later ones do. For a program
// whose constants are pinned (mem.constants: that blob); the other regions
// are not read. Which GEMM variant a convolution runs may depend on its
// input's values; the one prepared follows the producer of the input (an
// output clamped at >= 0 is nonnegative), and a run that finds otherwise
// builds its plan then.
void prepare(const std::vector<isa::Instruction>& program, const Memory& mem, const KernelTable& kernels);

void execute(const isa::Instruction& ins, const Memory& mem, const KernelTable& kernels);

inline void execute_range(const std::vector<isa::Instruction>& program, size_t first, size_t count,
                          const Memory& mem, const KernelTable& kernels) {
  for (size_t i = first; i < first + count && i < program.size(); ++i)
    execute(program[i], mem, kernels);
}

}  // namespace openbpu::sim

#endif  // OPENBPU_BPU_SIM_EXECUTOR_H_
