// SPDX-License-Identifier: Apache-2.0
// Pooling: MaxPool (optional Indices output, storage_order), AveragePool
// (count_include_pad), LpPool, and GlobalAveragePool / GlobalMaxPool /
// GlobalLpPool; 1-D to 3-D, with strides, dilations, pads or auto_pad, and
// ceil_mode.
//
// Windows are clipped to the input; padding never wins a max. The average
// divides by the number of window taps inside the input (count_include_pad
// = 0) or inside the padded input [-pad_begin, in + pad_end)
// (count_include_pad = 1; taps that ceil_mode pushes past the end padding do
// not count, as in PyTorch). With ceil_mode the output size may be either
// ceil((in + pads - ext) / stride) + 1 or that minus one when the last
// window would start in the end padding (PyTorch's rule); the output
// description decides.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class Pool { kMax, kAvg, kLp };

struct Geom {
  int64_t n = 1, c = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

// Per output index of one dimension: valid tap range [lo, hi) and the number
// of taps inside the padded extent.
struct Taps {
  std::vector<int64_t> lo, hi, padded;
};

Taps make_taps(const Geom& g, int a) {
  Taps t;
  for (int64_t o = 0; o < g.out[a]; ++o) {
    const int64_t start = o * g.stride[a] - g.pad[a];
    int64_t lo = 0, hi = 0, padded = 0;
    bool first = true;
    for (int64_t kk = 0; kk < g.k[a]; ++kk) {
      const int64_t idx = start + kk * g.dil[a];
      if (idx >= -g.pad[a] && idx < g.in[a] + g.pad_end[a]) ++padded;
      if (idx < 0 || idx >= g.in[a]) continue;
      if (first) lo = kk, first = false;
      hi = kk + 1;
    }
    t.lo.push_back(lo);
    t.hi.push_back(hi);
    t.padded.push_back(padded);
  }
  return t;
}

class PoolKernel final : public CpuKernel {
 public:
  Pool kind = Pool::kMax;
  Geom g;
  bool count_include_pad = false;
  bool indices = false;
  bool col_major = false;  // storage_order = 1
  double p = 2.0;          // LpPool
  int32_t type = kF32;
  Taps taps[3];

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    std::unique_ptr<OutBuf> ib;
    if (indices) ib = std::make_unique<OutBuf>(out[1], kS64);
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      compute<T>(x.as<T>(), y.as<T>(), ib ? ib->as<int64_t>() : nullptr);
    });
    y.commit();
    if (ib) ib->commit();
    return Status::Ok();
  }

 private:
  // 2-D float32 Max/Average pooling without Indices: the common case in
  // CNNs, with the tap ranges hoisted out of the inner loops.
  bool compute_2d(const float* x, float* y) const {
    if (g.in[0] != 1 || g.out[0] != 1 || kind == Pool::kLp) return false;
    const int64_t ih_n = g.in[1], iw_n = g.in[2], oh_n = g.out[1], ow_n = g.out[2];
    const int64_t sh = g.stride[1], sw = g.stride[2], dh = g.dil[1], dw = g.dil[2];
    for (int64_t nc = 0; nc < g.n * g.c; ++nc) {
      const float* xc = x + nc * ih_n * iw_n;
      float* yc = y + nc * oh_n * ow_n;
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        const int64_t h0 = oh * sh - g.pad[1], kh0 = taps[1].lo[oh], kh1 = taps[1].hi[oh];
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          const int64_t w0 = ow * sw - g.pad[2], kw0 = taps[2].lo[ow], kw1 = taps[2].hi[ow];
          if (kind == Pool::kMax) {
            float best = -INFINITY;
            for (int64_t kh = kh0; kh < kh1; ++kh) {
              const float* row = xc + (h0 + kh * dh) * iw_n + w0;
              for (int64_t kw = kw0; kw < kw1; ++kw) best = std::max(best, row[kw * dw]);
            }
            yc[oh * ow_n + ow] = best;
          } else {
            float acc = 0.0f;
            for (int64_t kh = kh0; kh < kh1; ++kh) {
              const float* row = xc + (h0 + kh * dh) * iw_n + w0;
              for (int64_t kw = kw0; kw < kw1; ++kw) acc += row[kw * dw];
            }
            const int64_t div = count_include_pad ? taps[1].padded[oh] * taps[2].padded[ow]
                                                  : (kh1 - kh0) * (kw1 - kw0);
            yc[oh * ow_n + ow] = div > 0 ? acc / static_cast<float>(div) : 0.0f;
          }
        }
      }
    }
    return true;
  }

  template <class T>
  void compute(const T* x, T* y, int64_t* idx_out) const {
    if constexpr (std::is_same_v<T, float>)
      if (idx_out == nullptr && compute_2d(x, y)) return;
    const int64_t isz = g.in_size(), osz = g.out_size();
    for (int64_t nc = 0; nc < g.n * g.c; ++nc) {
      const T* xc = x + nc * isz;
      T* yc = y + nc * osz;
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const int64_t o[3] = {od, oh, ow};
            int64_t base[3], lo[3], hi[3], padded = 1;
            for (int a = 0; a < 3; ++a) {
              base[a] = o[a] * g.stride[a] - g.pad[a];
              lo[a] = taps[a].lo[o[a]];
              hi[a] = taps[a].hi[o[a]];
              padded *= taps[a].padded[o[a]];
            }
            const int64_t oi = (od * g.out[1] + oh) * g.out[2] + ow;
            if (kind == Pool::kMax) {
              T best = std::numeric_limits<T>::lowest();
              if constexpr (std::is_floating_point_v<T>) best = -std::numeric_limits<T>::infinity();
              int64_t best_i = -1;
              for (int64_t kd = lo[0]; kd < hi[0]; ++kd)
                for (int64_t kh = lo[1]; kh < hi[1]; ++kh)
                  for (int64_t kw = lo[2]; kw < hi[2]; ++kw) {
                    const int64_t i =
                        ((base[0] + kd * g.dil[0]) * g.in[1] + base[1] + kh * g.dil[1]) * g.in[2] +
                        base[2] + kw * g.dil[2];
                    if (best_i < 0 || xc[i] > best) best = xc[i], best_i = i;
                  }
              yc[oi] = best;
              if (idx_out) idx_out[nc * osz + oi] = flat_index(nc, best_i);
            } else {
              double acc = 0.0;
              int64_t count = 0;
              for (int64_t kd = lo[0]; kd < hi[0]; ++kd)
                for (int64_t kh = lo[1]; kh < hi[1]; ++kh)
                  for (int64_t kw = lo[2]; kw < hi[2]; ++kw) {
                    const int64_t i =
                        ((base[0] + kd * g.dil[0]) * g.in[1] + base[1] + kh * g.dil[1]) * g.in[2] +
                        base[2] + kw * g.dil[2];
                    const double v = static_cast<double>(xc[i]);
                    acc += kind == Pool::kAvg ? v : std::pow(std::abs(v), p);
                    ++count;
                  }
              if (kind == Pool::kAvg) {
                const int64_t div = count_include_pad ? padded : count;
                yc[oi] = static_cast<T>(div > 0 ? acc / static_cast<double>(div) : 0.0);
              } else {
                yc[oi] = static_cast<T>(std::pow(acc, 1.0 / p));
              }
            }
          }
    }
  }

  // Index of input element `i` (offset within its (n, c) plane) in the
  // flattened input: row-major, or column-major over the spatial dims.
  int64_t flat_index(int64_t nc, int64_t i) const {
    if (i < 0) return -1;
    if (!col_major) return nc * g.in_size() + i;
    const int64_t w = i % g.in[2], h = (i / g.in[2]) % g.in[1], d = i / (g.in[2] * g.in[1]);
    return nc * g.in_size() + (w * g.in[1] + h) * g.in[0] + d;
  }
};

