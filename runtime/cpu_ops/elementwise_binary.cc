// SPDX-License-Identifier: Apache-2.0
// Broadcasting element-wise operators: arithmetic (Add Sub Mul Div Pow Mod,
// variadic Max Min Sum Mean), comparisons (Equal Greater Less GreaterOrEqual
// LessOrEqual), logic (And Or Xor), BitShift, PRelu and Where.
//
// Broadcasting is numpy's (opset >= 7). Opset < 7 models (e.g. PyTorch's
// old exporter) mark limited broadcasting with broadcast=1 and an `axis` at
// which the second input's dimensions line up with the first's; PRelu's
// opset 6 slope of shape [C] applies per channel (axis 1).
//
// Integer semantics: results wrap like numpy's fixed-width integers; Div
// truncates towards zero and, like Mod, gives 0 for a zero divisor (instead
// of trapping); Mod with fmod=0 takes the divisor's sign (Python), fmod=1
// the dividend's (C fmod). Max/Min propagate NaN like numpy.
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class Op {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMod,
  kFMod,
  kMax,
  kMin,
  kSum,
  kMean,
  kEqual,
  kGreater,
  kLess,
  kGreaterEq,
  kLessEq,
  kAnd,
  kOr,
  kXor,
  kShl,
  kShr,
  kPRelu,
};

bool is_compare(Op op) { return op >= Op::kEqual && op <= Op::kLessEq; }
bool is_logic(Op op) { return op == Op::kAnd || op == Op::kOr || op == Op::kXor; }

template <class T>
T div_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}

template <class T>
T mod_op(T a, T b, bool fmod) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
      T r = static_cast<T>(a % b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      (void)fmod;
      return static_cast<T>(a % b);
    }
  } else {
    T r = std::fmod(a, b);
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

template <class T>
T max_op(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return a < b ? b : a;
}
template <class T>
T min_op(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return b < a ? b : a;
}

// One innermost row of a broadcast loop: o[i] = f(a[i*sa], b[i*sb]).
template <class TO, class TA, class TB, class F>
inline void row(TO* o, const TA* a, int64_t sa, const TB* b, int64_t sb, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const TB bv = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
  } else if (sa == 0 && sb == 1) {
    const TA av = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i * sa], b[i * sb]);
  }
}

template <class TO, class TA, class TB, class F>
void apply(const BroadcastLoop<3>& loop, TO* o, const TA* a, const TB* b, F f) {
  loop.run([&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& st) {
    row(o + off[0], a + off[1], st[1], b + off[2], st[2], n, f);
  });
}

// Same-typed arithmetic: o = a (op) b.
template <class T>
void arith(Op op, bool fmod, const BroadcastLoop<3>& l, T* o, const T* a, const T* b) {
  switch (op) {
    case Op::kAdd:
    case Op::kSum:
    case Op::kMean:
      apply(l, o, a, b, [](T x, T y) { return static_cast<T>(x + y); });
      break;
    case Op::kSub:
      apply(l, o, a, b, [](T x, T y) { return static_cast<T>(x - y); });
      break;
    case Op::kMul:
      apply(l, o, a, b, [](T x, T y) { return static_cast<T>(x * y); });
      break;
    case Op::kDiv:
      apply(l, o, a, b, div_op<T>);
      break;
    case Op::kMod:
      apply(l, o, a, b, [fmod](T x, T y) { return mod_op<T>(x, y, fmod); });
      break;
    case Op::kMax:
      apply(l, o, a, b, max_op<T>);
      break;
    case Op::kMin:
      apply(l, o, a, b, min_op<T>);
      break;
    case Op::kPRelu:
      apply(l, o, a, b, [](T x, T s) { return x < T(0) ? static_cast<T>(x * s) : x; });
      break;
    case Op::kShl:
      if constexpr (std::is_unsigned_v<T>)
        apply(l, o, a, b,
              [](T x, T s) { return s >= sizeof(T) * 8 ? T(0) : static_cast<T>(x << s); });
      break;
    case Op::kShr:
      if constexpr (std::is_unsigned_v<T>)
        apply(l, o, a, b,
              [](T x, T s) { return s >= sizeof(T) * 8 ? T(0) : static_cast<T>(x >> s); });
      break;
    default:
      break;
  }
}

