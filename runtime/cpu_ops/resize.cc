// SPDX-License-Identifier: Apache-2.0
// Resize (opset 10..19 without antialias/axes/keep_aspect_ratio_policy) and
// Upsample (opset 7: scales attribute; 9: scales input).
//
// Inputs by opset: Upsample-9 and Resize-10: X, scales. Resize-11+: X, roi,
// scales, sizes (roi and scales optional since 13). Upsample and Resize-10
// use the "asymmetric" coordinate mapping with nearest = floor when
// enlarging and ceil when shrinking (as ONNX Runtime); Resize-11+
// follows its attributes (coordinate_transformation_mode: half_pixel
// (default), pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn, tf_crop_and_resize; nearest_mode: round_prefer_floor
// (default), round_prefer_ceil, floor, ceil; cubic_coeff_a; exclude_outside;
// extrapolation_value). Modes nearest, linear ("bilinear" accepted for old
// Upsample) and cubic, on every dimension, separably.
//
// The maths follows the ONNX reference: the scale of a dimension is the
// given float scale, or output/input when sizes are given; the sample
// position x_ori is computed in double; taps outside the input repeat the
// edge (exclude_outside drops them and renormalizes instead).
#include <cmath>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelNN,
  kTfCropResize
};
enum class Near { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

// Taps of one output index along one dimension.
struct Taps {
  int n = 0;
  std::vector<int64_t> idx;      // out * n
  std::vector<double> w;         // out * n
  std::vector<uint8_t> outside;  // tf_crop_and_resize extrapolation
};

class ResizeKernel final : public CpuKernel {
 public:
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Near near = Near::kRoundPreferFloor;
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false;
  bool legacy_nearest = false;  // Upsample, Resize-10
  int scales_input = -1, sizes_input = -1, roi_input = -1;  // input positions
  std::vector<float> attr_scales;                           // Upsample-7
  int32_t type = kF32;
  CpuOpDef id;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const Dims x = dims_of(*in[0].desc), y = dims_of(*out[0].desc);
    const size_t r = x.size();
    std::vector<double> scales(r, 1.0);
    std::vector<double> roi;
    bool have = false;
    if (!attr_scales.empty()) {
      for (size_t a = 0; a < r; ++a) scales[a] = attr_scales[a];
      have = true;
    }
    if (scales_input >= 0 && has_input(in, static_cast<size_t>(scales_input)) &&
        count_of(dims_of(*in[scales_input].desc)) > 0) {
      const std::vector<double> s = read_doubles(in[scales_input]);
      if (s.size() != r) return op_error(id, "scales must have one entry per dimension");
      for (size_t a = 0; a < r; ++a) scales[a] = static_cast<double>(static_cast<float>(s[a]));
      for (size_t a = 0; a < r; ++a)
        // Compared as doubles: scales come from tensor data (no int64 overflow).
        if (std::floor(static_cast<double>(x[a]) * scales[a]) != static_cast<double>(y[a]) ||
            !(scales[a] > 0))
          return op_error(id, "output shape " + dims_str(y) + " does not match the scales");
      have = true;
    } else if (sizes_input >= 0 && has_input(in, static_cast<size_t>(sizes_input))) {
      const std::vector<int64_t> s = read_ints(in[sizes_input]);
      if (s.size() != r || Dims(s.begin(), s.end()) != y)
        return op_error(id, "sizes differ from the output shape");
      for (size_t a = 0; a < r; ++a)
        scales[a] = x[a] ? static_cast<double>(y[a]) / static_cast<double>(x[a]) : 1.0;
      have = true;
    }
    if (!have) return op_error(id, "needs scales or sizes");
    if (coord == Coord::kTfCropResize) {
      if (roi_input < 0 || !has_input(in, static_cast<size_t>(roi_input)))
        return op_error(id, "tf_crop_and_resize needs roi");
      roi = read_doubles(in[roi_input]);
      if (roi.size() != 2 * r) return op_error(id, "roi must have 2 * rank entries");
    }
    if (mode == Mode::kNearest && coord != Coord::kTfCropResize) {
      // Nearest: a pure gather of the selected input index per dimension.
      std::vector<std::vector<int64_t>> maps(r);
      for (size_t a = 0; a < r; ++a) {
        const Taps t = make_taps(x[a], y[a], scales[a], 0.0, 1.0);
        for (int64_t j = 0; j < y[a]; ++j)
          maps[a].push_back(t.idx[j * t.n + (t.w[j * t.n] != 0.0 ? 0 : 1)]);
      }
      InBuf xb(in[0], type);
      OutBuf yb(out[0], type);
      uint64_t fill = 0;
      map_copy(x, y, maps, element_size(type), xb.data(), yb.data(),
               reinterpret_cast<const uint8_t*>(&fill));
      yb.commit();
      return Status::Ok();
    }
    // Separable passes over the dimensions that change.
    std::vector<double> cur(static_cast<size_t>(count_of(x)));
    {
      InBuf xb(in[0], type);
      const int es = element_size(type);
      for (size_t i = 0; i < cur.size(); ++i) cur[i] = load_as_double(type, xb.data() + i * es);
    }
    Dims cd = x;
    std::vector<std::vector<uint8_t>> outside(r);  // tf_crop_and_resize, per dim
    for (size_t a = 0; a < r; ++a) {
      const bool identity = x[a] == y[a] && scales[a] == 1.0 && coord != Coord::kTfCropResize;
      if (identity) continue;
      const Taps t = make_taps(x[a], y[a], scales[a], roi.empty() ? 0.0 : roi[a],
                               roi.empty() ? 1.0 : roi[a + r]);
      outside[a] = t.outside;
      const int64_t outer = count_of(Dims(cd.begin(), cd.begin() + a));
      const int64_t inner = count_of(Dims(cd.begin() + a + 1, cd.end()));
      Dims nd = cd;
      nd[a] = y[a];
      std::vector<double> next(static_cast<size_t>(count_of(nd)), 0.0);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < y[a]; ++j) {
          double* dst = next.data() + (o * y[a] + j) * inner;
          for (int k = 0; k < t.n; ++k) {
            const double w = t.w[j * t.n + k];
            if (w == 0.0) continue;
            const double* src = cur.data() + (o * x[a] + t.idx[j * t.n + k]) * inner;
            for (int64_t i = 0; i < inner; ++i) dst[i] += w * src[i];
          }
        }
      cur = std::move(next);
      cd = nd;
    }
    // tf_crop_and_resize: an element is the extrapolation value when its
    // sample position is outside the input along any dimension.
    if (coord == Coord::kTfCropResize && !cur.empty()) {
      std::vector<int64_t> idx(r, 0);
      for (size_t e = 0; e < cur.size(); ++e) {
        bool o = false;
        for (size_t a = 0; a < r && !o; ++a) o = !outside[a].empty() && outside[a][idx[a]];
        if (o) cur[e] = extrapolation;
        for (size_t a = r; a-- > 0;) {
          if (++idx[a] < y[a]) break;
          idx[a] = 0;
        }
      }
    }
    OutBuf yb(out[0], type);
    const int es = element_size(type);
    const bool int_out = is_int_type(type);
    for (size_t i = 0; i < cur.size(); ++i)
      store_from_double(type, int_out ? std::nearbyint(cur[i]) : cur[i], yb.data() + i * es);
    yb.commit();
    return Status::Ok();
  }

 private:
  void coeffs(double ratio, Near near, double* c) const {
    switch (mode) {
      case Mode::kNearest: {
        bool hi;
        if (ratio == 1.0)
          hi = true;
        else if (near == Near::kRoundPreferFloor)
          hi = ratio > 0.5;
        else if (near == Near::kRoundPreferCeil)
          hi = ratio >= 0.5;
        else
          hi = near == Near::kCeil;
        c[0] = hi ? 0.0 : 1.0;
        c[1] = hi ? 1.0 : 0.0;
        break;
      }
      case Mode::kLinear:
        c[0] = 1.0 - ratio;
        c[1] = ratio;
        break;
      case Mode::kCubic: {
        const double A = cubic_a, r = ratio, s = 1.0 - ratio;
        c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
        c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
        c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
        c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
        break;
      }
    }
  }

  Taps make_taps(int64_t in, int64_t out, double scale, double roi_start, double roi_end) const {
    Taps t;
    t.n = mode == Mode::kCubic ? 4 : 2;
    // ONNX Runtime's Upsample / Resize-10 nearest: floor when enlarging, ceil
    // when shrinking.
    const Near nm = legacy_nearest ? (scale < 1.0 ? Near::kCeil : Near::kFloor) : near;
    const double out_w = scale * static_cast<double>(in);
    const double in_d = static_cast<double>(in);
    for (int64_t j = 0; j < out; ++j) {
      const double xj = static_cast<double>(j);
      double xo = 0.0;
      bool outside = false;
      switch (coord) {
        case Coord::kAlignCorners:
          xo = out_w == 1.0 ? 0.0 : xj * (in_d - 1) / (out_w - 1);
          break;
        case Coord::kAsymmetric:
          xo = xj / scale;
          break;
        case Coord::kTfCropResize:
          xo = out_w == 1.0 ? (roi_end - roi_start) * (in_d - 1) / 2
                            : xj * (roi_end - roi_start) * (in_d - 1) / (out_w - 1);
          xo += roi_start * (in_d - 1);
          outside = xo < 0 || xo > in_d - 1;
          break;
        case Coord::kPytorchHalfPixel:
          xo = out_w == 1.0 ? -0.5 : (xj + 0.5) / scale - 0.5;
          break;
        case Coord::kHalfPixel:
          xo = (xj + 0.5) / scale - 0.5;
          break;
        case Coord::kTfHalfPixelNN:
          xo = (xj + 0.5) / scale;
          break;
      }
      if (coord == Coord::kTfCropResize) t.outside.push_back(outside);
      // base: the tap left of xo, with ratio in (0, 1].
      double base = std::floor(xo);
      double ratio = xo - base;
      if (ratio == 0.0) {
        base -= 1.0;
        ratio = 1.0;
      }
      double c[4];
      coeffs(ratio, nm, c);
      const int64_t first = static_cast<int64_t>(base) - t.n / 2 + 1;
      double sum = 0.0;
      for (int k = 0; k < t.n; ++k) {
        const int64_t i = first + k;
        if (exclude_outside && (i < 0 || i >= in)) c[k] = 0.0;
        sum += c[k];
      }
      for (int k = 0; k < t.n; ++k) {
        const int64_t i = std::max<int64_t>(0, std::min<int64_t>(in - 1, first + k));
        t.idx.push_back(i);
        t.w.push_back(exclude_outside && sum != 0.0 ? c[k] / sum : c[k]);
      }
    }
    return t;
  }
};

}  // namespace

