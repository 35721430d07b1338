// SPDX-License-Identifier: Apache-2.0
// Conv and ConvTranspose (1-D, 2-D and 3-D; groups, strides, dilations,
// explicit pads or auto_pad SAME_UPPER / SAME_LOWER / VALID), float32.
//
// Conv: im2col over chunks of output rows + sgemm per group; 1x1 stride-1
// unpadded convolutions read the input directly; depthwise convolutions
// (group == C == M) use a direct row-accumulation loop.
// ConvTranspose: sgemm (W^T X) + col2im. Its pads come from `pads`, or, with
// `output_shape` or auto_pad SAME_*, from the total padding
//   stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - out
// split as the spec says: SAME_UPPER puts floor(total / 2) at the start,
// otherwise total - floor(total / 2) (Python floor division, so an output
// larger than the natural size grows at the end).
// Spatial dims are handled as 3-D (leading 1s for 1-D/2-D).
#include <algorithm>
#include <cstring>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"
#include "runtime/cpu_ops/sgemm.h"

namespace openbpu::rt {

namespace {

struct Geom {
  int s = 2;  // spatial rank
  int64_t n = 1, c = 1, m = 1, g = 1;
  // 3-D (D, H, W) with leading 1s.
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Reads kernel_shape/strides/dilations/pads/auto_pad; `x` and `y` are the
// spatial sizes, `kdims` the kernel's. For Conv (`transpose` false) the pads
// and the expected output size are derived here; ConvTranspose does its own.
Status read_attrs(const CpuOpDef& def, const Dims& x, const Dims& kdims, Geom* g,
                  std::vector<int64_t>* pads, std::string* auto_pad) {
  const size_t s = x.size();
  g->s = static_cast<int>(s);
  const size_t off = 3 - s;
  const auto ks = def.attrs.get_ints("kernel_shape");
  if (!ks.empty() && ks != kdims) return op_error(def, "kernel_shape does not match the weights");
  const auto st = def.attrs.get_ints("strides"), di = def.attrs.get_ints("dilations");
  *pads = def.attrs.get_ints("pads");
  if ((!st.empty() && st.size() != s) || (!di.empty() && di.size() != s) ||
      (!pads->empty() && pads->size() != 2 * s))
    return op_error(def, "strides/dilations/pads do not match the spatial rank");
  for (size_t i = 0; i < s; ++i) {
    g->in[off + i] = x[i];
    g->k[off + i] = kdims[i];
    g->stride[off + i] = st.empty() ? 1 : st[i];
    g->dil[off + i] = di.empty() ? 1 : di[i];
    if (g->stride[off + i] < 1 || g->dil[off + i] < 1 || g->k[off + i] < 1)
      return op_error(def, "strides, dilations and kernel sizes must be >= 1");
  }
  if (pads->empty()) pads->assign(2 * s, 0);
  for (int64_t p : *pads)
    if (p < 0) return op_error(def, "pads must be >= 0");
  *auto_pad = def.attrs.get_string("auto_pad", "NOTSET");
  if (*auto_pad != "NOTSET" && *auto_pad != "SAME_UPPER" && *auto_pad != "SAME_LOWER" &&
      *auto_pad != "VALID")
    return op_error(def, "unknown auto_pad '" + *auto_pad + "'");
  return Status::Ok();
}

// im2col of channels [c0, c0+cg) for output rows [r0, r1) of the (D*H) x W
// output grid: cols[(c*K + kk) * ncols + j], j over the chunk's positions.
void im2col(const Geom& g, const float* x, int64_t cg, int64_t r0, int64_t r1, float* cols) {
  const int64_t ow_n = g.out[2];
  const int64_t ncols = (r1 - r0) * ow_n;
  const int64_t kk_n = g.k_size();
  for (int64_t c = 0; c < cg; ++c) {
    const float* xc = x + c * g.in_size();
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t kk = (kd * g.k[1] + kh) * g.k[2] + kw;
          float* dst = cols + (c * kk_n + kk) * ncols;
          const int64_t woff = kw * g.dil[2] - g.pad[2];
          // Output columns whose input column is inside the image.
          int64_t lo = woff >= 0 ? 0 : (-woff + g.stride[2] - 1) / g.stride[2];
          int64_t hi = g.in[2] - 1 - woff < 0 ? 0 : (g.in[2] - 1 - woff) / g.stride[2] + 1;
          lo = std::min(lo, ow_n);
          hi = std::max(lo, std::min(hi, ow_n));
          for (int64_t r = r0; r < r1; ++r, dst += ow_n) {
            const int64_t od = r / g.out[1], oh = r % g.out[1];
            const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
            const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
            if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
              std::memset(dst, 0, sizeof(float) * ow_n);
              continue;
            }
            const float* src = xc + (id * g.in[1] + ih) * g.in[2] + woff;
            for (int64_t j = 0; j < lo; ++j) dst[j] = 0.0f;
            if (g.stride[2] == 1) {
              std::memcpy(dst + lo, src + lo, sizeof(float) * (hi - lo));
            } else {
              for (int64_t j = lo; j < hi; ++j) dst[j] = src[j * g.stride[2]];
            }
            for (int64_t j = hi; j < ow_n; ++j) dst[j] = 0.0f;
          }
        }
  }
}

// The row loops of run_depthwise for kernels 3 wide (dilation 1 along W):
// the three taps of a kernel row are applied in one pass over the output
// columns where all three are inside the input, the edges per tap.
template <int S>
inline void dw_row3(float* yr, const float* xr, const float* w3, int64_t woff, int64_t lo,
                    int64_t hi, int64_t stride) {
  const int64_t s = S > 0 ? S : stride;
  const float w0 = w3[0], w1 = w3[1], w2 = w3[2];
  const float* x = xr + woff;
  for (int64_t j = lo; j < hi; ++j) yr[j] += w0 * x[j * s] + w1 * x[j * s + 1] + w2 * x[j * s + 2];
}

class ConvKernel final : public CpuKernel {
 public:
  Geom g;
  bool has_bias = false;
  bool pointwise = false;  // 1x1, stride 1, no pad: the input is the im2col matrix
  bool depthwise = false;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf xb(in[0], kF32), wb(in[1], kF32);
    std::unique_ptr<InBuf> bb;
    if (has_bias) bb = std::make_unique<InBuf>(in[2], kF32);
    OutBuf yb(out[0], kF32);
    const float* x = xb.as<float>();
    const float* w = wb.as<float>();
    const float* bias = bb ? bb->as<float>() : nullptr;
    float* y = yb.as<float>();
    const int64_t osz = g.out_size();
    for (int64_t n = 0; n < g.n; ++n) {
      const float* xn = x + n * g.c * g.in_size();
      float* yn = y + n * g.m * osz;
      for (int64_t mm = 0; mm < g.m; ++mm) {
        const float b = bias ? bias[mm] : 0.0f;
        std::fill(yn + mm * osz, yn + (mm + 1) * osz, b);
      }
      if (depthwise) {
        run_depthwise(xn, w, yn);
      } else {
        run_gemm(xn, w, yn);
      }
    }
    yb.commit();
    return Status::Ok();
  }

