// SPDX-License-Identifier: Apache-2.0
// OpenBPU libdnn plugin API: n-dimensional array handed to custom CPU layers
// (C++ only), source-compatible with <dnn/plugin/hb_dnn_ndarray.h>.
#ifndef DNN_PLUGIN_HB_DNN_NDARRAY_H_
#define DNN_PLUGIN_HB_DNN_NDARRAY_H_

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hb_dnn_dtype.h"
#include "hb_dnn_tuple.h"

namespace hobot {
namespace dnn {

class NDArray {
 public:
  NDArray() = default;
  // Array owning fresh zeroed storage.
  NDArray(TShape const &shape, TypeFlag dtype)
      : shape_(shape), dtype_(dtype),
        chunk_(std::make_shared<Chunk>(shape.Size() * HB_DNN_SIZEOF_TYPE(dtype))) {}
  // Array viewing external memory (not owned).
  NDArray(void *data, uint64_t phy_addr, TShape const &shape, TypeFlag dtype)
      : shape_(shape), dtype_(dtype), chunk_(std::make_shared<Chunk>(data, phy_addr)) {}

  template <typename T> T *Dptr() const { return reinterpret_cast<T *>(RawData()); }
  void *RawData() const {
    return chunk_ ? static_cast<uint8_t *>(chunk_->data()) + offset_ : nullptr;
  }
  void *VirAddr() const { return RawData(); }
  uint64_t PhyAddr() const { return chunk_ ? chunk_->phy_addr + offset_ : 0U; }
  TShape const &Shape() const { return shape_; }
  uint32_t NDim() const { return shape_.ndim(); }
  uint64_t Size() const { return shape_.Size(); }
  uint64_t ByteSize() const { return Size() * HB_DNN_SIZEOF_TYPE(dtype_); }
  TypeFlag Dtype() const { return dtype_; }
  bool IsNone() const { return chunk_ == nullptr; }
  // Negative axes count from the end.
  int32_t CanonicalAxis(int32_t axis) const {
    return axis < 0 ? axis + static_cast<int32_t>(NDim()) : axis;
  }
  NDArray DeepCopy() const {
    NDArray copy(shape_, dtype_);
    if (!IsNone()) std::memcpy(copy.RawData(), RawData(), ByteSize());
    return copy;
  }
  void SyncCopyFrom(void const *src, uint64_t bytes) { std::memcpy(RawData(), src, bytes); }
  void SyncCopyTo(void *dst, uint64_t bytes) const { std::memcpy(dst, RawData(), bytes); }
  // Writes the raw bytes to a file; returns 0 on success.
  int32_t Save(std::string const &path) const {
    FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return -1;
    size_t n = IsNone() ? 0 : std::fwrite(RawData(), 1, ByteSize(), f);
    std::fclose(f);
    return n == ByteSize() ? 0 : -1;
  }
  void ResetPtr(void *data, uint64_t phy_addr) {
    chunk_ = std::make_shared<Chunk>(data, phy_addr);
    offset_ = 0;
  }
  // Sub-array along the first dimension.
  NDArray operator[](uint32_t index) const {
    NDArray sub = *this;
    std::vector<uint32_t> dims(shape_.begin() + 1, shape_.end());
    sub.shape_ = TShape(dims);
    sub.offset_ = offset_ + index * sub.ByteSize();
    return sub;
  }
  NDArray AsArray(TShape const &shape, TypeFlag dtype) const {
    NDArray view = *this;
    view.shape_ = shape;
    view.dtype_ = dtype;
    return view;
  }
  NDArray Reshape(TShape const &shape) const { return AsArray(shape, dtype_); }
  NDArray Flatten() const { return Reshape(TShape({static_cast<uint32_t>(Size())})); }

 private:
  struct Chunk {
    explicit Chunk(uint64_t bytes) : owned(bytes, 0U), phy_addr(0U) {}
    Chunk(void *p, uint64_t phy) : external(p), phy_addr(phy) {}
    void *data() { return external != nullptr ? external : owned.data(); }
    std::vector<uint8_t> owned;
    void *external = nullptr;
    uint64_t phy_addr;
  };
  TShape shape_;
  TypeFlag dtype_ = TypeFlag::kUnused;
  std::shared_ptr<Chunk> chunk_;
  uint64_t offset_ = 0U;
};

}  // namespace dnn
}  // namespace hobot

#endif  // DNN_PLUGIN_HB_DNN_NDARRAY_H_
