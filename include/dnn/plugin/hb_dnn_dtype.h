// SPDX-License-Identifier: Apache-2.0
// OpenBPU libdnn plugin API: element types (C++ only), source-compatible with
// <dnn/plugin/hb_dnn_dtype.h>.
#ifndef DNN_PLUGIN_HB_DNN_DTYPE_H_
#define DNN_PLUGIN_HB_DNN_DTYPE_H_

#include <cstddef>
#include <cstdint>

namespace hobot {
namespace dnn {

enum class TypeFlag : uint32_t {
  kBool = 0U,
  kUInt8 = 1U,
  kInt8 = 2U,
  kUInt16 = 3U,
  kInt16 = 4U,
  kUInt32 = 5U,
  kInt32 = 6U,
  kUInt64 = 7U,
  kInt64 = 8U,
  kFloat16 = 9U,
  kFloat32 = 10U,
  kFloat64 = 11U,
  kUnused
};

extern size_t TypeSize[static_cast<uint32_t>(TypeFlag::kUnused) + 1U];

#define HB_DNN_SIZEOF_TYPE(type) (hobot::dnn::TypeSize[static_cast<uint32_t>(type)])

template <typename T> struct DataType {
  static inline TypeFlag kFlag() { return TypeFlag::kUnused; }
};
template <> struct DataType<bool> {
  static inline TypeFlag kFlag() { return TypeFlag::kBool; }
};
template <> struct DataType<uint8_t> {
  static inline TypeFlag kFlag() { return TypeFlag::kUInt8; }
};
template <> struct DataType<int8_t> {
  static inline TypeFlag kFlag() { return TypeFlag::kInt8; }
};
template <> struct DataType<uint16_t> {
  static inline TypeFlag kFlag() { return TypeFlag::kUInt16; }
};
template <> struct DataType<int16_t> {
  static inline TypeFlag kFlag() { return TypeFlag::kInt16; }
};
template <> struct DataType<uint32_t> {
  static inline TypeFlag kFlag() { return TypeFlag::kUInt32; }
};
template <> struct DataType<int32_t> {
  static inline TypeFlag kFlag() { return TypeFlag::kInt32; }
};
template <> struct DataType<uint64_t> {
  static inline TypeFlag kFlag() { return TypeFlag::kUInt64; }
};
template <> struct DataType<int64_t> {
  static inline TypeFlag kFlag() { return TypeFlag::kInt64; }
};
template <> struct DataType<float> {
  static inline TypeFlag kFlag() { return TypeFlag::kFloat32; }
};
template <> struct DataType<double> {
  static inline TypeFlag kFlag() { return TypeFlag::kFloat64; }
};

}  // namespace dnn
}  // namespace hobot

#endif  // DNN_PLUGIN_HB_DNN_DTYPE_H_