 private:
  void run_gemm(const float* xn, const float* w, float* yn) const {
    const int64_t cg = g.c / g.g, mg = g.m / g.g, kk = g.k_size(), osz = g.out_size();
    const int64_t kdim = cg * kk;
    if (pointwise) {
      for (int64_t gi = 0; gi < g.g; ++gi)
        sgemm(false, false, mg, osz, kdim, 1.0f, w + gi * mg * kdim, kdim,
              xn + gi * cg * g.in_size(), osz, 1.0f, yn + gi * mg * osz, osz);
      return;
    }
    // Chunks of whole output rows, at most ~4 MB of im2col each.
    const int64_t rows = g.out[0] * g.out[1];
    const int64_t row_elems = kdim * g.out[2];
    const int64_t chunk = std::max<int64_t>(
        1, std::min<int64_t>(rows, (int64_t{1} << 20) / std::max<int64_t>(row_elems, 1)));
    thread_local std::vector<float> cols;
    if (cols.size() < static_cast<size_t>(chunk * row_elems))
      cols.resize(static_cast<size_t>(chunk * row_elems));
    for (int64_t gi = 0; gi < g.g; ++gi) {
      const float* xg = xn + gi * cg * g.in_size();
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t r1 = std::min(rows, r0 + chunk);
        const int64_t ncols = (r1 - r0) * g.out[2];
        im2col(g, xg, cg, r0, r1, cols.data());
        sgemm(false, false, mg, ncols, kdim, 1.0f, w + gi * mg * kdim, kdim, cols.data(), ncols,
              1.0f, yn + gi * mg * osz + r0 * g.out[2], osz);
      }
    }
  }

  void depthwise_k3(const float* xc, const float* wc, float* yc) const {
    const int64_t ow_n = g.out[2], iw_n = g.in[2], sw = g.stride[2], woff = -g.pad[2];
    // Output columns whose three taps (iw = ow*sw + woff + {0,1,2}) are all inside.
    int64_t lo = woff >= 0 ? 0 : (-woff + sw - 1) / sw;
    int64_t hi = iw_n - 3 - woff < 0 ? 0 : (iw_n - 3 - woff) / sw + 1;
    lo = std::min(lo, ow_n);
    hi = std::max(lo, std::min(hi, ow_n));
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      float* yr = yc + oh * ow_n;
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
        if (ih < 0 || ih >= g.in[1]) continue;
        const float* xr = xc + ih * iw_n;
        const float* w3 = wc + kh * 3;
        if (sw == 1)
          dw_row3<1>(yr, xr, w3, woff, lo, hi, 1);
        else if (sw == 2)
          dw_row3<2>(yr, xr, w3, woff, lo, hi, 2);
        else
          dw_row3<0>(yr, xr, w3, woff, lo, hi, sw);
        // Edge columns: tap by tap with bounds.
        for (int64_t j = 0; j < ow_n; ++j) {
          if (j == lo) j = std::max(hi, lo);
          if (j >= ow_n) break;
          for (int64_t kw = 0; kw < 3; ++kw) {
            const int64_t iw = j * sw + woff + kw;
            if (iw >= 0 && iw < iw_n) yr[j] += w3[kw] * xr[iw];
          }
        }
      }
    }
  }

  // Depthwise (one input channel per group, channel multiplier mult):
  // out_row += w * in_row over the valid output columns, per kernel tap.
  void run_depthwise(const float* xn, const float* w, float* yn) const {
    const int64_t mult = g.m / g.c, kk = g.k_size(), ow_n = g.out[2];
    for (int64_t mm = 0; mm < g.m; ++mm) {
      const float* xc = xn + (mm / mult) * g.in_size();
      const float* wc = w + mm * kk;
      float* yc = yn + mm * g.out_size();
      if (g.k[0] == 1 && g.k[2] == 3 && g.dil[2] == 1) {
        depthwise_k3(xc, wc, yc);
        continue;
      }
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const int64_t woff = kw * g.dil[2] - g.pad[2];
        int64_t lo = woff >= 0 ? 0 : (-woff + g.stride[2] - 1) / g.stride[2];
        int64_t hi = g.in[2] - 1 - woff < 0 ? 0 : (g.in[2] - 1 - woff) / g.stride[2] + 1;
        lo = std::min(lo, ow_n);
        hi = std::max(lo, std::min(hi, ow_n));
        for (int64_t od = 0; od < g.out[0]; ++od)
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            float* yr = yc + (od * g.out[1] + oh) * ow_n;
            for (int64_t kd = 0; kd < g.k[0]; ++kd) {
              const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
              if (id < 0 || id >= g.in[0]) continue;
              for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
                if (ih < 0 || ih >= g.in[1]) continue;
                const float wv = wc[(kd * g.k[1] + kh) * g.k[2] + kw];
                const float* xr = xc + (id * g.in[1] + ih) * g.in[2] + woff;
                if (g.stride[2] == 1) {
                  for (int64_t j = lo; j < hi; ++j) yr[j] += wv * xr[j];
                } else if (g.stride[2] == 2) {
                  for (int64_t j = lo; j < hi; ++j) yr[j] += wv * xr[2 * j];
                } else {
                  for (int64_t j = lo; j < hi; ++j) yr[j] += wv * xr[j * g.stride[2]];
                }
              }
            }
          }
      }
    }
  }
};

