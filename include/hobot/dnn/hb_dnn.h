/* SPDX-License-Identifier: Apache-2.0
 * OpenBPU libdnn for the UCP generation (J6 / S100, ".hbm" models): models,
 * tensor properties and model tasks, source-compatible with the vendor's
 * <hobot/dnn/hb_dnn.h> (UCP 3.12/3.13, the S100 struct layout). Names, field
 * order and enum values follow the vendor header, including the void *
 * handles and the unprefixed NONE / SCALE enumerators. This header does not
 * include <hobot/dnn/hb_dnn_status.h> (neither does the vendor's).
 *
 * Conventions for every function below unless stated otherwise:
 *  - returns 0 (HB_DNN_SUCCESS) or a negative code of hb_dnn_status.h;
 *  - a NULL pointer, a bad handle or an out-of-range index gives
 *    HB_DNN_INVALID_ARGUMENT (handles are looked up, never dereferenced
 *    blindly);
 *  - strings and arrays returned through out-pointers are owned by the
 *    library and stay valid until hbDNNRelease() of the packed handle;
 *  - functions are thread-safe; one task handle must not be used by two
 *    threads at the same time.
 * docs/ucp.md describes the behaviour on OpenBPU in full.
 */
#ifndef DNN_HB_DNN_H_
#define DNN_HB_DNN_H_

#include <stdint.h>

#include "../hb_ucp.h"
#include "../hb_ucp_sys.h"

#define HB_DNN_TENSOR_MAX_DIMENSIONS (10)

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

typedef void *hbDNNPackedHandle_t;
typedef void *hbDNNHandle_t;

typedef enum {
  HB_DNN_TENSOR_TYPE_S4,
  HB_DNN_TENSOR_TYPE_U4,
  HB_DNN_TENSOR_TYPE_S8,
  HB_DNN_TENSOR_TYPE_U8,
  HB_DNN_TENSOR_TYPE_F16,
  HB_DNN_TENSOR_TYPE_S16,
  HB_DNN_TENSOR_TYPE_U16,
  HB_DNN_TENSOR_TYPE_F32,
  HB_DNN_TENSOR_TYPE_S32,
  HB_DNN_TENSOR_TYPE_U32,
  HB_DNN_TENSOR_TYPE_F64,
  HB_DNN_TENSOR_TYPE_S64,
  HB_DNN_TENSOR_TYPE_U64,
  HB_DNN_TENSOR_TYPE_BOOL8,
  HB_DNN_TENSOR_TYPE_MAX
} hbDNNDataType;

typedef struct hbDNNTensorShape {
  int32_t dimensionSize[HB_DNN_TENSOR_MAX_DIMENSIONS];
  int32_t numDimensions;
} hbDNNTensorShape;

/* Per-tensor or per-axis quantization: real = (q - zeroPoint[i]) * scale[i],
 * i along quantizeAxis when scaleLen > 1 (the zero-point term only when
 * zeroPointLen > 0). The arrays are owned by the library (model lifetime). */
typedef struct hbDNNQuantiScale {
  int32_t scaleLen;
  float *scaleData;
  int32_t zeroPointLen;
  int32_t *zeroPointData;
} hbDNNQuantiScale;

typedef enum { NONE, SCALE } hbDNNQuantiType;

/* validShape in the model's layout; stride[i] = bytes between consecutive
 * indices of dimension i. -1 in validShape or stride marks a dynamic value the
 * caller fills in before hbDNNInferV2; alignedByteSize is -1 then. */
typedef struct hbDNNTensorProperties {
  hbDNNTensorShape validShape;
  int32_t tensorType;
  hbDNNQuantiScale scale;
  hbDNNQuantiType quantiType;
  int32_t quantizeAxis;
  int64_t alignedByteSize;
  int64_t stride[HB_DNN_TENSOR_MAX_DIMENSIONS];
} hbDNNTensorProperties;

typedef struct hbDNNTensor {
  hbUCPSysMem sysMem;
  hbDNNTensorProperties properties;
} hbDNNTensor;

typedef enum { HB_DNN_DESC_TYPE_UNKNOWN = 0, HB_DNN_DESC_TYPE_STRING } hbDNNDescType;

