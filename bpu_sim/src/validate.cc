// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/validate.h"

#include "bpu_sim/isa/numerics.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace openbpu::sim {

namespace {

using isa::DType;
using isa::Region;
using isa::TensorRef;

constexpr int64_t kMaxDim = 1 << 24;
constexpr int64_t kMaxStride = int64_t{1} << 40;
constexpr int64_t kMaxElements = int64_t{1} << 36;

struct Extent {
  Region region;
  uint16_t index;
  uint64_t begin, end;  // byte range [begin, end)
};

class V {
 public:
  V(const RegionLayout& r, std::string* e) : regions_(r), error_(e) {}

  bool fail(const std::string& what) {
    *error_ = what;
    return false;
  }

  uint64_t region_size(Region r, uint16_t index, bool* ok) const {
    *ok = true;
    switch (r) {
      case Region::kInput:
        if (index < regions_.inputs.size()) return regions_.inputs[index];
        break;
      case Region::kOutput:
        if (index < regions_.outputs.size()) return regions_.outputs[index];
        break;
      case Region::kConst: return regions_.constants_size;
      case Region::kScratch: return regions_.scratch_size;
    }
    *ok = false;
    return 0;
  }

  // Checks a view and computes its byte extent.
  bool view(const TensorRef& t, const char* name, bool writable, Extent* ext) {
    const std::string n(name);
    if (writable && (t.region == Region::kInput || t.region == Region::kConst))
      return fail(n + " writes to a read-only region");
    bool ok = false;
    const uint64_t size = region_size(t.region, t.index, &ok);
    if (!ok) return fail(n + " refers to buffer index " + std::to_string(t.index) + " that is not bound");
    int64_t elements = 1;
    __int128 last = 0;  // element offset of the last element
    for (int k = 0; k < isa::kMaxRank; ++k) {
      if (t.dims[k] < 1 || t.dims[k] > kMaxDim)
        return fail(n + " dimension " + std::to_string(k) + " out of range (" +
                    std::to_string(t.dims[k]) + ")");
      if (t.strides[k] < 0 || t.strides[k] > kMaxStride)
        return fail(n + " stride " + std::to_string(k) + " out of range");
      elements *= t.dims[k];
      if (elements > kMaxElements) return fail(n + " has too many elements");
      last += static_cast<__int128>(t.dims[k] - 1) * t.strides[k];
    }
    const __int128 end = static_cast<__int128>(t.offset) + (last + 1) * isa::dtype_size(t.dtype);
    if (t.offset > size || end > static_cast<__int128>(size))
      return fail(n + " runs past the end of its region (" + std::to_string(size) + " bytes)");
    *ext = Extent{t.region, t.index, t.offset, static_cast<uint64_t>(end)};
    return true;
  }

  bool rank4(const TensorRef& t, const char* name) {
    if (t.dims[4] != 1 || t.dims[5] != 1) return fail(std::string(name) + " must be 4-D (NHWC)");
    return true;
  }

  bool dtype_in(const TensorRef& t, const char* name, std::initializer_list<DType> allowed) {
    for (DType d : allowed)
      if (t.dtype == d) return true;
    return fail(std::string(name) + " has unsupported data type " + isa::dtype_name(t.dtype));
  }

  bool same_dims(const TensorRef& a, const TensorRef& b, const char* what) {
    for (int k = 0; k < isa::kMaxRank; ++k)
      if (a.dims[k] != b.dims[k]) return fail(std::string(what) + ": dimensions differ");
    return true;
  }

  // Reads a constant array; checks it lies in the constant region.
  bool consts(const isa::ConstRef& c, uint32_t expected, int esize, const char* name) {
    if (c.count != expected)
      return fail(std::string(name) + " has " + std::to_string(c.count) + " entries, expected " +
                  std::to_string(expected));
    const __int128 end = static_cast<__int128>(c.offset) + static_cast<__int128>(c.count) * esize;
    if (end > static_cast<__int128>(regions_.constants_size))
      return fail(std::string(name) + " runs past the end of the constant region");
    if (c.count != 0 && regions_.constants == nullptr)
      return fail(std::string(name) + ": no constant data bound");
    return true;
  }

  template <class T> T const_at(const isa::ConstRef& c, uint32_t i) const {
    T v;
    std::memcpy(&v, regions_.constants + c.offset + static_cast<uint64_t>(i) * sizeof(T), sizeof(T));
    return v;
  }

