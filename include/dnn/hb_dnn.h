/* SPDX-License-Identifier: Apache-2.0
 * OpenBPU libdnn: model and task API, source-compatible with Horizon libdnn
 * 1.x <dnn/hb_dnn.h> (the 1.18-1.24 struct layouts). Names, types, field
 * order and enum values follow the vendor header exactly, including the
 * void * handles and the unprefixed NONE / SHIFT / SCALE enumerators.
 *
 * Conventions for every function below unless stated otherwise:
 *  - returns 0 (HB_DNN_SUCCESS) or a negative code of <dnn/hb_dnn_status.h>;
 *    hbDNNGetErrorDesc() explains a code;
 *  - arguments are validated; a NULL pointer or an out-of-range index gives
 *    HB_DNN_INVALID_ARGUMENT, a bad handle HB_DNN_INVALID_*_HANDLE;
 *  - strings and arrays returned through out-pointers are owned by the library
 *    and stay valid until hbDNNRelease() of the packed handle;
 *  - functions are thread-safe; a task handle must not be used concurrently.
 */
#ifndef DNN_HB_DNN_H_
#define DNN_HB_DNN_H_

#include "hb_sys.h"

/* The init macros use `false`; the vendor header leaves <stdbool.h> to C
 * users, including it here is harmless and saves them the surprise. */
#ifndef __cplusplus
#include <stdbool.h>
#endif

#define HB_DNN_VERSION_MAJOR 1U
#define HB_DNN_VERSION_MINOR 24U
#define HB_DNN_VERSION_PATCH 5U

#define HB_DNN_TENSOR_MAX_DIMENSIONS 8

#define HB_DNN_INITIALIZE_INFER_CTRL_PARAM(param) \
  {                                               \
    (param)->bpuCoreId = HB_BPU_CORE_ANY;         \
    (param)->dspCoreId = HB_DSP_CORE_ANY;         \
    (param)->priority = HB_DNN_PRIORITY_LOWEST;   \
    (param)->more = false;                        \
    (param)->customId = 0;                        \
    (param)->reserved1 = 0;                       \
    (param)->reserved2 = 0;                       \
  }

#define HB_DNN_INITIALIZE_RESIZE_CTRL_PARAM(param)     \
  {                                                    \
    (param)->bpuCoreId = HB_BPU_CORE_ANY;              \
    (param)->resizeType = HB_DNN_RESIZE_TYPE_BILINEAR; \
    (param)->priority = HB_DNN_PRIORITY_LOWEST;        \
    (param)->reserved1 = 0;                            \
    (param)->reserved2 = 0;                            \
    (param)->reserved3 = 0;                            \
    (param)->reserved4 = 0;                            \
  }

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

typedef void *hbPackedDNNHandle_t;
typedef void *hbDNNHandle_t;
typedef void *hbDNNTaskHandle_t;

typedef enum {
  HB_DNN_LAYOUT_NHWC = 0,
  HB_DNN_LAYOUT_NCHW = 2,
  HB_DNN_LAYOUT_NONE = 255,
} hbDNNTensorLayout;

typedef enum {
  HB_DNN_IMG_TYPE_Y,
  HB_DNN_IMG_TYPE_NV12,
  HB_DNN_IMG_TYPE_NV12_SEPARATE,
  HB_DNN_IMG_TYPE_YUV444,
  HB_DNN_IMG_TYPE_RGB,
  HB_DNN_IMG_TYPE_BGR,
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
  HB_DNN_TENSOR_TYPE_MAX
} hbDNNDataType;

typedef struct {
  int32_t dimensionSize[HB_DNN_TENSOR_MAX_DIMENSIONS];
  int32_t numDimensions;
} hbDNNTensorShape;

typedef struct {
  int32_t shiftLen;
  uint8_t *shiftData;
} hbDNNQuantiShift;

typedef struct {
  int32_t scaleLen;
  float *scaleData;
  int32_t zeroPointLen;
  int8_t *zeroPointData;
} hbDNNQuantiScale;

typedef enum {
  NONE,
  SHIFT,
  SCALE,
} hbDNNQuantiType;

typedef struct {
  hbDNNTensorShape validShape;
  hbDNNTensorShape alignedShape;
  int32_t tensorLayout;
  int32_t tensorType;
  hbDNNQuantiShift shift;
  hbDNNQuantiScale scale;
  hbDNNQuantiType quantiType;
  int32_t quantizeAxis;
  int32_t alignedByteSize;
  int32_t stride[HB_DNN_TENSOR_MAX_DIMENSIONS];
} hbDNNTensorProperties;

typedef struct {
  hbSysMem sysMem[4];
  hbDNNTensorProperties properties;
} hbDNNTensor;

typedef struct {
  int32_t left;
  int32_t top;
  int32_t right;
  int32_t bottom;
} hbDNNRoi;

typedef enum {
  HB_DNN_PRIORITY_LOWEST = 0,
  HB_DNN_PRIORITY_HIGHEST = 255,
  HB_DNN_PRIORITY_PREEMP = HB_DNN_PRIORITY_HIGHEST,
} hbDNNTaskPriority;

typedef struct {
  int32_t bpuCoreId;
  int32_t dspCoreId;
  int32_t priority;
  int32_t more;
  int64_t customId;
  int32_t reserved1;
  int32_t reserved2;
} hbDNNInferCtrlParam;

typedef enum {
  HB_DNN_RESIZE_TYPE_BILINEAR = 0,
} hbDNNResizeType;