class GlobalPoolKernel final : public CpuKernel {
 public:
  Pool kind = Pool::kAvg;
  int64_t planes = 0, size = 0;
  double p = 2.0;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.as<T>();
      T* yp = y.as<T>();
      for (int64_t i = 0; i < planes; ++i) {
        const T* v = xp + i * size;
        if (kind == Pool::kMax) {
          T best = size > 0 ? v[0] : T(0);
          for (int64_t j = 1; j < size; ++j) best = v[j] > best ? v[j] : best;
          yp[i] = best;
        } else if (kind == Pool::kAvg) {
          double acc = 0.0;
          for (int64_t j = 0; j < size; ++j) acc += static_cast<double>(v[j]);
          yp[i] = static_cast<T>(size > 0 ? acc / static_cast<double>(size) : 0.0);
        } else {
          double acc = 0.0;
          for (int64_t j = 0; j < size; ++j)
            acc += std::pow(std::abs(static_cast<double>(v[j])), p);
          yp[i] = static_cast<T>(std::pow(acc, 1.0 / p));
        }
      }
    });
    y.commit();
    return Status::Ok();
  }
};

// MaxUnpool: Y = 0 except Y[I[i]] = X[i]. The indices are flat positions in
// the natural unpooled shape [N, C, (in - 1) * stride + k - pads]; with a
// larger output_shape the same coordinates are used (as the ONNX reference).
class UnpoolKernel final : public CpuKernel {
 public:
  Dims natural, out_dims;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    const std::vector<int64_t> idx = read_ints(in[1]);
    OutBuf y(out[0], type);
    const int es = element_size(type);
    std::memset(y.data(), 0, static_cast<size_t>(count_of(out_dims) * es));
    const Dims ns = elem_strides(natural), os = elem_strides(out_dims);
    const int64_t total = count_of(natural);
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= total)
        return op_error(id, "index " + std::to_string(idx[i]) + " out of range");
      int64_t off = 0;
      bool inside = true;
      for (size_t a = 0; a < natural.size(); ++a) {
        const int64_t c = idx[i] / ns[a] % natural[a];
        if (c >= out_dims[a]) inside = false;
        off += c * os[a];
      }
      if (inside)
        std::memcpy(y.data() + off * es, x.data() + static_cast<int64_t>(i) * es,
                    static_cast<size_t>(es));
    }
    y.commit();
    return Status::Ok();
  }
};