  bool shift_ok(int32_t s, int32_t max_shift, const char* name) {
    if (s < 0 || s > max_shift)
      return fail(std::string(name) + " shift " + std::to_string(s) + " out of range 0.." +
                  std::to_string(max_shift));
    return true;
  }
  bool mult_ok(int64_t m, const char* name) {
    if (m <= 0) return fail(std::string(name) + " multiplier must be positive");
    return true;
  }

  bool act_ok(int32_t lo, int32_t hi, DType out) {
    const isa::IntRange r = isa::dtype_range(out == DType::kUInt8 ? DType::kInt32 : out);
    if (lo > hi || lo < r.lo || hi > r.hi)
      return fail("activation bounds [" + std::to_string(lo) + ", " + std::to_string(hi) +
                  "] invalid for the output type");
    return true;
  }

  static bool overlap(const Extent& a, const Extent& b) {
    return a.region == b.region && a.index == b.index && a.begin < b.end && b.begin < a.end;
  }
  bool no_overlap(const Extent& out, const Extent& in, const char* name) {
    if (overlap(out, in)) return fail(std::string("output overlaps ") + name);
    return true;
  }

  bool window(int32_t k, int32_t s, int32_t d, int32_t p0, int32_t p1, bool deconv, const char* axis) {
    const std::string a(axis);
    if (k < 1 || k > 255) return fail("kernel " + a + " out of range 1..255");
    if (s < 1 || s > 255) return fail("stride " + a + " out of range 1..255");
    if (d < 1 || d > 255) return fail("dilation " + a + " out of range 1..255");
    const int32_t pmin = deconv ? -(s - 1) : 0;
    if (p0 < 0 || p0 > 1024 || p1 < pmin || p1 > 1024) return fail("padding " + a + " out of range");
    return true;
  }

