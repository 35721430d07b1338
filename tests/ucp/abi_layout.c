/* SPDX-License-Identifier: Apache-2.0
 * The UCP-generation headers compile as C99 (-pedantic), included the way
 * applications include them, and keep the vendor's LP64 struct layouts, enum
 * values and status codes (HBUCP_API.md sections 2.1-2.6). */
#include <stddef.h>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"

#define ASSERT_C99(name, cond) typedef char assert_##name[(cond) ? 1 : -1]

/* Section 2.6: sizes and offsets. */
ASSERT_C99(sysmem_size, sizeof(hbUCPSysMem) == 24);
ASSERT_C99(sysmem_phy, offsetof(hbUCPSysMem, phyAddr) == 0);
ASSERT_C99(sysmem_vir, offsetof(hbUCPSysMem, virAddr) == 8);
ASSERT_C99(sysmem_size_off, offsetof(hbUCPSysMem, memSize) == 16);
ASSERT_C99(sched_size, sizeof(hbUCPSchedParam) == 32);
ASSERT_C99(sched_priority, offsetof(hbUCPSchedParam, priority) == 0);
ASSERT_C99(sched_custom, offsetof(hbUCPSchedParam, customId) == 8);
ASSERT_C99(sched_backend, offsetof(hbUCPSchedParam, backend) == 16);
ASSERT_C99(sched_device, offsetof(hbUCPSchedParam, deviceId) == 24);
ASSERT_C99(shape_size, sizeof(hbDNNTensorShape) == 44);
ASSERT_C99(shape_ndim, offsetof(hbDNNTensorShape, numDimensions) == 40);
ASSERT_C99(scale_size, sizeof(hbDNNQuantiScale) == 32);
ASSERT_C99(scale_data, offsetof(hbDNNQuantiScale, scaleData) == 8);
ASSERT_C99(scale_zplen, offsetof(hbDNNQuantiScale, zeroPointLen) == 16);
ASSERT_C99(scale_zp, offsetof(hbDNNQuantiScale, zeroPointData) == 24);
ASSERT_C99(props_size, sizeof(hbDNNTensorProperties) == 176);
ASSERT_C99(props_type, offsetof(hbDNNTensorProperties, tensorType) == 44);
ASSERT_C99(props_scale, offsetof(hbDNNTensorProperties, scale) == 48);
ASSERT_C99(props_qtype, offsetof(hbDNNTensorProperties, quantiType) == 80);
ASSERT_C99(props_axis, offsetof(hbDNNTensorProperties, quantizeAxis) == 84);
ASSERT_C99(props_bytes, offsetof(hbDNNTensorProperties, alignedByteSize) == 88);
ASSERT_C99(props_stride, offsetof(hbDNNTensorProperties, stride) == 96);
ASSERT_C99(tensor_size, sizeof(hbDNNTensor) == 200);
ASSERT_C99(tensor_props, offsetof(hbDNNTensor, properties) == 24);
ASSERT_C99(enum_sizes, sizeof(hbDNNDataType) == 4 && sizeof(hbDNNQuantiType) == 4 &&
                           sizeof(hbUCPStatus) == 4 && sizeof(hbDNNStatus) == 4 &&
                           sizeof(hbUCPTaskPriority) == 4 && sizeof(hbDNNDescType) == 4 &&
                           sizeof(hbUCPSysMemFlushFlag) == 4);
ASSERT_C99(handles, sizeof(hbUCPTaskHandle_t) == sizeof(void *) && sizeof(hbDNNHandle_t) == sizeof(void *));

/* Section 2.1: versions, backends, priorities. */
ASSERT_C99(version, HB_UCP_VERSION_MAJOR == 3U && HB_UCP_VERSION_MINOR == 13U && HB_UCP_VERSION_PATCH == 6U);
ASSERT_C99(backend_bpu, HB_UCP_CORE_ANY == 0 && HB_UCP_BPU_CORE_0 == 1 && HB_UCP_BPU_CORE_1 == 2 &&
                            HB_UCP_BPU_CORE_2 == 4 && HB_UCP_BPU_CORE_3 == 8 && HB_UCP_BPU_CORE_ANY == 128);
