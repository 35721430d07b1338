// SPDX-License-Identifier: Apache-2.0
// Element-wise unary operators: activations (Relu LeakyRelu Elu Selu Celu
// Sigmoid HardSigmoid HardSwish Swish (openbpu::) Softplus Softsign Mish Gelu ThresholdedRelu
// Shrink Clip), math (Exp Log Sqrt Reciprocal Neg Abs Floor Ceil Round Sign
// Erf and the trigonometric/hyperbolic family) and predicates (Not IsNaN
// IsInf).
//
// float32 is computed in float32 (the C library's functions), float64 in
// double, float16 in float32. Abs/Neg/Sign/Relu/Clip/Shrink also take
// integers (exact). Round is round-half-to-even like numpy. Clip takes
// min/max as attributes before opset 11 and as optional inputs since.
// Gelu (opset 20) honours approximate="tanh". The activations' formulas are
// bpu_sim/isa/nonlinear.h's, the ones the BPU's lookup tables are built from.
#include <cmath>
#include <limits>
#include <type_traits>

#include "bpu_sim/isa/nonlinear.h"
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class U {
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kCelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kSwish,
  kTanh,
  kSoftplus,
  kSoftsign,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kNeg,
  kAbs,
  kFloor,
  kCeil,
  kRound,
  kSign,
  kErf,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kMish,
  kGelu,
  kThresholdedRelu,
  kShrink,
  kClip,
  kNot,
  kIsNaN,
  kIsInf,
};

struct UnaryName {
  const char* name;
  U op;
  bool ints;  // also defined on integer tensors
};
constexpr UnaryName kUnary[] = {
    {"Relu", U::kRelu, true},
    {"LeakyRelu", U::kLeakyRelu, false},
    {"Elu", U::kElu, false},
    {"Selu", U::kSelu, false},
    {"Celu", U::kCelu, false},
    {"Sigmoid", U::kSigmoid, false},
    {"HardSigmoid", U::kHardSigmoid, false},
    {"HardSwish", U::kHardSwish, false},
    {"Swish", U::kSwish, false},  // openbpu::Swish, x * sigmoid(x)
    {"Tanh", U::kTanh, false},
    {"Softplus", U::kSoftplus, false},
    {"Softsign", U::kSoftsign, false},
    {"Exp", U::kExp, false},
    {"Log", U::kLog, false},
    {"Sqrt", U::kSqrt, false},
    {"Reciprocal", U::kReciprocal, false},
    {"Neg", U::kNeg, true},
    {"Abs", U::kAbs, true},
    {"Floor", U::kFloor, false},
    {"Ceil", U::kCeil, false},
    {"Round", U::kRound, false},
    {"Sign", U::kSign, true},
    {"Erf", U::kErf, false},
    {"Sin", U::kSin, false},
    {"Cos", U::kCos, false},
    {"Tan", U::kTan, false},
    {"Asin", U::kAsin, false},
    {"Acos", U::kAcos, false},
    {"Atan", U::kAtan, false},
    {"Sinh", U::kSinh, false},
    {"Cosh", U::kCosh, false},
    {"Asinh", U::kAsinh, false},
    {"Acosh", U::kAcosh, false},
    {"Atanh", U::kAtanh, false},
    {"Mish", U::kMish, false},
    {"Gelu", U::kGelu, false},
    {"ThresholdedRelu", U::kThresholdedRelu, false},
    {"Shrink", U::kShrink, true},
    {"Clip", U::kClip, true},
    {"Not", U::kNot, false},
    {"IsNaN", U::kIsNaN, false},
    {"IsInf", U::kIsInf, false},
};

struct Params {
  double alpha = 0, beta = 0, gamma = 0;
  bool tanh_gelu = false;
  bool inf_neg = true, inf_pos = true;
};

