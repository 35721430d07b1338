// SPDX-License-Identifier: Apache-2.0
// ONNX QuantizeLinear / DequantizeLinear (the converter's QDQ models and
// constant folding; the runtime's own quantization is openbpu::Quantize in
// quantize.cc). Scale and zero point are scalars or 1-D along `axis`
// (default 1, opset 13). QuantizeLinear: y = saturate(round_half_even(x /
// scale) + zero_point), y's type is the zero point's (uint8 without one).
// DequantizeLinear: y = (x - zero_point) * scale in float32.
#include <cmath>

#include "bpu_sim/isa/numerics.h"
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class QLinearKernel final : public CpuKernel {
 public:
  bool quantize = true;
  int64_t outer = 1, channels = 1, inner = 1;
  bool per_axis = false;
  int32_t in_type = kF32, out_type = kU8;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const std::vector<double> scale = read_doubles(in[1]);
    std::vector<int64_t> zp(scale.size(), 0);
    if (has_input(in, 2)) zp = read_ints(in[2]);
    InBuf x(in[0], in_type);
    OutBuf y(out[0], out_type);
    const int is = element_size(in_type), os = element_size(out_type);
    double lo = 0, hi = 0;
    if (quantize) {
      const isa::IntRange r = out_type == kS8    ? isa::int_range(8, true)
                              : out_type == kU8  ? isa::int_range(8, false)
                              : out_type == kS16 ? isa::int_range(16, true)
                              : out_type == kS32 ? isa::int_range(32, true)
                                                 : isa::int_range(16, false);
      lo = static_cast<double>(r.lo), hi = static_cast<double>(r.hi);
    }
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c) {
        const size_t q = per_axis ? static_cast<size_t>(c) : 0;
        const double s = scale[q];
        const double z = static_cast<double>(zp[q]);
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t e = (o * channels + c) * inner + i;
          const double v = load_as_double(in_type, x.data() + e * is);
          double r;
          if (quantize) {
            r = std::nearbyint(static_cast<double>(static_cast<float>(v) / static_cast<float>(s))) +
                z;
            r = std::isnan(r) ? z : std::max(lo, std::min(hi, r));
          } else {
            r = static_cast<float>((v - z) * s);
          }
          store_from_double(out_type, r, y.data() + e * os);
        }
      }
    y.commit();
    return Status::Ok();
  }
};

// DynamicQuantizeLinear: uint8 with scale = (max(0, max x) - min(0, min x)) /
// 255 and zero point round(-min / scale), all in float32, half to even.
class DynamicQuantizeKernel final : public CpuKernel {
 public:
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], kF32);
    const int64_t n = count_of(dims_of(*in[0].desc));
    const float* xp = x.as<float>();
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < n; ++i) lo = std::min(lo, xp[i]), hi = std::max(hi, xp[i]);
    const float scale = (hi - lo) / 255.0f;
    const float zp = scale == 0.0f
                         ? 0.0f
                         : std::max(0.0f, std::min(255.0f, std::nearbyint((0.0f - lo) / scale)));
    OutBuf y(out[0], kU8);
    for (int64_t i = 0; i < n; ++i) {
      const float q = scale == 0.0f ? zp : std::nearbyint(xp[i] / scale) + zp;
      y.as<uint8_t>()[i] = static_cast<uint8_t>(std::max(0.0f, std::min(255.0f, q)));
    }
    y.commit();
    if (has_input(out, 1)) {
      OutBuf s(out[1], kF32);
      *s.as<float>() = scale;
      s.commit();
    }
    if (has_input(out, 2)) {
      OutBuf z(out[2], kU8);
      *z.as<uint8_t>() = static_cast<uint8_t>(zp);
      z.commit();
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_dynamic_quantize(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                               const std::vector<const TensorDesc*>& out,
                               std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.empty() || !out[0] || out.size() > 3)
    return op_error(def, "needs x and outputs y (, y_scale, y_zero_point)");
  if (compute_type(in[0]->data_type) != kF32 || out[0]->data_type != kU8 ||
      dims_of(*out[0]) != dims_of(*in[0]))
    return op_error(def, "float32 x and uint8 y of the same shape expected");
  if ((has_input(out, 1) && (out[1]->data_type != kF32 || count_of(dims_of(*out[1])) != 1)) ||
      (has_input(out, 2) && (out[2]->data_type != kU8 || count_of(dims_of(*out[2])) != 1)))
    return op_error(def, "y_scale must be a float32 scalar, y_zero_point a uint8 scalar");
  *kernel = std::make_unique<DynamicQuantizeKernel>();
  return Status::Ok();
}

Status create_qlinear(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                      const std::vector<const TensorDesc*>& out,
                      std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() < 2 || !in[0] || !in[1] || present_count(in) > 3 || out.size() != 1 || !out[0])
    return op_error(def, "needs x, scale (, zero_point) and 1 output");
  auto k = std::make_unique<QLinearKernel>();
  k->quantize = def.op_type == "QuantizeLinear";
  k->in_type = compute_type(in[0]->data_type);
  k->out_type = out[0]->data_type;
  auto qtype = [](int32_t t) {
    return t == kS8 || t == kU8 || t == kS16 || t == kU16 || t == kS32;
  };
  if (k->quantize) {
    if (!is_float_type(in[0]->data_type) && in[0]->data_type != kS32)
      return op_error(def, "x must be float or int32");
    if (!qtype(k->out_type) || (has_input(in, 2) && in[2]->data_type != k->out_type))
      return op_error(def, "y must be an integer type equal to the zero point's");
  } else {
    if (!qtype(k->in_type)) return op_error(def, "x must be an integer type");
    if (compute_type(k->out_type) != kF32) return op_error(def, "y must be float32");
    k->out_type = compute_type(k->out_type);
    if (has_input(in, 2) && in[2]->data_type != in[0]->data_type)
      return op_error(def, "zero point type differs from x's");
  }
  const Dims x = dims_of(*in[0]);
  if (dims_of(*out[0]) != x) return op_error(def, "input and output shapes differ");
  const int64_t ns = count_of(dims_of(*in[1]));
  if (has_input(in, 2) && count_of(dims_of(*in[2])) != ns)
    return op_error(def, "scale and zero point sizes differ");
  if (dims_of(*in[1]).size() > 1) return op_error(def, "scale must be a scalar or 1-D");
  if (dims_of(*in[1]).size() == 1 && !x.empty()) {
    int64_t axis;
    if (!norm_axis(def.attrs.get_int("axis", 1), static_cast<int64_t>(x.size()), &axis))
      return op_error(def, "axis out of range");
    if (ns != x[axis] && ns != 1) return op_error(def, "scale size does not match the axis");
    k->per_axis = ns == x[axis] && ns != 1;
    if (k->per_axis) {
      k->outer = count_of(Dims(x.begin(), x.begin() + axis));
      k->channels = x[axis];
      k->inner = count_of(Dims(x.begin() + axis + 1, x.end()));
    }
  } else if (ns != 1) {
    return op_error(def, "scale must have one element");
  }
  if (!k->per_axis) k->inner = count_of(x);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
