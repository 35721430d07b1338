// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the C API translation units.
#ifndef OPENBPU_RUNTIME_C_API_API_H_
#define OPENBPU_RUNTIME_C_API_API_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "runtime/core/tensor.h"
#include "runtime/engine/engine.h"
#include "runtime/loader/model.h"

// Exported C entry points (the library is built with hidden visibility).
#define OBPU_API extern "C" __attribute__((visibility("default")))

namespace openbpu::rt::capi {

// Logs msg with the caller's source location and returns code.
int32_t fail(int32_t code, const std::string& msg, const char* file = __builtin_FILE(), int line = __builtin_LINE());
// Model behind a handle, pinned for as long as the caller holds the result
// (its pack is not freed under the call), or nullptr when the handle is not a
// live model.
std::shared_ptr<Model> model_of(hbDNNHandle_t h);
void fill_properties(const TensorDesc& d, hbDNNTensorProperties* p);

// A user tensor (hbDNNInfer's input/output) as the engine's buffer
// description; HB_DNN_INVALID_ARGUMENT (logged) when its shapes are bad.
int32_t to_io(const hbDNNTensor& t, const char* what, size_t index, IoBuffer* io);

// Submits runs of model `m` (hbDNNInfer: one; hbDNNRoiInfer: one per ROI
// batch) as a new task (*taskHandle NULL, its handle stored there on
// success) or appended to the open task *taskHandle, under the control
// parameters `p`; `fn` names the calling function in messages.
int32_t submit_to_task(hbDNNTaskHandle_t* taskHandle, const char* fn, Model* m, const std::vector<RunBuffers>& runs,
                       const hbDNNInferCtrlParam& p);

}  // namespace openbpu::rt::capi

#endif  // OPENBPU_RUNTIME_C_API_API_H_