Status create_resize(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs X and 1 output");
  auto k = std::make_unique<ResizeKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = compute_type(in[0]->data_type);
  if (!is_numeric_type(k->type) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, "numeric tensors of one type expected");
  if (dims_of(*in[0]).size() != dims_of(*out[0]).size())
    return op_error(def, "output rank differs from the input's");
  const Attrs& a = def.attrs;
  const bool upsample = def.op_type == "Upsample";
  const int64_t opset = opset_of(def);
  const bool legacy = upsample || opset < 11;
  std::string mode = a.get_string("mode", "nearest");
  if (mode == "nearest")
    k->mode = Mode::kNearest;
  else if (mode == "linear" || mode == "bilinear")
    k->mode = Mode::kLinear;
  else if (mode == "cubic" && !legacy)
    k->mode = Mode::kCubic;
  else
    return op_error(def, "unsupported mode '" + mode + "'");
  if (a.get_int("antialias", 0) != 0 || a.has("axes") || a.has("keep_aspect_ratio_policy"))
    return op_error(def, "antialias/axes/keep_aspect_ratio_policy (opset 18) are not supported");
  if (legacy) {
    k->coord = Coord::kAsymmetric;
    k->legacy_nearest = true;
    if (upsample && a.has("scales")) {
      k->attr_scales = a.get_floats("scales");
      if (k->attr_scales.size() != dims_of(*in[0]).size())
        return op_error(def, "scales must have one entry per dimension");
      const Dims x = dims_of(*in[0]), y = dims_of(*out[0]);
      for (size_t i = 0; i < x.size(); ++i)
        if (std::floor(static_cast<double>(x[i]) * static_cast<double>(k->attr_scales[i])) !=
            static_cast<double>(y[i]))
          return op_error(def, "output shape does not match the scales");
    } else {
      if (!has_input(in, 1)) return op_error(def, "needs the scales input");
      k->scales_input = 1;
    }
  } else {
    const std::string c = a.get_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel")
      k->coord = Coord::kHalfPixel;
    else if (c == "pytorch_half_pixel")
      k->coord = Coord::kPytorchHalfPixel;
    else if (c == "align_corners")
      k->coord = Coord::kAlignCorners;
    else if (c == "asymmetric")
      k->coord = Coord::kAsymmetric;
    else if (c == "tf_half_pixel_for_nn")
      k->coord = Coord::kTfHalfPixelNN;
    else if (c == "tf_crop_and_resize")
      k->coord = Coord::kTfCropResize;
    else
      return op_error(def, "unknown coordinate_transformation_mode '" + c + "'");
    const std::string n = a.get_string("nearest_mode", "round_prefer_floor");
    if (n == "round_prefer_floor")
      k->near = Near::kRoundPreferFloor;
    else if (n == "round_prefer_ceil")
      k->near = Near::kRoundPreferCeil;
    else if (n == "floor")
      k->near = Near::kFloor;
    else if (n == "ceil")
      k->near = Near::kCeil;
    else
      return op_error(def, "unknown nearest_mode '" + n + "'");
    k->cubic_a = a.get_float("cubic_coeff_a", -0.75f);
    k->exclude_outside = a.get_int("exclude_outside", 0) != 0;
    k->extrapolation = a.get_float("extrapolation_value", 0.0f);
    k->roi_input = 1;
    k->scales_input = 2;
    k->sizes_input = 3;
    if (!has_input(in, 2) && !has_input(in, 3)) return op_error(def, "needs scales or sizes");
  }
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