template <class T>
void compare(Op op, const BroadcastLoop<3>& l, uint8_t* o, const T* a, const T* b) {
  switch (op) {
    case Op::kEqual:
      apply(l, o, a, b, [](T x, T y) -> uint8_t { return x == y; });
      break;
    case Op::kGreater:
      apply(l, o, a, b, [](T x, T y) -> uint8_t { return x > y; });
      break;
    case Op::kLess:
      apply(l, o, a, b, [](T x, T y) -> uint8_t { return x < y; });
      break;
    case Op::kGreaterEq:
      apply(l, o, a, b, [](T x, T y) -> uint8_t { return x >= y; });
      break;
    case Op::kLessEq:
      apply(l, o, a, b, [](T x, T y) -> uint8_t { return x <= y; });
      break;
    default:
      break;
  }
}

class BinaryKernel final : public CpuKernel {
 public:
  Op op = Op::kAdd;
  bool fmod = false;
  int32_t in_type = kF32;   // compute type of the (first) input(s)
  int32_t in1_type = kF32;  // Pow's exponent type
  int32_t out_type = kF32;
  Dims out_dims;
  // first: in0 (op) in1 into out; rest[k]: out (op) in[k+2] into out.
  BroadcastLoop<3> first;
  std::vector<BroadcastLoop<3>> rest;
  BroadcastLoop<2> copy0;  // single-input variadic: broadcast copy

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    OutBuf o(out[0], out_type);
    std::vector<InBuf> ins;
    ins.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      ins.emplace_back(in[i], i == 1 && op == Op::kPow ? in1_type : in_type);
    if (op == Op::kPow) {
      run_pow(ins, o.data());
    } else if (is_compare(op)) {
      visit_numeric(in_type, [&](auto tag) {
        using T = decltype(tag);
        compare<T>(op, first, o.as<uint8_t>(), ins[0].as<T>(), ins[1].as<T>());
      });
      if (in_type == kBool8)
        compare<uint8_t>(op, first, o.as<uint8_t>(), ins[0].as<uint8_t>(), ins[1].as<uint8_t>());
    } else if (is_logic(op)) {
      const uint8_t* a = ins[0].as<uint8_t>();
      const uint8_t* b = ins[1].as<uint8_t>();
      uint8_t* y = o.as<uint8_t>();
      if (op == Op::kAnd)
        apply(first, y, a, b, [](uint8_t x, uint8_t z) -> uint8_t { return x && z; });
      if (op == Op::kOr)
        apply(first, y, a, b, [](uint8_t x, uint8_t z) -> uint8_t { return x || z; });
      if (op == Op::kXor)
        apply(first, y, a, b, [](uint8_t x, uint8_t z) -> uint8_t { return !x != !z; });
    } else {
      visit_numeric(in_type, [&](auto tag) {
        using T = decltype(tag);
        T* y = o.as<T>();
        if (ins.size() == 1) {
          const T* a = ins[0].as<T>();
          copy0.run(
              [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
                for (int64_t i = 0; i < n; ++i) y[off[0] + i] = a[off[1] + i * st[1]];
              });
        } else {
          arith<T>(op, fmod, first, y, ins[0].as<T>(), ins[1].as<T>());
          for (size_t k = 0; k < rest.size(); ++k)
            arith<T>(op, fmod, rest[k], y, y, ins[k + 2].as<T>());
        }
        if (op == Op::kMean) {
          const int64_t n = count_of(out_dims);
          const T cnt = static_cast<T>(ins.size());
          for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(y[i] / cnt);
        }
      });
    }
    o.commit();
    return Status::Ok();
  }

 private:
  // Pow: base and exponent may have different types (opset 12); computed in
  // double and stored in the base's type.
  void run_pow(const std::vector<InBuf>& ins, uint8_t* y) const {
    if (in_type == kF32 && in1_type == kF32) {
      apply(first, reinterpret_cast<float*>(y), ins[0].as<float>(), ins[1].as<float>(),
            [](float a, float b) {
              return b == 2.0f ? a * a : static_cast<float>(std::pow(double(a), double(b)));
            });
      return;
    }
    const int sa = element_size(in_type), sb = element_size(in1_type), so = element_size(out_type);
    const uint8_t* a = ins[0].data();
    const uint8_t* b = ins[1].data();
    const bool int_out = is_int_type(out_type);
    first.run([&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& st) {
      for (int64_t i = 0; i < n; ++i) {
        const uint8_t* pa = a + (off[1] + i * st[1]) * sa;
        const uint8_t* pb = b + (off[2] + i * st[2]) * sb;
        uint8_t* po = y + (off[0] + i) * so;
        if (int_out && is_int_type(in1_type)) {
          // Exact integer power (wrapping like numpy); negative exponents -> 0.
          int64_t base = load_int(in_type, pa), e = load_int(in1_type, pb), r = 1;
          if (e < 0) {
            r = (base == 1) ? 1 : (base == -1 ? (e % 2 ? -1 : 1) : 0);
          } else {
            uint64_t ub = static_cast<uint64_t>(base), ur = 1;
            for (; e > 0; e >>= 1, ub *= ub)
              if (e & 1) ur *= ub;
            r = static_cast<int64_t>(ur);
          }
          store_int(out_type, r, po);
        } else {
          const double v = std::pow(load_as_double(in_type, pa), load_as_double(in1_type, pb));
          store_from_double(out_type, int_out ? std::trunc(v) : v, po);
        }
      }
    });
  }
};

