/* SPDX-License-Identifier: Apache-2.0
 * OpenBPU UCP runtime (J6 / S100 generation, ".hbm" models): task scheduling,
 * source-compatible with the vendor's <hobot/hb_ucp.h> (UCP 3.13). Names,
 * field order, macro and enum values follow the vendor header; see
 * docs/ucp.md for the behaviour of every function on OpenBPU.
 *
 * Conventions for every function below unless stated otherwise:
 *  - returns 0 (HB_UCP_SUCCESS) or a negative code of <hobot/hb_ucp_status.h>;
 *    hbUCPGetErrorDesc() explains a code;
 *  - functions are thread-safe; one task handle must not be used by two
 *    threads at the same time.
 * Link with libhbucp (and libdnn for model tasks): CMake target openbpu::ucp,
 * pkg-config module openbpu-ucp.
 */
#ifndef HB_UCP_H_
#define HB_UCP_H_

#include <stdint.h>

#define HB_UCP_VERSION_MAJOR (3U)
#define HB_UCP_VERSION_MINOR (13U)
#define HB_UCP_VERSION_PATCH (6U)

/* Backend masks for hbUCPSchedParam.backend. HB_UCP_CORE_ANY lets the
 * library choose a backend for each operation of the task (the BPU for
 * model tasks); HB_UCP_BPU_CORE_ANY any BPU core; HB_UCP_BPU_CORE_n one core
 * (several may be OR-ed). The other backends exist on boards only; OpenBPU
 * has BPU tasks only, so a mask without a BPU bit (and not 0) is rejected. */
#define HB_UCP_CORE_ANY (0ULL << 0)
#define HB_UCP_BPU_CORE_0 (1ULL << 0)
#define HB_UCP_BPU_CORE_1 (1ULL << 1)
#define HB_UCP_BPU_CORE_2 (1ULL << 2)
#define HB_UCP_BPU_CORE_3 (1ULL << 3)
#define HB_UCP_BPU_CORE_ANY (1ULL << 7)
#define HB_UCP_DSP_CORE_0 (1ULL << 8)
#define HB_UCP_DSP_CORE_1 (1ULL << 9)
#define HB_UCP_DSP_CORE_ANY (1ULL << 15)
#define HB_UCP_GDC_CORE_0 (1ULL << 16)
#define HB_UCP_GDC_CORE_1 (1ULL << 17)
#define HB_UCP_GDC_CORE_ANY (1ULL << 19)
#define HB_UCP_STITCH_CORE_0 (1ULL << 20)
#define HB_UCP_LKOF_CORE_0 (1ULL << 24)
#define HB_UCP_JPU_CORE_0 (1ULL << 25)
#define HB_UCP_JPU_CORE_1 (1ULL << 26)
#define HB_UCP_JPU_CORE_2 (1ULL << 27)
#define HB_UCP_JPU_CORE_ANY (1ULL << 29)
#define HB_UCP_VPU_CORE_0 (1ULL << 30)
#define HB_UCP_VPU_CORE_1 (1ULL << 31)
#define HB_UCP_VPU_CORE_2 (1ULL << 32)
#define HB_UCP_VPU_CORE_ANY (1ULL << 33)
#define HB_UCP_PYRAMID_CORE_0 (1ULL << 35)
#define HB_UCP_PYRAMID_CORE_1 (1ULL << 36)
#define HB_UCP_PYRAMID_CORE_2 (1ULL << 37)
#define HB_UCP_PYRAMID_CORE_3 (1ULL << 38)
#define HB_UCP_PYRAMID_CORE_4 (1ULL << 39)
#define HB_UCP_PYRAMID_CORE_ANY (1ULL << 40)
#define HB_UCP_ISP_CORE_0 (1ULL << 42)
#define HB_UCP_ISP_CORE_1 (1ULL << 43)
#define HB_UCP_ISP_CORE_2 (1ULL << 44)
#define HB_UCP_ISP_CORE_3 (1ULL << 45)