bool pool_type_ok(int32_t t, Pool kind) {
  if (kind == Pool::kMax) return is_numeric_type(t);
  return t == kF32 || t == kF64;
}

}  // namespace

Status create_pool(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  auto k = std::make_unique<PoolKernel>();
  k->kind = def.op_type == "MaxPool"       ? Pool::kMax
            : def.op_type == "AveragePool" ? Pool::kAvg
                                           : Pool::kLp;
  if (in.size() != 1 || !in[0] || out.empty() || !out[0] || present_count(out) > 2 ||
      (present_count(out) == 2 && k->kind != Pool::kMax))
    return op_error(def, "needs 1 input and 1 output (MaxPool: optional Indices)");
  k->type = compute_type(in[0]->data_type);
  if (!pool_type_ok(k->type, k->kind) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, std::string("unsupported data type ") + data_type_name(in[0]->data_type));
  const Dims x = dims_of(*in[0]), y = dims_of(*out[0]);
  if (x.size() < 3 || x.size() > 5 || y.size() != x.size() || y[0] != x[0] || y[1] != x[1])
    return op_error(def, "X must be [N, C, D1..Dk] with k in 1..3 and Y [N, C, ...]");
  Geom& g = k->g;
  g.n = x[0];
  g.c = x[1];
  const size_t s = x.size() - 2, off = 3 - s;
  const auto ks = def.attrs.get_ints("kernel_shape"), st = def.attrs.get_ints("strides");
  const auto di = def.attrs.get_ints("dilations");
  auto pads = def.attrs.get_ints("pads");
  if (ks.size() != s)
    return op_error(def, "kernel_shape must have one entry per spatial dimension");
  if ((!st.empty() && st.size() != s) || (!di.empty() && di.size() != s) ||
      (!pads.empty() && pads.size() != 2 * s))
    return op_error(def, "strides/dilations/pads do not match the spatial rank");
  if (pads.empty()) pads.assign(2 * s, 0);
  const std::string auto_pad = def.attrs.get_string("auto_pad", "NOTSET");
  const bool ceil_mode = def.attrs.get_int("ceil_mode", 0) != 0;
  k->count_include_pad = def.attrs.get_int("count_include_pad", 0) != 0;
  k->p = static_cast<double>(def.attrs.get_int("p", 2));
  const int64_t storage = def.attrs.get_int("storage_order", 0);
  if (storage != 0 && storage != 1) return op_error(def, "storage_order must be 0 or 1");
  k->col_major = storage == 1;
  k->indices = present_count(out) == 2;
  if (k->indices && (out[1]->data_type != kS64 || dims_of(*out[1]) != y))
    return op_error(def, "Indices must be int64 with Y's shape");
  for (size_t i = 0; i < s; ++i) {
    const size_t a = off + i;
    g.in[a] = x[2 + i];
    g.k[a] = ks[i];
    g.stride[a] = st.empty() ? 1 : st[i];
    g.dil[a] = di.empty() ? 1 : di[i];
    if (g.k[a] < 1 || g.stride[a] < 1 || g.dil[a] < 1 || pads[i] < 0 || pads[i + s] < 0)
      return op_error(def, "kernel, strides and dilations must be >= 1, pads >= 0");
    const int64_t ext = (g.k[a] - 1) * g.dil[a] + 1;
    std::vector<int64_t> allowed;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t o = (g.in[a] + g.stride[a] - 1) / g.stride[a];
      const int64_t total = std::max<int64_t>(0, (o - 1) * g.stride[a] + ext - g.in[a]);
      g.pad[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[a] = total - g.pad[a];
      allowed.push_back(o);
    } else if (auto_pad == "VALID" || auto_pad == "NOTSET") {
      const bool valid = auto_pad == "VALID";
      g.pad[a] = valid ? 0 : pads[i];
      g.pad_end[a] = valid ? 0 : pads[i + s];
      const int64_t span = g.in[a] + g.pad[a] + g.pad_end[a] - ext;
      if (span < 0) return op_error(def, "the kernel is larger than the padded input");
      allowed.push_back(span / g.stride[a] + 1);
      if (ceil_mode) {
        const int64_t o = (span + g.stride[a] - 1) / g.stride[a] + 1;
        allowed.push_back(o);
        if ((o - 1) * g.stride[a] >= g.in[a] + g.pad[a]) allowed.push_back(o - 1);
      }
    } else {
      return op_error(def, "unknown auto_pad '" + auto_pad + "'");
    }
    g.out[a] = y[2 + i];
    if (std::find(allowed.begin(), allowed.end(), g.out[a]) == allowed.end())
      return op_error(def, "output spatial size " + std::to_string(g.out[a]) +
                               " is not the expected " + std::to_string(allowed[0]));
  }
  for (int a = 0; a < 3; ++a) k->taps[a] = make_taps(g, a);
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_max_unpool(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                         const std::vector<const TensorDesc*>& out,
                         std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() < 2 || !in[0] || !in[1] || present_count(in) > 3 || out.size() != 1 || !out[0])
    return op_error(def, "needs X, I (, output_shape) and 1 output");
  auto k = std::make_unique<UnpoolKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  if (element_size(k->type) == 0 || out[0]->data_type != k->type || in[1]->data_type != kS64)
    return op_error(def, "X and Y of one type and int64 indices expected");
  const Dims x = dims_of(*in[0]);
  k->out_dims = dims_of(*out[0]);
  if (x.size() < 3 || dims_of(*in[1]) != x || k->out_dims.size() != x.size())
    return op_error(def, "X and I must be [N, C, ...] of one shape");
  const size_t s = x.size() - 2;
  const auto ks = def.attrs.get_ints("kernel_shape"), st = def.attrs.get_ints("strides");
  auto pads = def.attrs.get_ints("pads");
  if (pads.empty()) pads.assign(2 * s, 0);
  if (ks.size() != s || (!st.empty() && st.size() != s) || pads.size() != 2 * s)
    return op_error(def, "kernel_shape/strides/pads do not match the spatial rank");
  k->natural = {x[0], x[1]};
  for (size_t i = 0; i < s; ++i)
    k->natural.push_back((x[2 + i] - 1) * (st.empty() ? 1 : st[i]) + ks[i] - pads[i] - pads[i + s]);
  if (k->out_dims[0] != x[0] || k->out_dims[1] != x[1])
    return op_error(def, "output must be [N, C, ...]");
  if (!has_input(in, 2) && k->out_dims != k->natural)
    return op_error(def, "output shape must be " + dims_str(k->natural));
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_global_pool(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                          const std::vector<const TensorDesc*>& out,
                          std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs 1 input and 1 output");
  auto k = std::make_unique<GlobalPoolKernel>();
  k->kind = def.op_type == "GlobalMaxPool"       ? Pool::kMax
            : def.op_type == "GlobalAveragePool" ? Pool::kAvg
                                                 : Pool::kLp;
  k->type = compute_type(in[0]->data_type);
  k->p = static_cast<double>(def.attrs.get_int("p", 2));
  if (!pool_type_ok(k->type, k->kind) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, std::string("unsupported data type ") + data_type_name(in[0]->data_type));
  const Dims x = dims_of(*in[0]), y = dims_of(*out[0]);
  if (x.size() < 2) return op_error(def, "X must be [N, C, ...]");
  Dims expect = {x[0], x[1]};
  for (size_t i = 2; i < x.size(); ++i) expect.push_back(1);
  if (y != expect) return op_error(def, "output shape must be " + dims_str(expect));
  k->planes = x[0] * x[1];
  k->size = count_of(x) / std::max<int64_t>(k->planes, 1);
  if (k->planes == 0) k->size = 0;
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
