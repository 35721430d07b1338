// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the reference kernels (internal to bpu_sim/reference):
// element access through strided views and exact integer rounding.
//
// Every value a kernel computes with is held in int64 (operands) or __int128
// (products and sums before a shift), so no intermediate can overflow for any
// instruction the validator accepts; see docs/numerics.md for the bounds.
#ifndef OPENBPU_BPU_SIM_REFERENCE_REF_UTIL_H_
#define OPENBPU_BPU_SIM_REFERENCE_REF_UTIL_H_

#include <cstdint>
#include <cstring>
#include <limits>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/isa/numerics.h"
#include "bpu_sim/memory.h"

namespace openbpu::sim::ref::detail {

__extension__ typedef __int128 int128;  // exact products of int64 and int32 values

// The kernels rely on >> of a negative signed value being a floor division
// (arithmetic shift). GCC and Clang define it so (C++20 requires it).
static_assert((static_cast<int128>(-3) >> 1) == -2, "arithmetic shift required");
static_assert((static_cast<int64_t>(-3) >> 1) == -2, "arithmetic shift required");

// Value range of a data type (bpu_sim/isa/numerics.h).
inline int64_t dtype_min(isa::DType t) { return isa::dtype_range(t).lo; }
inline int64_t dtype_max(isa::DType t) { return isa::dtype_range(t).hi; }

// min(max(v, lo), hi): with lo > hi (never accepted by the validator) the
// result is hi.
inline int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}
inline int128 clamp128(int128 v, int128 lo, int128 hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// The output range of a clamped instruction: [act_min, act_max] intersected
// with the range of the output type.
struct Range {
  int64_t lo, hi;
};
inline Range out_range(isa::DType t, int64_t act_min, int64_t act_max) {
  return {act_min > dtype_min(t) ? act_min : dtype_min(t),
          act_max < dtype_max(t) ? act_max : dtype_max(t)};
}

// Shift amounts outside [0, kMaxShift] are rejected by the validator; the
// kernels clamp them so that even an unvalidated instruction never shifts by
// an undefined amount.
inline int sanitize_shift(int64_t s) { return static_cast<int>(clamp(s, 0, isa::kMaxShift)); }

// floor(v / 2^s) for s >= 0.
inline int128 floor_shift(int128 v, int s) { return v >> s; }

// floor((v + 2^(s-1)) / 2^s): round half up; the rounding term is 0 for s == 0.
inline int128 round_shift(int128 v, int s) {
  return s == 0 ? v : (v + (static_cast<int128>(1) << (s - 1))) >> s;
}

// Saturates an exact value to int64 (only reachable with absurd multipliers;
// every caller clamps the result to an output range inside int32 afterwards,
// so the saturation never changes a stored value).
inline int64_t saturate64(int128 v) {
  return static_cast<int64_t>(
      clamp128(v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
}

inline int64_t load(const uint8_t* p, isa::DType t) {
  switch (t) {
    case isa::DType::kInt8:
      return static_cast<int8_t>(*p);
    case isa::DType::kUInt8:
      return *p;
    case isa::DType::kInt16: {
      int16_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case isa::DType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
  }
  return 0;
}

// Stores v saturated to the range of t.
inline void store(uint8_t* p, isa::DType t, int64_t v) {
  v = clamp(v, dtype_min(t), dtype_max(t));
  switch (t) {
    case isa::DType::kInt8: {
      int8_t x = static_cast<int8_t>(v);
      std::memcpy(p, &x, sizeof x);
      return;
    }
    case isa::DType::kUInt8:
      *p = static_cast<uint8_t>(v);
      return;
    case isa::DType::kInt16: {
      int16_t x = static_cast<int16_t>(v);
      std::memcpy(p, &x, sizeof x);
      return;
    }
    case isa::DType::kInt32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, sizeof x);
      return;
    }
  }
}

// A TensorRef resolved against the bound memory.
class View {
 public:
  View(const Memory& mem, const isa::TensorRef& t)
      : base_(mem.ptr(t)), dtype_(t.dtype), esize_(isa::dtype_size(t.dtype)) {
    for (int k = 0; k < isa::kMaxRank; ++k) {
      dims_[k] = t.dims[k];
      strides_[k] = t.strides[k];
    }
  }

  int64_t dim(int k) const { return dims_[k]; }
  isa::DType dtype() const { return dtype_; }

  // Address of element (i0..i5): base + sum_k(i_k * strides[k]) * dtype_size.
  uint8_t* addr(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0, int64_t i4 = 0,
                int64_t i5 = 0) const {
    const int64_t e = i0 * strides_[0] + i1 * strides_[1] + i2 * strides_[2] + i3 * strides_[3] +
                      i4 * strides_[4] + i5 * strides_[5];
    return base_ + e * esize_;
  }
  int64_t get(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0, int64_t i4 = 0,
              int64_t i5 = 0) const {
    return load(addr(i0, i1, i2, i3, i4, i5), dtype_);
  }
  void set(int64_t v, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0, int64_t i4 = 0,
           int64_t i5 = 0) const {
    store(addr(i0, i1, i2, i3, i4, i5), dtype_, v);
  }

 private:
  uint8_t* base_;
  isa::DType dtype_;
  int64_t esize_;
  int64_t dims_[isa::kMaxRank];
  int64_t strides_[isa::kMaxRank];
};

// Element i of a 1-D constant array of type t.
inline int64_t const_at(const Memory& mem, const isa::ConstRef& c, isa::DType t, int64_t i) {
  return load(mem.ptr(c) + i * isa::dtype_size(t), t);
}

// Calls f(i0, ..., i5) for every index of dims, last dimension fastest.
template <class F>
void for_each_index(const int64_t (&d)[isa::kMaxRank], F&& f) {
  for (int64_t i0 = 0; i0 < d[0]; ++i0)
    for (int64_t i1 = 0; i1 < d[1]; ++i1)
      for (int64_t i2 = 0; i2 < d[2]; ++i2)
        for (int64_t i3 = 0; i3 < d[3]; ++i3)
          for (int64_t i4 = 0; i4 < d[4]; ++i4)
            for (int64_t i5 = 0; i5 < d[5]; ++i5) f(i0, i1, i2, i3, i4, i5);
}

}  // namespace openbpu::sim::ref::detail

#endif  // OPENBPU_BPU_SIM_REFERENCE_REF_UTIL_H_