struct OpName {
  const char* name;
  Op op;
};
constexpr OpName kOps[] = {
    {"Add", Op::kAdd},
    {"Sub", Op::kSub},
    {"Mul", Op::kMul},
    {"Div", Op::kDiv},
    {"Pow", Op::kPow},
    {"Mod", Op::kMod},
    {"Max", Op::kMax},
    {"Min", Op::kMin},
    {"Sum", Op::kSum},
    {"Mean", Op::kMean},
    {"Equal", Op::kEqual},
    {"Greater", Op::kGreater},
    {"Less", Op::kLess},
    {"GreaterOrEqual", Op::kGreaterEq},
    {"LessOrEqual", Op::kLessEq},
    {"And", Op::kAnd},
    {"Or", Op::kOr},
    {"Xor", Op::kXor},
    {"BitShift", Op::kShl},
    {"PRelu", Op::kPRelu},
};

bool variadic(Op op) {
  return op == Op::kMax || op == Op::kMin || op == Op::kSum || op == Op::kMean;
}

// Element strides of input `i` over the output, with the legacy forms.
bool input_strides(const CpuOpDef& def, Op op, size_t i, const Dims& a, const Dims& d,
                   const Dims& out, Dims* s) {
  if (i == 1 && def.attrs.get_int("broadcast", 0) == 1 && def.attrs.has("axis")) {
    // Opset < 7: B's dims line up with A's starting at `axis`.
    int64_t axis = def.attrs.get_int("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(a.size());
    if (axis < 0 || axis + static_cast<int64_t>(d.size()) > static_cast<int64_t>(out.size()))
      return false;
    Dims padded = d;
    for (size_t k = static_cast<size_t>(axis) + d.size(); k < out.size(); ++k) padded.push_back(1);
    return broadcast_strides(padded, out, s);
  }
  // Opset 6 PRelu: a 1-D slope of C elements is per channel (axis 1); it
  // wins over numpy broadcasting then, and is the fallback when numpy
  // broadcasting fails.
  const bool per_channel = op == Op::kPRelu && i == 1 && d.size() == 1 && out.size() > 2 &&
                           d[0] == out[1] && d[0] > 1;
  if (!(per_channel && opset_of(def) < 7) && broadcast_strides(d, out, s)) return true;
  if (per_channel) {
    Dims padded = d;
    for (size_t k = 2; k < out.size(); ++k) padded.push_back(1);
    return broadcast_strides(padded, out, s);
  }
  return false;
}

}  // namespace

