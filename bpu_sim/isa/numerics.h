// SPDX-License-Identifier: Apache-2.0
// The numeric facts of the BPU numerics contract (docs/numerics.md), in one
// place for the simulator (reference kernels, validator), the converter
// (quantization, code generation) and the runtime (Quantize/Dequantize):
// integer ranges of the data types, the shift caps of the requantizing
// instructions, quantization of a real value, the one derivation of
// requantization multipliers and shifts, and the accumulator bounds.
#ifndef OPENBPU_BPU_SIM_ISA_NUMERICS_H_
#define OPENBPU_BPU_SIM_ISA_NUMERICS_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "bpu_sim/isa/isa.h"

namespace openbpu::isa {

// ---- data-type ranges ------------------------------------------------------

struct IntRange {
  int64_t lo, hi;
};

// Range of a two's-complement (signed) or unsigned integer of `bits` bits.
constexpr IntRange int_range(int bits, bool is_signed) {
  return is_signed ? IntRange{-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1}
                   : IntRange{0, (int64_t{1} << bits) - 1};
}

constexpr IntRange dtype_range(DType t) {
  switch (t) {
    case DType::kInt8: return int_range(8, true);
    case DType::kInt16: return int_range(16, true);
    case DType::kInt32: return int_range(32, true);
    case DType::kUInt8: return int_range(8, false);
  }
  return {0, 0};
}

// ---- shift caps --------------------------------------------------------------

// Requantization y = floor((v * M + 2^(S-1)) / 2^S): every instruction
// accepts S in [0, kMaxShift], with two tighter caps below.
inline constexpr int kMaxShift = 63;
// Average pooling divides by c * 2^S in 64 bits, which needs c * 2^S < 2^62;
// with at most 2^20 counted taps, S <= 40.
inline constexpr int kMaxAvgPoolShift = 40;
// Bilinear resize: t * M + 2^(S+7) fits int64 when S <= 55 (docs/numerics.md).
inline constexpr int kMaxBilinearShift = 55;
// Two multipliers sharing one shift (eltwise add/sub/max/min, a convolution
// with a residual input): the shift is at most 62, one bit of headroom for
// the sum of the two products.
inline constexpr int kMaxSharedShift = 62;

// ---- accumulators ----------------------------------------------------------

// int8 convolutions accumulate in int32: |bias| < kMaxBias and a reduction
// of `taps` int8 x int8 products (each at most 128 * 128) below kMaxBias
// keep every sum inside int32.
inline constexpr int64_t kMaxBias = int64_t{1} << 30;
constexpr bool int8_reduction_fits(int64_t taps) { return taps * 128 * 128 < kMaxBias; }

// ---- quantization of real values -----------------------------------------

// q = clamp(round_half_away_from_zero(v / scale)) to the range; NaN -> 0.
// (Inline and without a libm call: the CPU Quantize of model inputs runs it
// per element. Clamped first, |v / scale| fits an int64, its truncation is
// exact and so is the fraction left. runtime/cpu_ops/quantize.cc has its
// SSE2 twin for int8 rows, held to it by CpuOpsViews.QuantizeOneScaleRowsMatchTheRule.)
inline int32_t quantize_value(double v, double scale, IntRange range) {
  double q = v / scale;
  q = q != q ? 0.0 : q;  // NaN
  const double lo = static_cast<double>(range.lo), hi = static_cast<double>(range.hi);
  q = q < lo ? lo : (q > hi ? hi : q);
  const int64_t t = static_cast<int64_t>(q);  // toward zero
  const double f = q - static_cast<double>(t);
  return static_cast<int32_t>(t + (f >= 0.5 ? 1 : 0) - (f <= -0.5 ? 1 : 0));
}
inline int32_t quantize_value(double v, double scale, DType t) { return quantize_value(v, scale, dtype_range(t)); }

// ---- lookup tables (kLut) ---------------------------------------------------

// int8 inputs index 256 entries directly; int16 inputs interpolate between
// 513 entries spaced 128 apart. Entry i holds f(lut_entry_input(in, i) * s_in)
// quantized to the output's scale and type.
inline constexpr int kLutEntriesInt8 = 256;
inline constexpr int kLutEntriesInt16 = 513;
constexpr int lut_entries(DType in) { return in == DType::kInt8 ? kLutEntriesInt8 : kLutEntriesInt16; }
constexpr int64_t lut_entry_input(DType in, int i) { return in == DType::kInt8 ? i - 128 : int64_t{i} * 128 - 32768; }

// ---- requantization multipliers --------------------------------------------

// The one multiplier/shift derivation: for ratios r[0..n) > 0, the largest
// shift S <= max_shift with round(r[i] * 2^S) < 2^kMultiplierBits for every
// i (or 0), and M[i] = round(r[i] * 2^S) clamped to [1, 2^31 - 1]; then
// r[i] ~= M[i] / 2^S. At most 24 significant bits (unless S = 0 and r >=
// 2^24): the simulator's float requantization is then exact in 3
// operations (docs/numerics.md, "Deriving M and S"); the contract still
// accepts any M in (0, 2^31).
inline constexpr int kMultiplierBits = 24;
void quantize_multipliers(const double* r, int n, int max_shift, int32_t* m, int32_t* shift);

// One ratio (convolutions, element-wise multiplication), S <= max_shift.
inline void quantize_multiplier(double r, int32_t* m, int32_t* shift, int max_shift = kMaxShift) {
  quantize_multipliers(&r, 1, max_shift, m, shift);
}

// Two ratios sharing one shift (S <= kMaxSharedShift).
inline void quantize_multiplier_pair(double r1, double r2, int32_t* m1, int32_t* m2, int32_t* shift) {
  const double r[2] = {r1, r2};
  int32_t m[2];
  quantize_multipliers(r, 2, kMaxSharedShift, m, shift);
  *m1 = m[0], *m2 = m[1];
}

// A requantizing copy of scale ratio r: the exact identity (M = 2^30,
// S = 30) when |r - 1| < 1e-9, else quantize_multiplier(r, ..., max_shift).
void requant_multiplier(double r, int32_t* m, int32_t* shift, int max_shift = kMaxShift);

// The exponent table of kSoftmax for inputs of scale s_in (isa.h, Softmax):
// the smallest table_shift in 0..8 whose 256 steps of 2^shift input units
// reach exp(-12) (below 2^-15 * 2^-2, so the rest of the row rounds to 0),
// and table[j] = round(2^15 * exp(-j * 2^shift * s_in)), j = 0..256.
std::vector<int32_t> softmax_exp_table(double s_in, int32_t* table_shift);

}  // namespace openbpu::isa

#endif  // OPENBPU_BPU_SIM_ISA_NUMERICS_H_
