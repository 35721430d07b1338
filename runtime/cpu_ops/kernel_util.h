// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the CPU operator kernels: error messages naming the node,
// the opset attribute, optional inputs, dense staging of tensors, exact
// reading of small integer inputs, type dispatch and numpy broadcasting.
//
// Conventions every kernel follows (see docs/cpu_ops.md):
//  * An absent optional input or output (ONNX name "") is a nullptr
//    TensorDesc at create time and a CpuTensor whose desc is nullptr at run
//    time (a default-constructed TensorDesc is accepted too, see
//    is_absent); trailing absent ones may be left out of the vectors.
//  * Output descriptions carry the output shapes (the converter's shape
//    inference / the test data provide them); kernels check them against
//    what they can derive at create time and compute into them at run time.
//  * Kernels compute on dense row-major data. Tensors that are not dense in
//    their logical (ONNX) order, or whose type is float16, are staged through
//    a dense copy (float16 is computed in float32).
#ifndef OPENBPU_RUNTIME_CPU_OPS_KERNEL_UTIL_H_
#define OPENBPU_RUNTIME_CPU_OPS_KERNEL_UTIL_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::rt {

using Dims = std::vector<int64_t>;

// The int attribute the converter and the backend test runner set on every
// ONNX-domain node: the model's default-domain opset. It selects semantics
// that changed without a visible attribute/input difference (Softmax,
// LogSoftmax and Hardmax axis handling before opset 13, Resize opset 10).
// When absent the latest semantics apply.
constexpr const char* kOpsetAttr = "__opset";
constexpr int64_t kLatestOpset = 19;
inline int64_t opset_of(const CpuOpDef& def) { return def.attrs.get_int(kOpsetAttr, kLatestOpset); }

// kInvalidModel error "node 'name' (OpType): msg".
Status op_error(const CpuOpDef& def, const std::string& msg);

// Absent: nullptr, or a default-constructed TensorDesc (rank 0 with no
// bytes - no real tensor looks like that, a real scalar has one element),
// which some callers pass for ONNX "" inputs/outputs.
inline bool is_absent(const TensorDesc* d) {
  return d == nullptr || (d->valid.empty() && d->aligned_byte_size == 0);
}
inline bool has_input(const std::vector<const TensorDesc*>& v, size_t i) {
  return i < v.size() && !is_absent(v[i]);
}
inline bool has_input(const std::vector<CpuTensor>& v, size_t i) {
  return i < v.size() && !is_absent(v[i].desc);
}
// Number of inputs/outputs up to the last present one.
size_t present_count(const std::vector<const TensorDesc*>& v);
// True when every entry is present (present_count alone misses an absent one
// before the last present one).
bool all_present(const std::vector<const TensorDesc*>& v);

// Logical (ONNX-order) dimensions of a tensor.
Dims dims_of(const TensorDesc& t);
int64_t count_of(const Dims& d);
// Dense row-major element strides of a shape.
Dims elem_strides(const Dims& d);
std::string dims_str(const Dims& d);

bool is_float_type(int32_t t);    // F16, F32, F64
bool is_int_type(int32_t t);      // S8..U64 (not bool)
bool is_numeric_type(int32_t t);  // float or int (not bool, not image types)
// Type a kernel computes in for data of type t (float16 -> float32).
inline int32_t compute_type(int32_t t) { return t == kF16 ? kF32 : t; }

// Saturating conversion of a double to an integer type, NaN to 0. Compares
// against exact powers of two: double(INT64_MAX) rounds up to 2^63, so
// clamping to it first would still convert out of range.
template <class T>
T saturate_int(double v) {
  static_assert(std::is_integral_v<T>, "integer types only");
  if (std::isnan(v)) return T(0);
  if (v >= std::ldexp(1.0, std::numeric_limits<T>::digits)) return std::numeric_limits<T>::max();
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  return static_cast<T>(v);
}

// Normalizes an axis from [-rank, rank) to [0, rank); false if out of range.
bool norm_axis(int64_t axis, int64_t rank, int64_t* out);

// True when the tensor's logical view is dense row-major.
bool is_dense(const TensorDesc& t);

// Dense row-major data of an input in `type` (by value conversion): the
// tensor's own bytes when already so, a staged copy otherwise.
class InBuf {
 public:
  InBuf(const CpuTensor& t, int32_t type);
  const uint8_t* data() const { return ptr_; }
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(ptr_);
  }

 private:
  const uint8_t* ptr_ = nullptr;
  std::vector<uint8_t> copy_;
};

// Dense row-major output buffer in `type`; commit() copies staged results
// into the tensor (no-op when the kernel wrote the tensor directly).
class OutBuf {
 public:
  OutBuf(const CpuTensor& t, int32_t type);
  uint8_t* data() { return ptr_; }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(ptr_);
  }
  void commit();

 private:
  const CpuTensor* t_;
  int32_t type_;
  uint8_t* ptr_ = nullptr;
  std::vector<uint8_t> copy_;
};

