/* SPDX-License-Identifier: Apache-2.0
 * The public headers compile as C99 (-pedantic) and keep the vendor's LP64
 * struct layouts and enum values (HBDNN_API.md section 10). */
#include <stddef.h>
#include <stdbool.h>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"

#define ASSERT_C99(name, cond) typedef char assert_##name[(cond) ? 1 : -1]

ASSERT_C99(sysmem_size, sizeof(hbSysMem) == 24);
ASSERT_C99(sysmem_vir, offsetof(hbSysMem, virAddr) == 8);
ASSERT_C99(sysmem_size_off, offsetof(hbSysMem, memSize) == 16);
ASSERT_C99(shape_size, sizeof(hbDNNTensorShape) == 36);
ASSERT_C99(shift_size, sizeof(hbDNNQuantiShift) == 16);
ASSERT_C99(shift_ptr, offsetof(hbDNNQuantiShift, shiftData) == 8);
ASSERT_C99(scale_size, sizeof(hbDNNQuantiScale) == 32);
ASSERT_C99(scale_data, offsetof(hbDNNQuantiScale, scaleData) == 8);
ASSERT_C99(scale_zplen, offsetof(hbDNNQuantiScale, zeroPointLen) == 16);
ASSERT_C99(scale_zp, offsetof(hbDNNQuantiScale, zeroPointData) == 24);
ASSERT_C99(props_size, sizeof(hbDNNTensorProperties) == 176);
ASSERT_C99(props_aligned, offsetof(hbDNNTensorProperties, alignedShape) == 36);
ASSERT_C99(props_layout, offsetof(hbDNNTensorProperties, tensorLayout) == 72);
ASSERT_C99(props_type, offsetof(hbDNNTensorProperties, tensorType) == 76);
ASSERT_C99(props_shift, offsetof(hbDNNTensorProperties, shift) == 80);
ASSERT_C99(props_scale, offsetof(hbDNNTensorProperties, scale) == 96);
ASSERT_C99(props_qtype, offsetof(hbDNNTensorProperties, quantiType) == 128);
ASSERT_C99(props_axis, offsetof(hbDNNTensorProperties, quantizeAxis) == 132);
ASSERT_C99(props_bytes, offsetof(hbDNNTensorProperties, alignedByteSize) == 136);
ASSERT_C99(props_stride, offsetof(hbDNNTensorProperties, stride) == 140);
ASSERT_C99(tensor_size, sizeof(hbDNNTensor) == 272);
ASSERT_C99(tensor_props, offsetof(hbDNNTensor, properties) == 96);
ASSERT_C99(roi_size, sizeof(hbDNNRoi) == 16);
ASSERT_C99(ctrl_size, sizeof(hbDNNInferCtrlParam) == 32);
ASSERT_C99(ctrl_custom, offsetof(hbDNNInferCtrlParam, customId) == 16);
ASSERT_C99(resize_ctrl_size, sizeof(hbDNNResizeCtrlParam) == 28);
ASSERT_C99(enum_size, sizeof(hbDNNDataType) == 4);

ASSERT_C99(core_values, HB_BPU_CORE_ANY == 0 && HB_BPU_CORE_0 == 1 && HB_BPU_CORE_1 == 2);
ASSERT_C99(flush_values, HB_SYS_MEM_CACHE_INVALIDATE == 1 && HB_SYS_MEM_CACHE_CLEAN == 2);
ASSERT_C99(sys_status, HB_SYS_INVALID_ARGUMENT == -6000129 && HB_SYS_OUT_OF_MEMORY == -6000130 &&
                           HB_SYS_REGISTER_MEM_FAILED == -6000131);
ASSERT_C99(layouts, HB_DNN_LAYOUT_NHWC == 0 && HB_DNN_LAYOUT_NCHW == 2 && HB_DNN_LAYOUT_NONE == 255 &&
                        HB_DNN_LAYOUT_NHCW_NATIVE == 1);
ASSERT_C99(types, HB_DNN_IMG_TYPE_Y == 0 && HB_DNN_IMG_TYPE_BGR == 5 && HB_DNN_TENSOR_TYPE_S8 == 8 &&
                      HB_DNN_TENSOR_TYPE_F32 == 13 && HB_DNN_TENSOR_TYPE_S32 == 14 &&
                      HB_DNN_TENSOR_TYPE_MAX == 19);
ASSERT_C99(quanti, NONE == 0 && SHIFT == 1 && SCALE == 2);
ASSERT_C99(priority, HB_DNN_PRIORITY_LOWEST == 0 && HB_DNN_PRIORITY_HIGHEST == 255 &&
                         HB_DNN_PRIORITY_PREEMP == 255);
ASSERT_C99(status, HB_DNN_INVALID_ARGUMENT == -6000001 && HB_DNN_INCOMPATIBLE_MODEL == -6000014 &&
                       HB_DNN_MULTI_PROGRESS_USE_ERROR == -6000016);
ASSERT_C99(sources, HB_DNN_INPUT_FROM_DDR == 0 && HB_DNN_INPUT_FROM_RESIZER == 1 &&
                        HB_DNN_INPUT_FROM_PYRAMID == 2);
ASSERT_C99(optype, HB_DNN_OUTPUT_OPERATOR_TYPE_MODEL_INPUT_TOP_K == 15);
ASSERT_C99(version, HB_DNN_VERSION_MAJOR == 1U && HB_DNN_TENSOR_MAX_DIMENSIONS == 8);

int main(void) {
  hbDNNInferCtrlParam p;
  hbDNNResizeCtrlParam r;
  /* Both forms of the bare-block macros compile. */
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p)
  HB_DNN_INITIALIZE_RESIZE_CTRL_PARAM(&r);
  return (p.priority == HB_DNN_PRIORITY_LOWEST && p.more == 0 && p.customId == 0 &&
          r.resizeType == HB_DNN_RESIZE_TYPE_BILINEAR && hbDNNGetVersion() != NULL)
             ? 0
             : 1;
}