typedef struct {
  int32_t bpuCoreId;
  int32_t priority;
  hbDNNResizeType resizeType;
  int32_t reserved1;
  int32_t reserved2;
  int32_t reserved3;
  int32_t reserved4;
} hbDNNResizeCtrlParam;

typedef void (*hbDNNTaskDoneCb)(hbDNNTaskHandle_t taskHandle, int32_t status, void *userdata);

/* Version string "<major>.<minor>.<patch>_(<openbpu version> HBRT)"; static, never NULL. */
char const *hbDNNGetVersion();

/* Loads modelFileCount .bin files (each may pack several models) into one
 * packed handle. Files are verified before use; a file built by another
 * toolchain or for another BPU march gives HB_DNN_INCOMPATIBLE_MODEL, a
 * damaged one HB_DNN_INVALID_MODEL, a missing one or one that is not a
 * regular file (FIFO, directory, device) HB_DNN_CAN_NOT_OPEN_FILE. The files
 * are read into the library's memory (a file changed after loading does not
 * affect the loaded models; the cost is the files' size). */
int32_t hbDNNInitializeFromFiles(hbPackedDNNHandle_t *packedDNNHandle, char const **modelFileNames,
                                 int32_t modelFileCount);

/* As hbDNNInitializeFromFiles from memory images; the data is copied, the
 * caller's buffers may be freed after the call. */
int32_t hbDNNInitializeFromDDR(hbPackedDNNHandle_t *packedDNNHandle, const void **modelData,
                               int32_t *modelDataLengths, int32_t modelDataCount);

/* Unloads every model of the pack. HB_DNN_MODEL_IS_RUNNING while tasks of the
 * pack are not released (logged once per pack, so that a retry loop does not
 * flood the log). Calls on the pack's handles that other threads are making
 * when it is released complete normally; the memory is freed after the last
 * of them returns, and later calls with its handles fail with
 * HB_DNN_INVALID_*_HANDLE. */
int32_t hbDNNRelease(hbPackedDNNHandle_t packedDNNHandle);

int32_t hbDNNGetModelNameList(char const ***modelNameList, int32_t *modelNameCount,
                              hbPackedDNNHandle_t packedDNNHandle);

int32_t hbDNNGetModelHandle(hbDNNHandle_t *dnnHandle, hbPackedDNNHandle_t packedDNNHandle,
                            char const *modelName);

int32_t hbDNNGetInputCount(int32_t *inputCount, hbDNNHandle_t dnnHandle);

int32_t hbDNNGetInputName(char const **name, hbDNNHandle_t dnnHandle, int32_t inputIndex);

int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties *properties, hbDNNHandle_t dnnHandle,
                                      int32_t inputIndex);

int32_t hbDNNGetOutputCount(int32_t *outputCount, hbDNNHandle_t dnnHandle);

int32_t hbDNNGetOutputName(char const **name, hbDNNHandle_t dnnHandle, int32_t outputIndex);

int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties *properties, hbDNNHandle_t dnnHandle,
                                       int32_t outputIndex);

/* Submits one inference and returns at once. *taskHandle must be NULL to
 * create a task; a non-NULL handle appends to a task opened with
 * inferCtrlParam->more = 1. `*output` points to the caller's array of
 * output tensors (not modified); buffers must stay valid until the task is
 * done. Errors: HB_DNN_INVALID_ARGUMENT (NULL, tensor type/shape/size
 * mismatch, bad core or priority), HB_DNN_INVALID_DNN_HANDLE,
 * HB_DNN_INVALID_TASK_HANDLE, HB_DNN_TASK_NUM_EXCEED_LIMIT (more than 32 live
 * tasks), HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT (more than 255 chained runs),
 * HB_DNN_API_USE_ERROR (appending to a closed task). */
int32_t hbDNNInfer(hbDNNTaskHandle_t *taskHandle, hbDNNTensor **output, hbDNNTensor const *input,
                   hbDNNHandle_t dnnHandle, hbDNNInferCtrlParam *inferCtrlParam);

/* Inference of a model with resizer inputs on regions of interest. */
int32_t hbDNNRoiInfer(hbDNNTaskHandle_t *taskHandle, hbDNNTensor **output, hbDNNTensor const *input,
                      hbDNNRoi *rois, int32_t roiCount, hbDNNHandle_t dnnHandle,
                      hbDNNInferCtrlParam *inferCtrlParam);

/* Registers cb to run once, on a library thread, when the task finishes
 * (at once if it already has). The callback may release the task. */
int32_t hbDNNSetTaskDoneCb(hbDNNTaskHandle_t taskHandle, hbDNNTaskDoneCb cb, void *userdata);

/* Waits for the task: timeout > 0 in milliseconds, <= 0 forever. Returns 0,
 * HB_DNN_TIMEOUT (task keeps running) or HB_DNN_RUN_TASK_FAILED. */
int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t taskHandle, int32_t timeout);

/* Releases a task; a task not finished yet is cancelled at its next safe point
 * (the call does not block). */
int32_t hbDNNReleaseTask(hbDNNTaskHandle_t taskHandle);

/* X3 profile (deprecated): asynchronous bilinear resize/crop of an image
 * tensor into a caller-allocated output tensor; roi NULL = whole image. */
int32_t hbDNNResize(hbDNNTaskHandle_t *taskHandle, hbDNNTensor *output, hbDNNTensor const *input,
                    hbDNNRoi const *roi, hbDNNResizeCtrlParam *resizeCtrlParam);

#ifdef __cplusplus
}
#endif  // __cplusplus

#endif  // DNN_HB_DNN_H_