/* "<libdnn version>_(<OpenBPU version> HBRT)". Never NULL. */
char const *hbDNNGetVersion(void);

/* Loads .hbm files (or images of them in memory, copied) into one packed
 * handle. A file of the 1.x generation (.bin) is HB_DNN_INCOMPATIBLE_MODEL,
 * as is a model for another simulated march than the process's. */
int32_t hbDNNInitializeFromFiles(hbDNNPackedHandle_t *dnnPackedHandle, char const **modelFileNames,
                                 int32_t modelFileCount);
int32_t hbDNNInitializeFromDDR(hbDNNPackedHandle_t *dnnPackedHandle, const void **modelData,
                               int32_t *modelDataLengths, int32_t modelDataCount);

/* Releases a packed handle; HB_UCP_MODEL_IS_INUSE (logged once per pack)
 * while tasks of its models are not released. Calls other threads are making
 * on its handles complete; the memory is freed after the last of them. */
int32_t hbDNNRelease(hbDNNPackedHandle_t dnnPackedHandle);

int32_t hbDNNGetModelNameList(char const ***modelNameList, int32_t *modelNameCount,
                              hbDNNPackedHandle_t dnnPackedHandle);
int32_t hbDNNGetModelHandle(hbDNNHandle_t *dnnHandle, hbDNNPackedHandle_t dnnPackedHandle,
                            char const *modelName);

int32_t hbDNNGetInputCount(int32_t *inputCount, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetInputName(char const **name, hbDNNHandle_t dnnHandle, int32_t inputIndex);
int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties *properties, hbDNNHandle_t dnnHandle,
                                      int32_t inputIndex);
int32_t hbDNNGetOutputCount(int32_t *outputCount, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetOutputName(char const **name, hbDNNHandle_t dnnHandle, int32_t outputIndex);
int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties *properties, hbDNNHandle_t dnnHandle,
                                       int32_t outputIndex);

/* Descriptions (strings attached at build time; *type is hbDNNDescType).
 * A missing description gives *desc = NULL, *size = 0,
 * *type = HB_DNN_DESC_TYPE_UNKNOWN and HB_DNN_SUCCESS. */
int32_t hbDNNGetInputDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNHandle_t dnnHandle,
                          int32_t inputIndex);
int32_t hbDNNGetOutputDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNHandle_t dnnHandle,
                           int32_t outputIndex);
/* The model description JSON hb_compile writes (docs/ucp.md). */
int32_t hbDNNGetModelDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNHandle_t dnnHandle);

/* BPU cores the model was compiled for (compiler_parameters.core_num). */
int32_t hbDNNGetCompileBpuCoreNum(int32_t *bpuCoreNum, hbDNNHandle_t dnnHandle);

/* Description JSON of the index-th file of the load call (0-based). */
int32_t hbDNNGetHBMDesc(char const **desc, uint32_t *size, int32_t *type, hbDNNPackedHandle_t dnnPackedHandle,
                        int32_t index);

/* Creates or extends a model task.
 *  - taskHandle == NULL: runs synchronously (default scheduling) and returns
 *    when the outputs are written;
 *  - *taskHandle == NULL: creates a task and stores its handle; it runs once
 *    submitted with hbUCPSubmitTask;
 *  - *taskHandle != NULL: appends a sub-task (index = append order from 0)
 *    to a task not yet submitted.
 * input/output point to the model's input/output count of tensors; their
 * properties give the caller's strides (and fill dynamic -1 dimensions);
 * buffers must stay valid until the task is done. */
int32_t hbDNNInferV2(hbUCPTaskHandle_t *taskHandle, hbDNNTensor *output, hbDNNTensor const *input,
                     hbDNNHandle_t dnnHandle);

/* Output properties of a finished task's sub-task (actual shapes of dynamic
 * outputs); call before hbUCPReleaseTask. */
int32_t hbDNNGetTaskOutputTensorProperties(hbDNNTensorProperties *properties, hbUCPTaskHandle_t taskHandle,
                                           int32_t subTaskIndex, int32_t outputIndex);

#ifdef __cplusplus
}
#endif  // __cplusplus

#endif  // DNN_HB_DNN_H_
