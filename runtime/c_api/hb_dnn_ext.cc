// SPDX-License-Identifier: Apache-2.0
// dnn/hb_dnn_ext.h: extra model queries and the layout / padding /
// quantization helpers.
#include "dnn/hb_dnn_ext.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dnn/hb_dnn_status.h"
#include "runtime/c_api/api.h"
#include "runtime/c_api/handles.h"
#include "runtime/device/device_manager.h"
#include "runtime/engine/engine.h"

using openbpu::rt::Model;
using openbpu::rt::capi::fail;
using openbpu::rt::capi::model_of;

namespace {

bool shape4(const hbDNNTensorShape& s) {
  if (s.numDimensions != 4) return false;
  for (int i = 0; i < 4; ++i)
    if (s.dimensionSize[i] <= 0) return false;
  return true;
}

int64_t elements(const hbDNNTensorShape& s) {
  int64_t n = 1;
  for (int i = 0; i < s.numDimensions; ++i) n *= s.dimensionSize[i];
  return n;
}

int esize(int32_t t) { return openbpu::rt::element_size(t); }

void swap_bytes(uint8_t* p, int n) {
  for (int i = 0; i < n / 2; ++i) std::swap(p[i], p[n - 1 - i]);
}

}  // namespace

OBPU_API int32_t hbDNNGetInputSource(int32_t* inputSource, hbDNNHandle_t dnnHandle, int32_t inputIndex) {
  if (inputSource == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputSource: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNGetInputSource: invalid model handle");
  if (inputIndex < 0 || inputIndex >= static_cast<int32_t>(m->inputs.size()))
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputSource: input index out of range");
  *inputSource = m->inputs[static_cast<size_t>(inputIndex)].source;
  return HB_DNN_SUCCESS;
}

namespace {

int32_t give_desc(const std::string& s, char const** desc, uint32_t* size, int32_t* type) {
  *desc = s.empty() ? nullptr : s.c_str();
  *size = static_cast<uint32_t>(s.size());
  *type = s.empty() ? HB_DNN_DESC_TYPE_UNKNOWN : HB_DNN_DESC_TYPE_STRING;
  return HB_DNN_SUCCESS;
}

}  // namespace

OBPU_API int32_t hbDNNGetInputDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle,
                                   int32_t inputIndex) {
  if (desc == nullptr || size == nullptr || type == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputDesc: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNGetInputDesc: invalid model handle");
  if (inputIndex < 0 || inputIndex >= static_cast<int32_t>(m->inputs.size()))
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetInputDesc: input index out of range");
  return give_desc(m->inputs[static_cast<size_t>(inputIndex)].desc, desc, size, type);
}

OBPU_API int32_t hbDNNGetOutputDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle,
                                    int32_t outputIndex) {
  if (desc == nullptr || size == nullptr || type == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputDesc: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNGetOutputDesc: invalid model handle");
  if (outputIndex < 0 || outputIndex >= static_cast<int32_t>(m->outputs.size()))
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputDesc: output index out of range");
  return give_desc(m->outputs[static_cast<size_t>(outputIndex)].desc, desc, size, type);
}

OBPU_API int32_t hbDNNGetModelDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle) {
  if (desc == nullptr || size == nullptr || type == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetModelDesc: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNGetModelDesc: invalid model handle");
  return give_desc(m->desc, desc, size, type);
}

OBPU_API int32_t hbDNNGetOutputOperatorType(int32_t* operatorType, hbDNNHandle_t dnnHandle, int32_t outputIndex) {
  if (operatorType == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputOperatorType: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNGetOutputOperatorType: invalid model handle");
  if (outputIndex < 0 || outputIndex >= static_cast<int32_t>(m->outputs.size()))
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetOutputOperatorType: output index out of range");
  *operatorType = m->outputs[static_cast<size_t>(outputIndex)].operator_type;
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetEstimateLatency(int32_t* estimateLatency, hbDNNHandle_t dnnHandle) {
  if (estimateLatency == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetEstimateLatency: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNGetEstimateLatency: invalid model handle");
  *estimateLatency = static_cast<int32_t>(m->estimated_latency_us);  // <= INT32_MAX (loader)
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetTaskEstimateTime(int32_t* estimateTime, hbDNNTaskHandle_t taskHandle) {
  if (estimateTime == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetTaskEstimateTime: NULL argument");
  auto task = taskHandle == nullptr ? nullptr : openbpu::rt::capi::Registry::get().task(taskHandle);
  if (!task) return fail(HB_DNN_INVALID_TASK_HANDLE, "hbDNNGetTaskEstimateTime: invalid task handle");
  *estimateTime = static_cast<int32_t>(openbpu::rt::task_estimate_us(task.get()));
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetTaskEstimateStartTime(int32_t* estimateTime, hbDNNInferCtrlParam* inferCtrlParam) {
  if (estimateTime == nullptr || inferCtrlParam == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetTaskEstimateStartTime: NULL argument");
  if (inferCtrlParam->bpuCoreId < 0) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetTaskEstimateStartTime: bad core");
  openbpu::drv::Device* dev = openbpu::rt::current_device();
  // The same core mask rule as hbDNNInfer (once a model has fixed the platform).
  if (dev != nullptr) {
    const openbpu::rt::Status st =
        openbpu::rt::check_core_mask(*dev, static_cast<uint32_t>(inferCtrlParam->bpuCoreId));
    if (!st.ok()) return st.code();
  }
  *estimateTime = dev ? static_cast<int32_t>(dev->queued_us(static_cast<uint32_t>(inferCtrlParam->bpuCoreId))) : 0;
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetModelTag(char const** tag, hbDNNHandle_t dnnHandle) {
  if (tag == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetModelTag: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNGetModelTag: invalid model handle");
  *tag = m->tag.c_str();
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNUnquantizeByScale(float* output, int32_t inputDataType, hbDNNTensorShape inputShape,
                                        const float* scales, const void* input) {
  if (output == nullptr || scales == nullptr || input == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNUnquantizeByScale: NULL argument");
  if (inputDataType != HB_DNN_TENSOR_TYPE_S8 && inputDataType != HB_DNN_TENSOR_TYPE_S16 &&
      inputDataType != HB_DNN_TENSOR_TYPE_S32)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNUnquantizeByScale: input must be S8, S16 or S32");
  if (inputShape.numDimensions < 1 || inputShape.numDimensions > HB_DNN_TENSOR_MAX_DIMENSIONS)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNUnquantizeByScale: bad shape");
  for (int i = 0; i < inputShape.numDimensions; ++i)
    if (inputShape.dimensionSize[i] <= 0) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNUnquantizeByScale: bad shape");
  const int64_t n = elements(inputShape);
  const int64_t c = inputShape.dimensionSize[inputShape.numDimensions - 1];
  const auto* in = static_cast<const uint8_t*>(input);
  const int es = esize(inputDataType);
  for (int64_t i = 0; i < n; ++i)
    output[i] = static_cast<float>(openbpu::rt::load_as_double(inputDataType, in + i * es)) * scales[i % c];
  return HB_DNN_SUCCESS;
}

OBPU_API int32_t hbDNNGetLayoutName(char const** name, int32_t layout) {
  if (name == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetLayoutName: NULL argument");
  switch (layout) {
    case HB_DNN_LAYOUT_NHWC: *name = "NHWC"; return HB_DNN_SUCCESS;
    case HB_DNN_LAYOUT_NCHW: *name = "NCHW"; return HB_DNN_SUCCESS;
    case HB_DNN_LAYOUT_NONE: *name = "NONE"; return HB_DNN_SUCCESS;
    case HB_DNN_LAYOUT_NHCW_NATIVE: *name = "NHCW_NATIVE"; return HB_DNN_SUCCESS;
    default: return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNGetLayoutName: unknown layout " + std::to_string(layout));
  }
}

namespace {

// Element (n,c,h,w) offset in elements of a 4-D tensor of `layout` whose shape
// is given in that layout's order.
int64_t offset4(int32_t layout, const int32_t* d, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (layout == HB_DNN_LAYOUT_NHWC) return ((n * d[1] + h) * d[2] + w) * d[3] + c;
  return ((n * d[1] + c) * d[2] + h) * d[3] + w;
}

int32_t convert_roi(void* output, int32_t outputLayout, const void* input, int32_t inputLayout, int32_t dataType,
                    hbDNNTensorShape inputShape, bool endian, const int32_t coord[4], const int32_t size[4]) {
  if (output == nullptr || input == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertLayout: NULL argument");
  const bool layouts_ok = (inputLayout == HB_DNN_LAYOUT_NHWC || inputLayout == HB_DNN_LAYOUT_NCHW) &&
                          (outputLayout == HB_DNN_LAYOUT_NHWC || outputLayout == HB_DNN_LAYOUT_NCHW);
  if (!layouts_ok)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertLayout: only NHWC and NCHW are supported (no native layouts)");
  const int es = esize(dataType);
  if (es == 0 || dataType >= HB_DNN_TENSOR_TYPE_MAX) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertLayout: bad data type");
  if (!shape4(inputShape)) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertLayout: shape must be 4-D and positive");
  const int32_t* d = inputShape.dimensionSize;
  // logical N,C,H,W sizes of the input
  const int64_t N = d[0], C = inputLayout == HB_DNN_LAYOUT_NHWC ? d[3] : d[1];
  const int64_t H = inputLayout == HB_DNN_LAYOUT_NHWC ? d[1] : d[2];
  const int64_t W = inputLayout == HB_DNN_LAYOUT_NHWC ? d[2] : d[3];
  // coord/size in the input layout's order -> logical
  auto lg = [&](const int32_t v[4], int64_t* n, int64_t* c, int64_t* h, int64_t* w) {
    *n = v[0];
    if (inputLayout == HB_DNN_LAYOUT_NHWC) *h = v[1], *w = v[2], *c = v[3];
    else *c = v[1], *h = v[2], *w = v[3];
  };
  int64_t n0, c0, h0, w0, nn, cc, hh, ww;
  lg(coord, &n0, &c0, &h0, &w0);
  lg(size, &nn, &cc, &hh, &ww);
  if (n0 < 0 || c0 < 0 || h0 < 0 || w0 < 0 || nn <= 0 || cc <= 0 || hh <= 0 || ww <= 0 || n0 + nn > N ||
      c0 + cc > C || h0 + hh > H || w0 + ww > W)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertLayoutRoi: region outside the tensor");
  int32_t od[4];
  if (outputLayout == HB_DNN_LAYOUT_NHWC) od[0] = static_cast<int32_t>(nn), od[1] = static_cast<int32_t>(hh), od[2] = static_cast<int32_t>(ww), od[3] = static_cast<int32_t>(cc);
  else od[0] = static_cast<int32_t>(nn), od[1] = static_cast<int32_t>(cc), od[2] = static_cast<int32_t>(hh), od[3] = static_cast<int32_t>(ww);
  const auto* in = static_cast<const uint8_t*>(input);
  auto* out = static_cast<uint8_t*>(output);
  for (int64_t n = 0; n < nn; ++n)
    for (int64_t c = 0; c < cc; ++c)
      for (int64_t h = 0; h < hh; ++h)
        for (int64_t w = 0; w < ww; ++w) {
          uint8_t* dst = out + offset4(outputLayout, od, n, c, h, w) * es;
          std::memcpy(dst, in + offset4(inputLayout, d, n0 + n, c0 + c, h0 + h, w0 + w) * es, static_cast<size_t>(es));
          if (endian) swap_bytes(dst, es);
        }
  return HB_DNN_SUCCESS;
}

}  // namespace

OBPU_API int32_t hbDNNConvertLayout(void* output, int32_t outputLayout, const void* input, int32_t inputLayout,
                                    int32_t dataType, hbDNNTensorShape inputShape, bool convertEndianness) {
  const int32_t zero[4] = {0, 0, 0, 0};
  return convert_roi(output, outputLayout, input, inputLayout, dataType, inputShape, convertEndianness, zero,
                     inputShape.dimensionSize);
}

OBPU_API int32_t hbDNNConvertLayoutRoi(void* output, int32_t outputLayout, const void* input, int32_t inputLayout,
                                       int32_t dataType, hbDNNTensorShape inputShape, bool convertEndianness,
                                       hbDNNDimension coord, hbDNNDimension size) {
  if (coord.numDimensions != 4 || size.numDimensions != 4)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertLayoutRoi: coord and size must be 4-D");
  return convert_roi(output, outputLayout, input, inputLayout, dataType, inputShape, convertEndianness,
                     coord.dimensionSize, size.dimensionSize);
}

OBPU_API int32_t hbDNNConvertLayoutToNative1HW1(void*, const void*, int32_t, int32_t, hbDNNTensorShape, bool,
                                                uint32_t, uint32_t) {
  return fail(HB_DNN_INVALID_ARGUMENT,
              "hbDNNConvertLayoutToNative1HW1: the OpenBPU BPU has no native 1HW1 layout (its native layout is NHWC)");
}

OBPU_API int32_t hbDNNConvertLayoutToNative111C(void*, const void*, int32_t, int32_t, hbDNNTensorShape, bool,
                                                uint32_t, uint32_t, uint32_t) {
  return fail(HB_DNN_INVALID_ARGUMENT,
              "hbDNNConvertLayoutToNative111C: the OpenBPU BPU has no native 111C layout (its native layout is NHWC)");
}

OBPU_API int32_t hbDNNConvertLayoutToNative1111(void*, const void*, int32_t, int32_t, hbDNNTensorShape, bool,
                                                hbDNNDimension) {
  return fail(HB_DNN_INVALID_ARGUMENT,
              "hbDNNConvertLayoutToNative1111: the OpenBPU BPU has no native 1111 layout (its native layout is NHWC)");
}

namespace {

// Copies between a tight buffer and a strided one; to_strided selects the direction.
int32_t pad_with_stride(void* output, const void* input, uint32_t dimNum, const uint32_t* dim,
                        const int32_t* stride, uint32_t elementSize, bool to_strided, const char* fn) {
  if (output == nullptr || input == nullptr || dim == nullptr || stride == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, std::string(fn) + ": NULL argument");
  if (dimNum == 0 || dimNum > HB_DNN_TENSOR_MAX_DIMENSIONS || elementSize == 0 || elementSize > 8)
    return fail(HB_DNN_INVALID_ARGUMENT, std::string(fn) + ": bad dimension count or element size");
  for (uint32_t i = 0; i < dimNum; ++i)
    if (dim[i] == 0 || stride[i] < 0) return fail(HB_DNN_INVALID_ARGUMENT, std::string(fn) + ": bad dim or stride");
  uint64_t total = 1;
  for (uint32_t i = 0; i < dimNum; ++i) total *= dim[i];
  std::vector<uint32_t> idx(dimNum, 0);
  const auto* in = static_cast<const uint8_t*>(input);
  auto* out = static_cast<uint8_t*>(output);
  for (uint64_t e = 0; e < total; ++e) {
    uint64_t s = 0;
    for (uint32_t k = 0; k < dimNum; ++k) s += static_cast<uint64_t>(idx[k]) * static_cast<uint64_t>(stride[k]);
    const uint64_t t = e * elementSize;
    if (to_strided) std::memcpy(out + s, in + t, elementSize);
    else std::memcpy(out + t, in + s, elementSize);
    for (uint32_t k = dimNum; k-- > 0;) {
      if (++idx[k] < dim[k]) break;
      idx[k] = 0;
    }
  }
  return HB_DNN_SUCCESS;
}

int32_t pad4(void* output, hbDNNTensorShape outputShape, const void* input, hbDNNTensorShape inputShape,
             int32_t dataType, bool add, const char* fn) {
  if (output == nullptr || input == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, std::string(fn) + ": NULL argument");
  const int es = esize(dataType);
  if (es == 0 || !shape4(outputShape) || !shape4(inputShape))
    return fail(HB_DNN_INVALID_ARGUMENT, std::string(fn) + ": 4-D shapes and a known data type are required");
  const hbDNNTensorShape& big = add ? outputShape : inputShape;
  const hbDNNTensorShape& small = add ? inputShape : outputShape;
  for (int i = 0; i < 4; ++i)
    if (small.dimensionSize[i] > big.dimensionSize[i])
      return fail(HB_DNN_INVALID_ARGUMENT, std::string(fn) + ": the padded shape is smaller than the valid one");
  uint32_t dim[4];
  int32_t stride[4];
  int64_t acc = es;
  for (int i = 3; i >= 0; --i) {
    dim[i] = static_cast<uint32_t>(small.dimensionSize[i]);
    stride[i] = static_cast<int32_t>(acc);
    acc *= big.dimensionSize[i];
  }
  if (add) std::memset(output, 0, static_cast<size_t>(elements(big) * es));
  return pad_with_stride(output, input, 4, dim, stride, static_cast<uint32_t>(es), add, fn);
}

}  // namespace

OBPU_API int32_t hbDNNAddPaddingWithStride(void* output, void const* input, uint32_t dimNum, const uint32_t* dim,
                                           const int32_t* stride, uint32_t elementSize) {
  return pad_with_stride(output, input, dimNum, dim, stride, elementSize, true, "hbDNNAddPaddingWithStride");
}

OBPU_API int32_t hbDNNRemovePaddingWithStride(void* output, void const* input, uint32_t dimNum, const uint32_t* dim,
                                              const int32_t* stride, uint32_t elementSize) {
  return pad_with_stride(output, input, dimNum, dim, stride, elementSize, false, "hbDNNRemovePaddingWithStride");
}

OBPU_API int32_t hbDNNAddPadding(void* output, hbDNNTensorShape outputShape, void const* input,
                                 hbDNNTensorShape inputShape, int32_t dataType) {
  return pad4(output, outputShape, input, inputShape, dataType, true, "hbDNNAddPadding");
}

OBPU_API int32_t hbDNNRemovePadding(void* output, hbDNNTensorShape outputShape, void const* input,
                                    hbDNNTensorShape inputShape, int32_t dataType) {
  return pad4(output, outputShape, input, inputShape, dataType, false, "hbDNNRemovePadding");
}

OBPU_API int32_t hbDNNConvertEndianness(void* output, const void* input, uint32_t size) {
  if (output == nullptr || input == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertEndianness: NULL argument");
  if (size % 4 != 0) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertEndianness: size must be a multiple of 4");
  const auto* in = static_cast<const uint8_t*>(input);
  auto* out = static_cast<uint8_t*>(output);
  if (in != out && in < out + size && out < in + size)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNConvertEndianness: buffers partially overlap");
  for (uint32_t i = 0; i < size; i += 4) {
    uint8_t w[4] = {in[i + 3], in[i + 2], in[i + 1], in[i]};
    std::memcpy(out + i, w, 4);
  }
  return HB_DNN_SUCCESS;
}
