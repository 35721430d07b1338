// SPDX-License-Identifier: Apache-2.0
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13):
// input [N, C, d1..dk], integer target [N, d1..dk], optional weight [C],
// reduction none / sum / mean, ignore_index. loss = -input[n, t, d] *
// weight[t] (0 where t == ignore_index); mean divides by the sum of the
// applied weights (the count of non-ignored targets without weights).
// SoftmaxCrossEntropyLoss applies LogSoftmax over C first and can output
// those log-probabilities. Accumulation in double.
#include <cmath>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class Reduction { kNone, kSum, kMean };

class LossKernel final : public CpuKernel {
 public:
  bool softmax = false;
  Reduction red = Reduction::kMean;
  bool has_ignore = false;
  int64_t ignore = 0;
  int64_t n = 1, c = 1, d = 1;
  int32_t type = kF32;
  CpuOpDef id;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf xb(in[0], type);
    const std::vector<int64_t> target = read_ints(in[1]);
    std::vector<double> weight;
    if (has_input(in, 2)) weight = read_doubles(in[2]);
    std::vector<double> x(static_cast<size_t>(n * c * d));
    visit_float(type, [&](auto tag) {
      using T = decltype(tag);
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(xb.as<T>()[i]);
    });
    if (softmax) {
      // Computed in the input's precision, like the reference.
      for (int64_t b = 0; b < n; ++b)
        for (int64_t j = 0; j < d; ++j) {
          double mx = -INFINITY, sum = 0.0;
          for (int64_t k = 0; k < c; ++k) mx = std::max(mx, x[(b * c + k) * d + j]);
          for (int64_t k = 0; k < c; ++k) sum += std::exp(x[(b * c + k) * d + j] - mx);
          for (int64_t k = 0; k < c; ++k) {
            double& v = x[(b * c + k) * d + j];
            v = v - mx - std::log(sum);
            if (type == kF32) v = static_cast<float>(v);
          }
        }
      if (has_input(out, 1)) {
        OutBuf lp(out[1], type);
        const int es = element_size(type);
        for (size_t i = 0; i < x.size(); ++i) store_from_double(type, x[i], lp.data() + i * es);
        lp.commit();
      }
    }
    std::vector<double> loss(static_cast<size_t>(n * d), 0.0);
    double wsum = 0.0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < d; ++j) {
        const int64_t t = target[b * d + j];
        if (has_ignore && t == ignore) continue;
        if (t < 0 || t >= c) return op_error(id, "target " + std::to_string(t) + " out of range");
        const double w = weight.empty() ? 1.0 : weight[t];
        double l = -x[(b * c + t) * d + j];
        if (type == kF32) l = static_cast<float>(l);
        loss[b * d + j] = w * l;
        wsum += w;
      }
    OutBuf y(out[0], type);
    const int es = element_size(type);
    if (red == Reduction::kNone) {
      for (size_t i = 0; i < loss.size(); ++i) store_from_double(type, loss[i], y.data() + i * es);
    } else {
      double s = 0.0;
      for (double v : loss) s += v;
      if (red == Reduction::kMean) {
        const bool weighted = !weight.empty() || has_ignore;
        s = weighted ? s / wsum : s / static_cast<double>(loss.size());
      }
      store_from_double(type, s, y.data());
    }
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_loss(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  auto k = std::make_unique<LossKernel>();
  k->softmax = def.op_type == "SoftmaxCrossEntropyLoss";
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  if (in.size() < 2 || !in[0] || !in[1] || present_count(in) > 3 || out.empty() || !out[0] ||
      present_count(out) > (k->softmax ? 2u : 1u))
    return op_error(def, "needs input, target (, weight) and the loss output");
  k->type = compute_type(in[0]->data_type);
  if ((k->type != kF32 && k->type != kF64) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, "float input and loss expected");
  if (in[1]->data_type != kS32 && in[1]->data_type != kS64)
    return op_error(def, "target must be int32/int64");
  const Dims x = dims_of(*in[0]), t = dims_of(*in[1]);
  if (x.size() < 2) return op_error(def, "input must be [N, C, ...]");
  Dims expect_t = {x[0]};
  expect_t.insert(expect_t.end(), x.begin() + 2, x.end());
  if (t != expect_t) return op_error(def, "target must have shape " + dims_str(expect_t));
  k->n = x[0];
  k->c = x[1];
  k->d = count_of(Dims(x.begin() + 2, x.end()));
  if (has_input(in, 2) && dims_of(*in[2]) != Dims{k->c})
    return op_error(def, "weight must have shape [C]");
  const std::string r = def.attrs.get_string("reduction", "mean");
  if (r == "none")
    k->red = Reduction::kNone;
  else if (r == "sum")
    k->red = Reduction::kSum;
  else if (r == "mean")
    k->red = Reduction::kMean;
  else
    return op_error(def, "unknown reduction '" + r + "'");
  if (dims_of(*out[0]) != (k->red == Reduction::kNone ? t : Dims{}))
    return op_error(def, "loss shape must be " + dims_str(k->red == Reduction::kNone ? t : Dims{}));
  if (has_input(out, 1) && dims_of(*out[1]) != x)
    return op_error(def, "log_prob must have the input's shape");
  k->has_ignore = def.attrs.has("ignore_index");
  k->ignore = def.attrs.get_int("ignore_index", 0);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
