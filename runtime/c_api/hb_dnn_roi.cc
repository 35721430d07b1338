// SPDX-License-Identifier: Apache-2.0
// hbDNNRoiInfer (resizer-input models) and the X3-profile hbDNNResize.
//
// hbDNNRoiInfer (HBDNN_API.md 5.4, 9.9): batch = roiCount / resizer inputs
// ROI batches; batch b takes input[b * inputCount + i] for input i (a
// resizer input: the whole frame) and rois[b * resizers + r] for the r-th
// resizer input, and writes slice b of every output (validShape[0] and
// alignedShape[0] of the output tensors are batch times the model's, the
// slice at byte offset b x the single alignedByteSize, or b x the tight size
// when alignedShape = validShape). Each batch is one run of the task engine
// (runtime/engine), which crops and scales the ROI when it stages the input
// (runtime/core/roi_resize.h); all batches join the task, or none.
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "runtime/c_api/api.h"

using openbpu::rt::IoBuffer;
using openbpu::rt::Model;
using openbpu::rt::RunBuffers;
using openbpu::rt::TensorDesc;
using openbpu::rt::capi::fail;
using openbpu::rt::capi::model_of;
using openbpu::rt::capi::to_io;

namespace {

std::string shape_text(const std::vector<int32_t>& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + ")";
}

// The frame tensor of resizer input i in batch b as the engine's buffer:
// validShape the whole frame (the model's N and C, the frame's H and W),
// alignedShape equal to it except for W, the row stride (tight, or a
// multiple of 16 up to 131072); the ROI is checked when the run is bound.
int32_t frame_io(const Model& m, size_t i, int b, const hbDNNTensor& t, const hbDNNRoi& roi, IoBuffer* io) {
  const TensorDesc& md = m.tensors[m.inputs[i].tensor];
  const std::string what = "hbDNNRoiInfer: batch " + std::to_string(b) + " input " + std::to_string(i) + " '" +
                           md.name + "' (resizer)";
  int32_t rc = to_io(t, "input", static_cast<size_t>(b) * m.inputs.size() + i, io);
  if (rc != HB_DNN_SUCCESS) return rc;
  if (io->layout != md.layout || io->valid.size() != 4 || io->aligned.size() != 4)
    return fail(HB_DNN_INVALID_ARGUMENT, what + ": the frame tensor must be 4-D in the model's layout");
  const size_t hi = md.layout == openbpu::rt::kNHWC ? 1 : 2, wi = hi + 1, ci = hi == 1 ? 3 : 1;
  if (io->valid[0] != md.valid[0] || io->valid[ci] != md.valid[ci])
    return fail(HB_DNN_INVALID_ARGUMENT, what + ": validShape " + shape_text(io->valid) +
                                             " should be the whole frame with the model's N and C " +
                                             shape_text(md.valid) + ", H and W the frame's");
  if (io->aligned[0] != io->valid[0] || io->aligned[ci] != io->valid[ci] || io->aligned[hi] != io->valid[hi])
    return fail(HB_DNN_INVALID_ARGUMENT, what + ": alignedShape " + shape_text(io->aligned) +
                                             " may differ from validShape " + shape_text(io->valid) +
                                             " only in W (the row stride)");
  const int64_t w = io->valid[wi], stride = io->aligned[wi];
  if (stride != w && (stride < w || stride % openbpu::rt::kResizerRowAlign != 0 ||
                      stride > openbpu::rt::kResizerMaxRowStride))
    return fail(HB_DNN_INVALID_ARGUMENT, what + ": row stride (alignedShape W) " + std::to_string(stride) +
                                             " should be the frame width " + std::to_string(w) +
                                             " or a multiple of 16 from it to 131072");
  io->resizer = true;
  io->image_h = io->valid[hi];
  io->image_w = io->valid[wi];
  io->row_stride[0] = io->row_stride[1] = stride;
  io->roi = openbpu::rt::RoiBox{roi.left, roi.top, roi.right, roi.bottom};
  io->valid = md.valid;
  return HB_DNN_SUCCESS;
}

// Output k of every batch: slices of the caller's tensor, whose validShape
// and alignedShape are the model's with the leading dimension times batch.
int32_t output_slices(const Model& m, size_t k, const hbDNNTensor& t, int batch, std::vector<RunBuffers>* runs) {
  const TensorDesc& md = m.tensors[m.outputs[k].tensor];
  const std::string what = "hbDNNRoiInfer: output " + std::to_string(k) + " '" + md.name + "'";
  IoBuffer io;
  int32_t rc = to_io(t, "output", k, &io);
  if (rc != HB_DNN_SUCCESS) return rc;
  if (io.data[0] == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, what + ": sysMem[0].virAddr is NULL");
  auto batched = [batch](std::vector<int32_t> s) {
    s[0] *= batch;
    return s;
  };
  if (io.valid != batched(md.valid))
    return fail(HB_DNN_INVALID_ARGUMENT, what + ": validShape " + shape_text(io.valid) + " should be " +
                                             shape_text(batched(md.valid)) + " (the model's, leading dimension x " +
                                             std::to_string(batch) + " batches)");
  const bool padded = io.aligned == batched(md.aligned);
  if (!padded && io.aligned != batched(md.valid))
    return fail(HB_DNN_INVALID_ARGUMENT, what + ": alignedShape " + shape_text(io.aligned) + " should be " +
                                             shape_text(batched(md.aligned)) + " or, for tight data, " +
                                             shape_text(batched(md.valid)));
  const int64_t slice = padded ? md.aligned_byte_size : md.valid_elements() * openbpu::rt::element_size(md.data_type);
  if (static_cast<int64_t>(io.size[0]) < slice * batch)
    return fail(HB_DNN_INVALID_ARGUMENT, what + ": sysMem[0] holds " + std::to_string(io.size[0]) + " bytes, " +
                                             std::to_string(batch) + " batches need " + std::to_string(batch) +
                                             " x " + std::to_string(slice));
  for (int b = 0; b < batch; ++b) {
    IoBuffer s = io;
    s.valid = md.valid;
    s.aligned = padded ? md.aligned : md.valid;
    s.data[0] = io.data[0] + b * slice;
    s.size[0] = static_cast<uint64_t>(slice);
    (*runs)[static_cast<size_t>(b)].outputs[k] = s;
  }
  return HB_DNN_SUCCESS;
}

// The inputs of batch b: the resizer inputs' frames with their ROIs, the
// other inputs as hbDNNInfer takes them.
int32_t batch_inputs(const Model& m, int b, const hbDNNTensor* input, const hbDNNRoi* rois, int resizers,
                     RunBuffers* run) {
  const size_t n = m.inputs.size();
  int r = 0;
  for (size_t i = 0; i < n; ++i) {
    const hbDNNTensor& t = input[static_cast<size_t>(b) * n + i];
    const int32_t rc = m.inputs[i].source == openbpu::rt::kInputFromResizer
                           ? frame_io(m, i, b, t, rois[b * resizers + r++], &run->inputs[i])
                           : to_io(t, "input", static_cast<size_t>(b) * n + i, &run->inputs[i]);
    if (rc != HB_DNN_SUCCESS) return rc;
  }
  return HB_DNN_SUCCESS;
}

}  // namespace