  bool conv(const isa::Conv& c, bool deconv) {
    Extent ein, eout, eres;
    if (!view(c.in, "input", false, &ein) || !view(c.out, "output", true, &eout)) return false;
    if (!rank4(c.in, "input") || !rank4(c.out, "output")) return false;
    if (!dtype_in(c.in, "input", {DType::kInt8, DType::kInt16})) return false;
    if (!dtype_in(c.out, "output", {DType::kInt8, DType::kInt16, DType::kInt32})) return false;
    if (!no_overlap(eout, ein, "input")) return false;
    if (c.pad_value != 0 && (deconv || c.in.dtype != DType::kInt8 || c.pad_value < -128 || c.pad_value > 127))
      return fail("pad value " + std::to_string(c.pad_value) + " needs a convolution with int8 input and fits int8");
    if (!window(c.kernel_h, c.stride_h, c.dilation_h, c.pad_top, c.pad_bottom, deconv, "h") ||
        !window(c.kernel_w, c.stride_w, c.dilation_w, c.pad_left, c.pad_right, deconv, "w"))
      return false;
    const int64_t n = c.in.dims[0], ih = c.in.dims[1], iw = c.in.dims[2], cin = c.in.dims[3];
    const int64_t oh = c.out.dims[1], ow = c.out.dims[2], cout = c.out.dims[3];
    if (c.out.dims[0] != n) return fail("batch of input and output differ");
    if (c.groups < 1 || cin % c.groups != 0 || cout % c.groups != 0)
      return fail("groups " + std::to_string(c.groups) + " do not divide the channel counts");
    int64_t eh, ew;
    if (!deconv) {
      eh = (ih + c.pad_top + c.pad_bottom - int64_t{c.dilation_h} * (c.kernel_h - 1) - 1) / c.stride_h + 1;
      ew = (iw + c.pad_left + c.pad_right - int64_t{c.dilation_w} * (c.kernel_w - 1) - 1) / c.stride_w + 1;
      if (ih + c.pad_top + c.pad_bottom < int64_t{c.dilation_h} * (c.kernel_h - 1) + 1 ||
          iw + c.pad_left + c.pad_right < int64_t{c.dilation_w} * (c.kernel_w - 1) + 1)
        return fail("kernel larger than the padded input");
    } else {
      eh = (ih - 1) * c.stride_h - c.pad_top - c.pad_bottom + int64_t{c.dilation_h} * (c.kernel_h - 1) + 1;
      ew = (iw - 1) * c.stride_w - c.pad_left - c.pad_right + int64_t{c.dilation_w} * (c.kernel_w - 1) + 1;
    }
    if (oh != eh || ow != ew)
      return fail("output size " + std::to_string(oh) + "x" + std::to_string(ow) +
                  " does not match the window arithmetic (" + std::to_string(eh) + "x" +
                  std::to_string(ew) + ")");
    const int64_t k = int64_t{c.kernel_h} * c.kernel_w * (cin / c.groups);
    const int64_t wcount = cout * k;
    if (wcount > std::numeric_limits<uint32_t>::max()) return fail("too many weights");
    if (!consts(c.weight, static_cast<uint32_t>(wcount), 1, "weight")) return false;
    if (c.bias.count != 0 && !consts(c.bias, static_cast<uint32_t>(cout), 4, "bias")) return false;
    int64_t max_bias = 0;
    for (uint32_t i = 0; i < c.bias.count; ++i) {
      const int64_t b = const_at<int32_t>(c.bias, i);
      max_bias = std::max<int64_t>(max_bias, b < 0 ? -b : b);
    }
    const int64_t in_max = c.in.dtype == DType::kInt8 ? 128 : 32768;
    // int8 inputs: the exact accumulator must fit int32 (optimized kernels
    // accumulate in 32 bits); int16 inputs accumulate in 64 bits.
    if (c.in.dtype == DType::kInt8 && k * in_max * 128 + max_bias > std::numeric_limits<int32_t>::max())
      return fail("reduction of " + std::to_string(k) + " taps can overflow the int32 accumulator");
    if (k * in_max * 128 + max_bias > (int64_t{1} << 48)) return fail("reduction too large");
    if (c.out.dtype != DType::kInt32) {
      if (!consts(c.multiplier, static_cast<uint32_t>(cout), 4, "multiplier") ||
          !consts(c.shift, static_cast<uint32_t>(cout), 1, "shift"))
        return false;
      for (uint32_t i = 0; i < cout; ++i) {
        if (!mult_ok(const_at<int32_t>(c.multiplier, i), "conv")) return false;
        if (!shift_ok(const_at<int8_t>(c.shift, i), isa::kMaxShift, "conv")) return false;
      }
    } else if (c.has_residual) {
      return fail("int32 output cannot take a residual input");
    }
    if (c.has_residual) {
      if (!view(c.residual, "residual", false, &eres) || !rank4(c.residual, "residual")) return false;
      if (!dtype_in(c.residual, "residual", {DType::kInt8, DType::kInt16})) return false;
      if (!same_dims(c.residual, c.out, "residual and output")) return false;
      if (!no_overlap(eout, eres, "residual")) return false;
      if (!consts(c.residual_multiplier, static_cast<uint32_t>(cout), 4, "residual multiplier"))
        return false;
      for (uint32_t i = 0; i < cout; ++i)
        if (!mult_ok(const_at<int32_t>(c.residual_multiplier, i), "residual")) return false;
    }
    return act_ok(c.act_min, c.act_max, c.out.dtype);
  }

