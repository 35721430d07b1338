// SPDX-License-Identifier: Apache-2.0
// Normalizations: BatchNormalization (inference; training_mode=1 of opset
// 14+ with batch statistics and running-statistics outputs),
// InstanceNormalization, LayerNormalization (opset 17; Mean and InvStdDev
// outputs), LpNormalization, MeanVarianceNormalization and LRN.
// Statistics accumulate in double.
#include <cmath>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

bool float_types(const std::vector<const TensorDesc*>& v) {
  for (const TensorDesc* t : v)
    if (!is_absent(t) && !is_float_type(t->data_type)) return false;
  return true;
}

// --- BatchNormalization ------------------------------------------------------

class BatchNormKernel final : public CpuKernel {
 public:
  int64_t n = 1, c = 1, inner = 1;
  double eps = 1e-5, momentum = 0.9;
  bool training = false;
  int32_t type = kF32;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    const std::vector<double> scale = read_doubles(in[1]), bias = read_doubles(in[2]);
    std::vector<double> mean = read_doubles(in[3]), var = read_doubles(in[4]);
    OutBuf y(out[0], type);
    visit_float(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.as<T>();
      T* yp = y.as<T>();
      std::vector<double> bmean(static_cast<size_t>(c), 0.0), bvar(static_cast<size_t>(c), 0.0);
      if (training) {
        const double cnt = static_cast<double>(n * inner);
        for (int64_t b = 0; b < n; ++b)
          for (int64_t ch = 0; ch < c; ++ch) {
            const T* v = xp + (b * c + ch) * inner;
            for (int64_t i = 0; i < inner; ++i) bmean[ch] += static_cast<double>(v[i]);
          }
        for (double& m : bmean) m /= cnt;
        for (int64_t b = 0; b < n; ++b)
          for (int64_t ch = 0; ch < c; ++ch) {
            const T* v = xp + (b * c + ch) * inner;
            for (int64_t i = 0; i < inner; ++i) {
              const double d = static_cast<double>(v[i]) - bmean[ch];
              bvar[ch] += d * d;
            }
          }
        for (double& v : bvar) v /= cnt;
      }
      const std::vector<double>& mu = training ? bmean : mean;
      const std::vector<double>& sg = training ? bvar : var;
      for (int64_t ch = 0; ch < c; ++ch) {
        const double a = scale[ch] / std::sqrt(sg[ch] + eps);
        const T af = static_cast<T>(a), bf = static_cast<T>(bias[ch] - mu[ch] * a);
        for (int64_t b = 0; b < n; ++b) {
          const T* v = xp + (b * c + ch) * inner;
          T* o = yp + (b * c + ch) * inner;
          for (int64_t i = 0; i < inner; ++i) o[i] = v[i] * af + bf;
        }
      }
      if (training) {
        for (int64_t ch = 0; ch < c; ++ch) {
          mean[ch] = mean[ch] * momentum + bmean[ch] * (1.0 - momentum);
          var[ch] = var[ch] * momentum + bvar[ch] * (1.0 - momentum);
        }
        for (size_t o = 1; o < 3; ++o) {
          if (!has_input(out, o)) continue;
          OutBuf r(out[o], compute_type(out[o].desc->data_type));
          const std::vector<double>& src = o == 1 ? mean : var;
          for (int64_t ch = 0; ch < c; ++ch)
            store_from_double(compute_type(out[o].desc->data_type), src[ch],
                              r.data() + ch * element_size(compute_type(out[o].desc->data_type)));
          r.commit();
        }
      }
    });
    y.commit();
    return Status::Ok();
  }
};

// --- InstanceNormalization / LayerNormalization --------------------------------

