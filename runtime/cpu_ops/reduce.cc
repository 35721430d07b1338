// SPDX-License-Identifier: Apache-2.0
// Reductions: ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1
// ReduceL2 ReduceSumSquare ReduceLogSum ReduceLogSumExp, and ArgMax/ArgMin.
//
// Axes come from the `axes` attribute (ReduceSum before opset 13, the others
// before opset 18) or from the optional second input (read at run time).
// No axes reduces everything, unless noop_with_empty_axes=1 (identity).
// keepdims is checked against the output description. Accumulation is in
// double; results are stored in the input's type.
#include <cmath>
#include <limits>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class R { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

struct RName {
  const char* name;
  R op;
};
constexpr RName kReduce[] = {
    {"ReduceSum", R::kSum},       {"ReduceMean", R::kMean},
    {"ReduceMax", R::kMax},       {"ReduceMin", R::kMin},
    {"ReduceProd", R::kProd},     {"ReduceL1", R::kL1},
    {"ReduceL2", R::kL2},         {"ReduceSumSquare", R::kSumSquare},
    {"ReduceLogSum", R::kLogSum}, {"ReduceLogSumExp", R::kLogSumExp},
};

// The reduction plan for one set of axes.
struct Plan {
  bool identity = false;
  int64_t out_count = 0;
  double group = 1.0;  // elements per output
  BroadcastLoop<2> loop;
};

// Builds the plan; checks the output shape. `axes` empty = all (or identity).
Status make_plan(const CpuOpDef& def, const Dims& x, const Dims& y, std::vector<int64_t> axes,
                 bool keepdims, bool noop_empty, Plan* plan) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> red(x.size(), false);
  if (axes.empty()) {
    if (noop_empty) {
      plan->identity = true;
      if (y != x)
        return op_error(def, "output shape must equal the input's (no axes, noop_with_empty_axes)");
      return Status::Ok();
    }
    red.assign(x.size(), true);
  }
  for (int64_t a : axes) {
    int64_t na;
    if (!norm_axis(a, rank, &na))
      return op_error(def, "axis " + std::to_string(a) + " out of range");
    red[na] = true;
  }
  Dims expect;
  plan->group = 1.0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (red[i]) plan->group *= static_cast<double>(x[i]);
    if (!red[i])
      expect.push_back(x[i]);
    else if (keepdims)
      expect.push_back(1);
  }
  if (expect != y)
    return op_error(def, "output shape must be " + dims_str(expect) + ", not " + dims_str(y));
  plan->out_count = count_of(expect);
  plan->loop.init(x, {elem_strides(x), reduced_strides(x, red)});
  return Status::Ok();
}

class ReduceKernel final : public CpuKernel {
 public:
  R op = R::kSum;
  bool keepdims = true, noop_empty = false;
  bool axes_input = false;
  Plan fixed;   // when the axes are attributes
  CpuOpDef id;  // name and op_type, for run-time messages
  int32_t type = kF32;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    Plan dyn;
    const Plan* plan = &fixed;
    if (axes_input) {
      std::vector<int64_t> axes;
      if (has_input(in, 1)) axes = read_ints(in[1]);
      OBPU_RETURN_IF_ERROR(make_plan(id, dims_of(*in[0].desc), dims_of(*out[0].desc), axes,
                                     keepdims, noop_empty, &dyn));
      plan = &dyn;
    }
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    if (plan->identity) {
      std::memcpy(y.data(), x.data(),
                  static_cast<size_t>(count_of(dims_of(*in[0].desc)) * element_size(type)));
      y.commit();
      return Status::Ok();
    }
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      compute<T>(*plan, x.as<T>(), y.as<T>());
    });
    y.commit();
    return Status::Ok();
  }

 private:
  template <class T>
  void compute(const Plan& p, const T* x, T* y) const {
    const double inf = std::numeric_limits<double>::infinity();
    double init = 0.0;
    if (op == R::kMax || op == R::kLogSumExp) init = -inf;
    if (op == R::kMin) init = inf;
    if (op == R::kProd) init = 1.0;
    std::vector<double> acc(static_cast<size_t>(p.out_count), init);
    auto pass = [&](auto f) {
      p.loop.run(
          [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
            double* a = acc.data() + off[1];
            const T* v = x + off[0];
            if (st[1] == 0) {
              double r = *a;
              for (int64_t i = 0; i < n; ++i) r = f(r, static_cast<double>(v[i]), 0);
              *a = r;
            } else {
              for (int64_t i = 0; i < n; ++i)
                a[i * st[1]] = f(a[i * st[1]], static_cast<double>(v[i]), i * st[1]);
            }
          });
    };
    switch (op) {
      case R::kSum:
      case R::kMean:
      case R::kLogSum:
        pass([](double a, double v, int64_t) { return a + v; });
        break;
      case R::kMax:
        pass([](double a, double v, int64_t) { return std::isnan(v) || v > a ? v : a; });
        break;
      case R::kMin:
        pass([](double a, double v, int64_t) { return std::isnan(v) || v < a ? v : a; });
        break;
      case R::kProd:
        pass([](double a, double v, int64_t) { return a * v; });
        break;
      case R::kL1:
        pass([](double a, double v, int64_t) { return a + std::abs(v); });
        break;
      case R::kL2:
      case R::kSumSquare:
        pass([](double a, double v, int64_t) { return a + v * v; });
        break;
      case R::kLogSumExp: {
        pass([](double a, double v, int64_t) { return v > a ? v : a; });
        std::vector<double> mx = acc;
        std::fill(acc.begin(), acc.end(), 0.0);
        p.loop.run(
            [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
              for (int64_t i = 0; i < n; ++i) {
                const int64_t o = off[1] + i * st[1];
                acc[o] += std::exp(static_cast<double>(x[off[0] + i]) - mx[o]);
              }
            });
        for (size_t i = 0; i < acc.size(); ++i)
          acc[i] = std::isfinite(mx[i]) ? mx[i] + std::log(acc[i]) : mx[i];
        break;
      }
    }
    for (int64_t i = 0; i < p.out_count; ++i) {
      double r = acc[i];
      if (op == R::kMean) r /= p.group;
      if (op == R::kL2) r = std::sqrt(r);
      if (op == R::kLogSum) r = std::log(r);
      if constexpr (std::is_integral_v<T>) {
        y[i] = saturate_int<T>(std::trunc(r));
      } else {
        y[i] = static_cast<T>(r);
      }
    }
  }
};

