// SPDX-License-Identifier: Apache-2.0
// The OpenBPU virtual accelerator's instruction set (ISA version 1).
//
// A BPU program is a sequence of instructions over tensors that live in four
// memory regions bound at execution time:
//   kInput[i]   the i-th input buffer of the BPU segment,
//   kOutput[i]  the i-th output buffer of the BPU segment,
//   kConst      the segment's constant blob (weights, bias, multipliers, tables),
//   kScratch    the per-task scratch arena of the segment.
// Every operand is a TensorRef: a strided view of up to 6 dimensions with
// element strides (never negative) from a byte offset inside one region.
// Activations use the native layout NHWC (dims 0..3 = N,H,W,C) with the channel
// stride 1 and the pixel stride padded to the march's channel alignment.
//
// The numerics of each instruction are defined by the reference kernels in
// bpu_sim/reference and written down in docs/numerics.md; in short
//   requant(v, M, S) = clamp(floor((v * M + 2^(S-1)) / 2^S))   (exact integers)
// The binary encoding (codec.h) is little-endian, one record per instruction:
//   u16 opcode, u16 reserved (0), u32 payload size, payload (fields in the
//   order of each struct's visit()). Fields added after the first release
//   are visited last with v.tail(field): a record holds them up to the last
//   one that is not zero, and a missing one reads as zero, so programs that
//   do not use them keep their bytes (and older programs still decode).
#ifndef OPENBPU_BPU_SIM_ISA_ISA_H_
#define OPENBPU_BPU_SIM_ISA_ISA_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace openbpu::isa {

inline constexpr uint32_t kIsaVersion = 1;
inline constexpr int kMaxRank = 6;

enum class DType : uint8_t {
  kInt8 = 1,
  kInt16 = 2,
  kInt32 = 3,
  kUInt8 = 4,  // image bytes read by kPreprocess only
};

inline int dtype_size(DType t) {
  switch (t) {
    case DType::kInt8: return 1;
    case DType::kUInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
  }
  return 0;
}
inline bool dtype_valid(uint8_t t) { return t >= 1 && t <= 4; }
const char* dtype_name(DType t);

enum class Region : uint8_t {
  kInput = 1,
  kOutput = 2,
  kConst = 3,
  kScratch = 4,
};
inline bool region_valid(uint8_t r) { return r >= 1 && r <= 4; }

// A strided view: element (i0..i5) lives at byte
//   offset + sum_k(i_k * strides[k]) * dtype_size(dtype)
// Unused trailing dimensions have dims = 1. A stride of 0 broadcasts.
struct TensorRef {
  Region region = Region::kScratch;
  DType dtype = DType::kInt8;
  uint16_t index = 0;  // which input / output buffer; 0 for kConst / kScratch
  uint64_t offset = 0;
  int32_t dims[kMaxRank] = {1, 1, 1, 1, 1, 1};
  int64_t strides[kMaxRank] = {0, 0, 0, 0, 0, 0};

  template <class V> void visit(V& v) {
    v(region); v(dtype); v(index); v(offset);
    for (auto& d : dims) v(d);
    for (auto& s : strides) v(s);
  }
  int64_t elements() const {
    int64_t n = 1;
    for (int d : dims) n *= d;
    return n;
  }
};

// A 1-D array of constants in the kConst region (bias, multipliers, tables).
struct ConstRef {
  uint64_t offset = 0;
  uint32_t count = 0;  // 0 = absent
  template <class V> void visit(V& v) { v(offset); v(count); }
};

// Opcodes: explicit values with headroom; append only.
enum class Opcode : uint16_t {
  kConv = 0x0010,
  kDeconv = 0x0011,
  kPool = 0x0020,
  kEltwise = 0x0030,
  kLut = 0x0040,
  kResize = 0x0050,
  kMove = 0x0060,
  kFill = 0x0061,
  kArgMax = 0x0070,
  kPreprocess = 0x0080,
  kMatMul = 0x0090,
  kSoftmax = 0x00A0,
  kLayerNorm = 0x00A1,
};