// Normalizes rows of `len` elements: y = (x - mean) / sqrt(var + eps) * s + b,
// where s/b are indexed by `param(row, i)`.
class RowNormKernel final : public CpuKernel {
 public:
  bool layer = false;  // LayerNormalization (else InstanceNormalization)
  int64_t rows = 0, len = 0, channels = 1;
  double eps = 1e-5;
  int32_t type = kF32;
  BroadcastLoop<2> scale_map, bias_map;  // LayerNorm: scale/bias over the normalized shape
  bool has_bias = false;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    const std::vector<double> scale = read_doubles(in[1]);
    std::vector<double> bias;
    if (has_bias) bias = read_doubles(in[2]);
    OutBuf y(out[0], type);
    std::vector<double> s_full, b_full;
    if (layer) {
      s_full.resize(static_cast<size_t>(len));
      b_full.assign(static_cast<size_t>(len), 0.0);
      scale_map.run(
          [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
            for (int64_t i = 0; i < n; ++i) s_full[off[0] + i] = scale[off[1] + i * st[1]];
          });
      if (has_bias)
        bias_map.run(
            [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
              for (int64_t i = 0; i < n; ++i) b_full[off[0] + i] = bias[off[1] + i * st[1]];
            });
    }
    std::vector<double> means(static_cast<size_t>(rows)), invs(static_cast<size_t>(rows));
    visit_float(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.as<T>();
      T* yp = y.as<T>();
      for (int64_t r = 0; r < rows; ++r) {
        const T* v = xp + r * len;
        T* o = yp + r * len;
        double sum = 0.0;
        for (int64_t i = 0; i < len; ++i) sum += static_cast<double>(v[i]);
        const double mean = len ? sum / static_cast<double>(len) : 0.0;
        double sq = 0.0;
        for (int64_t i = 0; i < len; ++i) {
          const double d = static_cast<double>(v[i]) - mean;
          sq += d * d;
        }
        const double inv = 1.0 / std::sqrt((len ? sq / static_cast<double>(len) : 0.0) + eps);
        means[r] = mean;
        invs[r] = inv;
        if (layer) {
          for (int64_t i = 0; i < len; ++i)
            o[i] = static_cast<T>((static_cast<double>(v[i]) - mean) * inv * s_full[i] + b_full[i]);
        } else {
          const int64_t ch = r % channels;
          const double a = inv * scale[ch], b = bias[ch] - mean * a;
          for (int64_t i = 0; i < len; ++i)
            o[i] = static_cast<T>(static_cast<double>(v[i]) * a + b);
        }
      }
    });
    y.commit();
    for (size_t o = 1; o < 3 && layer; ++o) {
      if (!has_input(out, o)) continue;
      const int32_t t = compute_type(out[o].desc->data_type);
      OutBuf r(out[o], t);
      for (int64_t i = 0; i < rows; ++i)
        store_from_double(t, o == 1 ? means[i] : invs[i], r.data() + i * element_size(t));
      r.commit();
    }
    return Status::Ok();
  }
};

// --- GroupNormalization ----------------------------------------------------------

// Statistics per (n, group) over C/G channels and the spatial dims; scale
// and bias per group (opset 18) or per channel (opset 21), told apart by
// their size.
class GroupNormKernel final : public CpuKernel {
 public:
  int64_t n = 1, c = 1, groups = 1, spatial = 1;
  double eps = 1e-5;
  bool per_channel = false;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    const std::vector<double> scale = read_doubles(in[1]), bias = read_doubles(in[2]);
    OutBuf y(out[0], type);
    const int64_t cg = c / groups, len = cg * spatial;
    visit_float(type, [&](auto tag) {
      using T = decltype(tag);
      for (int64_t r = 0; r < n * groups; ++r) {
        const T* v = x.as<T>() + r * len;
        T* o = y.as<T>() + r * len;
        double sum = 0.0, sq = 0.0;
        for (int64_t i = 0; i < len; ++i) sum += static_cast<double>(v[i]);
        const double mean = len ? sum / static_cast<double>(len) : 0.0;
        for (int64_t i = 0; i < len; ++i)
          sq += (static_cast<double>(v[i]) - mean) * (static_cast<double>(v[i]) - mean);
        const double inv = 1.0 / std::sqrt((len ? sq / static_cast<double>(len) : 0.0) + eps);
        const int64_t g = r % groups;
        for (int64_t i = 0; i < len; ++i) {
          const int64_t k = per_channel ? g * cg + i / spatial : g;
          o[i] = static_cast<T>((static_cast<double>(v[i]) - mean) * inv * scale[k] + bias[k]);
        }
      }
    });
    y.commit();
    return Status::Ok();
  }
};