class ArgKernel final : public CpuKernel {
 public:
  bool is_max = true, last = false;
  int64_t outer = 1, len = 1, inner = 1;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    OutBuf y(out[0], kS64);
    int64_t* yp = y.as<int64_t>();
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      const T* xp = x.as<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T* v = xp + o * len * inner + i;
          int64_t best = 0;
          for (int64_t k = 1; k < len; ++k) {
            const T a = v[k * inner], b = v[best * inner];
            const bool better = is_max ? (last ? a >= b : a > b) : (last ? a <= b : a < b);
            if (better) best = k;
          }
          yp[o * inner + i] = best;
        }
    });
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_reduce(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  auto k = std::make_unique<ReduceKernel>();
  bool found = false;
  for (const auto& e : kReduce)
    if (def.op_type == e.name) k->op = e.op, found = true;
  if (!found) return op_error(def, "not a reduction");
  if (in.empty() || !in[0] || present_count(in) > 2 || out.size() != 1 || !out[0])
    return op_error(def, "needs data (, axes) and 1 output");
  k->type = compute_type(in[0]->data_type);
  if (!is_numeric_type(k->type) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, std::string("unsupported data type ") + data_type_name(in[0]->data_type));
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->keepdims = def.attrs.get_int("keepdims", 1) != 0;
  k->noop_empty = def.attrs.get_int("noop_with_empty_axes", 0) != 0;
  const Dims x = dims_of(*in[0]), y = dims_of(*out[0]);
  if (has_input(in, 1)) {
    if (in[1]->data_type != kS64) return op_error(def, "axes must be int64");
    if (def.attrs.has("axes")) return op_error(def, "axes given both as attribute and input");
    k->axes_input = true;
    // Validate what can be validated now: rank of the output.
    if (dims_of(*in[1]).size() > 1) return op_error(def, "axes must be 1-D");
  } else {
    OBPU_RETURN_IF_ERROR(
        make_plan(def, x, y, def.attrs.get_ints("axes"), k->keepdims, k->noop_empty, &k->fixed));
  }
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_arg(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                  const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0] || out.size() != 1 || !out[0])
    return op_error(def, "needs 1 input and 1 output");
  auto k = std::make_unique<ArgKernel>();
  k->is_max = def.op_type == "ArgMax";
  k->type = compute_type(in[0]->data_type);
  if (!is_numeric_type(k->type) || out[0]->data_type != kS64)
    return op_error(def, "numeric input and int64 output expected");
  const Dims x = dims_of(*in[0]);
  int64_t axis;
  if (!norm_axis(def.attrs.get_int("axis", 0), static_cast<int64_t>(x.size()), &axis))
    return op_error(def, "axis out of range");
  k->last = def.attrs.get_int("select_last_index", 0) != 0;
  const bool keep = def.attrs.get_int("keepdims", 1) != 0;
  Dims expect;
  for (size_t i = 0; i < x.size(); ++i) {
    if (static_cast<int64_t>(i) != axis)
      expect.push_back(x[i]);
    else if (keep)
      expect.push_back(1);
  }
  if (dims_of(*out[0]) != expect) return op_error(def, "output shape must be " + dims_str(expect));
  k->len = x[axis];
  if (k->len == 0) return op_error(def, "cannot reduce an empty axis");
  k->outer = count_of(Dims(x.begin(), x.begin() + axis));
  k->inner = count_of(Dims(x.begin() + axis + 1, x.end()));
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