ASSERT_C99(backend_dsp, HB_UCP_DSP_CORE_0 == (1ULL << 8) && HB_UCP_DSP_CORE_1 == (1ULL << 9) &&
                            HB_UCP_DSP_CORE_ANY == (1ULL << 15));
ASSERT_C99(backend_gdc, HB_UCP_GDC_CORE_0 == (1ULL << 16) && HB_UCP_GDC_CORE_1 == (1ULL << 17) &&
                            HB_UCP_GDC_CORE_ANY == (1ULL << 19) && HB_UCP_STITCH_CORE_0 == (1ULL << 20) &&
                            HB_UCP_LKOF_CORE_0 == (1ULL << 24));
ASSERT_C99(backend_jpu, HB_UCP_JPU_CORE_0 == (1ULL << 25) && HB_UCP_JPU_CORE_1 == (1ULL << 26) &&
                            HB_UCP_JPU_CORE_2 == (1ULL << 27) && HB_UCP_JPU_CORE_ANY == (1ULL << 29));
ASSERT_C99(backend_vpu, HB_UCP_VPU_CORE_0 == (1ULL << 30) && HB_UCP_VPU_CORE_1 == (1ULL << 31) &&
                            HB_UCP_VPU_CORE_2 == (1ULL << 32) && HB_UCP_VPU_CORE_ANY == (1ULL << 33));
ASSERT_C99(backend_pym, HB_UCP_PYRAMID_CORE_0 == (1ULL << 35) && HB_UCP_PYRAMID_CORE_4 == (1ULL << 39) &&
                            HB_UCP_PYRAMID_CORE_ANY == (1ULL << 40));
ASSERT_C99(backend_isp, HB_UCP_ISP_CORE_0 == (1ULL << 42) && HB_UCP_ISP_CORE_3 == (1ULL << 45));
ASSERT_C99(backend_all, HB_UCP_ALL_BACKENDS == 0x3DFBEF1B838FULL);
ASSERT_C99(priorities, HB_UCP_PRIORITY_LOWEST == 0 && HB_UCP_PRIORITY_HIGHEST == 255);

/* Sections 2.2-2.5: flush flags, data types, quantization, descriptions. */
ASSERT_C99(flush, HB_SYS_MEM_CACHE_INVALIDATE == 1 && HB_SYS_MEM_CACHE_CLEAN == 2);
ASSERT_C99(types, HB_DNN_TENSOR_TYPE_S4 == 0 && HB_DNN_TENSOR_TYPE_U8 == 3 && HB_DNN_TENSOR_TYPE_F16 == 4 &&
                      HB_DNN_TENSOR_TYPE_S16 == 5 && HB_DNN_TENSOR_TYPE_F32 == 7 && HB_DNN_TENSOR_TYPE_S32 == 8 &&
                      HB_DNN_TENSOR_TYPE_U64 == 12 && HB_DNN_TENSOR_TYPE_BOOL8 == 13 &&
                      HB_DNN_TENSOR_TYPE_MAX == 14);
ASSERT_C99(quanti, NONE == 0 && SCALE == 1);
ASSERT_C99(desc, HB_DNN_DESC_TYPE_UNKNOWN == 0 && HB_DNN_DESC_TYPE_STRING == 1);
ASSERT_C99(dims, HB_DNN_TENSOR_MAX_DIMENSIONS == 10);

/* Status codes. */
ASSERT_C99(ucp_usage, HB_UCP_SUCCESS == 0 && HB_UCP_INVALID_ARGUMENT == -100001 &&
                          HB_UCP_API_USE_ERROR == -100002 && HB_UCP_INIT_FAILED == -100003 &&
                          HB_UCP_UNKNOWN_ERROR == -100004);
ASSERT_C99(ucp_task, HB_UCP_TASK_NUMBER_EXCEED_LIMIT == -200001 && HB_UCP_TASK_TIMEOUT == -200002 &&
                         HB_UCP_TASK_RUN_FAILED == -200003 && HB_UCP_TASK_HANDLE_INVALID == -200004);
ASSERT_C99(ucp_op, HB_UCP_OP_NUMBER_EXCEED_LIMIT == -300001 && HB_UCP_OP_NOT_REGISTER == -300002 &&
                       HB_UCP_OP_CMD_UNAVAILABLE == -300003);
