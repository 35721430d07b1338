// SPDX-License-Identifier: Apache-2.0
// Small helpers for the CPU operator unit tests: dense tensors, CpuOpDef
// building and one-call kernel creation/run.
#ifndef OPENBPU_TESTS_CPU_OPS_OP_TEST_UTIL_H_
#define OPENBPU_TESTS_CPU_OPS_OP_TEST_UTIL_H_

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/log.h"
#include "runtime/cpu_ops/cpu_op.h"
#include "runtime/cpu_ops/kernel_util.h"

namespace openbpu::rt::test {

// Silences the error log while expected failures are tested.
class QuietLog {
 public:
  QuietLog() { log::set_level(0); }
  ~QuietLog() { log::set_level(3); }
};

// A tensor with its own storage (dense unless strides/layout are set).
struct T {
  TensorDesc desc;
  std::vector<uint8_t> bytes;

  T() = default;
  T(int32_t type, const std::vector<int64_t>& dims) {
    desc.data_type = type;
    desc.layout = kLayoutNone;
    for (int64_t d : dims) desc.valid.push_back(static_cast<int32_t>(d));
    desc.aligned = desc.valid;
    desc.aligned_byte_size = count_of(dims) * element_size(type);
    bytes.assign(static_cast<size_t>(desc.aligned_byte_size) + 16, 0);
  }
  template <class V>
  V* as() {
    return reinterpret_cast<V*>(bytes.data());
  }
  template <class V>
  const V* as() const {
    return reinterpret_cast<const V*>(bytes.data());
  }
  int64_t count() const { return desc.valid_elements(); }
  CpuTensor cpu() { return CpuTensor{&desc, bytes.data()}; }
  std::vector<float> floats() const {
    return std::vector<float>(as<float>(), as<float>() + count());
  }
};

inline T f32(const std::vector<int64_t>& dims, const std::vector<float>& v = {}) {
  T t(kF32, dims);
  if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), v.size() * 4);
  return t;
}

inline T i64(const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  T t(kS64, dims);
  if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), v.size() * 8);
  return t;
}

inline void fill_random(T* t, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t->count(); ++i) t->as<float>()[i] = d(rng);
}

inline CpuOpDef op(const std::string& type, const std::string& name = "n0") {
  CpuOpDef d;
  d.name = name;
  d.op_type = type;
  return d;
}

inline void set_int(CpuOpDef* d, const std::string& k, int64_t v) {
  AttrValue a;
  a.type = AttrValue::kInt;
  a.i = v;
  d->attrs.set(k, a);
}
inline void set_float(CpuOpDef* d, const std::string& k, float v) {
  AttrValue a;
  a.type = AttrValue::kFloat;
  a.f = v;
  d->attrs.set(k, a);
}
inline void set_ints(CpuOpDef* d, const std::string& k, const std::vector<int64_t>& v) {
  AttrValue a;
  a.type = AttrValue::kInts;
  a.ints = v;
  d->attrs.set(k, a);
}
inline void set_string(CpuOpDef* d, const std::string& k, const std::string& v) {
  AttrValue a;
  a.type = AttrValue::kString;
  a.s = v;
  d->attrs.set(k, a);
}

inline std::vector<const TensorDesc*> descs(const std::vector<T*>& ts) {
  std::vector<const TensorDesc*> v;
  for (T* t : ts) v.push_back(t ? &t->desc : nullptr);
  return v;
}
inline std::vector<CpuTensor> tensors(const std::vector<T*>& ts) {
  std::vector<CpuTensor> v;
  for (T* t : ts) v.push_back(t ? t->cpu() : CpuTensor{});
  return v;
}

inline Status create(const CpuOpDef& d, const std::vector<T*>& in, const std::vector<T*>& out,
                     std::unique_ptr<CpuKernel>* k) {
  return create_cpu_kernel(d, descs(in), descs(out), k);
}

// Creates and runs; returns the first error.
inline Status run_op(const CpuOpDef& d, const std::vector<T*>& in, const std::vector<T*>& out) {
  std::unique_ptr<CpuKernel> k;
  Status s = create(d, in, out, &k);
  if (!s.ok()) return s;
  return k->run(tensors(in), tensors(out));
}

}  // namespace openbpu::rt::test

#endif  // OPENBPU_TESTS_CPU_OPS_OP_TEST_UTIL_H_