// --- LpNormalization / MeanVarianceNormalization -------------------------------

// Reduces over the marked axes and normalizes: Lp: x / ||x||_p;
// MVN: (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9).
class AxesNormKernel final : public CpuKernel {
 public:
  bool mvn = false;
  int p = 2;
  int32_t type = kF32;
  Dims dims;
  int64_t groups = 0;
  BroadcastLoop<2> loop;  // x (dense) -> group index

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    visit_float(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.as<T>();
      T* yp = y.as<T>();
      std::vector<double> s1(static_cast<size_t>(groups), 0.0),
          s2(static_cast<size_t>(groups), 0.0);
      std::vector<double> cnt(static_cast<size_t>(groups), 0.0);
      loop.run([&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
        for (int64_t i = 0; i < n; ++i) {
          const double v = static_cast<double>(xp[off[0] + i]);
          const int64_t gi = off[1] + i * st[1];
          if (mvn) {
            s1[gi] += v, s2[gi] += v * v, cnt[gi] += 1.0;
          } else {
            s1[gi] += p == 1 ? std::abs(v) : v * v;
          }
        }
      });
      for (int64_t gi = 0; gi < groups; ++gi) {
        if (mvn) {
          const double mean = cnt[gi] > 0 ? s1[gi] / cnt[gi] : 0.0;
          const double var = cnt[gi] > 0 ? s2[gi] / cnt[gi] - mean * mean : 0.0;
          s1[gi] = mean;
          s2[gi] = std::sqrt(std::max(var, 0.0)) + 1e-9;
        } else {
          s2[gi] = p == 1 ? s1[gi] : std::sqrt(s1[gi]);
        }
      }
      loop.run([&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
        for (int64_t i = 0; i < n; ++i) {
          const double v = static_cast<double>(xp[off[0] + i]);
          const int64_t gi = off[1] + i * st[1];
          const double r = mvn ? (v - s1[gi]) / s2[gi] : (s2[gi] == 0.0 ? 0.0 : v / s2[gi]);
          yp[off[0] + i] = static_cast<T>(r);
        }
      });
    });
    y.commit();
    return Status::Ok();
  }
};

// --- LRN -------------------------------------------------------------------------

