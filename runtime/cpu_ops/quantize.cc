// SPDX-License-Identifier: Apache-2.0
// openbpu::Quantize / openbpu::Dequantize: the CPU side of the numerics
// contract, converting between float tensors (any layout) and the BPU's
// integer tensors (any layout, padded), per tensor or per channel.
#include <algorithm>
#include <cmath>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bpu_sim/isa/numerics.h"
#include "runtime/cpu_ops/cpu_op.h"
#include "runtime/cpu_ops/elementwise_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

int32_t quantize_value(float x, float scale, int32_t qmin, int32_t qmax) {
  return isa::quantize_value(x, scale, isa::IntRange{qmin, qmax});
}

namespace {

bool set_range(isa::IntRange r, int32_t* lo, int32_t* hi) {
  *lo = static_cast<int32_t>(r.lo), *hi = static_cast<int32_t>(r.hi);
  return true;
}

bool int_range(int32_t t, int32_t* lo, int32_t* hi) {
  switch (t) {
    case kS8: return set_range(isa::int_range(8, true), lo, hi);
    case kU8: return set_range(isa::int_range(8, false), lo, hi);
    case kS16: return set_range(isa::int_range(16, true), lo, hi);
    case kU16: return set_range(isa::int_range(16, false), lo, hi);
    case kS32: return set_range(isa::int_range(32, true), lo, hi);
    default: return false;
  }
}

// Per-element factor along the quantized tensor's axis.
struct AxisScales {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int axis = 0;  // logical
  float at(const std::vector<int64_t>& idx) const {
    return scales.size() == 1 ? scales[0] : scales[static_cast<size_t>(idx[axis])];
  }
  int32_t zp(const std::vector<int64_t>& idx) const {
    if (zero_points.empty()) return 0;
    return zero_points.size() == 1 ? zero_points[0] : zero_points[static_cast<size_t>(idx[axis])];
  }
};

Status axis_scales(const TensorDesc& q, const CpuOpDef& def, AxisScales* out) {
  if (q.quant.type == kQuantScale) {
    out->scales = q.quant.scales;
    for (int8_t z : q.quant.zero_points) out->zero_points.push_back(z);
  } else if (q.quant.type == kQuantShift) {
    for (uint8_t s : q.quant.shifts) out->scales.push_back(std::ldexp(1.0f, -static_cast<int>(s)));
  }
  if (def.attrs.has("scale")) out->scales = def.attrs.get_floats("scale");
  if (out->scales.empty())
    return error(kInvalidModel, "node '" + def.name + "': quantized tensor '" + q.name + "' has no scale");
  for (float s : out->scales)
    if (!(s > 0.0f) || !std::isfinite(s))
      return error(kInvalidModel, "node '" + def.name + "': scale must be positive and finite");
  out->axis = logical_axis(q, q.quant.axis);
  const LogicalView v = logical_view(q);
  if (out->scales.size() != 1 &&
      (out->axis < 0 || out->axis >= static_cast<int>(v.dims.size()) ||
       static_cast<int64_t>(out->scales.size()) != v.dims[static_cast<size_t>(out->axis)]))
    return error(kInvalidModel, "node '" + def.name + "': scale count does not match the axis");
  return Status::Ok();
}

// One int8 value: isa::quantize_value, then + z saturated to int8.
inline int8_t quantize_s8(float x, double scale, isa::IntRange range, int32_t zp) {
  const int32_t q = isa::quantize_value(x, scale, range) + zp;
  return static_cast<int8_t>(q < -128 ? -128 : (q > 127 ? 127 : q));
}

// n (a multiple of 8) contiguous floats into int8, the int8 range:
// quantize_value two doubles at a time (the quotient, NaN to 0, the clamp,
// the truncation and the fraction's comparison with +-0.5 are exact in
// double, as in quantize_value), then + z and the saturating packs. Returns
// the count done (0 without SSE2).
int64_t quantize_s8_sse2(const float* x, int64_t n, double scale, int32_t zp, int8_t* y) {
#if defined(__SSE2__)
  const __m128d s = _mm_set1_pd(scale), lo = _mm_set1_pd(-128.0), hi = _mm_set1_pd(127.0);
  const __m128d half = _mm_set1_pd(0.5), mhalf = _mm_set1_pd(-0.5), one = _mm_set1_pd(1.0);
  const __m128i z = _mm_set1_epi32(zp);
  auto two = [&](__m128d d) {
    __m128d q = _mm_div_pd(d, s);
    q = _mm_and_pd(q, _mm_cmpord_pd(q, q));           // NaN -> 0
    q = _mm_min_pd(_mm_max_pd(q, lo), hi);
    const __m128d t = _mm_cvtepi32_pd(_mm_cvttpd_epi32(q));  // toward zero
    const __m128d f = _mm_sub_pd(q, t);
    const __m128d adj = _mm_sub_pd(_mm_and_pd(_mm_cmpge_pd(f, half), one), _mm_and_pd(_mm_cmple_pd(f, mhalf), one));
    return _mm_cvttpd_epi32(_mm_add_pd(t, adj));  // 2 int32 in the low half
  };
  auto four = [&](const float* p) {
    const __m128 v = _mm_loadu_ps(p);
    const __m128i a = two(_mm_cvtps_pd(v)), b = two(_mm_cvtps_pd(_mm_movehl_ps(v, v)));
    return _mm_add_epi32(_mm_unpacklo_epi64(a, b), z);
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i w = _mm_packs_epi32(four(x + i), four(x + i + 4));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm_packs_epi16(w, w));
  }
  return i;
#else
  (void)x, (void)n, (void)scale, (void)zp, (void)y;
  return 0;
#endif
}

