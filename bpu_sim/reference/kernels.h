// SPDX-License-Identifier: Apache-2.0
// Reference kernels: the definition of the BPU numerics. Scalar, simple,
// exact-integer code that every optimized kernel must match bit for bit.
// Each kernel executes one validated instruction (bpu_sim/validate.h) against
// the bound memory; it never fails and never reads or writes outside the
// views of its operands.
#ifndef OPENBPU_BPU_SIM_REFERENCE_KERNELS_H_
#define OPENBPU_BPU_SIM_REFERENCE_KERNELS_H_

#include <cstdint>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/memory.h"

namespace openbpu::sim::ref {

// requant(v, M, S) = floor((v*M + 2^(S-1)) / 2^S) with exact integers (S in
// [0, 63], 2^-1 taken as 0 for S = 0), then clamped to [lo, hi].
int64_t requantize(int64_t v, int32_t multiplier, int32_t shift);
int64_t clamp64(int64_t v, int64_t lo, int64_t hi);

void conv(const isa::Conv& ins, const Memory& mem);
void deconv(const isa::Conv& ins, const Memory& mem);
void pool(const isa::Pool& ins, const Memory& mem);
void eltwise(const isa::Eltwise& ins, const Memory& mem);
void lut(const isa::Lut& ins, const Memory& mem);
void resize(const isa::Resize& ins, const Memory& mem);
void move(const isa::Move& ins, const Memory& mem);
void fill(const isa::Fill& ins, const Memory& mem);
void argmax(const isa::ArgMax& ins, const Memory& mem);
void preprocess(const isa::Preprocess& ins, const Memory& mem);
void matmul(const isa::MatMul& ins, const Memory& mem);
void softmax(const isa::Softmax& ins, const Memory& mem);
void layernorm(const isa::LayerNorm& ins, const Memory& mem);

// Executes one instruction with the reference kernels.
void execute(const isa::Instruction& ins, const Memory& mem);

}  // namespace openbpu::sim::ref

#endif  // OPENBPU_BPU_SIM_REFERENCE_KERNELS_H_
