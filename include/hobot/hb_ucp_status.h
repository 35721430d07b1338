/* SPDX-License-Identifier: Apache-2.0
 * OpenBPU UCP status codes, source-compatible with the vendor's
 * <hobot/hb_ucp_status.h>: six-digit codes "XX-XXXX", the first two digits
 * name the category. Compiles as C (the vendor header does not).
 */
#ifndef HB_UCP_STATUS_H_
#define HB_UCP_STATUS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

typedef enum {
  HB_UCP_SUCCESS = 0,
  /* usage */
  HB_UCP_INVALID_ARGUMENT = -100001,
  HB_UCP_API_USE_ERROR = -100002,
  HB_UCP_INIT_FAILED = -100003,
  HB_UCP_UNKNOWN_ERROR = -100004,
  /* tasks */
  HB_UCP_TASK_NUMBER_EXCEED_LIMIT = -200001,
  HB_UCP_TASK_TIMEOUT = -200002,
  HB_UCP_TASK_RUN_FAILED = -200003,
  HB_UCP_TASK_HANDLE_INVALID = -200004,
  /* operators */
  HB_UCP_OP_NUMBER_EXCEED_LIMIT = -300001,
  HB_UCP_OP_NOT_REGISTER = -300002,
  HB_UCP_OP_CMD_UNAVAILABLE = -300003,
  /* memory */
  HB_UCP_MEM_ALLOC_FAIL = -400001,
  HB_UCP_MEM_FREE_FAIL = -400002,
  HB_UCP_MEM_FLUSH_FAIL = -400003,
  HB_UCP_MEM_INVALIDATE_FAIL = -400004,
  HB_UCP_MEM_IS_INVALID = -400005,
  HB_UCP_MEM_MAP_FAIL = -400006,
  HB_UCP_MEM_UNMAP_FAIL = -400007,
  /* files */
  HB_UCP_FILE_OPEN_FAILED = -500001,
  /* models */
  HB_UCP_MODEL_NUMBER_EXCEED_LIMIT = -600001,
  HB_UCP_MODEL_INVALID = -600002,
  HB_UCP_MODEL_IS_INUSE = -600003,
  HB_UCP_MODEL_INCOMPATIBLE = -600004,
  /* DSP (board backends; never returned by OpenBPU) */
  HB_UCP_DSP_UNAVAILABLE = -700001,
  HB_UCP_DSP_XV_ALLOC_FAIL = -700002,
  HB_UCP_DSP_XV_FREE_FAIL = -700003,
  HB_UCP_DSP_IDMA_COPY_FAIL = -700004,
  HB_UCP_DSP_IDMA_BAD_INIT = -700005,
  HB_UCP_DSP_MMAP_FAIL = -700006,
  HB_UCP_DSP_INVALID_SCALE = -700007,
  HB_UCP_DSP_UNMAP_FAIL = -700008,
  HB_UCP_DSP_OFFLINE = -700009,
  /* codec (board backends) */
  HB_UCP_CODEC_OPERATION_NOT_ALLOWED = -800001,
  HB_UCP_CODEC_INSUFFICIENT_RES = -800002,
  HB_UCP_CODEC_NO_FREE_INSTANCE = -800003,
  HB_UCP_CODEC_INVALID_INSTANCE = -800004,
  HB_UCP_CODEC_BUFFER_WAIT_TIMEOUT = -800005,
  HB_UCP_CODEC_IS_INUSE = -800006,
  /* ISP (board backends) */
  HB_UCP_ISP_NO_AVAILABLE_SLOT = -900001,
  HB_UCP_ISP_CTX_INUSE = -900002
} hbUCPStatus;

/* English description of a code; never NULL (an unknown code has its own
 * text). The string is static. */
char const *hbUCPGetErrorDesc(int32_t errorCode);

#ifdef __cplusplus
}
#endif  // __cplusplus

#endif  // HB_UCP_STATUS_H_