template <class T, class F>
void map(const T* x, T* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// Float kernels (T = float or double).
template <class T>
void run_float(U op, const Params& p, const T* x, T* y, int64_t n) {
  const T a = static_cast<T>(p.alpha), b = static_cast<T>(p.beta), g = static_cast<T>(p.gamma);
  switch (op) {
    case U::kRelu:
      map(x, y, n, isa::fn::relu<T>);
      break;
    case U::kLeakyRelu:
      map(x, y, n, [a](T v) { return isa::fn::leaky_relu(v, a); });
      break;
    case U::kElu:
      map(x, y, n, [a](T v) { return isa::fn::elu(v, a); });
      break;
    case U::kSelu:
      map(x, y, n, [a, g](T v) { return isa::fn::selu(v, a, g); });
      break;
    case U::kCelu:
      map(x, y, n, [a](T v) { return isa::fn::celu(v, a); });
      break;
    case U::kSigmoid:
      map(x, y, n, isa::fn::sigmoid<T>);
      break;
    case U::kHardSigmoid:
      map(x, y, n, [a, b](T v) { return isa::fn::hard_sigmoid(v, a, b); });
      break;
    case U::kHardSwish:
      map(x, y, n, isa::fn::hard_swish<T>);
      break;
    case U::kSwish:
      map(x, y, n, isa::fn::swish<T>);
      break;
    case U::kTanh:
      map(x, y, n, [](T v) { return std::tanh(v); });
      break;
    case U::kSoftplus:
      map(x, y, n, isa::fn::softplus<T>);
      break;
    case U::kSoftsign:
      map(x, y, n, isa::fn::softsign<T>);
      break;
    case U::kExp:
      map(x, y, n, [](T v) { return std::exp(v); });
      break;
    case U::kLog:
      map(x, y, n, [](T v) { return std::log(v); });
      break;
    case U::kSqrt:
      map(x, y, n, [](T v) { return std::sqrt(v); });
      break;
    case U::kReciprocal:
      map(x, y, n, isa::fn::reciprocal<T>);
      break;
    case U::kNeg:
      map(x, y, n, [](T v) { return -v; });
      break;
    case U::kAbs:
      map(x, y, n, [](T v) { return std::abs(v); });
      break;
    case U::kFloor:
      map(x, y, n, [](T v) { return std::floor(v); });
      break;
    case U::kCeil:
      map(x, y, n, [](T v) { return std::ceil(v); });
      break;
    case U::kRound:
      map(x, y, n, [](T v) { return std::nearbyint(v); });
      break;
    case U::kSign:
      map(x, y, n, [](T v) { return std::isnan(v) ? v : static_cast<T>((v > T(0)) - (v < T(0))); });
      break;
    case U::kErf:
      map(x, y, n, [](T v) { return std::erf(v); });
      break;
    case U::kSin:
      map(x, y, n, [](T v) { return std::sin(v); });
      break;
    case U::kCos:
      map(x, y, n, [](T v) { return std::cos(v); });
      break;
    case U::kTan:
      map(x, y, n, [](T v) { return std::tan(v); });
      break;
    case U::kAsin:
      map(x, y, n, [](T v) { return std::asin(v); });
      break;
    case U::kAcos:
      map(x, y, n, [](T v) { return std::acos(v); });
      break;
    case U::kAtan:
      map(x, y, n, [](T v) { return std::atan(v); });
      break;
    case U::kSinh:
      map(x, y, n, [](T v) { return std::sinh(v); });
      break;
    case U::kCosh:
      map(x, y, n, [](T v) { return std::cosh(v); });
      break;
    case U::kAsinh:
      map(x, y, n, [](T v) { return std::asinh(v); });
      break;
    case U::kAcosh:
      map(x, y, n, [](T v) { return std::acosh(v); });
      break;
    case U::kAtanh:
      map(x, y, n, [](T v) { return std::atanh(v); });
      break;
    case U::kMish:
      map(x, y, n, isa::fn::mish<T>);
      break;
    case U::kGelu:
      if (p.tanh_gelu)
        map(x, y, n, isa::fn::gelu_tanh<T>);
      else
        map(x, y, n, isa::fn::gelu<T>);
      break;
    case U::kThresholdedRelu:
      map(x, y, n, [a](T v) { return isa::fn::thresholded_relu(v, a); });
      break;
    default:
      break;
  }
}

// Operators also defined on integers (T any numeric type).
template <class T>
bool run_generic(U op, const Params& p, T lo, T hi, const T* x, T* y, int64_t n) {
  switch (op) {
    case U::kRelu:
      map(x, y, n, isa::fn::relu<T>);
      return true;
    case U::kNeg:
      map(x, y, n, [](T v) { return static_cast<T>(-v); });
      return true;
    case U::kAbs:
      if constexpr (std::is_signed_v<T>)
        map(x, y, n, [](T v) { return v < T(0) ? static_cast<T>(-v) : v; });
      else
        map(x, y, n, [](T v) { return v; });
      return true;
    case U::kSign:
      if constexpr (std::is_integral_v<T>) {
        map(x, y, n, [](T v) { return static_cast<T>((v > T(0)) - (v < T(0))); });
        return true;
      }
      return false;
    case U::kClip:
      map(x, y, n, [lo, hi](T v) { return v < lo ? lo : (v > hi ? hi : v); });
      return true;
    case U::kShrink: {
      const double l = p.alpha, b = p.beta;
      map(x, y, n, [l, b](T v) {
        const double d = static_cast<double>(v);
        return static_cast<T>(d < -l ? d + b : (d > l ? d - b : 0.0));
      });
      return true;
    }
    default:
      return false;
  }
}

class UnaryKernel final : public CpuKernel {
 public:
  U op = U::kRelu;
  Params p;
  int32_t type = kF32;  // compute type of the input
  int32_t out_type = kF32;
  bool clip_attrs = false;  // opset < 11 Clip: bounds from attributes
  double clip_lo = -INFINITY, clip_hi = INFINITY;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf x(in[0], type);
    OutBuf y(out[0], out_type);
    const int64_t n = count_of(dims_of(*in[0].desc));
    if (op == U::kNot || op == U::kIsNaN || op == U::kIsInf) {
      uint8_t* o = y.as<uint8_t>();
      if (op == U::kNot) {
        const uint8_t* v = x.as<uint8_t>();
        for (int64_t i = 0; i < n; ++i) o[i] = !v[i];
      } else {
        visit_float(type, [&](auto tag) {
          using T = decltype(tag);
          const T* v = x.as<T>();
          for (int64_t i = 0; i < n; ++i)
            o[i] = op == U::kIsNaN ? std::isnan(v[i])
                                   : std::isinf(v[i]) && (v[i] > 0 ? p.inf_pos : p.inf_neg);
        });
      }
      y.commit();
      return Status::Ok();
    }
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (op == U::kClip) clip_bounds<T>(in, &lo, &hi);
      if (!run_generic<T>(op, p, lo, hi, x.as<T>(), y.as<T>(), n)) {
        if constexpr (std::is_floating_point_v<T>) run_float<T>(op, p, x.as<T>(), y.as<T>(), n);
      }
    });
    y.commit();
    return Status::Ok();
  }

 private:
  template <class T>
  void clip_bounds(const std::vector<CpuTensor>& in, T* lo, T* hi) const {
    if (clip_attrs) {
      if constexpr (std::is_integral_v<T>) {
        if (clip_lo > static_cast<double>(*lo)) *lo = saturate_int<T>(clip_lo);
        if (clip_hi < static_cast<double>(*hi)) *hi = saturate_int<T>(clip_hi);
      } else {
        if (clip_lo > static_cast<double>(*lo)) *lo = static_cast<T>(clip_lo);
        if (clip_hi < static_cast<double>(*hi)) *hi = static_cast<T>(clip_hi);
      }
      return;
    }
    for (size_t i = 1; i <= 2; ++i) {
      if (!has_input(in, i) || count_of(dims_of(*in[i].desc)) < 1) continue;
      T v;
      if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(read_ints(in[i])[0]);
      } else {
        v = static_cast<T>(read_doubles(in[i])[0]);
      }
      (i == 1 ? *lo : *hi) = v;
    }
  }
};

}  // namespace