ASSERT_C99(ucp_mem, HB_UCP_MEM_ALLOC_FAIL == -400001 && HB_UCP_MEM_FREE_FAIL == -400002 &&
                        HB_UCP_MEM_FLUSH_FAIL == -400003 && HB_UCP_MEM_INVALIDATE_FAIL == -400004 &&
                        HB_UCP_MEM_IS_INVALID == -400005 && HB_UCP_MEM_MAP_FAIL == -400006 &&
                        HB_UCP_MEM_UNMAP_FAIL == -400007);
ASSERT_C99(ucp_file_model, HB_UCP_FILE_OPEN_FAILED == -500001 && HB_UCP_MODEL_NUMBER_EXCEED_LIMIT == -600001 &&
                               HB_UCP_MODEL_INVALID == -600002 && HB_UCP_MODEL_IS_INUSE == -600003 &&
                               HB_UCP_MODEL_INCOMPATIBLE == -600004);
ASSERT_C99(ucp_dsp, HB_UCP_DSP_UNAVAILABLE == -700001 && HB_UCP_DSP_XV_ALLOC_FAIL == -700002 &&
                        HB_UCP_DSP_XV_FREE_FAIL == -700003 && HB_UCP_DSP_IDMA_COPY_FAIL == -700004 &&
                        HB_UCP_DSP_IDMA_BAD_INIT == -700005 && HB_UCP_DSP_MMAP_FAIL == -700006 &&
                        HB_UCP_DSP_INVALID_SCALE == -700007 && HB_UCP_DSP_UNMAP_FAIL == -700008 &&
                        HB_UCP_DSP_OFFLINE == -700009);
ASSERT_C99(ucp_codec, HB_UCP_CODEC_OPERATION_NOT_ALLOWED == -800001 && HB_UCP_CODEC_INSUFFICIENT_RES == -800002 &&
                          HB_UCP_CODEC_NO_FREE_INSTANCE == -800003 && HB_UCP_CODEC_INVALID_INSTANCE == -800004 &&
                          HB_UCP_CODEC_BUFFER_WAIT_TIMEOUT == -800005 && HB_UCP_CODEC_IS_INUSE == -800006);
ASSERT_C99(ucp_isp, HB_UCP_ISP_NO_AVAILABLE_SLOT == -900001 && HB_UCP_ISP_CTX_INUSE == -900002);
ASSERT_C99(dnn_status, HB_DNN_SUCCESS == 0 && HB_DNN_INVALID_ARGUMENT == -100001 &&
                           HB_DNN_INVALID_PACKED_DNN_HANDLE == -100001 && HB_DNN_INVALID_DNN_HANDLE == -100001 &&
                           HB_DNN_INVALID_MODEL == -600002 && HB_DNN_MODEL_NUMBER_EXCEED_LIMIT == -600001 &&
                           HB_DNN_CAN_NOT_OPEN_FILE == -500001 && HB_DNN_OUT_OF_MEMORY == -400001 &&
                           HB_DNN_TIMEOUT == -200002 && HB_DNN_TASK_NUM_EXCEED_LIMIT == -200001 &&
                           HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT == -200001 && HB_DNN_INVALID_TASK_HANDLE == -200004 &&
                           HB_DNN_RUN_TASK_FAILED == -200003 && HB_DNN_MODEL_IS_RUNNING == -600003 &&
                           HB_DNN_INCOMPATIBLE_MODEL == -600004 && HB_DNN_API_USE_ERROR == -100002 &&
                           HB_DNN_MULTI_PROGRESS_USE_ERROR == -100002);

int main(void) {
  hbUCPSchedParam p;
  p.priority = 7;
  p.backend = HB_UCP_BPU_CORE_ANY;
  /* The bare-block initializer compiles with and without a semicolon. */
  HB_UCP_INITIALIZE_SCHED_PARAM(&p);
  HB_UCP_INITIALIZE_SCHED_PARAM(&p)
  return (p.priority == HB_UCP_PRIORITY_LOWEST && p.customId == 0 && p.backend == HB_UCP_CORE_ANY &&
          p.deviceId == 0U)
             ? 0
             : 1;
}
