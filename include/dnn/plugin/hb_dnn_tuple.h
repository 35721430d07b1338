// SPDX-License-Identifier: Apache-2.0
// OpenBPU libdnn plugin API: small vector and shape (C++ only),
// source-compatible with <dnn/plugin/hb_dnn_tuple.h>.
#ifndef DNN_PLUGIN_HB_DNN_TUPLE_H_
#define DNN_PLUGIN_HB_DNN_TUPLE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace hobot {
namespace dnn {

// Small vector with 4 inline slots.
template <typename T> class Tuple {
 public:
  Tuple() = default;
  Tuple(std::initializer_list<T> init) { Assign(init.begin(), init.end()); }
  explicit Tuple(std::vector<T> const &v) { Assign(v.begin(), v.end()); }
  Tuple(Tuple const &other) { Assign(other.begin(), other.end()); }
  Tuple &operator=(Tuple const &other) {
    if (this != &other) Assign(other.begin(), other.end());
    return *this;
  }
  virtual ~Tuple() = default;

  template <typename It> void Assign(It first, It last) {
    heap_.assign(first, last);
    ndim_ = static_cast<uint32_t>(heap_.size());
    for (uint32_t i = 0; i < ndim_ && i < kStackCache; ++i) stack_[i] = heap_[i];
    if (ndim_ <= kStackCache) heap_.clear();
  }
  uint32_t ndim() const { return ndim_; }
  T *begin() { return ndim_ <= kStackCache ? stack_ : heap_.data(); }
  T const *begin() const { return ndim_ <= kStackCache ? stack_ : heap_.data(); }
  T *end() { return begin() + ndim_; }
  T const *end() const { return begin() + ndim_; }
  T &operator[](uint32_t i) { return begin()[i]; }
  T const &operator[](uint32_t i) const { return begin()[i]; }
  bool operator==(Tuple const &o) const {
    if (ndim_ != o.ndim_) return false;
    for (uint32_t i = 0; i < ndim_; ++i)
      if ((*this)[i] != o[i]) return false;
    return true;
  }
  bool operator!=(Tuple const &o) const { return !(*this == o); }

 protected:
  static constexpr uint32_t kStackCache = 4U;
  uint32_t ndim_ = 0U;
  T stack_[kStackCache] = {};
  std::vector<T> heap_;
};

class TShape : public Tuple<uint32_t> {
 public:
  TShape() = default;
  TShape(std::initializer_list<uint32_t> init) : Tuple<uint32_t>(init) {}
  explicit TShape(std::vector<uint32_t> const &v) : Tuple<uint32_t>(v) {}
  // Number of elements (1 for a 0-d shape).
  uint64_t Size() const {
    uint64_t n = 1U;
    for (uint32_t d : *this) n *= d;
    return n;
  }
  // "(d0,d1,...)"
  std::string Str() const {
    std::string s = "(";
    for (uint32_t i = 0; i < ndim(); ++i) {
      if (i != 0U) s += ",";
      s += std::to_string((*this)[i]);
    }
    return s + ")";
  }
};

}  // namespace dnn
}  // namespace hobot

#endif  // DNN_PLUGIN_HB_DNN_TUPLE_H_
