// SPDX-License-Identifier: Apache-2.0
// Optimized simulator kernels (internal to bpu_sim): the building blocks one
// instruction set contributes (ConvIsa), the portable drivers that run a
// validated instruction with them, and the kernel tables per dispatch path.
//
// Every optimized path is bit-exact to bpu_sim/reference (docs/numerics.md,
// docs/kernels.md). The drivers rely on what the validator guarantees: int8
// convolutions have an exact accumulator (bias included) inside int32,
// multipliers are in (0, 2^31), shifts in [0, 63], views lie inside their
// regions and an output never partially overlaps an input.
#ifndef OPENBPU_BPU_SIM_KERNELS_KERNELS_H_
#define OPENBPU_BPU_SIM_KERNELS_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "bpu_sim/executor.h"
#include "bpu_sim/isa/isa.h"
#include "bpu_sim/memory.h"

namespace openbpu::sim::kern {

// Per-output-channel requantization parameters in natural channel order,
// padded with harmless values to a multiple of 16 channels (see ConvPlan).
// The vector epilogues use the derived arrays (even/odd lane splits).
struct RequantParams {
  const int32_t* bias;   // full bias (minus the u8 compensation of VNNI kernels)
  const int32_t* mult;   // M
  const int32_t* rmult;  // Mr (residual), or nullptr
  const int8_t* shift;   // S
  // Helpers of the x86 vector epilogue:
  //   m_odd[ch] = M[ch + 1], rm_odd[ch] = Mr[ch + 1] (so that _mm256_mul_epi32,
  //   which reads the even int32 lanes, sees the odd channels of a block);
  //   per 8-channel block b, int64 values of the even channels then the odd ones
  //   (index b*8 + {0..3} = channels 8b + {0,2,4,6}, b*8 + {4..7} = 8b + {1,3,5,7}):
  //   c1 = 2^(S-1) + 2^63 (wrapping), s64 = S, off = 2^(63-S) (wrapping).
  //   Then floor((v + 2^(S-1)) / 2^S) = ((uint64)(v + c1) >> S) - off exactly
  //   whenever v + 2^(S-1) fits int64 (docs/kernels.md).
  const int32_t* m_odd;
  const int32_t* rm_odd;
  const int64_t* c1;
  const int64_t* s64;
  const int64_t* off;
  // Every S >= 33 and no residual: with h = floor(acc*M / 2^32) (the high
  // half of the product), floor((acc*M + 2^(S-1)) / 2^S) = (h + r32) >> sh32
  // with r32 = 2^(S-33), sh32 = S-32: 32-bit lanes only (docs/kernels.md).
  const int32_t* r32;
  const int32_t* sh32;
  bool shift_ge33;
  int32_t lo, hi;    // output range (activation bounds within the output type)
  bool fits32;       // no residual and every M <= 2^S: the requantized value fits int32
  bool vector_safe;  // false: a channel needs the scalar 128-bit path (S = 63 with residual)
};

// Runs of `n` output channels [co0, co0 + n) of npix output pixels (pixel p
// at acc + p*acc_pstride, out + p*out_pstride bytes, residual + p*res_pstride
// bytes).
struct EpilogueArgs {
  const int32_t* acc;  // n accumulators (bias not yet added)
  int n, co0;
  int npix = 1;
  int64_t acc_pstride = 0, out_pstride = 0, res_pstride = 0;
  uint8_t* out;         // channel co0 of the pixel
  int64_t out_cstride;  // elements
  isa::DType out_type;
  const uint8_t* residual;  // channel co0 of the residual pixel, or nullptr
  int64_t res_cstride;      // elements
  isa::DType res_type;
  const RequantParams* rq;
};

// Input copy formats of the GEMM kernels.
enum class InputFormat : uint8_t {
  kS16,  // int16 (sign-extended int8 or int16 values)
  kS8,   // int8
  kU8,   // int8 ^ 0x80 (x + 128 as uint8; VNNI's unsigned operand)
};

// One MR x NR tile of a convolution as an indirect GEMM: for every tap t and
// pixel m, rows[t*MR + m] points at the first channel of the group in the
// dense input copy (or at a zero row for taps outside the image); the kernel
// reads cin_pad elements from each. Packed weights of one NR block:
// [tap][cin_pad/kg][NR][kg] of int8 (esize 1) or int16 (esize 2).
// acc receives MR rows of NR int32 sums (overwritten, not accumulated),
// acc_stride int32 elements apart.
struct GemmArgs {
  const void* const* rows;
  int taps;
  int cin_pad;
  const void* w;
  int32_t* acc;
  int acc_stride;
};

// Depthwise rows: for each of npix output pixels, taps pointers to its input
// pixels (channel 0; zero row outside the image) in the int8 input with
// channel stride 1; acc receives [npix][c_blocks*16] int32 for the channels
// [0, c_full) where c_full is a multiple of 16 (the caller handles the rest).
struct DwArgs {
  const int8_t* const* px;  // [npix][taps]
  int npix, taps, c_full;
  int acc_stride;  // int32 elements between two pixels' accumulators
  const void* w;   // packed by ConvIsa::dw_pack
  int32_t* acc;
};

struct ConvIsa {
  const char* name;
  // GEMM kernel geometry.
  int mr, nr;
  int kg;     // k-group interleave of the packed weights (1, 2 or 4)
  int kpad;   // cin_pad is a multiple of this (>= kg)
  int esize;  // 1 (int8 data) or 2 (int16 data)
  InputFormat fmt;
  void (*gemm)(const GemmArgs&);
  // Optional second tile height (same layout) for pixel counts that leave
  // much of the last MR tile empty (7x7 maps); 0 = none. The driver takes it
  // when ceil(P / mr2) * mr2 is below 0.95 * ceil(P / mr) * mr.
  int mr2;
  void (*gemm2)(const GemmArgs&);
  // Depthwise kernel over 16-channel blocks (nullptr: portable one is used).
  void (*dw)(const DwArgs&);
  // Packs depthwise weights src[c][tap] (c < c_full) for dw; returns bytes
  // when dst is nullptr.
  size_t (*dw_pack)(const int8_t* src, int c_full, int taps, void* dst);
  // Requantizes and stores a run of channels of one pixel.
  void (*epilogue)(const EpilogueArgs&);
  // Optional variant for inputs without negative values (checked per run,
  // e.g. after ReLU): another GEMM layout that is exact only for x >= 0.
  const ConvIsa* nonneg;
};

// Instruction set parts (defined when compiled in for the target).
const ConvIsa& portable_isa();
#if defined(__x86_64__)
const ConvIsa& avx2_isa();
const ConvIsa& avx512vnni_isa();
#endif
#if defined(__aarch64__)
const ConvIsa& neon_isa();
const ConvIsa& neondot_isa();
#endif

// Scalar pieces shared by every ISA (portable/conv_s8_portable.cc).
void epilogue_scalar(const EpilogueArgs& a);
void dw_portable(const DwArgs& a);
size_t dw_pack_s16(const int8_t* src, int c_full, int taps, void* dst);

// Drivers (portable/conv_driver.cc): run one validated instruction with the
// given ISA parts.
void conv(const ConvIsa& isa, const isa::Conv& c, const Memory& mem);
void deconv(const isa::Conv& c, const Memory& mem);

// Optimized portable kernels of the other instructions (portable/ops_portable.cc).
void pool(const isa::Pool& p, const Memory& mem);
void eltwise(const isa::Eltwise& e, const Memory& mem);
void lut(const isa::Lut& l, const Memory& mem);
void resize(const isa::Resize& r, const Memory& mem);
void move(const isa::Move& m, const Memory& mem);
void fill(const isa::Fill& f, const Memory& mem);
void argmax(const isa::ArgMax& a, const Memory& mem);
void preprocess(const isa::Preprocess& p, const Memory& mem);

// CPU features (cpu_features.cc).
struct CpuFeatures {
  bool avx2 = false;        // AVX2 + FMA + OS support for ymm state
  bool avx512vnni = false;  // AVX-512 F/BW/VL + VNNI + OS support for zmm state
  bool neon = false;
  bool neon_dot = false;  // ARMv8.2 SDOT/UDOT
};
CpuFeatures detect_cpu();

// Kernel tables of the compiled-in paths, fastest first; all bit-exact.
// names: "avx512vnni", "avx2", "neondot", "neon", "portable".
struct TableEntry {
  const KernelTable* table;
  bool supported;  // usable on this CPU
};
size_t kernel_tables(TableEntry* out, size_t max);

// Host threads per convolution (OPENBPU_SIM_THREADS, default 1; tests may
// override it with set_conv_threads).
int conv_threads();
void set_conv_threads(int n);

}  // namespace openbpu::sim::kern

#endif  // OPENBPU_BPU_SIM_KERNELS_KERNELS_H_