// float32 -> int8 with one scale and zero point (a model's float input):
// per row of the innermost logical dimension, without the per-element index
// and type dispatch of the general loop; contiguous float rows in chunks of
// 64 through quantize_s8_sse2, the rest by quantize_s8.
void quantize_rows_f32_s8(const LogicalView& src, const LogicalView& dst, const uint8_t* in, uint8_t* out,
                          double scale, isa::IntRange range, int32_t zp) {
  const size_t rank = src.dims.size();
  const int64_t inner = rank > 0 ? src.dims[rank - 1] : 1;
  const int64_t sa = rank > 0 ? src.strides[rank - 1] : 0, sb = rank > 0 ? dst.strides[rank - 1] : 0;
  const bool simd = sa == static_cast<int64_t>(sizeof(float)) && range.lo == -128 && range.hi == 127;
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < rank; ++k) rows *= src.dims[k];
  std::vector<int64_t> idx(rank > 0 ? rank - 1 : 0, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t i = 0;
    for (; simd && i + 8 <= inner;) {  // (unaligned loads: any float address)
      int8_t ys[64];
      const int64_t n = std::min<int64_t>(64, (inner - i) / 8 * 8);
      const int64_t done = quantize_s8_sse2(reinterpret_cast<const float*>(in + oa + i * sa), n, scale, zp, ys);
      if (done == 0) break;
      for (int64_t k = 0; k < done; ++k) out[ob + (i + k) * sb] = static_cast<uint8_t>(ys[k]);
      i += done;
    }
    for (; i < inner; ++i) {
      float x;
      std::memcpy(&x, in + oa + i * sa, sizeof(x));
      out[ob + i * sb] = static_cast<uint8_t>(quantize_s8(x, scale, range, zp));
    }
    for (size_t k = idx.size(); k-- > 0;) {  // the next row
      oa += src.strides[k], ob += dst.strides[k];
      if (++idx[k] < src.dims[k]) break;
      oa -= src.strides[k] * src.dims[k], ob -= dst.strides[k] * dst.dims[k];
      idx[k] = 0;
    }
  }
}

