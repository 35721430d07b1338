// SPDX-License-Identifier: Apache-2.0
// hbDNNRoiInfer (resizer-input models) and the X3-profile hbDNNResize.
#include <string>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "runtime/c_api/api.h"

using openbpu::rt::Model;
using openbpu::rt::capi::fail;
using openbpu::rt::capi::model_of;

OBPU_API int32_t hbDNNRoiInfer(hbDNNTaskHandle_t* taskHandle, hbDNNTensor** output, hbDNNTensor const* input,
                               hbDNNRoi* rois, int32_t roiCount, hbDNNHandle_t dnnHandle,
                               hbDNNInferCtrlParam* inferCtrlParam) {
  if (taskHandle == nullptr || output == nullptr || *output == nullptr || input == nullptr || rois == nullptr ||
      inferCtrlParam == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRoiInfer: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNRoiInfer: invalid model handle");
  int resizers = 0;
  for (const auto& in : m->inputs) resizers += in.source == HB_DNN_INPUT_FROM_RESIZER ? 1 : 0;
  if (resizers == 0)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRoiInfer: model '" + m->name +
                                             "' has no resizer input (compile it with input_source resizer)");
  if (roiCount <= 0 || roiCount % resizers != 0 || roiCount / resizers > 255)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRoiInfer: roiCount must be batch x resizer inputs, batch 1..255");
  return fail(HB_DNN_INVALID_MODEL, "hbDNNRoiInfer: resizer inputs are not supported by this runtime version");
}

OBPU_API int32_t hbDNNResize(hbDNNTaskHandle_t* taskHandle, hbDNNTensor* output, hbDNNTensor const* input,
                             hbDNNRoi const* roi, hbDNNResizeCtrlParam* resizeCtrlParam) {
  (void)roi;
  if (taskHandle == nullptr || output == nullptr || input == nullptr || resizeCtrlParam == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNResize: NULL argument");
  return fail(HB_DNN_API_USE_ERROR,
              "hbDNNResize is deprecated and not provided by this runtime; use a resizer model and hbDNNRoiInfer");
}
