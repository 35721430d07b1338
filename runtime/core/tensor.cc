// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace openbpu::rt {

int element_size(int32_t t) {
  switch (t) {
    case kImgY: case kImgNV12: case kImgNV12Separate: case kImgYUV444: case kImgRGB:
    case kImgBGR: case kS4: case kU4: case kS8: case kU8: case kBool8: return 1;
    case kF16: case kS16: case kU16: return 2;
    case kF32: case kS32: case kU32: return 4;
    case kF64: case kS64: case kU64: return 8;
    default: return 0;
  }
}

bool is_image_type(int32_t t) { return t >= kImgY && t <= kImgBGR; }

const char* data_type_name(int32_t t) {
  static const char* const names[] = {
      "HB_DNN_IMG_TYPE_Y", "HB_DNN_IMG_TYPE_NV12", "HB_DNN_IMG_TYPE_NV12_SEPARATE",
      "HB_DNN_IMG_TYPE_YUV444", "HB_DNN_IMG_TYPE_RGB", "HB_DNN_IMG_TYPE_BGR",
      "HB_DNN_TENSOR_TYPE_S4", "HB_DNN_TENSOR_TYPE_U4", "HB_DNN_TENSOR_TYPE_S8",
      "HB_DNN_TENSOR_TYPE_U8", "HB_DNN_TENSOR_TYPE_F16", "HB_DNN_TENSOR_TYPE_S16",
      "HB_DNN_TENSOR_TYPE_U16", "HB_DNN_TENSOR_TYPE_F32", "HB_DNN_TENSOR_TYPE_S32",
      "HB_DNN_TENSOR_TYPE_U32", "HB_DNN_TENSOR_TYPE_F64", "HB_DNN_TENSOR_TYPE_S64",
      "HB_DNN_TENSOR_TYPE_U64"};
  if (t == kBool8) return "HB_DNN_TENSOR_TYPE_BOOL8";
  return (t >= 0 && t <= kU64) ? names[t] : "HB_DNN_TENSOR_TYPE_UNKNOWN";
}

const char* layout_name(int32_t l) {
  switch (l) {
    case kNHWC: return "HB_DNN_LAYOUT_NHWC";
    case kNCHW: return "HB_DNN_LAYOUT_NCHW";
    default: return "HB_DNN_LAYOUT_NONE";
  }
}

int64_t TensorDesc::valid_elements() const {
  int64_t n = 1;
  for (int32_t d : valid) n *= d;
  return n;
}

std::string layer_dump_name(const std::string& node, size_t output) {
  std::string s = node + (output > 0 ? "_" + std::to_string(output) : "");
  for (char& c : s)
    if (c == '/' || c == '\\' || c == ':' || static_cast<unsigned char>(c) < 0x20) c = '_';
  return s;
}

std::vector<int64_t> dense_strides(const std::vector<int32_t>& shape, int esize) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = esize;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

std::vector<int64_t> TensorDesc::byte_strides() const {
  bool have = strides.size() == valid.size();
  for (int64_t s : strides) have = have && s != 0;
  return have ? strides : dense_strides(aligned, element_size(data_type));
}

int64_t LogicalView::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

namespace {
constexpr int kNchwFromNhwc[4] = {0, 3, 1, 2};  // N,C,H,W from N,H,W,C
}  // namespace

int logical_axis(const TensorDesc& t, int axis) {
  if (axis < 0 || axis >= t.rank()) return -1;
  if (t.layout != kNHWC || t.rank() != 4) return axis;
  for (int k = 0; k < 4; ++k)
    if (kNchwFromNhwc[k] == axis) return k;
  return -1;
}

LogicalView logical_view(const TensorDesc& t) {
  LogicalView v;
  v.data_type = t.data_type;
  const std::vector<int64_t> bs = t.byte_strides();
  if (t.layout == kNHWC && t.rank() == 4) {
    for (int p : kNchwFromNhwc) {
      v.dims.push_back(t.valid[p]);
      v.strides.push_back(bs[p]);
    }
  } else {
    v.dims.assign(t.valid.begin(), t.valid.end());
    v.strides = bs;
  }
  return v;
}

