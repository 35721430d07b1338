// SPDX-License-Identifier: Apache-2.0
// obpuInferWithLayerOutputs (include/openbpu/openbpu.h): one inference whose
// layers are reported as they are computed (engine LayerObserver).
#include <memory>
#include <string>
#include <vector>

#include "dnn/hb_dnn_status.h"
#include "openbpu/openbpu.h"
#include "runtime/c_api/api.h"
#include "runtime/engine/engine.h"

using namespace openbpu::rt;        // NOLINT
using namespace openbpu::rt::capi;  // NOLINT

namespace {

class CallbackObserver final : public LayerValueObserver {
 public:
  CallbackObserver(obpuLayerOutputCallback cb, void* user) : cb_(cb), user_(user) {}

 protected:
  bool report(const LayerValue& v) override {
    obpuLayerOutput o{};
    copy_layer_names(v, &o);
    fill_properties(*v.desc, &o.properties);
    return cb_(&o, user_) == 0;
  }

 private:
  obpuLayerOutputCallback cb_;
  void* user_;
};

}  // namespace

OBPU_API int32_t obpuInferWithLayerOutputs(hbDNNTensor** output, hbDNNTensor const* input, hbDNNHandle_t dnnHandle,
                                           obpuLayerOutputCallback callback, void* userData) {
  if (output == nullptr || *output == nullptr || input == nullptr || callback == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "obpuInferWithLayerOutputs: NULL argument");
  const auto m = model_of(dnnHandle);
  if (m == nullptr) return fail(HB_DNN_INVALID_DNN_HANDLE, "obpuInferWithLayerOutputs: invalid model handle");
  std::vector<IoBuffer> ins(m->inputs.size()), outs(m->outputs.size());
  int32_t rc = HB_DNN_SUCCESS;
  for (size_t i = 0; i < ins.size(); ++i)
    if ((rc = to_io(input[i], "input", i, &ins[i])) != HB_DNN_SUCCESS) return rc;
  for (size_t i = 0; i < outs.size(); ++i)
    if ((rc = to_io((*output)[i], "output", i, &outs[i])) != HB_DNN_SUCCESS) return rc;
  CtrlParam ctrl;
  ctrl.observer = std::make_shared<CallbackObserver>(callback, userData);
  std::shared_ptr<Task> task;
  const Status st = submit_run(&task, m.get(), ins, outs, ctrl, false);
  if (!st.ok()) return st.code();
  const Status done = wait_task(task.get(), 0);
  release_task(task);
  return done.code();
}
