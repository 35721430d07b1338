// SPDX-License-Identifier: Apache-2.0
// Tensor descriptions as the runtime uses them, and the logical view that CPU
// operators work on. A TensorDesc lists shapes in its layout's order (NHWC:
// N,H,W,C), like hbDNNTensorProperties. A LogicalView maps the ONNX-order
// (N,C,H,W for 4-D layouts, the listed order otherwise) coordinates of the
// valid region to byte offsets.
#ifndef OPENBPU_RUNTIME_CORE_TENSOR_H_
#define OPENBPU_RUNTIME_CORE_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::rt {

// hbDNNDataType values.
enum DataType : int32_t {
  kImgY = 0, kImgNV12 = 1, kImgNV12Separate = 2, kImgYUV444 = 3, kImgRGB = 4, kImgBGR = 5,
  kS4 = 6, kU4 = 7, kS8 = 8, kU8 = 9, kF16 = 10, kS16 = 11, kU16 = 12, kF32 = 13, kS32 = 14,
  kU32 = 15, kF64 = 16, kS64 = 17, kU64 = 18,
  // Internal only (CPU operators; the value J6-era headers give BOOL8).
  kBool8 = 19,
};
enum Layout : int32_t { kNHWC = 0, kNCHW = 2, kLayoutNone = 255 };
enum QuantType : int32_t { kQuantNone = 0, kQuantShift = 1, kQuantScale = 2 };

int element_size(int32_t data_type);
bool is_image_type(int32_t data_type);
const char* data_type_name(int32_t data_type);   // "HB_DNN_TENSOR_TYPE_F32", ...
const char* layout_name(int32_t layout);         // "HB_DNN_LAYOUT_NCHW", ...

struct QuantInfo {
  int32_t type = kQuantNone;
  int32_t axis = 0;
  std::vector<float> scales;
  std::vector<uint8_t> shifts;
  std::vector<int8_t> zero_points;
};

struct TensorDesc {
  std::string name;
  int32_t data_type = kF32;
  int32_t layout = kLayoutNone;
  std::vector<int32_t> valid;    // layout order
  std::vector<int32_t> aligned;  // layout order
  std::vector<int64_t> strides;  // bytes, layout order; 0 for image inputs
  int64_t aligned_byte_size = 0;
  QuantInfo quant;

  int rank() const { return static_cast<int>(valid.size()); }
  int64_t valid_elements() const;
  // Byte strides in layout order (from `strides`, or dense over `aligned`).
  std::vector<int64_t> byte_strides() const;
};

// Dense strides (bytes) of a shape.
std::vector<int64_t> dense_strides(const std::vector<int32_t>& shape, int esize);

// The name output k of an ONNX node takes in per-layer dumps
// (hrt_model_exec --dump_intermediate, hb_mapper infer): the node's name,
// "_<k>" appended for k > 0, with '/', '\', ':' and control characters as '_'.
std::string layer_dump_name(const std::string& node, size_t output);

struct LogicalView {
  std::vector<int64_t> dims;     // logical (ONNX) order, valid region
  std::vector<int64_t> strides;  // bytes per logical dim
  int32_t data_type = kF32;
  int64_t elements() const;
};

// Logical view of a tensor: for 4-D NHWC tensors the dims are permuted to
// N,C,H,W; otherwise the listed order is the logical order.
LogicalView logical_view(const TensorDesc& t);
// The logical position of layout dimension `axis` (-1 when out of range).
int logical_axis(const TensorDesc& t, int axis);

// Copies (and converts between numeric types by value, saturating for
// integers) every element of `src` into `dst` in logical row-major order. The
// two views must have the same number of elements (shapes may differ: this is
// also reshape).
void copy_elements(const LogicalView& src, const uint8_t* src_data, const LogicalView& dst,
                   uint8_t* dst_data);

// Reads/writes one element as double (any numeric data type).
double load_as_double(int32_t data_type, const uint8_t* p);
void store_from_double(int32_t data_type, double v, uint8_t* p);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CORE_TENSOR_H_
