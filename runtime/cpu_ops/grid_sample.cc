// SPDX-License-Identifier: Apache-2.0
// GridSample (opset 16, 2-D), with PyTorch's grid_sample semantics: grid
// [N, H_out, W_out, 2] of (x, y) in [-1, 1]; align_corners maps -1/1 to the
// corner pixels' centers (else to their outer edges); padding_mode zeros
// (outside taps read 0), border (coordinates clamped) or reflection
// (coordinates mirrored at the borders, then clamped); modes bilinear,
// nearest (round half to even) and bicubic (A = -0.75, padding applied per
// tap). Computed in double.
#include <cmath>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class Mode { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

class GridSampleKernel final : public CpuKernel {
 public:
  Mode mode = Mode::kBilinear;
  Padding padding = Padding::kZeros;
  bool align = false;
  int64_t n = 1, c = 1, h = 1, w = 1, oh = 1, ow = 1;
  int32_t type = kF32;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const std::vector<double> x = read_doubles(in[0]), grid = read_doubles(in[1]);
    OutBuf y(out[0], type);
    const int es = element_size(type);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          const double* g = grid.data() + ((b * oh + i) * ow + j) * 2;
          const double gx = unnormalize(g[0], w), gy = unnormalize(g[1], h);
          for (int64_t ch = 0; ch < c; ++ch) {
            const double* plane = x.data() + (b * c + ch) * h * w;
            const double v = sample(plane, gx, gy);
            store_from_double(type, v, y.data() + (((b * c + ch) * oh + i) * ow + j) * es);
          }
        }
    y.commit();
    return Status::Ok();
  }

 private:
  double unnormalize(double v, int64_t size) const {
    return align ? (v + 1) / 2 * static_cast<double>(size - 1)
                 : ((v + 1) * static_cast<double>(size) - 1) / 2;
  }

  static double reflect(double v, double twice_low, double twice_high) {
    if (twice_low == twice_high) return 0.0;
    const double mn = twice_low / 2, span = (twice_high - twice_low) / 2;
    v = std::abs(v - mn);
    const double extra = std::fmod(v, span);
    const int64_t flips = static_cast<int64_t>(std::floor(v / span));
    return flips % 2 == 0 ? extra + mn : span - extra + mn;
  }

  // Padding applied to a (continuous) coordinate.
  double pad_coord(double v, int64_t size) const {
    const double hi = static_cast<double>(size - 1);
    if (padding == Padding::kBorder) return std::min(hi, std::max(0.0, v));
    if (padding == Padding::kReflection) {
      v = align ? reflect(v, 0, 2 * hi) : reflect(v, -1, 2 * static_cast<double>(size) - 1);
      return std::min(hi, std::max(0.0, v));
    }
    return v;
  }

  double at(const double* plane, int64_t xi, int64_t yi) const {
    if (xi < 0 || xi >= w || yi < 0 || yi >= h) return 0.0;
    return plane[yi * w + xi];
  }

  double sample(const double* plane, double gx, double gy) const {
    if (mode == Mode::kBicubic) {
      const double x0 = std::floor(gx), y0 = std::floor(gy);
      double cx[4], cy[4];
      cubic(gx - x0, cx);
      cubic(gy - y0, cy);
      double acc = 0.0;
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; ++q) {
          const double tx = pad_coord(x0 - 1 + q, w), ty = pad_coord(y0 - 1 + r, h);
          acc += cx[q] * cy[r] * at(plane, static_cast<int64_t>(tx), static_cast<int64_t>(ty));
        }
      return acc;
    }
    gx = pad_coord(gx, w);
    gy = pad_coord(gy, h);
    if (mode == Mode::kNearest)
      return at(plane, static_cast<int64_t>(std::nearbyint(gx)),
                static_cast<int64_t>(std::nearbyint(gy)));
    const double x0 = std::floor(gx), y0 = std::floor(gy), fx = gx - x0, fy = gy - y0;
    const int64_t xi = static_cast<int64_t>(x0), yi = static_cast<int64_t>(y0);
    return at(plane, xi, yi) * (1 - fx) * (1 - fy) + at(plane, xi + 1, yi) * fx * (1 - fy) +
           at(plane, xi, yi + 1) * (1 - fx) * fy + at(plane, xi + 1, yi + 1) * fx * fy;
  }

  static void cubic(double t, double* c) {
    const double A = -0.75;
    auto near = [&](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
    auto far = [&](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
    c[0] = far(t + 1);
    c[1] = near(t);
    c[2] = near(1 - t);
    c[3] = far(2 - t);
  }
};

}  // namespace

Status create_grid_sample(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                          const std::vector<const TensorDesc*>& out,
                          std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 2 || !in[0] || !in[1] || out.size() != 1 || !out[0])
    return op_error(def, "needs X, grid and 1 output");
  auto k = std::make_unique<GridSampleKernel>();
  k->type = compute_type(in[0]->data_type);
  if (!is_float_type(in[0]->data_type) || !is_float_type(in[1]->data_type) ||
      compute_type(out[0]->data_type) != k->type)
    return op_error(def, "float tensors expected");
  const Dims x = dims_of(*in[0]), g = dims_of(*in[1]), y = dims_of(*out[0]);
  if (x.size() != 4 || g.size() != 4 || g[0] != x[0] || g[3] != 2)
    return op_error(def, "X must be [N, C, H, W] and grid [N, H_out, W_out, 2]");
  const Dims expect = {x[0], x[1], g[1], g[2]};
  if (y != expect) return op_error(def, "output shape must be " + dims_str(expect));
  k->n = x[0], k->c = x[1], k->h = x[2], k->w = x[3], k->oh = g[1], k->ow = g[2];
  const std::string mode = def.attrs.get_string("mode", "bilinear");
  const std::string pad = def.attrs.get_string("padding_mode", "zeros");
  if (mode == "bilinear" || mode == "linear")
    k->mode = Mode::kBilinear;
  else if (mode == "nearest")
    k->mode = Mode::kNearest;
  else if (mode == "bicubic" || mode == "cubic")
    k->mode = Mode::kBicubic;
  else
    return op_error(def, "unknown mode '" + mode + "'");
  if (pad == "zeros")
    k->padding = Padding::kZeros;
  else if (pad == "border")
    k->padding = Padding::kBorder;
  else if (pad == "reflection")
    k->padding = Padding::kReflection;
  else
    return op_error(def, "unknown padding_mode '" + pad + "'");
  k->align = def.attrs.get_int("align_corners", 0) != 0;
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