#define HB_UCP_ALL_BACKENDS                                                                        \
  (HB_UCP_CORE_ANY | HB_UCP_BPU_CORE_0 | HB_UCP_BPU_CORE_1 | HB_UCP_BPU_CORE_2 | HB_UCP_BPU_CORE_3 | \
   HB_UCP_BPU_CORE_ANY | HB_UCP_DSP_CORE_0 | HB_UCP_DSP_CORE_1 | HB_UCP_DSP_CORE_ANY |             \
   HB_UCP_GDC_CORE_0 | HB_UCP_GDC_CORE_1 | HB_UCP_GDC_CORE_ANY | HB_UCP_STITCH_CORE_0 |            \
   HB_UCP_LKOF_CORE_0 | HB_UCP_JPU_CORE_0 | HB_UCP_JPU_CORE_1 | HB_UCP_JPU_CORE_2 |                \
   HB_UCP_JPU_CORE_ANY | HB_UCP_VPU_CORE_0 | HB_UCP_VPU_CORE_1 | HB_UCP_VPU_CORE_2 |               \
   HB_UCP_VPU_CORE_ANY | HB_UCP_PYRAMID_CORE_0 | HB_UCP_PYRAMID_CORE_1 | HB_UCP_PYRAMID_CORE_2 |   \
   HB_UCP_PYRAMID_CORE_3 | HB_UCP_PYRAMID_CORE_4 | HB_UCP_PYRAMID_CORE_ANY | HB_UCP_ISP_CORE_0 |   \
   HB_UCP_ISP_CORE_1 | HB_UCP_ISP_CORE_2 | HB_UCP_ISP_CORE_3)

/* Sets the defaults: lowest priority, device 0, customId 0, backend
 * HB_UCP_CORE_ANY. A bare block (usable with or without a trailing ';'). */
#define HB_UCP_INITIALIZE_SCHED_PARAM(param) \
  {                                          \
    (param)->priority = HB_UCP_PRIORITY_LOWEST; \
    (param)->deviceId = 0U;                  \
    (param)->customId = 0;                   \
    (param)->backend = HB_UCP_CORE_ANY;      \
  }

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

typedef void *hbUCPTaskHandle_t;

/* Completion callback: status is 0 or the task's error code. It runs once per
 * submitted task, on a library thread, after the outputs are written; it may
 * call hbUCPReleaseTask on its own task but must not wait for other tasks. */
typedef void (*hbUCPTaskDoneCb)(hbUCPTaskHandle_t taskHandle, int32_t status, void *userdata);

/* Priorities 0..253 order the queue (higher first, then smaller customId,
 * then submission order); 254 and 255 are preemptive: such a task takes a
 * busy core at the running task's next function-call boundary. */
typedef enum hbUCPTaskPriority {
  HB_UCP_PRIORITY_LOWEST = 0,
  HB_UCP_PRIORITY_HIGHEST = 255
} hbUCPTaskPriority;

typedef struct hbUCPSchedParam {
  int32_t priority;  /* 0..255 (hbUCPTaskPriority) */
  int64_t customId;  /* tie-break among equal priorities: smaller first */
  uint64_t backend;  /* HB_UCP_*_CORE_* mask */
  uint32_t deviceId; /* 0: the (only) BPU device */
} hbUCPSchedParam;

/* Version string of the UCP library, e.g. "3.13.6". Never NULL. */
const char *hbUCPGetVersion(void);

/* Name of the SoC the library runs on. On a board it is the device-tree model
 * string; on the simulator it names the simulated SoC (docs/ucp.md), e.g.
 * "D-Robotics RDK S100 (OpenBPU simulator, nash-e)". Never NULL. */
const char *hbUCPGetSocName(void);

/* Submits a task created by hbDNNInferV2 (all its sub-tasks) once.
 * schedParam must not be NULL. Returns HB_UCP_INVALID_ARGUMENT for a bad
 * priority or backend mask, HB_UCP_TASK_HANDLE_INVALID for an unknown handle,
 * HB_UCP_API_USE_ERROR when the task was already submitted. Does not block. */
int32_t hbUCPSubmitTask(hbUCPTaskHandle_t taskHandle, hbUCPSchedParam *schedParam);

/* Waits for a submitted task; timeout in ms, 0 (or negative) waits until it
 * is done. HB_UCP_TASK_TIMEOUT leaves the task running (wait again or release
 * it); HB_UCP_TASK_RUN_FAILED when the task failed or was cancelled;
 * HB_UCP_API_USE_ERROR for a task never submitted. */
int32_t hbUCPWaitTaskDone(hbUCPTaskHandle_t taskHandle, int32_t timeout);

/* Sets the completion callback (before or after submit; after completion it
 * is called at once). NULL clears it. */
int32_t hbUCPSetTaskDoneCb(hbUCPTaskHandle_t taskHandle, hbUCPTaskDoneCb taskDoneCb, void *userdata);

/* Releases a task: a running task is cancelled at its next function-call
 * boundary and this call waits for that (not when called from a callback),
 * so its buffers may be freed as soon as it returns. */
int32_t hbUCPReleaseTask(hbUCPTaskHandle_t taskHandle);

#ifdef __cplusplus
}
#endif  // __cplusplus

#endif  // HB_UCP_H_