// Activation clamp bounds and output range are in the output's quantized domain.
//
// Convolution (kConv) / transposed convolution (kDeconv).
//   in:  NHWC [N, IH, IW, Cin]       int8 or int16
//   out: NHWC [N, OH, OW, Cout]      int8, int16 or int32 (int32 = no requant)
//   weight: int8, layout [Cout][KH][KW][Cin/groups] (dense, in kConst)
//   bias:   int32 [Cout] (count 0 = none); multiplier int32 [Cout] in (0, 2^31);
//   shift:  int8 [Cout] in [0, 63].
//   conv:   acc = bias[co] + sum in[n, oh*sh - pt + kh*dh, ow*sw - pl + kw*dw, g*Cin/g + ci]
//                               * w[co][kh][kw][ci]    (out-of-image taps read pad_value)
//   deconv: acc = bias[co] + sum over (ih, iw, kh, kw) with
//              oh = ih*sh - pt + kh*dh, ow = iw*sw - pl + kw*dw  of in * w
//   y = acc                                   for int32 outputs (clamped to act bounds)
//   y = clamp(floor((acc*M[co] + R*Mr[co] + 2^(S-1)) / 2^S), act_min, act_max)
//       with R the residual input (when has_residual) at the same position.
struct Conv {
  TensorRef in, out, residual;
  ConstRef weight, bias, multiplier, shift, residual_multiplier;
  int32_t kernel_h = 1, kernel_w = 1;
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int32_t dilation_h = 1, dilation_w = 1;
  int32_t groups = 1;
  int32_t act_min = -128, act_max = 127;
  uint8_t has_residual = 0;
  // The input's zero point (asymmetric activations, docs/numerics.md): the
  // value out-of-image taps read. kConv with int8 input only; 0 otherwise.
  int32_t pad_value = 0;
  template <class V> void visit(V& v) {
    in.visit(v); out.visit(v); residual.visit(v);
    weight.visit(v); bias.visit(v); multiplier.visit(v); shift.visit(v);
    residual_multiplier.visit(v);
    v(kernel_h); v(kernel_w); v(stride_h); v(stride_w);
    v(pad_top); v(pad_left); v(pad_bottom); v(pad_right);
    v(dilation_h); v(dilation_w); v(groups); v(act_min); v(act_max); v(has_residual);
    v.tail(pad_value);
  }
};

enum class PoolKind : uint8_t { kMax = 1, kAvg = 2 };

// Pooling over H and W of NHWC tensors (global pooling = kernel of the whole image).
//   max: y = clamp(floor(((max_window(x) - zi) * M + 2^(S-1)) / 2^S) + zo)
//   avg: sum = sum of (x - zi) over the window's in-image taps, c = number of
//        taps counted (kernel area when count_include_pad, else in-image taps),
//        y = clamp(floor((sum * M + floor(c * 2^S / 2)) / (c * 2^S)) + zo)
//   zi, zo: the zero points of asymmetric int8 input and output (0 otherwise).
struct Pool {
  TensorRef in, out;
  PoolKind kind = PoolKind::kMax;
  uint8_t count_include_pad = 0;
  int32_t kernel_h = 1, kernel_w = 1;
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int32_t dilation_h = 1, dilation_w = 1;
  int32_t multiplier = 1 << 30;
  int32_t shift = 30;
  int32_t act_min = -128, act_max = 127;
  template <class V> void visit(V& v) {
    in.visit(v); out.visit(v);
    v(kind); v(count_include_pad); v(kernel_h); v(kernel_w); v(stride_h); v(stride_w);
    v(pad_top); v(pad_left); v(pad_bottom); v(pad_right); v(dilation_h); v(dilation_w);
    v(multiplier); v(shift); v(act_min); v(act_max);
    v.tail(zero_in); v.tail(zero_out);
  }
  int32_t zero_in = 0, zero_out = 0;
};

enum class EltwiseKind : uint8_t { kAdd = 1, kSub = 2, kMul = 3, kMax = 4, kMin = 5 };

// Element-wise binary op over identical dims (broadcast with stride 0), with
// a = a_q - za, b = b_q - zb (the zero points of asymmetric int8 operands, 0
// otherwise) and zo the output's:
//   add: y = clamp(floor((a*Ma + b*Mb + 2^(S-1)) / 2^S) + zo)
//   sub: y = clamp(floor((a*Ma - b*Mb + 2^(S-1)) / 2^S) + zo)
//   mul: y = clamp(floor((a*b*Ma + 2^(S-1)) / 2^S) + zo)
//   max/min: y = clamp(max/min(requant(a, Ma, S), requant(b, Mb, S)) + zo)
struct Eltwise {
  TensorRef a, b, out;
  EltwiseKind kind = EltwiseKind::kAdd;
  int32_t multiplier_a = 1 << 30, multiplier_b = 1 << 30;
  int32_t shift = 30;
  int32_t act_min = -128, act_max = 127;
  template <class V> void visit(V& v) {
    a.visit(v); b.visit(v); out.visit(v);
    v(kind); v(multiplier_a); v(multiplier_b); v(shift); v(act_min); v(act_max);
    v.tail(zero_a); v.tail(zero_b); v.tail(zero_out);
  }
  int32_t zero_a = 0, zero_b = 0, zero_out = 0;
};

