/* SPDX-License-Identifier: Apache-2.0
 * OpenBPU libdnn: extra queries and layout/quantization helpers,
 * source-compatible with <dnn/hb_dnn_ext.h> (1.18+ signatures). As in the
 * vendor header the include guard's #define sits at the bottom and C users
 * need <stdbool.h> (included here for convenience). */
#ifndef DNN_HB_DNN_EXT_H_

#include "hb_dnn.h"
#include "hb_sys.h"

#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

typedef enum {
  HB_DNN_LAYOUT_NHCW_NATIVE = 1,
} hbDNNExtraTensorLayout;

typedef enum {
  HB_DNN_INPUT_FROM_DDR = 0,
  HB_DNN_INPUT_FROM_RESIZER,
  HB_DNN_INPUT_FROM_PYRAMID,
} hbDNNInputSource;

typedef enum {
  HB_DNN_OUTPUT_OPERATOR_TYPE_UNKNOWN = 0,
  HB_DNN_OUTPUT_OPERATOR_TYPE_CONV = 1,
  HB_DNN_OUTPUT_OPERATOR_TYPE_DETECTION_POST_PROCESS = 2,
  HB_DNN_OUTPUT_OPERATOR_TYPE_RCNN_POST_PROCESS = 3,
  HB_DNN_OUTPUT_OPERATOR_TYPE_DETECTION_POST_PROCESS_STABLE_SORT = 4,
  HB_DNN_OUTPUT_OPERATOR_TYPE_CHANNEL_ARGMAX = 5,
  HB_DNN_OUTPUT_OPERATOR_TYPE_AUX_DPP_STABLE_SORT = 6,
  HB_DNN_OUTPUT_OPERATOR_TYPE_CHANNEL_ARGMAX_SPLIT = 7,
  HB_DNN_OUTPUT_OPERATOR_TYPE_FILTER = 8,
  HB_DNN_OUTPUT_OPERATOR_TYPE_CONV3D = 9,
  HB_DNN_OUTPUT_OPERATOR_TYPE_MAGIC = 10,
  HB_DNN_OUTPUT_OPERATOR_TYPE_RLE = 11,
  HB_DNN_OUTPUT_OPERATOR_TYPE_MODEL_INPUT_SCATTER = 12,
  HB_DNN_OUTPUT_OPERATOR_TYPE_MODEL_INPUT_GATHER = 13,
  HB_DNN_OUTPUT_OPERATOR_TYPE_MODEL_INPUT_GATHER_ELEMENTS = 14,
  HB_DNN_OUTPUT_OPERATOR_TYPE_MODEL_INPUT_TOP_K = 15,
} hbDNNOutputOperatorType;

typedef enum {
  HB_DNN_DESC_TYPE_UNKNOWN = 0,
  HB_DNN_DESC_TYPE_STRING = 1,
  HB_DNN_DESC_TYPE_BINARY = 2,
} hbDNNDescType;

typedef hbDNNTensorShape hbDNNDimension;

/* Input source (hbDNNInputSource) of a model input. */
int32_t hbDNNGetInputSource(int32_t *inputSource, hbDNNHandle_t dnnHandle, int32_t inputIndex);

/* Description blobs (the model's input/output/model desc strings); *type is a
 * hbDNNDescType; *desc is NULL with size 0 when the model has none. */
int32_t hbDNNGetInputDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNHandle_t dnnHandle,
                          int32_t inputIndex);
int32_t hbDNNGetOutputDesc(char const **desc, uint32_t *size, int32_t *type,
                           hbDNNHandle_t dnnHandle, int32_t outputIndex);
int32_t hbDNNGetModelDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNHandle_t dnnHandle);

/* Kind of the operator producing an output (hbDNNOutputOperatorType). */
int32_t hbDNNGetOutputOperatorType(int32_t *operatorType, hbDNNHandle_t dnnHandle,
                                   int32_t outputIndex);

