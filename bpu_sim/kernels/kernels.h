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
#include <cstring>

#include "bpu_sim/cpu_features.h"
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
  const int32_t* s32;  // S as int32
  // Fused tiles of ConvIsa::fused64 kernels: v = acc*M (+ R*Mr, the int8
  // residual at res_delta bytes from each output pixel, when rmult) in
  // 64-bit lanes, (v + 2^(S-1)) >> S arithmetic, clamped to [lo, hi] in
  // 64 bits; exact for every S <= 62 (|v| < 2^62 + 2^38, so
  // v + 2^(S-1) < 2^63).
  bool fused64 = false;
  intptr_t res_delta = 0;
  // fused64 where the plan proved, for every channel, |v| * 2^k < 2^62 and
  // S + k in [33, 62] (k = max(0, 33 - min S), from |acc| <= |bias| + 128 *
  // sum |w| and |R| <= 128): then with S' = S + k and h = floor(v * 2^k /
  // 2^32) (the low half of v >> (32 - k), |h| <= 2^30),
  // floor((v + 2^(S-1)) / 2^S) = (h + 2^(S'-33)) >> (S' - 32) in 32-bit
  // lanes (the S >= 33 form, docs/kernels.md); no 64-bit rounding or clamp.
  bool hi32 = false;
  int32_t hi32_srl = 32;           // 32 - k
  const int32_t* hi32_r = nullptr;   // 2^(S'-33)
  const int32_t* hi32_sh = nullptr;  // S' - 32
  // float_requant (below) proven exact for every channel (no residual):
  // fused tiles of ConvIsa::float_gemm kernels use it, with the per-channel
  // hi / lo constants (natural order, padded like the other arrays).
  bool float_rq = false;
  const float* fhi = nullptr;
  const float* flo = nullptr;
  // float_rq and every channel's lo == 0 (M < 2^24): the 3-operation form
  // (FloatRequant), flo unused.
  bool float3 = false;
};