// Table lookup. int8 input: y = table[x + 128] (256 entries of the output type).
// int16 input: 513 entries; i = (x + 32768) >> 7, f = (x + 32768) & 127,
//   y = table[i] + floor(((table[i+1] - table[i]) * f + 64) / 128).
struct Lut {
  TensorRef in, out;
  ConstRef table;  // element type = out.dtype
  template <class V> void visit(V& v) { in.visit(v); out.visit(v); table.visit(v); }
};

enum class ResizeMode : uint8_t { kNearest = 1, kBilinear = 2 };

// Resize over H and W of NHWC tensors. Source coordinate in Q16 fixed point:
//   sy(oy) = y_start + oy * y_step,  sx(ox) = x_start + ox * x_step.
// nearest:  iy = clamp((sy + round_bias) >> 16, 0, IH-1) (same for x),
//           y = requant(in[iy, ix])
// bilinear: sy clamped to [0, (IH-1)<<16]; y0 = sy >> 16, y1 = min(y0+1, IH-1),
//           fy = (sy & 0xffff) >> 5 (11 bits); wy1 = fy, wy0 = 2048 - fy (same for x);
//           v = sum in[yi, xj] * wyi * wxj;   t = floor((v + 2^13) / 2^14)
//           y = clamp(floor((t*M + 2^(S+7)) / 2^(S+8)))
// (requant(v, M, S) as everywhere.)
struct Resize {
  TensorRef in, out;
  ResizeMode mode = ResizeMode::kNearest;
  int64_t y_start = 0, y_step = 1 << 16, x_start = 0, x_step = 1 << 16;
  int32_t round_bias = 0;
  int32_t multiplier = 1 << 30;
  int32_t shift = 30;
  template <class V> void visit(V& v) {
    in.visit(v); out.visit(v);
    v(mode); v(y_start); v(y_step); v(x_start); v(x_step); v(round_bias); v(multiplier); v(shift);
  }
};

// Strided N-D copy with optional requantization (concat, slice, transpose,
// reshape, space/depth moves). in and out have identical dims; each element is
//   y = requantize ? clamp(floor((x*M + 2^(S-1)) / 2^S)) : saturate(x).
struct Move {
  TensorRef in, out;
  uint8_t requantize = 0;
  int32_t multiplier = 1 << 30;
  int32_t shift = 30;
  template <class V> void visit(V& v) {
    in.visit(v); out.visit(v); v(requantize); v(multiplier); v(shift);
  }
};

// Fill a view with one value (padding, channel-pad zeroing).
struct Fill {
  TensorRef out;
  int32_t value = 0;
  template <class V> void visit(V& v) { out.visit(v); v(value); }
};

// Index of the largest channel (first one on ties). in NHWC int8/int16 with
// C <= kMaxArgMaxChannels; out int32 [N, H, W, 1].
inline constexpr int kMaxArgMaxChannels = 64;
struct ArgMax {
  TensorRef in, out;
  template <class V> void visit(V& v) { in.visit(v); out.visit(v); }
};

enum class ImageFormat : uint8_t {
  kNV12 = 1,       // Y plane rows then interleaved UV rows (4:2:0)
  kYUV444 = 2,     // packed Y U V per pixel (NHWC) or planar (NCHW)
  kRGB = 3,
  kBGR = 4,
  kGray = 5,
};
enum class ColorRange : uint8_t { kFull = 1, kVideo = 2 };

// Image input conversion: uint8 pixels of src_format -> int8 (value - 128) in
// dst_format (kRGB, kBGR, kYUV444 or kGray), NHWC out [N, H, W, C].
// in is a uint8 view; for packed/NHWC sources dims = [N, H, W, C], for planar
// sources dims = [N, C, H, W]; for NV12 dims = [N, H, W, 1] over the Y plane and
// the UV plane starts uv_offset bytes after in.offset with row stride
// uv_row_stride bytes (U at even, V at odd byte of each pair).
// YUV -> RGB uses Q14 BT.601 coefficients (docs/numerics.md) and clamps to 0..255.
struct Preprocess {
  TensorRef in, out;
  ImageFormat src_format = ImageFormat::kRGB;
  ImageFormat dst_format = ImageFormat::kRGB;
  ColorRange range = ColorRange::kFull;
  uint8_t src_planar = 0;  // 1 = NCHW planes for kRGB/kBGR/kYUV444
  uint64_t uv_offset = 0;
  int64_t uv_row_stride = 0;
  template <class V> void visit(V& v) {
    in.visit(v); out.visit(v);
    v(src_format); v(dst_format); v(range); v(src_planar); v(uv_offset); v(uv_row_stride);
  }
};