Status create_binary(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  auto k = std::make_unique<BinaryKernel>();
  bool found = false;
  for (const auto& e : kOps)
    if (def.op_type == e.name) k->op = e.op, found = true;
  if (!found) return op_error(def, "not an element-wise binary operator");
  if (k->op == Op::kShl) {
    const std::string dir = def.attrs.get_string("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") return op_error(def, "direction must be LEFT or RIGHT");
    if (dir == "RIGHT") k->op = Op::kShr;
  }
  const size_t n = in.size();
  if (variadic(k->op) ? n < 1 : n != 2)
    return op_error(def, variadic(k->op) ? "needs at least 1 input" : "needs 2 inputs");
  for (size_t i = 0; i < n; ++i)
    if (in[i] == nullptr) return op_error(def, "input " + std::to_string(i) + " is missing");
  if (out.size() != 1 || out[0] == nullptr) return op_error(def, "needs 1 output");

  k->in_type = compute_type(in[0]->data_type);
  k->in1_type = n > 1 ? compute_type(in[1]->data_type) : k->in_type;
  k->out_type = compute_type(out[0]->data_type);
  for (size_t i = 1; i < n; ++i)
    if (compute_type(in[i]->data_type) != k->in_type && k->op != Op::kPow)
      return op_error(def, "inputs have different data types");
  const bool logic = is_logic(k->op), cmp = is_compare(k->op);
  if (logic) {
    if (k->in_type != kBool8 || k->out_type != kBool8)
      return op_error(def, "bool tensors expected");
  } else if (cmp) {
    if (!is_numeric_type(k->in_type) && k->in_type != kBool8)
      return op_error(def, std::string("unsupported input type ") + data_type_name(k->in_type));
    if (k->out_type != kBool8) return op_error(def, "the output must be bool");
  } else {
    if (!is_numeric_type(k->in_type) || !is_numeric_type(k->in1_type))
      return op_error(def, std::string("unsupported input type ") + data_type_name(k->in_type));
    if (k->out_type != k->in_type) return op_error(def, "output type differs from the input type");
    if ((k->op == Op::kShl || k->op == Op::kShr) &&
        !(k->in_type == kU8 || k->in_type == kU16 || k->in_type == kU32 || k->in_type == kU64))
      return op_error(def, "BitShift needs unsigned integer tensors");
  }
  if (k->op == Op::kMod) {
    k->fmod = def.attrs.get_int("fmod", 0) != 0;
    if (!k->fmod && is_float_type(k->in_type))
      return op_error(def, "fmod must be 1 for floating-point inputs");
  }

  k->out_dims = dims_of(*out[0]);
  const Dims& od = k->out_dims;
  std::vector<Dims> strides(n);
  std::vector<Dims> shapes;
  const Dims a = dims_of(*in[0]);
  for (size_t i = 0; i < n; ++i) {
    const Dims d = dims_of(*in[i]);
    shapes.push_back(d);
    if (!input_strides(def, k->op, i, a, d, od, &strides[i]))
      return op_error(def, "input " + std::to_string(i) + " of shape " + dims_str(d) +
                               " does not broadcast to the output shape " + dims_str(od));
  }
  Dims bshape;
  const bool legacy = def.attrs.get_int("broadcast", 0) == 1 || k->op == Op::kPRelu;
  if (!legacy && (!broadcast_shape(shapes, &bshape) || bshape != od))
    return op_error(def, "output shape " + dims_str(od) + " is not the broadcast of the inputs");
  if (k->op == Op::kPRelu && a != od) return op_error(def, "output shape differs from X's shape");

  const Dims dense = elem_strides(od);
  if (n == 1) {
    k->copy0.init(od, {dense, strides[0]});
  } else {
    k->first.init(od, {dense, strides[0], strides[1]});
    for (size_t i = 2; i < n; ++i)
      k->rest.emplace_back(), k->rest.back().init(od, {dense, dense, strides[i]});
  }
  *kernel = std::move(k);
  return Status::Ok();
}

// --- Where -------------------------------------------------------------------

namespace {

class WhereKernel final : public CpuKernel {
 public:
  int esize = 4;
  BroadcastLoop<4> loop;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const int32_t t = out[0].desc->data_type;
    InBuf c(in[0], kBool8), x(in[1], t), y(in[2], t);
    OutBuf o(out[0], t);
    const uint8_t* cp = c.data();
    const uint8_t* xp = x.data();
    const uint8_t* yp = y.data();
    uint8_t* op = o.data();
    const size_t es = static_cast<size_t>(esize);
    loop.run([&](const std::array<int64_t, 4>& off, int64_t n, const std::array<int64_t, 4>& st) {
      for (int64_t i = 0; i < n; ++i) {
        const bool take_x = cp[off[1] + i * st[1]] != 0;
        const uint8_t* src =
            take_x ? xp + (off[2] + i * st[2]) * esize : yp + (off[3] + i * st[3]) * esize;
        std::memcpy(op + (off[0] + i) * esize, src, es);
      }
    });
    o.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_where(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                    const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 3 || !in[0] || !in[1] || !in[2] || out.size() != 1 || !out[0])
    return op_error(def, "needs 3 inputs and 1 output");
  if (in[0]->data_type != kBool8) return op_error(def, "the condition must be bool");
  const int32_t t = out[0]->data_type;
  if (in[1]->data_type != t || in[2]->data_type != t || element_size(t) == 0)
    return op_error(def, "X, Y and the output must have the same data type");
  const Dims od = dims_of(*out[0]);
  Dims bshape;
  std::array<Dims, 4> s;
  s[0] = elem_strides(od);
  for (size_t i = 0; i < 3; ++i)
    if (!broadcast_strides(dims_of(*in[i]), od, &s[i + 1]))
      return op_error(def, "input " + std::to_string(i) + " does not broadcast to the output");
  if (!broadcast_shape({dims_of(*in[0]), dims_of(*in[1]), dims_of(*in[2])}, &bshape) ||
      bshape != od)
    return op_error(def, "output shape is not the broadcast of the inputs");
  auto k = std::make_unique<WhereKernel>();
  k->esize = element_size(t);
  k->loop.init(od, s);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