class ConvTransposeKernel final : public CpuKernel {
 public:
  Geom g;  // in = X's spatial size, out = Y's, c = X channels, m = Y channels
  bool has_bias = false;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf xb(in[0], kF32), wb(in[1], kF32);
    std::unique_ptr<InBuf> bb;
    if (has_bias) bb = std::make_unique<InBuf>(in[2], kF32);
    OutBuf yb(out[0], kF32);
    const float* x = xb.as<float>();
    const float* w = wb.as<float>();
    float* y = yb.as<float>();
    const int64_t cg = g.c / g.g, mg = g.m / g.g, kk = g.k_size();
    const int64_t isz = g.in_size(), osz = g.out_size();
    std::vector<float> cols(static_cast<size_t>(mg * kk * isz));
    for (int64_t n = 0; n < g.n; ++n) {
      float* yn = y + n * g.m * osz;
      for (int64_t mm = 0; mm < g.m; ++mm)
        std::fill(yn + mm * osz, yn + (mm + 1) * osz, bb ? bb->as<float>()[mm] : 0.0f);
      for (int64_t gi = 0; gi < g.g; ++gi) {
        // cols [mg*kk, isz] = W_g^T [mg*kk, cg] * X_g [cg, isz]; W_g is [cg, mg*kk].
        sgemm(true, false, mg * kk, isz, cg, 1.0f, w + gi * cg * mg * kk, mg * kk,
              x + (n * g.c + gi * cg) * isz, isz, 0.0f, cols.data(), isz);
        col2im(cols.data(), yn + gi * mg * osz, mg);
      }
    }
    yb.commit();
    return Status::Ok();
  }

 private:
  void col2im(const float* cols, float* y, int64_t mg) const {
    const int64_t kk_n = g.k_size(), isz = g.in_size(), osz = g.out_size();
    for (int64_t m = 0; m < mg; ++m)
      for (int64_t kd = 0; kd < g.k[0]; ++kd)
        for (int64_t kh = 0; kh < g.k[1]; ++kh)
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            const float* src = cols + (m * kk_n + (kd * g.k[1] + kh) * g.k[2] + kw) * isz;
            float* ym = y + m * osz;
            for (int64_t id = 0; id < g.in[0]; ++id) {
              const int64_t od = id * g.stride[0] - g.pad[0] + kd * g.dil[0];
              if (od < 0 || od >= g.out[0]) continue;
              for (int64_t ih = 0; ih < g.in[1]; ++ih) {
                const int64_t oh = ih * g.stride[1] - g.pad[1] + kh * g.dil[1];
                if (oh < 0 || oh >= g.out[1]) continue;
                const float* s = src + (id * g.in[1] + ih) * g.in[2];
                float* yr = ym + (od * g.out[1] + oh) * g.out[2];
                for (int64_t iw = 0; iw < g.in[2]; ++iw) {
                  const int64_t ow = iw * g.stride[2] - g.pad[2] + kw * g.dil[2];
                  if (ow >= 0 && ow < g.out[2]) yr[ow] += s[iw];
                }
              }
            }
          }
  }
};