class LrnKernel final : public CpuKernel {
 public:
  int64_t n = 1, c = 1, inner = 1, size = 1;
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // floor / ceil of (size-1)/2
    visit_float(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.as<T>();
      T* yp = y.as<T>();
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t i = 0; i < inner; ++i) {
            double sq = 0.0;
            for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
              const double v = static_cast<double>(xp[(b * c + k) * inner + i]);
              sq += v * v;
            }
            const int64_t idx = (b * c + ch) * inner + i;
            yp[idx] = static_cast<T>(static_cast<double>(xp[idx]) /
                                     std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
          }
    });
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_batch_norm(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                         const std::vector<const TensorDesc*>& out,
                         std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 5 || !all_present(in) || out.empty() || !out[0])
    return op_error(def, "needs inputs X, scale, B, mean, var and output Y");
  if (!float_types(in) || !float_types(out)) return op_error(def, "float tensors expected");
  auto k = std::make_unique<BatchNormKernel>();
  k->type = compute_type(in[0]->data_type);
  if (compute_type(out[0]->data_type) != k->type) return op_error(def, "Y's type differs from X's");
  k->eps = def.attrs.get_float("epsilon", 1e-5f);
  k->momentum = def.attrs.get_float("momentum", 0.9f);
  k->training = def.attrs.get_int("training_mode", 0) != 0;
  if (def.attrs.get_int("spatial", 1) != 1) return op_error(def, "spatial=0 is not supported");
  if (present_count(out) > (k->training ? 3u : 1u))
    return op_error(def, "statistics outputs are only produced with training_mode=1");
  const Dims x = dims_of(*in[0]);
  if (x.size() < 2) return op_error(def, "X must be [N, C, ...]");
  k->n = x[0];
  k->c = x[1];
  k->inner = count_of(Dims(x.begin() + 2, x.end()));
  for (size_t i = 1; i < 5; ++i)
    if (count_of(dims_of(*in[i])) != k->c)
      return op_error(def, "scale, B, mean and var must have C elements");
  if (dims_of(*out[0]) != x) return op_error(def, "Y's shape differs from X's");
  for (size_t o = 1; o < out.size(); ++o)
    if (has_input(out, o) && count_of(dims_of(*out[o])) != k->c)
      return op_error(def, "running statistics must have C elements");
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_instance_norm(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                            const std::vector<const TensorDesc*>& out,
                            std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 3 || !all_present(in) || out.size() != 1 || !out[0])
    return op_error(def, "needs inputs X, scale, B and 1 output");
  if (!float_types(in) || !float_types(out)) return op_error(def, "float tensors expected");
  const Dims x = dims_of(*in[0]);
  if (x.size() < 3 || dims_of(*out[0]) != x)
    return op_error(def, "X must be [N, C, D1, ...] and Y alike");
  auto k = std::make_unique<RowNormKernel>();
  k->type = compute_type(in[0]->data_type);
  k->channels = x[1];
  k->rows = x[0] * x[1];
  k->len = count_of(Dims(x.begin() + 2, x.end()));
  k->eps = def.attrs.get_float("epsilon", 1e-5f);
  k->has_bias = true;
  if (count_of(dims_of(*in[1])) != x[1] || count_of(dims_of(*in[2])) != x[1])
    return op_error(def, "scale and B must have C elements");
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_group_norm(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                         const std::vector<const TensorDesc*>& out,
                         std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 3 || !all_present(in) || out.size() != 1 || !out[0])
    return op_error(def, "needs inputs X, scale, bias and 1 output");
  if (!float_types(in) || !float_types(out)) return op_error(def, "float tensors expected");
  const Dims x = dims_of(*in[0]);
  if (x.size() < 2 || dims_of(*out[0]) != x)
    return op_error(def, "X must be [N, C, ...] and Y alike");
  auto k = std::make_unique<GroupNormKernel>();
  k->type = compute_type(in[0]->data_type);
  k->n = x[0];
  k->c = x[1];
  k->spatial = count_of(Dims(x.begin() + 2, x.end()));
  k->groups = def.attrs.get_int("num_groups", 0);
  k->eps = def.attrs.get_float("epsilon", 1e-5f);
  if (k->groups < 1 || k->c % k->groups != 0)
    return op_error(def, "num_groups must divide the channels");
  const int64_t ns = count_of(dims_of(*in[1]));
  if (ns != count_of(dims_of(*in[2])) || (ns != k->groups && ns != k->c))
    return op_error(def, "scale and bias must have num_groups or C elements");
  k->per_channel = ns == k->c && ns != k->groups;
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_layer_norm(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                         const std::vector<const TensorDesc*>& out,
                         std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() < 2 || !in[0] || !in[1] || present_count(in) > 3 || out.empty() || !out[0] ||
      present_count(out) > 3)
    return op_error(def, "needs inputs X, Scale (, B) and outputs Y (, Mean, InvStdDev)");
  if (!float_types(in) || !float_types(out)) return op_error(def, "float tensors expected");
  const Dims x = dims_of(*in[0]);
  int64_t axis;
  if (!norm_axis(def.attrs.get_int("axis", -1), static_cast<int64_t>(x.size()), &axis))
    return op_error(def, "axis out of range");
  if (dims_of(*out[0]) != x) return op_error(def, "Y's shape differs from X's");
  auto k = std::make_unique<RowNormKernel>();
  k->layer = true;
  k->type = compute_type(in[0]->data_type);
  const Dims norm(x.begin() + axis, x.end());
  k->rows = count_of(Dims(x.begin(), x.begin() + axis));
  k->len = count_of(norm);
  k->eps = def.attrs.get_float("epsilon", 1e-5f);
  k->has_bias = has_input(in, 2);
  Dims ss, bs;
  if (!broadcast_strides(dims_of(*in[1]), norm, &ss))
    return op_error(def, "Scale does not broadcast to X[axis:]");
  k->scale_map.init(norm, {elem_strides(norm), ss});
  if (k->has_bias) {
    if (!broadcast_strides(dims_of(*in[2]), norm, &bs))
      return op_error(def, "B does not broadcast to X[axis:]");
    k->bias_map.init(norm, {elem_strides(norm), bs});
  }
  for (size_t o = 1; o < out.size(); ++o)
    if (has_input(out, o) && count_of(dims_of(*out[o])) != k->rows)
      return op_error(def, "Mean/InvStdDev must have X[:axis] elements");
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_axes_norm(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                        const std::vector<const TensorDesc*>& out,
                        std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs 1 input and 1 output");
  if (!float_types(in) || !float_types(out)) return op_error(def, "float tensors expected");
  auto k = std::make_unique<AxesNormKernel>();
  k->type = compute_type(in[0]->data_type);
  k->dims = dims_of(*in[0]);
  const int64_t rank = static_cast<int64_t>(k->dims.size());
  if (dims_of(*out[0]) != k->dims) return op_error(def, "Y's shape differs from X's");
  std::vector<bool> red(k->dims.size(), false);
  if (def.op_type == "MeanVarianceNormalization") {
    k->mvn = true;
    std::vector<int64_t> axes =
        def.attrs.has("axes") ? def.attrs.get_ints("axes") : std::vector<int64_t>{0, 2, 3};
    for (int64_t a : axes) {
      int64_t na;
      if (!norm_axis(a, rank, &na)) return op_error(def, "axes out of range");
      red[na] = true;
    }
  } else {
    int64_t axis;
    if (!norm_axis(def.attrs.get_int("axis", -1), rank, &axis))
      return op_error(def, "axis out of range");
    red[axis] = true;
    k->p = static_cast<int>(def.attrs.get_int("p", 2));
    if (k->p != 1 && k->p != 2) return op_error(def, "p must be 1 or 2");
  }
  const Dims gs = reduced_strides(k->dims, red);
  k->groups = 1;
  for (size_t i = 0; i < red.size(); ++i)
    if (!red[i]) k->groups *= k->dims[i];
  k->loop.init(k->dims, {elem_strides(k->dims), gs});
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_lrn(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                  const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs 1 input and 1 output");
  if (!float_types(in) || !float_types(out)) return op_error(def, "float tensors expected");
  const Dims x = dims_of(*in[0]);
  if (x.size() < 3 || dims_of(*out[0]) != x)
    return op_error(def, "X must be [N, C, D1, ...] and Y alike");
  auto k = std::make_unique<LrnKernel>();
  k->type = compute_type(in[0]->data_type);
  k->n = x[0];
  k->c = x[1];
  k->inner = count_of(Dims(x.begin() + 2, x.end()));
  k->size = def.attrs.get_int("size", 0);
  if (k->size < 1) return op_error(def, "size must be >= 1");
  k->alpha = def.attrs.get_float("alpha", 1e-4f);
  k->beta = def.attrs.get_float("beta", 0.75f);
  k->bias = def.attrs.get_float("bias", 1.0f);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