// Exact element reads (integers without going through double).
int64_t load_int(int32_t type, const uint8_t* p);
void store_int(int32_t type, int64_t v, uint8_t* p);
// All elements of a (small) tensor in logical order.
std::vector<int64_t> read_ints(const CpuTensor& t);
std::vector<double> read_doubles(const CpuTensor& t);

// Calls f(T{}) with the C++ type of a numeric data type; false for others.
// float16 is not listed: kernels see it staged as float32.
template <class F>
bool visit_numeric(int32_t t, F&& f) {
  switch (t) {
    case kF32:
      f(float());
      return true;
    case kF64:
      f(double());
      return true;
    case kS8:
      f(int8_t());
      return true;
    case kU8:
      f(uint8_t());
      return true;
    case kS16:
      f(int16_t());
      return true;
    case kU16:
      f(uint16_t());
      return true;
    case kS32:
      f(int32_t());
      return true;
    case kU32:
      f(uint32_t());
      return true;
    case kS64:
      f(int64_t());
      return true;
    case kU64:
      f(uint64_t());
      return true;
    default:
      return false;
  }
}
template <class F>
bool visit_float(int32_t t, F&& f) {
  switch (t) {
    case kF32:
      f(float());
      return true;
    case kF64:
      f(double());
      return true;
    default:
      return false;
  }
}

// --- numpy broadcasting ----------------------------------------------------

// Output shape of numpy-broadcasting shapes; false if incompatible.
bool broadcast_shape(const std::vector<Dims>& shapes, Dims* out);
// Element strides of `in` over `out` (right-aligned, 0 where broadcast);
// false if `in` does not broadcast to `out`.
bool broadcast_strides(const Dims& in, const Dims& out, Dims* strides);

// Element strides over `dims` into the tensor that keeps the dimensions not
// marked in `reduce` (dense over those, 0 on the reduced ones).
Dims reduced_strides(const Dims& dims, const std::vector<bool>& reduce);

// A loop over `dims` with K operands (element strides each), collapsed so
// that the innermost loop is as long as possible.
template <size_t K>
struct BroadcastLoop {
  Dims dims;                    // outer .. inner, at least one entry
  std::array<Dims, K> strides;  // per operand, per dim

  void init(const Dims& d, const std::array<Dims, K>& s) {
    dims.clear();
    for (auto& v : strides) v.clear();
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] == 1) continue;
      if (!dims.empty()) {
        bool merge = true;
        for (size_t k = 0; k < K; ++k) merge = merge && strides[k].back() == s[k][i] * d[i];
        if (merge) {
          dims.back() *= d[i];
          for (size_t k = 0; k < K; ++k) strides[k].back() = s[k][i];
          continue;
        }
      }
      dims.push_back(d[i]);
      for (size_t k = 0; k < K; ++k) strides[k].push_back(s[k][i]);
    }
    if (dims.empty()) {
      dims.push_back(1);
      for (auto& v : strides) v.push_back(0);
    }
    for (int64_t x : d)
      if (x == 0) dims.assign(1, 0);
  }

  // f(const std::array<int64_t, K>& offsets, int64_t n, const std::array<int64_t, K>& steps)
  // for every innermost row.
  template <class F>
  void run(F&& f) const {
    const size_t r = dims.size();
    const int64_t n = dims[r - 1];
    if (n == 0) return;
    std::array<int64_t, K> steps, off{};
    for (size_t k = 0; k < K; ++k) steps[k] = strides[k][r - 1];
    int64_t outer = 1;
    for (size_t i = 0; i + 1 < r; ++i) outer *= dims[i];
    std::vector<int64_t> idx(r, 0);
    for (int64_t o = 0; o < outer; ++o) {
      f(off, n, steps);
      for (size_t i = r - 1; i-- > 0;) {
        for (size_t k = 0; k < K; ++k) off[k] += strides[k][i];
        if (++idx[i] < dims[i]) break;
        for (size_t k = 0; k < K; ++k) off[k] -= strides[k][i] * dims[i];
        idx[i] = 0;
      }
    }
  }
};

// Strided element copy: for every row of `loop` (operand 0 = dense output,
// operand 1 = input element strides, possibly 0 or negative, relative to
// `in`), out[...] = in[...]; elements are `esize` bytes.
void strided_copy(const BroadcastLoop<2>& loop, int esize, const uint8_t* in, uint8_t* out);

// Index-map copy over a dense output of `out_dims`: element (o_0..o_k) is
// in[maps[0][o_0], ..., maps[k][o_k]] of the dense input `in_dims`, or the
// `fill` element when any map entry is -1. Serves Pad, Tile and Slice.
void map_copy(const Dims& in_dims, const Dims& out_dims,
              const std::vector<std::vector<int64_t>>& maps, int esize, const uint8_t* in,
              uint8_t* out, const uint8_t* fill);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CPU_OPS_KERNEL_UTIL_H_