OBPU_API int32_t hbDNNRoiInfer(hbDNNTaskHandle_t* taskHandle, hbDNNTensor** output, hbDNNTensor const* input,
                               hbDNNRoi* rois, int32_t roiCount, hbDNNHandle_t dnnHandle,
                               hbDNNInferCtrlParam* inferCtrlParam) {
  if (taskHandle == nullptr || output == nullptr || *output == nullptr || input == nullptr || rois == nullptr ||
      inferCtrlParam == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRoiInfer: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "hbDNNRoiInfer: invalid model handle");
  int resizers = 0;
  for (const auto& in : m->inputs) {
    if (in.source != openbpu::rt::kInputFromResizer) continue;
    ++resizers;
    if (m->tensors[in.tensor].valid[0] != 1)
      return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRoiInfer: model '" + m->name + "' resizer input '" +
                                               m->tensors[in.tensor].name +
                                               "' has batch " + std::to_string(m->tensors[in.tensor].valid[0]) +
                                               "; resizer models take one ROI per run (compile with batch 1, "
                                               "give several ROI batches instead)");
  }
  if (resizers == 0)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRoiInfer: model '" + m->name +
                                             "' has no resizer input (compile it with input_source resizer)");
  if (roiCount <= 0 || roiCount % resizers != 0 || roiCount / resizers > openbpu::rt::kMaxRunsPerTask)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRoiInfer: roiCount " + std::to_string(roiCount) +
                                             " must be batch x " + std::to_string(resizers) +
                                             " resizer input(s), batch 1..255");
  const int batch = roiCount / resizers;
  std::vector<RunBuffers> runs(static_cast<size_t>(batch));
  int32_t rc = HB_DNN_SUCCESS;
  for (int b = 0; b < batch && rc == HB_DNN_SUCCESS; ++b) {
    runs[static_cast<size_t>(b)].inputs.resize(m->inputs.size());
    runs[static_cast<size_t>(b)].outputs.resize(m->outputs.size());
    rc = batch_inputs(*m, b, input, rois, resizers, &runs[static_cast<size_t>(b)]);
  }
  for (size_t k = 0; k < m->outputs.size() && rc == HB_DNN_SUCCESS; ++k)
    rc = output_slices(*m, k, (*output)[k], batch, &runs);
  if (rc != HB_DNN_SUCCESS) return rc;
  return openbpu::rt::capi::submit_to_task(taskHandle, "hbDNNRoiInfer", m.get(), runs, *inferCtrlParam);
}

OBPU_API int32_t hbDNNResize(hbDNNTaskHandle_t* taskHandle, hbDNNTensor* output, hbDNNTensor const* input,
                             hbDNNRoi const* roi, hbDNNResizeCtrlParam* resizeCtrlParam) {
  (void)roi;
  if (taskHandle == nullptr || output == nullptr || input == nullptr || resizeCtrlParam == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNResize: NULL argument");
  return fail(HB_DNN_API_USE_ERROR,
              "hbDNNResize is deprecated and not provided by this runtime; use a resizer model and hbDNNRoiInfer");
}
