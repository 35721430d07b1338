// SPDX-License-Identifier: Apache-2.0
// The real-valued definition of each nonlinear element-wise function, once:
// the converter builds the BPU's lookup tables from these (in double), the
// runtime's CPU operators and the converter's own float operators evaluate
// them (in float or double). T is float or double; parameters follow ONNX.
#ifndef OPENBPU_BPU_SIM_ISA_NONLINEAR_H_
#define OPENBPU_BPU_SIM_ISA_NONLINEAR_H_

#include <algorithm>
#include <cmath>

namespace openbpu::isa::fn {

template <class T> T relu(T x) { return x > T(0) ? x : T(0); }
template <class T> T leaky_relu(T x, T alpha) { return x < T(0) ? alpha * x : x; }
template <class T> T thresholded_relu(T x, T alpha) { return x > alpha ? x : T(0); }
template <class T> T clip(T x, T lo, T hi) { return std::min(hi, std::max(lo, x)); }

template <class T> T elu(T x, T alpha) { return x < T(0) ? alpha * (std::exp(x) - T(1)) : x; }
template <class T> T selu(T x, T alpha, T gamma) { return x > T(0) ? gamma * x : gamma * (alpha * std::exp(x) - alpha); }
template <class T> T celu(T x, T alpha) { return x > T(0) ? x : alpha * (std::exp(x / alpha) - T(1)); }

// 1 / (1 + e^-x), without overflow of e^-x for large negative x.
template <class T> T sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}
template <class T> T hard_sigmoid(T x, T alpha, T beta) { return std::max(T(0), std::min(T(1), alpha * x + beta)); }
template <class T> T hard_swish(T x) { return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5))); }
// x * sigmoid(x) (SiLU), as the converter's fused Swish computes it.
template <class T> T swish(T x) { return x / (T(1) + std::exp(-x)); }

// log(1 + e^x) without overflow.
template <class T> T softplus(T x) { return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
template <class T> T softsign(T x) { return x / (T(1) + std::abs(x)); }
template <class T> T mish(T x) { return x * std::tanh(softplus(x)); }

// 0.5 x (1 + erf(x / sqrt 2)); the tanh approximation of ONNX Gelu-20.
template <class T> T gelu(T x) { return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(M_SQRT1_2))); }
template <class T> T gelu_tanh(T x) {
  const T c = static_cast<T>(0.7978845608028654);  // sqrt(2/pi)
  return T(0.5) * x * (T(1) + std::tanh(c * (x + T(0.044715) * x * x * x)));
}

template <class T> T reciprocal(T x) { return T(1) / x; }

}  // namespace openbpu::isa::fn

#endif  // OPENBPU_BPU_SIM_ISA_NONLINEAR_H_