namespace {

template <class T> T sat_cast(double v) {
  if (std::isnan(v)) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <class T> T rd(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T> void wr(uint8_t* p, T v) { std::memcpy(p, &v, sizeof(T)); }

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) mant <<= 1, --exp;
      x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

}  // namespace

double load_as_double(int32_t t, const uint8_t* p) {
  switch (t) {
    case kS8: return rd<int8_t>(p);
    case kBool8: return rd<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case kU8: case kImgY: case kImgNV12: case kImgNV12Separate: case kImgYUV444: case kImgRGB:
    case kImgBGR: return rd<uint8_t>(p);
    case kS16: return rd<int16_t>(p);
    case kU16: return rd<uint16_t>(p);
    case kF16: return half_to_float(rd<uint16_t>(p));
    case kS32: return rd<int32_t>(p);
    case kU32: return rd<uint32_t>(p);
    case kF32: return rd<float>(p);
    case kF64: return rd<double>(p);
    case kS64: return static_cast<double>(rd<int64_t>(p));
    case kU64: return static_cast<double>(rd<uint64_t>(p));
    default: return 0.0;
  }
}

void store_from_double(int32_t t, double v, uint8_t* p) {
  switch (t) {
    case kS8: wr(p, sat_cast<int8_t>(v)); break;
    case kBool8: wr(p, static_cast<uint8_t>(v != 0.0 ? 1 : 0)); break;
    case kU8: case kImgY: case kImgNV12: case kImgNV12Separate: case kImgYUV444: case kImgRGB:
    case kImgBGR: wr(p, sat_cast<uint8_t>(v)); break;
    case kS16: wr(p, sat_cast<int16_t>(v)); break;
    case kU16: wr(p, sat_cast<uint16_t>(v)); break;
    case kF16: wr(p, float_to_half(static_cast<float>(v))); break;
    case kS32: wr(p, sat_cast<int32_t>(v)); break;
    case kU32: wr(p, sat_cast<uint32_t>(v)); break;
    case kF32: wr(p, static_cast<float>(v)); break;
    case kF64: wr(p, v); break;
    case kS64: wr(p, sat_cast<int64_t>(v)); break;
    case kU64: wr(p, sat_cast<uint64_t>(v)); break;
    default: break;
  }
}

namespace {

// One axis of a same-shape copy: its length and byte strides on both sides.
struct CopyAxis {
  int64_t n, ss, ds;
};

// The axes of a copy between views of equal dims: dims of 1 dropped, the
// rest ordered by the destination's strides (outermost first; the same
// permutation on both sides, so every element still lands where it
// belongs) and neighbours merged where both sides are contiguous across
// them. Two entries at least (rows, then elements of a row).
std::vector<CopyAxis> copy_axes(const LogicalView& src, const LogicalView& dst, int64_t es) {
  std::vector<CopyAxis> a;
  for (size_t k = 0; k < src.dims.size(); ++k)
    if (src.dims[k] != 1) a.push_back({src.dims[k], src.strides[k], dst.strides[k]});
  std::stable_sort(a.begin(), a.end(), [](const CopyAxis& x, const CopyAxis& y) {
    return std::llabs(x.ds) > std::llabs(y.ds);
  });
  std::vector<CopyAxis> m;
  for (const CopyAxis& x : a) {
    if (!m.empty() && m.back().ss == x.ss * x.n && m.back().ds == x.ds * x.n)
      m.back() = {m.back().n * x.n, x.ss, x.ds};
    else
      m.push_back(x);
  }
  while (m.size() < 2) m.insert(m.begin(), CopyAxis{1, es, es});
  return m;
}

// Byte span [lo, hi) a view covers from its data pointer.
void view_span(const std::vector<CopyAxis>& a, bool dst_side, int64_t es, int64_t* lo, int64_t* hi) {
  *lo = 0, *hi = es;
  for (const CopyAxis& x : a) {
    const int64_t step = (dst_side ? x.ds : x.ss) * (x.n - 1);
    if (step < 0) *lo += step; else *hi += step;
  }
}

using RowsFn = void (*)(const uint8_t*, uint8_t*, const CopyAxis&, const CopyAxis&);

// Rows whose elements are contiguous on both sides, B bytes each.
template <size_t B>
void rows_fixed(const uint8_t* s, uint8_t* d, const CopyAxis& row, const CopyAxis&) {
  for (int64_t r = 0; r < row.n; ++r) std::memcpy(d + r * row.ds, s + r * row.ss, B);
}

// Rows of strided elements of E bytes (a row contiguous on both sides: one memcpy).
template <size_t E>
void rows_strided(const uint8_t* s, uint8_t* d, const CopyAxis& row, const CopyAxis& col) {
  const bool dense = col.ss == static_cast<int64_t>(E) && col.ds == static_cast<int64_t>(E);
  for (int64_t r = 0; r < row.n; ++r) {
    const uint8_t* sp = s + r * row.ss;
    uint8_t* dp = d + r * row.ds;
    if (dense) {
      std::memcpy(dp, sp, static_cast<size_t>(col.n) * E);
      continue;
    }
    for (int64_t j = 0; j < col.n; ++j) std::memcpy(dp + j * col.ds, sp + j * col.ss, E);
  }
}

RowsFn rows_fn(const CopyAxis& col, int64_t es) {
  static constexpr RowsFn kFixed[] = {nullptr,        rows_fixed<1>,  rows_fixed<2>,  rows_fixed<3>,
                                      rows_fixed<4>,  rows_fixed<5>,  rows_fixed<6>,  rows_fixed<7>,
                                      rows_fixed<8>,  rows_fixed<9>,  rows_fixed<10>, rows_fixed<11>,
                                      rows_fixed<12>, rows_fixed<13>, rows_fixed<14>, rows_fixed<15>,
                                      rows_fixed<16>};
  const int64_t bytes = col.n * es;
  if (col.ss == es && col.ds == es && bytes <= 16) return kFixed[bytes];
  switch (es) {
    case 1: return rows_strided<1>;
    case 2: return rows_strided<2>;
    case 4: return rows_strided<4>;
    case 8: return rows_strided<8>;
    default: return nullptr;
  }
}

// The copy of views with equal dims and data types, in rows along the
// destination's order; false (nothing written) where it does not apply:
// a destination stride of 0 or overlapping buffers, where the order of the
// element-wise copy decides the result.
bool copy_same_shape(const LogicalView& src, const uint8_t* src_data, const LogicalView& dst,
                     uint8_t* dst_data) {
  if (src.data_type != dst.data_type || src.dims != dst.dims) return false;
  const int64_t es = element_size(src.data_type);
  const std::vector<CopyAxis> a = copy_axes(src, dst, es);
  int64_t slo = 0, shi = 0, dlo = 0, dhi = 0;
  view_span(a, false, es, &slo, &shi);
  view_span(a, true, es, &dlo, &dhi);
  for (const CopyAxis& x : a)
    if (x.n > 1 && x.ds == 0) return false;
  if (src_data + slo < dst_data + dhi && dst_data + dlo < src_data + shi) return false;
  const RowsFn fn = rows_fn(a.back(), es);
  if (fn == nullptr) return false;
  const size_t outer = a.size() - 2;
  std::vector<int64_t> idx(outer, 0);
  int64_t so = 0, doff = 0;
  for (;;) {
    fn(src_data + so, dst_data + doff, a[outer], a[outer + 1]);
    size_t k = outer;
    for (; k-- > 0;) {
      so += a[k].ss, doff += a[k].ds;
      if (++idx[k] < a[k].n) break;
      so -= a[k].ss * a[k].n, doff -= a[k].ds * a[k].n, idx[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return true;
  }
}

}  // namespace

void copy_elements(const LogicalView& src, const uint8_t* src_data, const LogicalView& dst,
                   uint8_t* dst_data) {
  const int64_t n = src.elements();
  if (n == 0 || n != dst.elements()) return;
  if (copy_same_shape(src, src_data, dst, dst_data)) return;
  const int ss = element_size(src.data_type), ds = element_size(dst.data_type);
  const bool same_type = src.data_type == dst.data_type;
  std::vector<int64_t> si(src.dims.size(), 0), di(dst.dims.size(), 0);
  int64_t so = 0, doff = 0;
  for (int64_t e = 0; e < n; ++e) {
    if (same_type) {
      std::memcpy(dst_data + doff, src_data + so, static_cast<size_t>(ss));
    } else {
      store_from_double(dst.data_type, load_as_double(src.data_type, src_data + so), dst_data + doff);
    }
    (void)ds;
    // Advance both odometers.
    for (size_t k = si.size(); k-- > 0;) {
      so += src.strides[k];
      if (++si[k] < src.dims[k]) break;
      so -= src.strides[k] * src.dims[k];
      si[k] = 0;
    }
    for (size_t k = di.size(); k-- > 0;) {
      doff += dst.strides[k];
      if (++di[k] < dst.dims[k]) break;
      doff -= dst.strides[k] * dst.dims[k];
      di[k] = 0;
    }
  }
}

}  // namespace openbpu::rt