/* Estimated model latency in microseconds (timing model of the model's march). */
int32_t hbDNNGetEstimateLatency(int32_t *estimateLatency, hbDNNHandle_t dnnHandle);

/* Estimated remaining run time of a task in microseconds. */
int32_t hbDNNGetTaskEstimateTime(int32_t *estimateTime, hbDNNTaskHandle_t taskHandle);

/* Estimated wait in microseconds before a task submitted now with these
 * control parameters would start. */
int32_t hbDNNGetTaskEstimateStartTime(int32_t *estimateTime, hbDNNInferCtrlParam *inferCtrlParam);

/* The model's tag string ("" when none). */
int32_t hbDNNGetModelTag(char const **tag, hbDNNHandle_t dnnHandle);

/* Dequantizes NHWC integer data (S8/S16/S32) with one scale per channel (last dim). */
int32_t hbDNNUnquantizeByScale(float *output, int32_t inputDataType, hbDNNTensorShape inputShape,
                               const float *scales, const void *input);

/* Name of a layout value ("NHWC", "NCHW", "NONE", "NHCW_NATIVE"). */
int32_t hbDNNGetLayoutName(char const **name, int32_t layout);

/* Converts a 4-D tensor between NHWC and NCHW (same layout = copy);
 * convertEndianness byte-swaps every element. Native layouts other than
 * NHWC/NCHW give HB_DNN_INVALID_ARGUMENT. */
int32_t hbDNNConvertLayout(void *output, int32_t outputLayout, const void *input,
                           int32_t inputLayout, int32_t dataType, hbDNNTensorShape inputShape,
                           bool convertEndianness);
int32_t hbDNNConvertLayoutRoi(void *output, int32_t outputLayout, const void *input,
                              int32_t inputLayout, int32_t dataType, hbDNNTensorShape inputShape,
                              bool convertEndianness, hbDNNDimension coord, hbDNNDimension size);
int32_t hbDNNConvertLayoutToNative1HW1(void *output, const void *input, int32_t inputLayout,
                                       int32_t dataType, hbDNNTensorShape inputShape,
                                       bool convertEndianness, uint32_t nIndex, uint32_t cIndex);
int32_t hbDNNConvertLayoutToNative111C(void *output, const void *input, int32_t inputLayout,
                                       int32_t dataType, hbDNNTensorShape inputShape,
                                       bool convertEndianness, uint32_t nIndex, uint32_t hIndex,
                                       uint32_t wIndex);
int32_t hbDNNConvertLayoutToNative1111(void *output, const void *input, int32_t inputLayout,
                                       int32_t dataType, hbDNNTensorShape inputShape,
                                       bool convertEndianness, hbDNNDimension coord);

/* Copies between a tight buffer and a strided one (stride in bytes per dim). */
int32_t hbDNNAddPaddingWithStride(void *output, void const *input, uint32_t dimNum,
                                  const uint32_t *dim, const int32_t *stride, uint32_t elementSize);
int32_t hbDNNRemovePaddingWithStride(void *output, void const *input, uint32_t dimNum,
                                     const uint32_t *dim, const int32_t *stride,
                                     uint32_t elementSize);

/* Copies between a tight 4-D tensor (inputShape/outputShape valid) and a padded one. */
int32_t hbDNNAddPadding(void *output, hbDNNTensorShape outputShape, void const *input,
                        hbDNNTensorShape inputShape, int32_t dataType);
int32_t hbDNNRemovePadding(void *output, hbDNNTensorShape outputShape, void const *input,
                           hbDNNTensorShape inputShape, int32_t dataType);

/* Reverses the byte order of every 4-byte word of `size` bytes (size a
 * multiple of 4); output may equal input but must not partially overlap it. */
int32_t hbDNNConvertEndianness(void *output, const void *input, uint32_t size);

#ifdef __cplusplus
}
#endif  // __cplusplus

#define DNN_HB_DNN_EXT_H_
#endif  // DNN_HB_DNN_EXT_H_