// Batched product of two activation matrices (attention: Q*K^T, P*V).
//   a:   [B0, B1, M, K, 1, 1]   int8 or int16
//   b:   [B0, B1, K, N, 1, 1]   int8 or int16
//   out: [B0, B1, M, N, 1, 1]   int8 or int16
// Any strides: a transposed operand is a view with swapped strides, a batch
// shared by the other operand has stride 0. K <= kMaxMatMulDepth.
//   acc = sum_k a[i, j, m, k] * b[i, j, k, n]       (exact, |acc| < 2^47)
//   y = clamp(floor((acc*M[n] + 2^(S-1)) / 2^S), act_min, act_max)
// with M[n] = multipliers[n] when present (a constant b quantized per
// column), else multiplier.
inline constexpr int kMaxMatMulDepth = 1 << 16;
struct MatMul {
  TensorRef a, b, out;
  ConstRef multipliers;  // int32 [N] in (0, 2^31), count 0 = none
  int32_t multiplier = 1 << 30;
  int32_t shift = 30;
  int32_t act_min = -128, act_max = 127;
  template <class V> void visit(V& v) {
    a.visit(v); b.visit(v); out.visit(v); multipliers.visit(v); v(multiplier); v(shift); v(act_min); v(act_max);
  }
};

// Row instructions: kSoftmax and kLayerNorm work along dim 3 ("the row") of
// 4-D views [D0, D1, D2, L] (any strides: the converter maps the ONNX axis
// there), L <= kMaxRowLength.
inline constexpr int kMaxRowLength = 1 << 16;
inline constexpr int kSoftmaxTableSize = 257;  // int32 entries in [0, 2^15], table[0] > 0

// Softmax with a table-lookup exponent (docs/numerics.md section 17):
//   t = min(max_row(x) - x, 2^16 - 1),  i = t >> table_shift,  f = t & (2^table_shift - 1)
//   e = i >= 256 ? table[256] : table[i] + floor(((table[i+1] - table[i]) * f + 2^(table_shift-1)) / 2^table_shift)
//   sum = sum_row(e)
//   y = clamp(floor((e*M + floor(sum*2^S / 2)) / (sum*2^S)), act_min, act_max)     S <= 31
struct Softmax {
  TensorRef in, out;
  ConstRef table;  // int32 [kSoftmaxTableSize]: table[j] ~ 2^15 * exp(-j * 2^table_shift * s_in)
  int32_t table_shift = 0;  // 0..8
  int32_t multiplier = 1 << 30;
  int32_t shift = 23;
  int32_t act_min = -128, act_max = 127;
  template <class V> void visit(V& v) {
    in.visit(v); out.visit(v); table.visit(v);
    v(table_shift); v(multiplier); v(shift); v(act_min); v(act_max);
  }
};

// Layer normalization along the row with a per-position affine
// (docs/numerics.md section 18):
//   s1 = sum_row(x), s2 = sum_row(x^2), d = L*s2 - s1^2 + eps,  r = max(1, isqrt(d * 2^32))
//   n = floor(((L*x - s1) * 2^28 + floor(r/2)) / r)          (Q12 normalized value)
//   y = clamp(floor(((n*gamma[l] + beta[l])*M + 2^(S-1)) / 2^S), act_min, act_max)
struct LayerNorm {
  TensorRef in, out;
  ConstRef gamma;  // int32 [L], |gamma| < 2^16
  ConstRef beta;   // int64 [L], |beta| < 2^40 (count 0 = none)
  int64_t eps = 0;  // >= 0, in L^2 * input units^2
  int32_t multiplier = 1 << 30;
  int32_t shift = 30;
  int32_t act_min = -128, act_max = 127;
  template <class V> void visit(V& v) {
    in.visit(v); out.visit(v); gamma.visit(v); beta.visit(v);
    v(eps); v(multiplier); v(shift); v(act_min); v(act_max);
  }
};

using Instr = std::variant<Conv, Pool, Eltwise, Lut, Resize, Move, Fill, ArgMax, Preprocess, MatMul, Softmax,
                           LayerNorm>;

// Deconv shares Conv's fields; the opcode distinguishes them.
struct Instruction {
  Opcode opcode = Opcode::kConv;
  Instr body;
};

const char* opcode_name(Opcode op);

// Multiply-accumulates of a convolution (transposed: a deconv, where every
// input tap meets every kernel tap) -- the count the timing model, the
// simulator's thread split and the benchmarks use.
int64_t conv_macs(const Conv& c, bool transposed);

}  // namespace openbpu::isa

#endif  // OPENBPU_BPU_SIM_ISA_ISA_H_