Status create_unary(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                    const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  auto k = std::make_unique<UnaryKernel>();
  const UnaryName* e = nullptr;
  for (const auto& u : kUnary)
    if (def.op_type == u.name) e = &u;
  if (e == nullptr) return op_error(def, "not an element-wise unary operator");
  k->op = e->op;
  const size_t max_in = k->op == U::kClip ? 3 : 1;
  if (in.empty() || in[0] == nullptr || present_count(in) > max_in)
    return op_error(def, max_in == 1 ? "needs 1 input" : "needs 1 to 3 inputs");
  if (out.size() != 1 || out[0] == nullptr) return op_error(def, "needs 1 output");
  if (dims_of(*in[0]) != dims_of(*out[0]))
    return op_error(def, "input and output shapes differ: " + dims_str(dims_of(*in[0])) + " vs " +
                             dims_str(dims_of(*out[0])));
  k->type = compute_type(in[0]->data_type);
  k->out_type = compute_type(out[0]->data_type);
  const bool pred = k->op == U::kNot || k->op == U::kIsNaN || k->op == U::kIsInf;
  if (k->op == U::kNot) {
    if (k->type != kBool8 || k->out_type != kBool8) return op_error(def, "bool tensors expected");
  } else if (pred) {
    if (!is_float_type(k->type) || k->out_type != kBool8)
      return op_error(def, "float input and bool output expected");
  } else {
    const bool ok_type = is_float_type(k->type) || (e->ints && is_int_type(k->type)) ||
                         (k->op == U::kSign && is_int_type(k->type));
    if (!ok_type)
      return op_error(def,
                      std::string("unsupported data type ") + data_type_name(in[0]->data_type));
    if (k->out_type != k->type) return op_error(def, "output type differs from the input type");
  }
  const Attrs& a = def.attrs;
  Params& p = k->p;
  switch (k->op) {
    case U::kLeakyRelu:
      p.alpha = a.get_float("alpha", 0.01f);
      break;
    case U::kElu:
    case U::kCelu:
      p.alpha = a.get_float("alpha", 1.0f);
      break;
    case U::kThresholdedRelu:
      p.alpha = a.get_float("alpha", 1.0f);
      break;
    case U::kSelu:
      p.alpha = a.get_float("alpha", 1.67326319217681884765625f);
      p.gamma = a.get_float("gamma", 1.05070102214813232421875f);
      break;
    case U::kHardSigmoid:
      p.alpha = a.get_float("alpha", 0.2f);
      p.beta = a.get_float("beta", 0.5f);
      break;
    case U::kShrink:
      p.alpha = a.get_float("lambd", 0.5f);
      p.beta = a.get_float("bias", 0.0f);
      break;
    case U::kGelu: {
      const std::string approx = a.get_string("approximate", "none");
      if (approx != "none" && approx != "tanh")
        return op_error(def, "approximate must be none or tanh");
      p.tanh_gelu = approx == "tanh";
      break;
    }
    case U::kIsInf:
      p.inf_neg = a.get_int("detect_negative", 1) != 0;
      p.inf_pos = a.get_int("detect_positive", 1) != 0;
      break;
    case U::kClip:
      // Opset 6..10: min/max attributes; opset 11+: optional inputs 1 and 2.
      if (a.has("min") || a.has("max") || opset_of(def) < 11) {
        k->clip_attrs = true;
        k->clip_lo = a.get_float("min", -std::numeric_limits<float>::max());
        k->clip_hi = a.get_float("max", std::numeric_limits<float>::max());
      }
      for (size_t i = 1; i < in.size(); ++i)
        if (has_input(in, i) && (compute_type(in[i]->data_type) != k->type || count_of(dims_of(*in[i])) != 1))
          return op_error(def, "min/max must be scalars of the input's type");
      break;
    default:
      break;
  }
  if (k->op == U::kCelu && p.alpha == 0.0) return op_error(def, "alpha must not be 0");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
