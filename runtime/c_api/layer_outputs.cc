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
#include "schema/verify.h"

using namespace openbpu::rt;        // NOLINT
using namespace openbpu::rt::capi;  // NOLINT

namespace {

class CallbackObserver final : public LayerObserver {
 public:
  CallbackObserver(obpuLayerOutputCallback cb, void* user) : cb_(cb), user_(user) {}

  bool segment_done(const Model& m, size_t si, const std::vector<uint8_t*>& ptr) override {
    const Segment& seg = m.segments[si];
    const std::string op = seg.bpu ? "" : seg.op.op_type;
    for (size_t k = 0; k < seg.outputs.size(); ++k) {
      const uint32_t t = seg.outputs[k];
      if (t == openbpu::model::kAbsentInput) continue;
      obpuLayerOutput o{};
      const std::string name = layer_dump_name(seg.name, k);
      o.name = name.c_str();
      o.opType = op.c_str();
      o.nodes = seg.name.c_str();
      o.tensorName = m.tensors[t].name.c_str();
      o.onBpu = seg.bpu ? 1 : 0;
      o.segmentIndex = static_cast<int32_t>(si);
      fill_properties(m.tensors[t], &o.properties);
      o.data = ptr[t];
      if (cb_(&o, user_) != 0) return false;
    }
    return true;
  }

  bool layer_done(const Model& m, size_t si, const LayerRecord& l, const std::vector<const uint8_t*>& at) override {
    for (size_t k = 0; k < l.outputs.size(); ++k) {
      const LayerOutputDesc& d = l.outputs[k];
      obpuLayerOutput o{};
      const std::string name = layer_dump_name(d.name, 0);
      o.name = name.c_str();
      o.opType = l.op_type.c_str();
      o.nodes = l.nodes.c_str();
      o.tensorName = d.value.c_str();
      o.onBpu = 1;
      o.segmentIndex = static_cast<int32_t>(si);
      o.firstInstruction = static_cast<int32_t>(l.first);
      o.instructionCount = static_cast<int32_t>(l.count);
      fill_properties(d.desc, &o.properties);
      o.data = at[k];
      if (cb_(&o, user_) != 0) return false;
    }
    (void)m;
    return true;
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