class QuantizeKernel final : public CpuKernel {
 public:
  AxisScales scales;
  int32_t qmin = 0, qmax = 0;
  bool zero_fill = false;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    LogicalView src = logical_view(*in[0].desc);
    LogicalView dst = logical_view(*out[0].desc);
    match_rank(&src, &dst);
    if (zero_fill) std::memset(out[0].data, 0, static_cast<size_t>(out[0].desc->aligned_byte_size));
    const int32_t st = src.data_type, dt = dst.data_type;
    if (st == kF32 && dt == kS8 && scales.scales.size() == 1 && scales.zero_points.size() <= 1) {
      const int32_t zp = scales.zero_points.empty() ? 0 : scales.zero_points[0];
      quantize_rows_f32_s8(src, dst, in[0].data, out[0].data, scales.scales[0], isa::IntRange{qmin, qmax}, zp);
      return Status::Ok();
    }
    for_each_pair(src, dst, [&](int64_t so, int64_t dof, const std::vector<int64_t>& idx) {
      const float x = static_cast<float>(load_as_double(st, in[0].data + so));
      const int32_t q = quantize_value(x, scales.at(idx), qmin, qmax);
      const int64_t z = static_cast<int64_t>(q) + scales.zp(idx);
      store_from_double(dt, static_cast<double>(z), out[0].data + dof);
    });
    return Status::Ok();
  }
};

class DequantizeKernel final : public CpuKernel {
 public:
  AxisScales scales;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    LogicalView src = logical_view(*in[0].desc);
    LogicalView dst = logical_view(*out[0].desc);
    match_rank(&src, &dst);
    const int32_t st = src.data_type, dt = dst.data_type;
    for_each_pair(src, dst, [&](int64_t so, int64_t dof, const std::vector<int64_t>& idx) {
      const double q = load_as_double(st, in[0].data + so) - scales.zp(idx);
      store_from_double(dt, static_cast<double>(static_cast<float>(q * scales.at(idx))),
                        out[0].data + dof);
    });
    return Status::Ok();
  }
};

Status check_unary(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out) {
  if (in.size() != 1 || out.size() != 1 || !in[0] || !out[0])
    return error(kInvalidModel, "node '" + def.name + "' (" + def.op_type + ") needs 1 input and 1 output");
  LogicalView a = logical_view(*in[0]), b = logical_view(*out[0]);
  match_rank(&a, &b);
  if (!same_dims(a, b))
    return error(kInvalidModel, "node '" + def.name + "' (" + def.op_type +
                                    "): input and output shapes differ");
  return Status::Ok();
}

}  // namespace

Status create_quantize(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                       const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* k) {
  OBPU_RETURN_IF_ERROR(check_unary(def, in, out));
  auto kernel = std::make_unique<QuantizeKernel>();
  if (!int_range(out[0]->data_type, &kernel->qmin, &kernel->qmax))
    return error(kInvalidModel, "node '" + def.name + "': Quantize output must be an integer type");
  OBPU_RETURN_IF_ERROR(axis_scales(*out[0], def, &kernel->scales));
  kernel->zero_fill = out[0]->aligned != out[0]->valid;
  *k = std::move(kernel);
  return Status::Ok();
}

Status create_dequantize(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                         const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* k) {
  OBPU_RETURN_IF_ERROR(check_unary(def, in, out));
  int32_t lo, hi;
  if (!int_range(in[0]->data_type, &lo, &hi))
    return error(kInvalidModel, "node '" + def.name + "': Dequantize input must be an integer type");
  if (out[0]->data_type != kF32)
    return error(kInvalidModel, "node '" + def.name + "': Dequantize output must be float32");
  auto kernel = std::make_unique<DequantizeKernel>();
  OBPU_RETURN_IF_ERROR(axis_scales(*in[0], def, &kernel->scales));
  *k = std::move(kernel);
  return Status::Ok();
}

}  // namespace openbpu::rt