// float_requant: requant(acc, M, S) = floor((acc*M + 2^(S-1)) / 2^S) in
// fp32, exact under a condition proven per channel at plan time. With M_hi
// = M rounded to 24 significant bits, M_lo = M - M_hi, hi = M_hi * 2^-S and
// lo = M_lo * 2^-S (both exact floats), and every float operation rounding
// toward -infinity (MXCSR.RC = down):
//   z = fma(float(acc), hi, float(acc) * lo);  y = int(z + 0.5)
// equals requant(acc, M, S) for every |acc| <= amax when
//   amax <= 2^24, amax * |M_lo| < 2^24 and amax * M < 2^(S+22):
// float(acc) is exact, float(acc) * lo = acc*M_lo*2^-S is exact (an integer
// below 2^24 times a power of two), so the fma rounds x = acc*M/2^S once,
// down; with k = floor(x + 1/2), k - 1/2 <= x < k + 1/2 where k +- 1/2 are
// floats (|x| < 2^22), hence k - 1/2 <= z < k + 1/2, k <= z + 1/2 < k + 1
// and its rounding down stays in [k, k + 1): the conversion, rounding down,
// gives k (docs/kernels.md). False when the condition fails.
// When lo == 0 (M < 2^24, the converter's multipliers) the same argument
// with z = x exactly gives the 3-operation form
//   y = int(fma(float(acc), hi, 0.5))
// (the fma rounds x + 1/2 once, down, which never crosses the integer
// floor(x + 1/2) = k, a float since |k| <= 2^22).
struct FloatRequant {
  float hi, lo;
};
bool float_requant_channel(int64_t amax, int32_t m, int s, FloatRequant* f);

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
// acc_stride int32 elements apart. The fused variants (ConvIsa::gemm_q)
// instead requantize in registers (every S >= 33, no residual, int8 output
// with channel stride 1: RequantParams::shift_ge33) and store channels
// [co0, co0 + n) (n <= NR) of pixel m at out[m] + co0.
struct GemmArgs {
  const void* const* rows;
  int taps;
  int cin_pad;
  const void* w;
  int32_t* acc;
  int acc_stride;
  int8_t* const* out = nullptr;
  int co0 = 0, n = 0;
  const RequantParams* rq = nullptr;
  // An earlier call of this task ran the same tile (rows and the values
  // they point to) with another channel block and left what it prepared
  // from them in `scratch` (ConvIsa::tiles_outer).
  bool same_rows = false;
  // ConvIsa::gemm_scratch bytes (64-byte aligned) of this thread's
  // workspace, kept between the calls of one task (nullptr: none asked).
  uint8_t* scratch = nullptr;
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

// Depthwise over column groups (the "dw4" path, int8 input): every padded
// input row is copied once into a zero-padded int8 row of pixel stride cp
// (channels [c, cp) zero) and converted by dw4_convert into column groups
// (for every even column, the 4 columns from there interleaved per
// channel); an output pixel then reads ceil((kw + parity) / 4) groups per
// kernel row and the kernel forms 4-product sums per int32 lane (x86:
// vpmaddubsw + vpmaddwd; inputs with negative values take |x| and
// sign(w, x), exact because no weight is -128). dilation_w must be 1.
struct DwPackArgs {
  const int8_t* w;  // [c][kh][kw]
  int c, kh, kw;
  // Natural-order per-channel bias, M, and the S >= 33 rounding terms
  // (RequantParams::r32 / sh32), padded like the plan's arrays.
  const int32_t *bias, *mult, *r32, *sh32;
  // float_requant constants (FloatRequant, natural order), or nullptr: the
  // packed M / odd-lane M slots then hold their bits instead.
  const float* fhi = nullptr;
  const float* flo = nullptr;
  // Columns between two column groups: 2 (groups at every even column, the
  // weights packed for first-tap parities 0 and 1) or 4 (stride-2 rows:
  // groups at every fourth column, first-tap offsets 0 and 2 within one).
  int gstep = 2;
};
struct DwRowArgs {
  const int8_t* const* rows;  // [kh] column groups of each kernel row's input row
  int kh, kw, stride;         // stride: columns between two output pixels' first taps
  int npix, c, cp;
  bool nonneg;  // no negative value in the rows read
  // Only the kernel rows [kh_lo, kh_hi) read the image (rows[] of the others
  // is nullptr, never read); each other row's values are all pad (the
  // convolution's pad value): it adds pad * the row's weight sum, folded
  // into the initial accumulators.
  int kh_lo = 0, kh_hi = 0;
  int32_t pad = 0;
  const void* pack;
  // out != nullptr: int8 output requantized in registers (every S >= 33, no
  // residual), channel c of pixel p at out + p * out_pstride + c, clamped to
  // [lo, hi]. Else acc receives [npix][acc_stride] int32 sums without bias.
  int8_t* out;
  int64_t out_pstride;
  int32_t lo, hi;
  int32_t* acc;
  int acc_stride;
  // With out: requantize in fp32 (float_requant; the pack holds FloatRequant
  // constants) instead of the S >= 33 integer form; float3: every lo is 0,
  // the 3-operation form (RequantParams::float3).
  bool float_requant = false;
  bool float3 = false;
  int gstep = 2;  // DwPackArgs::gstep (4 only with stride 2)
};

// Depthwise 1x1, stride 1, over dense int8 maps (the "flat" path: per-
// channel scales such as an input's mean/scale): the input and output are
// one run of n bytes whose byte i belongs to channel i % P (P the pixel
// stride; channels [C, P) are padding the kernel must leave unchanged);
// y = clamp(requant(x * w[c] + bias[c])) for every S >= 33, no residual.
// dwflat_pack lays out the per-lane constants of one period of
// lcm(P, 32) bytes (nullptr dst: returns the bytes, 0 when not supported).
struct DwFlatPackArgs {
  const int8_t* w;  // [C]
  int c, p;
  const int32_t *bias, *mult, *r32, *sh32;
  // float_requant constants (natural order) when the plan proved it, else
  // nullptr; a pack that lays out a float_requant kernel (exact for any S)
  // sets *float_out (when not nullptr) to true. float3: every flo is 0 (the
  // 3-operation form, RequantParams::float3).
  const float* fhi = nullptr;
  const float* flo = nullptr;
  bool* float_out = nullptr;
  bool float3 = false;
};
struct DwFlatArgs {
  const int8_t* in;
  int8_t* out;
  int64_t n;  // bytes; the kernel does a multiple of 32 and returns it
  const void* pack;
  int p;
  int32_t lo, hi;
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
  int mr2 = 0;
  void (*gemm2)(const GemmArgs&) = nullptr;
  // Optional fused-requantization variants of gemm / gemm2 (GemmArgs::out).
  void (*gemm_q)(const GemmArgs&) = nullptr;
  void (*gemm2_q)(const GemmArgs&) = nullptr;
  // Optional one-pixel kernels (same layout, MR = 1; fully connected layers
  // and squeeze-excitation): the K loop split over independent accumulators.
  // The driver takes them when the convolution has a single output pixel.
  void (*gemv)(const GemmArgs&) = nullptr;
  void (*gemv_q)(const GemmArgs&) = nullptr;
  // Optional tile height (same layout) for short K (taps * cin_pad <
  // small_k), taken before the mr2 choice (which then compares with mr3):
  // there a tall tile's fused epilogue costs more than the weight loads it
  // saves.
  int small_k = 0, mr3 = 0;
  void (*gemm3)(const GemmArgs&) = nullptr;
  void (*gemm3_q)(const GemmArgs&) = nullptr;
  // Depthwise kernel over 16-channel blocks (nullptr: portable one is used).
  void (*dw)(const DwArgs&);
  // Packs depthwise weights src[c][tap] (c < c_full) for dw; returns bytes
  // when dst is nullptr.
  size_t (*dw_pack)(const int8_t* src, int c_full, int taps, void* dst);
  // Requantizes and stores a run of channels of one pixel.
  void (*epilogue)(const EpilogueArgs&);
  // Optional dw4 depthwise (see DwRowArgs; nullptr: dw above). dw4_cpad is
  // the pixel stride (bytes) of the padded rows for c channels; dw4_pack
  // returns the packed bytes when dst is nullptr; dw4_convert turns a padded
  // row of gstep * (ngc - 1) + 4 columns into ngc column groups of cp * 4
  // bytes (group gc: columns gstep * gc .. + 3; gstep 2 or 4, DwPackArgs)
  // and returns whether any byte of that row is negative (it reads them
  // all); a convert that stores x + 128 (VNNI) returns false. dw4_step4:
  // stride-2 layers use gstep 4.
  int (*dw4_cpad)(int c) = nullptr;
  size_t (*dw4_pack)(const DwPackArgs& a, void* dst) = nullptr;
  bool (*dw4_convert)(const int8_t* plain, int ngc, int c, int gstep, int8_t* dst) = nullptr;
  bool dw4_step4 = false;
  void (*dw4_row)(const DwRowArgs& a) = nullptr;
  // Optional: the multiple the column groups of a row (ngc) are rounded up
  // to for c channels (the convert may place a group's vectors in the next
  // group columns of that multiple; nullptr: 1).
  int (*dw4_galign)(int c) = nullptr;
  // Optional flat depthwise 1x1 (DwFlatArgs).
  size_t (*dwflat_pack)(const DwFlatPackArgs& a, void* dst) = nullptr;
  int64_t (*dwflat)(const DwFlatArgs& a) = nullptr;
  // Optional GEMM variants (the driver picks one per run):
  //   nonneg   exact only for inputs without negative values (one scan of
  //            the input per run decides; e.g. after ReLU);
  //   narrow   the same numerics with 8-channel blocks, for groups of at
  //            most 8 output channels;
  //   signed8  for groups of at most 8 output channels and any input, exact
  //            when no weight is -128 (the plan says; sign_abs).
  //   narrow16 any input, groups of at most 16 output channels and maps of
  //            at least its mr pixels (when neither of the above applies).
  const ConvIsa* nonneg = nullptr;
  const ConvIsa* signed8 = nullptr;
  const ConvIsa* narrow = nullptr;
  const ConvIsa* narrow16 = nullptr;
  bool sign_abs = false;  // the GEMM takes |x| and sign(w, x): wrong for weights of -128
  bool fused64 = false;  // gemm_q / gemm2_q / gemv_q honor RequantParams::fused64
  bool float_gemm = false;  // gemm_q / gemm2_q / gemv_q honor RequantParams::float_rq
  // Those float_requant tiles round as MXCSR says: the driver sets rounding
  // toward -infinity around each task that runs them (and restores it).
  bool float_mxcsr = false;
  // The driver runs each tile's channel blocks one after another (else each
  // block's tiles) and says so in GemmArgs::same_rows: the kernel may keep
  // what it prepared from the rows in GemmArgs::scratch. Where a task's
  // tiles' scratch fits 1 MiB together it gives each tile its own and runs
  // each block's tiles (every weight block read once per task).
  bool tiles_outer = false;
  // Optional: the scratch bytes the gemm kernels need for tiles of `taps`
  // taps of cin_pad (GemmArgs::scratch; sized before the first run, like
  // the driver's own workspaces, so that later runs allocate nothing).
  size_t (*gemm_scratch)(int taps, int cin_pad) = nullptr;
};

// Instruction set parts (defined when compiled in for the target).
const ConvIsa& portable_isa();
#if defined(__x86_64__)
const ConvIsa& avx2_isa();
const ConvIsa& avx512vnni_isa();
const ConvIsa& amx_isa();  // avx512vnni with AMX tiles for the GEMM (CpuFeatures::amx)
#endif
#if defined(__aarch64__)
const ConvIsa& neon_isa();
const ConvIsa& neondot_isa();
#endif

// Copy / fill of a few bytes without a library call (per-pixel loops over
// small channel counts): overlapping fixed-size moves; copy_small needs
// n <= 32. Always inlined: no code is shared across ISA flags, and a call
// from AVX code to a copy that uses only xmm registers left the upper
// register state dirty on return (GCC emits no vzeroupper around it): every
// legacy-SSE instruction of the portable caller then paid the transition
// penalty on Intel CPUs (docs/kernels.md, "Intel Xeon").
#define OPENBPU_INLINE inline __attribute__((always_inline))
static OPENBPU_INLINE void copy_small(void* dst, const void* src, size_t n) {
  uint8_t* d = static_cast<uint8_t*>(dst);
  const uint8_t* s = static_cast<const uint8_t*>(src);
  if (n >= 16) {
    std::memcpy(d, s, 16);
    std::memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else if (n >= 2) {
    std::memcpy(d, s, 2);
    std::memcpy(d + n - 2, s + n - 2, 2);
  } else if (n == 1) {
    *d = *s;
  }
}
static OPENBPU_INLINE void copy_bytes(void* dst, const void* src, size_t n) {
  if (n > 32)
    std::memcpy(dst, src, n);
  else
    copy_small(dst, src, n);
}
static OPENBPU_INLINE void fill_bytes(void* dst, uint8_t v, size_t n) {
  uint8_t* d = static_cast<uint8_t*>(dst);
  if (n > 32) {
    std::memset(d, v, n);
    return;
  }
  const uint64_t w = 0x0101010101010101ull * v;
  if (n >= 8) {
    for (size_t i = 0; i + 8 <= n; i += 8) std::memcpy(d + i, &w, 8);
    std::memcpy(d + n - 8, &w, 8);
  } else {
    for (size_t i = 0; i < n; ++i) d[i] = v;
  }
}

// Scalar pieces shared by every ISA (portable/conv_s8_portable.cc).
void epilogue_scalar(const EpilogueArgs& a);
void dw_portable(const DwArgs& a);
size_t dw_pack_s16(const int8_t* src, int c_full, int taps, void* dst);

// Drivers (portable/conv_driver.cc): run one validated instruction with the
// given ISA parts.
void conv(const ConvIsa& isa, const isa::Conv& c, const Memory& mem);
void deconv(const ConvIsa& isa, const isa::Conv& c, const Memory& mem);
// Builds the plan (packed weights) the instruction will run with, for an
// input with or without negative values, into the shared plan cache; meant
// for pinned constants (executor.h, prepare).
void prepare_conv(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, bool transposed,
                  bool nonneg_input);

// Instruction-set rows of the other instructions (optional; the portable
// drivers resolve the views and finish what a row function leaves).
// Eltwise add / sub / mul of int8 rows into a contiguous int8 row (a_step,
// b_step 1: contiguous; 0: one value for the whole row), whose results all
// fit int32: |a'*Ma| + |b'*Mb| (or |a'*b'*Ma|) < 2^(30 + shift), where
// a' = a - za and b' = b - zb (the zero points; the output's zo is added
// before the clamp).
struct EltwiseRowS8 {
  const int8_t* a;
  const int8_t* b;
  int8_t* out;
  int64_t n, a_step, b_step;
  isa::EltwiseKind kind;
  int32_t ma, mb;
  int shift;
  int32_t lo, hi;  // output range within int8
  int32_t za = 0, zb = 0, zo = 0;
  // kMul whose requantization float_requant_channel proved exact for every
  // product (a - za)(b - zb): y = float_requant(product) with these
  // FloatRequant constants (rounding down), the same integers.
  bool float_mul = false;
  float fhi = 0, flo = 0;
};
struct OpsIsa {
  // Each returns the number of leading elements it did.
  int64_t (*eltwise_s8)(const EltwiseRowS8& r);
  int64_t (*lut_s8)(const int8_t* in, int8_t* out, int64_t n, const int8_t* table);
  // For each of npix pixels p: out[p*out_step + c] = clamp(max over
  // t < taps of rows[t][p*in_step + c], lo, hi) for c < n (a run of output
  // pixels whose taps are all inside the image); taps >= 1, lo <= hi
  // within int8.
  int64_t (*max_s8)(const int8_t* const* rows, int taps, int64_t n, int64_t lo, int64_t hi,
                    int8_t* out, int64_t npix, int64_t in_step, int64_t out_step);
  // acc[c] = sum over r < nrows, t < ntaps of rows[r][t * step + c] for c < n
  // (average pooling; int32: the driver bounds the tap count by 2^23).
  int64_t (*sum_s8)(const int8_t* const* rows, int nrows, int64_t ntaps, int64_t step, int64_t n,
                    int32_t* acc);
};
#if defined(__x86_64__)
const OpsIsa& avx2_ops();
const OpsIsa& avx512vbmi_ops();  // only where cpu_features().avx512vbmi
#endif

// Optimized portable kernels of the other instructions (portable/ops_portable.cc);
// ops: the instruction set's rows, or nullptr.
void pool(const isa::Pool& p, const Memory& mem, const OpsIsa* ops);
void eltwise(const isa::Eltwise& e, const Memory& mem, const OpsIsa* ops);
void lut(const isa::Lut& l, const Memory& mem, const OpsIsa* ops);
void resize(const isa::Resize& r, const Memory& mem);
void move(const isa::Move& m, const Memory& mem);
void fill(const isa::Fill& f, const Memory& mem);
void argmax(const isa::ArgMax& a, const Memory& mem);
void preprocess(const isa::Preprocess& p, const Memory& mem);
void matmul(const isa::MatMul& m, const Memory& mem);
void softmax(const isa::Softmax& s, const Memory& mem);
void layernorm(const isa::LayerNorm& l, const Memory& mem);

// Kernel tables of the compiled-in paths, fastest first; all bit-exact.
// names: "avx512vnni", "avx2", "neondot", "neon", "portable".
struct TableEntry {
  const KernelTable* table;
  bool supported;  // usable on this CPU
};
size_t kernel_tables(TableEntry* out, size_t max);

// Host threads per convolution (default 1; set_conv_threads, which libdnn
// calls for OPENBPU_SIM_THREADS).
int conv_threads();
void set_conv_threads(int n);
// How long the helpers and their caller poll before sleeping (default 20 us).
void set_conv_spin_ns(uint64_t ns);
// Convolutions below this many multiply-accumulates run on one thread.
int64_t conv_split_min_macs();
void set_conv_split_min_macs(int64_t macs);

}  // namespace openbpu::sim::kern

#endif  // OPENBPU_BPU_SIM_KERNELS_KERNELS_H_
