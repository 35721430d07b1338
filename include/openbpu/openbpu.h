/* SPDX-License-Identifier: Apache-2.0
 * OpenBPU extensions to libdnn that are not part of the vendor API. C only;
 * every function returns 0 or a negative HB_DNN_* code unless stated.
 * Stable since OpenBPU 0.1.0. */
#ifndef OPENBPU_OPENBPU_H_
#define OPENBPU_OPENBPU_H_

#include <stdint.h>

#include "dnn/hb_dnn.h"
#include "openbpu/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Profiler ------------------------------------------------------------
 * Collection is on while a profiler session is open: obpuProfilerStart(dir),
 * or the environment variable HB_DNN_PROFILER_LOG_PATH=<dir> (opened at the
 * first model load, written at normal process exit). libdnn then records per
 * task the pending and running time, and per node (BPU subgraph, CPU
 * operator, input/output layout conversions, input preprocess) the
 * min/avg/max time. obpuProfilerStop writes <dir>/profiler.log (two JSON
 * documents separated by a line "***", as the vendor tool writes them) and
 * <dir>/profiler.csv, then closes the session. Thread-safe. */
int32_t obpuProfilerStart(char const *directory);

/* Sets the first JSON document of profiler.log (perf_result and
 * running_condition), as measured by the caller (hrt_model_exec perf). */
int32_t obpuProfilerSetRunningCondition(char const *modelName, int32_t coreId, int32_t frameCount,
                                        int32_t threadNum, double runTimeMs, double fps,
                                        double averageLatencyMs);

/* Writes the files and closes the session. HB_DNN_API_USE_ERROR when no
 * session is open; HB_DNN_CAN_NOT_OPEN_FILE when the files cannot be written. */
int32_t obpuProfilerStop(void);

/* ---- Model information ---------------------------------------------------
 * Strings are owned by the library and valid until hbDNNRelease. */

/* BPU march the model was built for ("bernoulli2", "bayes", "bayes-e", ...). */
int32_t obpuGetModelMarch(char const **march, void *dnnHandle);

/* Value of a build metadata key of the model (e.g. "BUILDER_VERSION",
 * "INPUT_TYPE_RT", "MARCH"); *value is NULL when the key is absent. */
int32_t obpuGetModelMetadata(char const **value, void *dnnHandle, char const *key);

/* ---- BPU cores ------------------------------------------------------------
 * (docs/scheduling.md) */

/* Number of BPU cores of the platform the model runs on (2 on bernoulli2 and
 * bayes, 1 on bayes-e and nash). hbDNNInferCtrlParam.bpuCoreId accepts
 * HB_BPU_CORE_ANY (0) and masks of existing cores (HB_BPU_CORE_0 = 1,
 * HB_BPU_CORE_1 = 2); other values are HB_DNN_INVALID_ARGUMENT. */
int32_t obpuGetBpuCoreNum(int32_t *coreNum, void *dnnHandle);

/* BPU cores the model occupies per run: the core_num it was compiled with
 * (1, or 2 for a bernoulli2 model built with core_num: 2, whose function
 * calls then hold both cores at once unless its task is pinned to one core). */
int32_t obpuGetModelCoreNum(int32_t *coreNum, void *dnnHandle);

/* ---- Per-layer outputs ----------------------------------------------------
 * (hrt_model_exec infer --dump_intermediate; docs/hrt_model_exec.md)
 *
 * obpuInferWithLayerOutputs runs one inference of a model, as hbDNNInfer
 * followed by hbDNNWaitTaskDone with default control parameters, and calls
 * `callback` for every output of every segment in execution order: each
 * CPU operator's output tensors and each BPU subgraph's output tensors,
 * preceded, when the model was built with compiler_parameters.debug: True,
 * by the outputs of every layer inside the subgraph (an instruction group:
 * an ONNX node and the nodes fused into it), as int8/int16/int32 NHWC views
 * with their scales. BPU subgraphs then run on the CPU with the simulator's kernels,
 * which are bit-exact with the BPU, so every value is the one the BPU
 * computes; the run takes longer than a normal inference.
 *
 * The UCP generation's libhbucp.so (hobot/ headers, .hbm models) has the
 * same function with that generation's types: properties then describe
 * every value in its ONNX order by byte strides (a BPU value laid out NHWC
 * is validShape N,C,H,W with the strides permuted alike; a per-channel
 * quantizeAxis follows the channel).
 *
 * The callback runs on a library thread; `layer` and the data it points to
 * are valid only during the call. A non-zero return stops the run
 * (HB_DNN_RUN_TASK_FAILED). Returns HB_DNN_SUCCESS or the error of the
 * inference (HB_DNN_INVALID_ARGUMENT, HB_DNN_INVALID_HANDLE, ...). */
typedef struct {
  /* File-safe name: the segment (CPU operator: its ONNX node; BPU: the
   * subgraph) or the layer inside a BPU subgraph (the ONNX node computing
   * the value), "_<k>" appended for output k > 0. */
  char const *name;
  char const *opType;     /* operator type of the CPU operator or of the layer's main node ("" for a BPU subgraph) */
  char const *nodes;      /* the segment's name as in the model file; for a layer its ONNX nodes, ';'-separated */
  char const *tensorName; /* the ONNX value */
  int32_t onBpu;          /* 1: BPU subgraph, 0: CPU operator */
  int32_t segmentIndex;   /* which segment (BPU subgraph or CPU operator) */
  int32_t firstInstruction, instructionCount; /* a layer's instructions in its subgraph; 0 otherwise */
  /* Type, layout, shapes, byte strides and quantization of the tensor, as
   * hbDNNGetOutputTensorProperties describes a model output. */
  hbDNNTensorProperties properties;
  void const *data;       /* properties.alignedByteSize bytes */
} obpuLayerOutput;

typedef int32_t (*obpuLayerOutputCallback)(obpuLayerOutput const *layer, void *userData);

int32_t obpuInferWithLayerOutputs(hbDNNTensor **output, hbDNNTensor const *input, hbDNNHandle_t dnnHandle,
                                  obpuLayerOutputCallback callback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_OPENBPU_H_ */