// Shared input checks; fills n, c, m, g and the spatial dims of X, W, Y.
Status check_io(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                const std::vector<const TensorDesc*>& out, Dims* x, Dims* w, Dims* y) {
  if (in.size() < 2 || !in[0] || !in[1] || present_count(in) > 3 || out.size() != 1 || !out[0])
    return op_error(def, "needs inputs X, W (and optional B) and 1 output");
  for (const TensorDesc* t : {in[0], in[1], out[0]})
    if (compute_type(t->data_type) != kF32) return op_error(def, "float32 tensors expected");
  if (has_input(in, 2) && compute_type(in[2]->data_type) != kF32)
    return op_error(def, "float32 bias expected");
  *x = dims_of(*in[0]);
  *w = dims_of(*in[1]);
  *y = dims_of(*out[0]);
  if (x->size() < 3 || x->size() > 5 || w->size() != x->size() || y->size() != x->size())
    return op_error(def, "X, W and Y must have the same rank, 3 to 5 (1-D to 3-D)");
  return Status::Ok();
}

}  // namespace

Status create_conv(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  Dims x, w, y;
  OBPU_RETURN_IF_ERROR(check_io(def, in, out, &x, &w, &y));
  auto k = std::make_unique<ConvKernel>();
  Geom& g = k->g;
  g.n = x[0];
  g.c = x[1];
  g.m = w[0];
  g.g = def.attrs.get_int("group", 1);
  if (g.g < 1 || g.c % g.g != 0 || g.m % g.g != 0 || w[1] != g.c / g.g)
    return op_error(def, "group " + std::to_string(g.g) + " does not fit X " + dims_str(x) +
                             " and W " + dims_str(w));
  const Dims xs(x.begin() + 2, x.end()), ks(w.begin() + 2, w.end());
  std::vector<int64_t> pads;
  std::string auto_pad;
  OBPU_RETURN_IF_ERROR(read_attrs(def, xs, ks, &g, &pads, &auto_pad));
  const size_t s = xs.size(), off = 3 - s;
  Dims expect = {g.n, g.m};
  for (size_t i = 0; i < s; ++i) {
    const size_t a = off + i;
    const int64_t ext = (g.k[a] - 1) * g.dil[a] + 1;
    int64_t o;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      o = (g.in[a] + g.stride[a] - 1) / g.stride[a];
      const int64_t total = std::max<int64_t>(0, (o - 1) * g.stride[a] + ext - g.in[a]);
      g.pad[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      const int64_t pb = auto_pad == "VALID" ? 0 : pads[i],
                    pe = auto_pad == "VALID" ? 0 : pads[i + s];
      g.pad[a] = pb;
      o = (g.in[a] + pb + pe - ext) / g.stride[a] + 1;
      if (g.in[a] + pb + pe < ext)
        return op_error(def, "the kernel is larger than the padded input");
    }
    g.out[a] = o;
    expect.push_back(o);
  }
  if (expect != y)
    return op_error(def, "output shape must be " + dims_str(expect) + ", not " + dims_str(y));
  if (has_input(in, 2) && dims_of(*in[2]) != Dims{g.m})
    return op_error(def, "B must have shape [M]");
  k->has_bias = has_input(in, 2);
  k->pointwise = g.k_size() == 1 && g.pad[0] == 0 && g.pad[1] == 0 && g.pad[2] == 0 &&
                 g.stride[0] == 1 && g.stride[1] == 1 && g.stride[2] == 1;
  k->depthwise = g.g == g.c && g.g > 1 && g.m % g.c == 0 && !k->pointwise;
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_conv_transpose(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                             const std::vector<const TensorDesc*>& out,
                             std::unique_ptr<CpuKernel>* kernel) {
  Dims x, w, y;
  OBPU_RETURN_IF_ERROR(check_io(def, in, out, &x, &w, &y));
  auto k = std::make_unique<ConvTransposeKernel>();
  Geom& g = k->g;
  g.n = x[0];
  g.c = x[1];
  g.g = def.attrs.get_int("group", 1);
  if (g.g < 1 || w[0] != g.c || g.c % g.g != 0)
    return op_error(def, "W's first dimension must be X's channels");
  g.m = w[1] * g.g;
  const Dims xs(x.begin() + 2, x.end()), ks(w.begin() + 2, w.end());
  std::vector<int64_t> pads;
  std::string auto_pad;
  OBPU_RETURN_IF_ERROR(read_attrs(def, xs, ks, &g, &pads, &auto_pad));
  const size_t s = xs.size(), off = 3 - s;
  const auto out_pad = def.attrs.get_ints("output_padding");
  const auto out_shape = def.attrs.get_ints("output_shape");
  if ((!out_pad.empty() && out_pad.size() != s) || (!out_shape.empty() && out_shape.size() != s))
    return op_error(def, "output_padding/output_shape do not match the spatial rank");
  if (y.size() != x.size() || y[0] != g.n || y[1] != g.m)
    return op_error(def, "output must have shape [N, " + std::to_string(g.m) + ", ...]");
  for (size_t i = 0; i < s; ++i) {
    const size_t a = off + i;
    const int64_t ext = (g.k[a] - 1) * g.dil[a] + 1;
    const int64_t op = out_pad.empty() ? 0 : out_pad[i];
    const int64_t natural = g.stride[a] * (g.in[a] - 1) + op + ext;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    int64_t o;
    if (!out_shape.empty() || same) {
      o = !out_shape.empty() ? out_shape[i] : g.in[a] * g.stride[a];
      const int64_t total = natural - o;
      g.pad[a] = auto_pad == "SAME_UPPER" ? floor_div(total, 2) : total - floor_div(total, 2);
    } else {
      const int64_t pb = auto_pad == "VALID" ? 0 : pads[i],
                    pe = auto_pad == "VALID" ? 0 : pads[i + s];
      g.pad[a] = pb;
      o = natural - pb - pe;
    }
    if (o != y[2 + i])
      return op_error(def, "output spatial size " + std::to_string(y[2 + i]) +
                               " differs from the expected " + std::to_string(o));
    g.out[a] = o;
  }
  if (has_input(in, 2) && dims_of(*in[2]) != Dims{g.m})
    return op_error(def, "B must have shape [M]");
  k->has_bias = has_input(in, 2);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