  bool pool(const isa::Pool& p) {
    Extent ein, eout;
    if (!view(p.in, "input", false, &ein) || !view(p.out, "output", true, &eout)) return false;
    if (!rank4(p.in, "input") || !rank4(p.out, "output")) return false;
    if (!dtype_in(p.in, "input", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(p.out, "output", {DType::kInt8, DType::kInt16}))
      return false;
    if (!no_overlap(eout, ein, "input")) return false;
    if (p.kind != isa::PoolKind::kMax && p.kind != isa::PoolKind::kAvg) return fail("unknown pool kind");
    if (p.kernel_h < 1 || p.kernel_w < 1 || p.kernel_h > 4096 || p.kernel_w > 4096 ||
        int64_t{p.kernel_h} * p.kernel_w > (1 << 20))
      return fail("pool kernel out of range");
    if (p.stride_h < 1 || p.stride_w < 1 || p.stride_h > 4096 || p.stride_w > 4096 ||
        p.dilation_h < 1 || p.dilation_w < 1 || p.dilation_h > 255 || p.dilation_w > 255)
      return fail("pool stride/dilation out of range");
    if (p.pad_top < 0 || p.pad_left < 0 || p.pad_bottom < 0 || p.pad_right < 0 ||
        p.pad_top > 4096 || p.pad_left > 4096 || p.pad_bottom > 4096 || p.pad_right > 4096)
      return fail("pool padding out of range");
    if (p.in.dims[0] != p.out.dims[0] || p.in.dims[3] != p.out.dims[3])
      return fail("pool input and output differ in batch or channels");
    const int64_t ih = p.in.dims[1], iw = p.in.dims[2];
    const int64_t span_h = int64_t{p.dilation_h} * (p.kernel_h - 1) + 1;
    const int64_t span_w = int64_t{p.dilation_w} * (p.kernel_w - 1) + 1;
    if (ih + p.pad_top + p.pad_bottom < span_h || iw + p.pad_left + p.pad_right < span_w)
      return fail("pool kernel larger than the padded input");
    const int64_t eh = (ih + p.pad_top + p.pad_bottom - span_h) / p.stride_h + 1;
    const int64_t ew = (iw + p.pad_left + p.pad_right - span_w) / p.stride_w + 1;
    if (p.out.dims[1] != eh || p.out.dims[2] != ew)
      return fail("pool output size does not match the window arithmetic");
    if (!mult_ok(p.multiplier, "pool")) return false;
    if (!shift_ok(p.shift, p.kind == isa::PoolKind::kAvg ? isa::kMaxAvgPoolShift : isa::kMaxShift, "pool"))
      return false;
    if (!zero_point_ok(p.zero_in, p.in, "input") || !zero_point_ok(p.zero_out, p.out, "output")) return false;
    return act_ok(p.act_min, p.act_max, p.out.dtype);
  }

  bool eltwise(const isa::Eltwise& e) {
    Extent ea, eb, eout;
    if (!view(e.a, "input a", false, &ea) || !view(e.b, "input b", false, &eb) ||
        !view(e.out, "output", true, &eout))
      return false;
    if (!dtype_in(e.a, "input a", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(e.b, "input b", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(e.out, "output", {DType::kInt8, DType::kInt16}))
      return false;
    if (!same_dims(e.a, e.out, "input a and output") || !same_dims(e.b, e.out, "input b and output"))
      return false;
    const auto kind = static_cast<uint8_t>(e.kind);
    if (kind < 1 || kind > 5) return fail("unknown eltwise kind");
    if (!mult_ok(e.multiplier_a, "eltwise") || !mult_ok(e.multiplier_b, "eltwise") ||
        !shift_ok(e.shift, isa::kMaxShift, "eltwise"))
      return false;
    if ((overlap(eout, ea) && !identical(e.out, e.a)) || (overlap(eout, eb) && !identical(e.out, e.b)))
      return fail("output partially overlaps an input");
    if (!zero_point_ok(e.zero_a, e.a, "input a") || !zero_point_ok(e.zero_b, e.b, "input b") ||
        !zero_point_ok(e.zero_out, e.out, "output"))
      return false;
    return act_ok(e.act_min, e.act_max, e.out.dtype);
  }

  // An asymmetric operand's zero point: int8 operands only, within int8.
  bool zero_point_ok(int32_t z, const TensorRef& t, const std::string& what) {
    if (z == 0 || (t.dtype == DType::kInt8 && z >= -128 && z <= 127)) return true;
    return fail(what + " zero point " + std::to_string(z) + " needs an int8 " + what + " and fits int8");
  }

  static bool identical(const TensorRef& a, const TensorRef& b) {
    if (a.region != b.region || a.index != b.index || a.offset != b.offset || a.dtype != b.dtype)
      return false;
    for (int k = 0; k < isa::kMaxRank; ++k)
      if (a.dims[k] != b.dims[k] || a.strides[k] != b.strides[k]) return false;
    return true;
  }

  bool lut(const isa::Lut& l) {
    Extent ein, eout;
    if (!view(l.in, "input", false, &ein) || !view(l.out, "output", true, &eout)) return false;
    if (!dtype_in(l.in, "input", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(l.out, "output", {DType::kInt8, DType::kInt16}))
      return false;
    if (!same_dims(l.in, l.out, "input and output")) return false;
    if (overlap(eout, ein) && !identical(l.in, l.out)) return fail("output partially overlaps input");
    const uint32_t entries = static_cast<uint32_t>(isa::lut_entries(l.in.dtype));
    return consts(l.table, entries, isa::dtype_size(l.out.dtype), "table");
  }

  bool resize(const isa::Resize& r) {
    Extent ein, eout;
    if (!view(r.in, "input", false, &ein) || !view(r.out, "output", true, &eout)) return false;
    if (!rank4(r.in, "input") || !rank4(r.out, "output")) return false;
    if (!dtype_in(r.in, "input", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(r.out, "output", {DType::kInt8, DType::kInt16}))
      return false;
    if (!no_overlap(eout, ein, "input")) return false;
    if (r.in.dims[0] != r.out.dims[0] || r.in.dims[3] != r.out.dims[3])
      return fail("resize input and output differ in batch or channels");
    if (r.mode != isa::ResizeMode::kNearest && r.mode != isa::ResizeMode::kBilinear)
      return fail("unknown resize mode");
    const int64_t lim = int64_t{1} << 40;
    if (r.y_start < -lim || r.y_start > lim || r.x_start < -lim || r.x_start > lim ||
        r.y_step < 0 || r.y_step > lim || r.x_step < 0 || r.x_step > lim ||
        r.round_bias < 0 || r.round_bias > 65535)
      return fail("resize coordinates out of range");
    if (!mult_ok(r.multiplier, "resize")) return false;
    return shift_ok(r.shift, r.mode == isa::ResizeMode::kBilinear ? isa::kMaxBilinearShift : isa::kMaxShift,
                    "resize");
  }

  bool move(const isa::Move& m) {
    Extent ein, eout;
    if (!view(m.in, "input", false, &ein) || !view(m.out, "output", true, &eout)) return false;
    if (!same_dims(m.in, m.out, "input and output")) return false;
    if (!dtype_in(m.out, "output", {DType::kInt8, DType::kInt16, DType::kInt32})) return false;
    if (overlap(eout, ein) && !identical(m.in, m.out)) return fail("output partially overlaps input");
    if (m.requantize > 1) return fail("bad requantize flag");
    if (m.requantize && (!mult_ok(m.multiplier, "move") || !shift_ok(m.shift, isa::kMaxShift, "move")))
      return false;
    return true;
  }

  bool fill(const isa::Fill& f) {
    Extent eout;
    return view(f.out, "output", true, &eout) &&
           dtype_in(f.out, "output", {DType::kInt8, DType::kInt16, DType::kInt32});
  }

  bool argmax(const isa::ArgMax& a) {
    Extent ein, eout;
    if (!view(a.in, "input", false, &ein) || !view(a.out, "output", true, &eout)) return false;
    if (!rank4(a.in, "input") || !rank4(a.out, "output")) return false;
    if (!dtype_in(a.in, "input", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(a.out, "output", {DType::kInt32}))
      return false;
    if (!no_overlap(eout, ein, "input")) return false;
    if (a.in.dims[3] > isa::kMaxArgMaxChannels)
      return fail("argmax over more than " + std::to_string(isa::kMaxArgMaxChannels) + " channels");
    if (a.out.dims[0] != a.in.dims[0] || a.out.dims[1] != a.in.dims[1] ||
        a.out.dims[2] != a.in.dims[2] || a.out.dims[3] != 1)
      return fail("argmax output must be [N, H, W, 1] of the input");
    return true;
  }

  // out [B0, B1, M, N] = a [B0, B1, M, K] x b [B0, B1, K, N]; 4-D views.
  bool matmul(const isa::MatMul& m) {
    Extent ea, eb, eout;
    if (!view(m.a, "input a", false, &ea) || !view(m.b, "input b", false, &eb) ||
        !view(m.out, "output", true, &eout))
      return false;
    if (!rank4(m.a, "input a") || !rank4(m.b, "input b") || !rank4(m.out, "output")) return false;
    if (!dtype_in(m.a, "input a", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(m.b, "input b", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(m.out, "output", {DType::kInt8, DType::kInt16}))
      return false;
    const int32_t* a = m.a.dims;
    const int32_t* b = m.b.dims;
    const int32_t* o = m.out.dims;
    if (a[0] != o[0] || a[1] != o[1] || b[0] != o[0] || b[1] != o[1] || a[2] != o[2] || b[3] != o[3] ||
        a[3] != b[2])
      return fail("matmul dimensions disagree (a [B0,B1,M,K], b [B0,B1,K,N], out [B0,B1,M,N])");
    if (a[3] > isa::kMaxMatMulDepth)
      return fail("matmul depth " + std::to_string(a[3]) + " exceeds " + std::to_string(isa::kMaxMatMulDepth));
    if (!mult_ok(m.multiplier, "matmul") || !shift_ok(m.shift, isa::kMaxShift, "matmul")) return false;
    if (m.multipliers.count != 0) {
      if (!consts(m.multipliers, static_cast<uint32_t>(o[3]), 4, "matmul multipliers")) return false;
      for (uint32_t i = 0; i < m.multipliers.count; ++i)
        if (!mult_ok(const_at<int32_t>(m.multipliers, i), "matmul")) return false;
    }
    if (!no_overlap(eout, ea, "input a") || !no_overlap(eout, eb, "input b")) return false;
    return act_ok(m.act_min, m.act_max, m.out.dtype);
  }

  // A row instruction's [D0, D1, D2, L] views: same dims, in place or apart.
  bool rows(const TensorRef& in, const TensorRef& out, const char* what) {
    Extent ein, eout;
    if (!view(in, "input", false, &ein) || !view(out, "output", true, &eout)) return false;
    if (!rank4(in, "input") || !rank4(out, "output") || !same_dims(in, out, "input and output")) return false;
    if (!dtype_in(in, "input", {DType::kInt8, DType::kInt16}) ||
        !dtype_in(out, "output", {DType::kInt8, DType::kInt16}))
      return false;
    if (in.dims[3] > isa::kMaxRowLength)
      return fail(std::string(what) + " row of " + std::to_string(in.dims[3]) + " exceeds " +
                  std::to_string(isa::kMaxRowLength));
    if (overlap(eout, ein) && !identical(in, out)) return fail("output partially overlaps input");
    return true;
  }

  bool softmax(const isa::Softmax& s) {
    if (!rows(s.in, s.out, "softmax")) return false;
    if (!consts(s.table, isa::kSoftmaxTableSize, 4, "softmax table")) return false;
    for (uint32_t i = 0; i < s.table.count; ++i) {
      const int32_t v = const_at<int32_t>(s.table, i);
      if (v < 0 || v > (1 << 15) || (i == 0 && v == 0)) return fail("softmax table entry out of range [0, 2^15]");
    }
    if (s.table_shift < 0 || s.table_shift > 8) return fail("softmax table shift out of range 0..8");
    if (!mult_ok(s.multiplier, "softmax") || !shift_ok(s.shift, 31, "softmax")) return false;
    return act_ok(s.act_min, s.act_max, s.out.dtype);
  }

  bool layernorm(const isa::LayerNorm& n) {
    if (!rows(n.in, n.out, "layernorm")) return false;
    const auto len = static_cast<uint32_t>(n.in.dims[3]);
    if (!consts(n.gamma, len, 4, "layernorm gamma")) return false;
    if (n.beta.count != 0 && !consts(n.beta, len, 8, "layernorm beta")) return false;
    for (uint32_t i = 0; i < len; ++i)
      if (std::abs(int64_t{const_at<int32_t>(n.gamma, i)}) >= (int64_t{1} << 16))
        return fail("layernorm gamma out of range (|gamma| < 2^16)");
    for (uint32_t i = 0; i < n.beta.count; ++i)
      if (std::abs(const_at<int64_t>(n.beta, i)) >= (int64_t{1} << 40))
        return fail("layernorm beta out of range (|beta| < 2^40)");
    if (n.eps < 0 || n.eps >= (int64_t{1} << 62)) return fail("layernorm eps out of range [0, 2^62)");
    if (!mult_ok(n.multiplier, "layernorm") || !shift_ok(n.shift, isa::kMaxShift, "layernorm")) return false;
    return act_ok(n.act_min, n.act_max, n.out.dtype);
  }

  bool preprocess(const isa::Preprocess& p) {
    using F = isa::ImageFormat;
    Extent ein, eout;
    if (!view(p.in, "input", false, &ein) || !view(p.out, "output", true, &eout)) return false;
    if (!rank4(p.in, "input") || !rank4(p.out, "output")) return false;
    if (!dtype_in(p.in, "input", {DType::kUInt8}) || !dtype_in(p.out, "output", {DType::kInt8}))
      return false;
    if (!no_overlap(eout, ein, "input")) return false;
    const bool yuv_src = p.src_format == F::kNV12 || p.src_format == F::kYUV444;
    const bool rgb_src = p.src_format == F::kRGB || p.src_format == F::kBGR;
    const bool ok = (p.src_format == p.dst_format && p.src_format != F::kNV12) ||
                    (yuv_src && (p.dst_format == F::kRGB || p.dst_format == F::kBGR ||
                                 p.dst_format == F::kYUV444)) ||
                    (rgb_src && (p.dst_format == F::kRGB || p.dst_format == F::kBGR)) ||
                    (yuv_src && p.dst_format == F::kGray);
    if (!ok) return fail("unsupported colour conversion");
    const int64_t n = p.out.dims[0], h = p.out.dims[1], w = p.out.dims[2], c = p.out.dims[3];
    const int64_t want_c = p.dst_format == F::kGray ? 1 : 3;
    if (c != want_c) return fail("preprocess output channel count does not match its format");
    if (p.src_planar > 1 || (p.src_planar && !(rgb_src || p.src_format == F::kYUV444)))
      return fail("planar layout only for rgb/bgr/yuv444 sources");
    const int64_t src_c = p.src_format == F::kGray ? 1 : (p.src_format == F::kNV12 ? 1 : 3);
    const bool dims_ok =
        p.src_planar ? (p.in.dims[0] == n && p.in.dims[1] == src_c && p.in.dims[2] == h && p.in.dims[3] == w)
                     : (p.in.dims[0] == n && p.in.dims[1] == h && p.in.dims[2] == w && p.in.dims[3] == src_c);
    if (!dims_ok) return fail("preprocess input and output shapes differ");
    if (p.range != isa::ColorRange::kFull && p.range != isa::ColorRange::kVideo)
      return fail("unknown colour range");
    if (p.src_format == F::kNV12) {
      if (h % 2 != 0 || w % 2 != 0) return fail("nv12 input has an odd size");
      if (p.uv_row_stride < w || p.uv_row_stride > kMaxStride) return fail("nv12 UV row stride out of range");
      bool found = false;
      const uint64_t size = region_size(p.in.region, p.in.index, &found);
      const __int128 uv_end = static_cast<__int128>(p.in.offset) + p.uv_offset +
                              static_cast<__int128>(n - 1) * p.in.strides[0] +
                              static_cast<__int128>(h / 2 - 1) * p.uv_row_stride + w;
      if (p.uv_offset > (uint64_t{1} << 40) || uv_end > static_cast<__int128>(size))
        return fail("nv12 UV plane runs past the end of its region");
    }
    return true;
  }

 private:
  const RegionLayout& regions_;
  std::string* error_;
};

// The march's operator limits and data types (bpu_sim/isa/march.h).
class MarchCheck {
 public:
  MarchCheck(const isa::MarchInfo& m, std::string* e) : m_(m), error_(e) {}

  bool fail(const std::string& what) {
    *error_ = what + " on " + m_.name;
    return false;
  }
  bool limit(int64_t v, int64_t max, const char* what) {
    if (v > max) return fail(std::string(what) + " " + std::to_string(v) + " exceeds " + std::to_string(max));
    return true;
  }
  bool types(std::initializer_list<const TensorRef*> refs) {
    if (m_.int16) return true;
    for (const TensorRef* r : refs)
      if (r->dtype == DType::kInt16) return fail("int16 tensors are not supported");
    return true;
  }
  bool window(int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t dh, int32_t dw, int64_t max_kernel) {
    const isa::OpLimits& l = m_.limits;
    return limit(std::max(kh, kw), max_kernel, "kernel size") && limit(std::max(sh, sw), l.max_stride, "stride") &&
           limit(std::max(dh, dw), l.max_dilation, "dilation");
  }
  bool conv(const isa::Conv& c, bool deconv) {
    const isa::OpLimits& l = m_.limits;
    return types({&c.in, &c.out, &c.residual}) &&
           window(c.kernel_h, c.kernel_w, c.stride_h, c.stride_w, c.dilation_h, c.dilation_w,
                  deconv ? l.max_deconv_kernel : l.max_kernel) &&
           limit(std::max(c.in.dims[3], c.out.dims[3]), l.max_channels, "channels");
  }
  bool pool(const isa::Pool& p) {
    return types({&p.in, &p.out}) &&
           window(1, 1, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, 1);
  }
  bool instruction(const isa::Instruction& ins) {
    using isa::Opcode;
    if (const auto* c = std::get_if<isa::Conv>(&ins.body)) return conv(*c, ins.opcode == Opcode::kDeconv);
    if (const auto* p = std::get_if<isa::Pool>(&ins.body)) return pool(*p);
    if (const auto* e = std::get_if<isa::Eltwise>(&ins.body)) return types({&e->a, &e->b, &e->out});
    if (const auto* t = std::get_if<isa::Lut>(&ins.body)) return types({&t->in, &t->out});
    if (const auto* r = std::get_if<isa::Resize>(&ins.body)) return types({&r->in, &r->out});
    if (const auto* v = std::get_if<isa::Move>(&ins.body)) return types({&v->in, &v->out});
    if (const auto* f = std::get_if<isa::Fill>(&ins.body)) return types({&f->out});
    if (const auto* a = std::get_if<isa::ArgMax>(&ins.body)) return types({&a->in, &a->out});
    if (const auto* a = std::get_if<isa::MatMul>(&ins.body))
      return (m_.limits.matmul || fail("a product of two activations (MatMul) is not supported")) &&
             types({&a->a, &a->b, &a->out});
    if (const auto* s = std::get_if<isa::Softmax>(&ins.body))
      return (m_.limits.rows || fail("row reductions (Softmax) are not supported")) && types({&s->in, &s->out});
    if (const auto* n = std::get_if<isa::LayerNorm>(&ins.body))
      return (m_.limits.rows || fail("row reductions (LayerNorm) are not supported")) && types({&n->in, &n->out});
    return true;
  }

 private:
  const isa::MarchInfo& m_;
  std::string* error_;
};


bool validate_structure(const isa::Instruction& ins, const RegionLayout& regions, std::string* error) {
  V v(regions, error);
  using isa::Opcode;
  const auto* conv = std::get_if<isa::Conv>(&ins.body);
  switch (ins.opcode) {
    case Opcode::kConv:
    case Opcode::kDeconv:
      return conv != nullptr ? v.conv(*conv, ins.opcode == Opcode::kDeconv)
                             : v.fail("opcode and body disagree");
    case Opcode::kPool:
      if (auto* p = std::get_if<isa::Pool>(&ins.body)) return v.pool(*p);
      break;
    case Opcode::kEltwise:
      if (auto* p = std::get_if<isa::Eltwise>(&ins.body)) return v.eltwise(*p);
      break;
    case Opcode::kLut:
      if (auto* p = std::get_if<isa::Lut>(&ins.body)) return v.lut(*p);
      break;
    case Opcode::kResize:
      if (auto* p = std::get_if<isa::Resize>(&ins.body)) return v.resize(*p);
      break;
    case Opcode::kMove:
      if (auto* p = std::get_if<isa::Move>(&ins.body)) return v.move(*p);
      break;
    case Opcode::kFill:
      if (auto* p = std::get_if<isa::Fill>(&ins.body)) return v.fill(*p);
      break;
    case Opcode::kArgMax:
      if (auto* p = std::get_if<isa::ArgMax>(&ins.body)) return v.argmax(*p);
      break;
    case Opcode::kPreprocess:
      if (auto* p = std::get_if<isa::Preprocess>(&ins.body)) return v.preprocess(*p);
      break;
    case Opcode::kMatMul:
      if (auto* p = std::get_if<isa::MatMul>(&ins.body)) return v.matmul(*p);
      break;
    case Opcode::kSoftmax:
      if (auto* p = std::get_if<isa::Softmax>(&ins.body)) return v.softmax(*p);
      break;
    case Opcode::kLayerNorm:
      if (auto* p = std::get_if<isa::LayerNorm>(&ins.body)) return v.layernorm(*p);
      break;
  }
  return v.fail("opcode and body disagree");
}

}  // namespace

bool validate_instruction(const isa::Instruction& ins, const RegionLayout& regions,
                          std::string* error) {
  if (!validate_structure(ins, regions, error)) return false;
  return regions.march == nullptr || MarchCheck(*regions.march, error).instruction(ins);
}

bool validate_program(const std::vector<isa::Instruction>& program, const RegionLayout& regions,
                      std::string* error) {
  for (size_t i = 0; i < program.size(); ++i) {
    std::string why;
    if (!validate_instruction(program[i], regions, &why)) {
      *error = "instruction " + std::to_string(i) + " (" + isa::opcode_name(program[i].opcode) +
               "): " + why;
      return false;
    }
  }
  return true;
}

}  // namespace openbpu::sim
