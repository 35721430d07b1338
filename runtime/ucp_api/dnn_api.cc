// SPDX-License-Identifier: Apache-2.0
// The UCP generation's model functions (hobot/dnn/hb_dnn.h), implemented in
// libhbucp.so and reached from libdnn.so through the bridge table
// (bridge.h). Handles are looked up in the registry before use.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp_status.h"
#include "openbpu/openbpu.h"
#include "runtime/c_api/handles.h"
#include "runtime/engine/engine.h"
#include "runtime/profiler/profiler.h"
#include "runtime/ucp_api/bridge.h"
#include "runtime/ucp_api/model_view.h"
#include "runtime/ucp_api/status.h"

namespace openbpu::ucp {

namespace {

using rt::capi::Registry;

// Model views of the loaded packs (by model).
class Views {
 public:
  static Views& get() {
    static Views* v = new Views();  // used at exit
    return *v;
  }
  void add(rt::Pack* pack) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& m : pack->models) views_[m.get()] = make_view(m.get());
  }
  void remove(rt::Pack* pack) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& m : pack->models) views_.erase(m.get());
  }
  // The view of a live model handle with the model pinned (a release racing
  // the call frees neither), or an empty pin.
  struct Pin {
    rt::capi::ModelPin model;
    std::shared_ptr<const ModelView> view;
    explicit operator bool() const { return view != nullptr; }
    const ModelView* operator->() const { return view.get(); }
    const ModelView& operator*() const { return *view; }
  };
  Pin find(void* handle) {
    Pin pin;
    pin.model = handle == nullptr ? nullptr : Registry::get().model(handle);
    if (pin.model != nullptr) pin.view = of(pin.model.get());
    return pin;
  }
  // The view of a model the caller keeps alive (a task's model).
  std::shared_ptr<const ModelView> of(const rt::Model* model) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = views_.find(model);
    return it == views_.end() ? nullptr : it->second;
  }

 private:
  std::mutex mu_;
  std::map<const rt::Model*, std::shared_ptr<const ModelView>> views_;
};

int32_t load(std::vector<std::unique_ptr<rt::FileData>> files, hbDNNPackedHandle_t* out) {
  rt::profiler::start_from_env();
  std::unique_ptr<rt::Pack> pack;
  const rt::Status st = rt::load_pack(std::move(files), &pack, rt::Generation::kB);
  if (!st.ok()) return to_ucp(st);
  Views::get().add(pack.get());
  *out = Registry::get().add_pack(std::move(pack));
  return HB_UCP_SUCCESS;
}

int32_t initialize_from_files(hbDNNPackedHandle_t* packed, char const** names, int32_t count) {
  if (packed == nullptr || names == nullptr || count <= 0)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNInitializeFromFiles: NULL argument or file count <= 0");
  *packed = nullptr;
  std::vector<std::unique_ptr<rt::FileData>> files;
  for (int32_t i = 0; i < count; ++i) {
    if (names[i] == nullptr)
      return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNInitializeFromFiles: file name " + std::to_string(i) + " is NULL");
    std::unique_ptr<rt::FileData> f;
    const rt::Status st = rt::FileData::open(names[i], &f);
    if (!st.ok()) return to_ucp(st);
    files.push_back(std::move(f));
  }
  return load(std::move(files), packed);
}

int32_t initialize_from_ddr(hbDNNPackedHandle_t* packed, const void** data, int32_t* lengths, int32_t count) {
  if (packed == nullptr || data == nullptr || lengths == nullptr || count <= 0)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNInitializeFromDDR: NULL argument or count <= 0");
  *packed = nullptr;
  std::vector<std::unique_ptr<rt::FileData>> files;
  for (int32_t i = 0; i < count; ++i) {
    if (data[i] == nullptr || lengths[i] <= 0)
      return fail(HB_UCP_INVALID_ARGUMENT,
                  "hbDNNInitializeFromDDR: model data " + std::to_string(i) + " is NULL or has length <= 0");
    std::unique_ptr<rt::FileData> f;
    const rt::Status st = rt::FileData::copy(data[i], static_cast<size_t>(lengths[i]), &f);
    if (!st.ok()) return to_ucp(st);
    files.push_back(std::move(f));
  }
  return load(std::move(files), packed);
}

rt::capi::PackPin pack_of(hbDNNPackedHandle_t h) { return h == nullptr ? nullptr : Registry::get().pack(h); }

int32_t release(hbDNNPackedHandle_t packed) {
  const rt::capi::PackPin p = pack_of(packed);
  if (p == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNRelease: invalid packed handle");
  int live = 0;
  bool log_refusal = false;
  const Registry::Release r = Registry::get().release_pack(packed, &live, &log_refusal);
  if (r == Registry::Release::kNotFound) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNRelease: invalid packed handle");
  if (r == Registry::Release::kRunning) {
    if (!log_refusal) return HB_UCP_MODEL_IS_INUSE;  // logged once per pack
    return fail(HB_UCP_MODEL_IS_INUSE, "hbDNNRelease: " + std::to_string(live) +
                                           " task(s) of this pack are not released yet (logged once per pack)");
  }
  Views::get().remove(p.get());
  return HB_UCP_SUCCESS;
}

int32_t get_model_name_list(char const*** list, int32_t* count, hbDNNPackedHandle_t packed) {
  if (list == nullptr || count == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetModelNameList: NULL argument");
  const rt::capi::PackPin p = pack_of(packed);
  if (p == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetModelNameList: invalid packed handle");
  *list = const_cast<char const**>(p->name_list.data());
  *count = static_cast<int32_t>(p->name_list.size());
  return HB_UCP_SUCCESS;
}

int32_t get_model_handle(hbDNNHandle_t* handle, hbDNNPackedHandle_t packed, char const* name) {
  if (handle == nullptr || name == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetModelHandle: NULL argument");
  if (packed == nullptr || !Registry::get().find_model(packed, name, handle))
    return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetModelHandle: invalid packed handle");
  if (*handle != nullptr) return HB_UCP_SUCCESS;
  return fail(HB_UCP_INVALID_ARGUMENT, std::string("hbDNNGetModelHandle: no model named '") + name + "'");
}

#define OBPU_VIEW(fn, h)                                 \
  const Views::Pin v = Views::get().find(h);            \
  if (!v) return fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": invalid model handle")

// The index-th tensor of a list, or nullptr with the error logged.
const ViewTensor* at(const std::vector<ViewTensor>& ts, int32_t index, const char* fn) {
  if (index < 0 || index >= static_cast<int32_t>(ts.size())) {
    fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": index " + std::to_string(index) + " out of range 0.." +
                                      std::to_string(static_cast<int>(ts.size()) - 1));
    return nullptr;
  }
  return &ts[static_cast<size_t>(index)];
}

int32_t get_input_count(int32_t* count, hbDNNHandle_t h) {
  if (count == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetInputCount: NULL argument");
  OBPU_VIEW("hbDNNGetInputCount", h);
  *count = static_cast<int32_t>(v->inputs.size());
  return HB_UCP_SUCCESS;
}

int32_t get_output_count(int32_t* count, hbDNNHandle_t h) {
  if (count == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetOutputCount: NULL argument");
  OBPU_VIEW("hbDNNGetOutputCount", h);
  *count = static_cast<int32_t>(v->outputs.size());
  return HB_UCP_SUCCESS;
}

int32_t get_name(char const** name, hbDNNHandle_t h, int32_t index, bool input, const char* fn) {
  if (name == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": NULL argument");
  OBPU_VIEW(fn, h);
  const ViewTensor* t = at(input ? v->inputs : v->outputs, index, fn);
  if (t == nullptr) return HB_UCP_INVALID_ARGUMENT;
  *name = t->name.c_str();
  return HB_UCP_SUCCESS;
}

int32_t get_input_name(char const** name, hbDNNHandle_t h, int32_t i) {
  return get_name(name, h, i, true, "hbDNNGetInputName");
}
int32_t get_output_name(char const** name, hbDNNHandle_t h, int32_t i) {
  return get_name(name, h, i, false, "hbDNNGetOutputName");
}

int32_t view_props(hbDNNTensorProperties* props, const ModelView& v, int32_t index, bool input, const char* fn) {
  const ViewTensor* t = at(input ? v.inputs : v.outputs, index, fn);
  if (t == nullptr) return HB_UCP_INVALID_ARGUMENT;
  *props = t->props;
  return HB_UCP_SUCCESS;
}

int32_t get_props(hbDNNTensorProperties* props, hbDNNHandle_t h, int32_t index, bool input, const char* fn) {
  if (props == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": NULL argument");
  OBPU_VIEW(fn, h);
  return view_props(props, *v, index, input, fn);
}

int32_t get_input_props(hbDNNTensorProperties* p, hbDNNHandle_t h, int32_t i) {
  return get_props(p, h, i, true, "hbDNNGetInputTensorProperties");
}
int32_t get_output_props(hbDNNTensorProperties* p, hbDNNHandle_t h, int32_t i) {
  return get_props(p, h, i, false, "hbDNNGetOutputTensorProperties");
}

int32_t give_desc(const std::string& s, char const** desc, uint32_t* size, int32_t* type) {
  *desc = s.empty() ? nullptr : s.c_str();
  *size = static_cast<uint32_t>(s.size());
  *type = s.empty() ? HB_DNN_DESC_TYPE_UNKNOWN : HB_DNN_DESC_TYPE_STRING;
  return HB_UCP_SUCCESS;
}

int32_t get_io_desc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t h, int32_t index, bool input,
                    const char* fn) {
  if (desc == nullptr || size == nullptr || type == nullptr)
    return fail(HB_UCP_INVALID_ARGUMENT, std::string(fn) + ": NULL argument");
  OBPU_VIEW(fn, h);
  const ViewTensor* t = at(input ? v->inputs : v->outputs, index, fn);
  if (t == nullptr) return HB_UCP_INVALID_ARGUMENT;
  const rt::Model& m = *v->model;
  return give_desc(input ? m.inputs[t->io].desc : m.outputs[t->io].desc, desc, size, type);
}

int32_t get_input_desc(char const** d, uint32_t* s, int32_t* t, hbDNNHandle_t h, int32_t i) {
  return get_io_desc(d, s, t, h, i, true, "hbDNNGetInputDesc");
}
int32_t get_output_desc(char const** d, uint32_t* s, int32_t* t, hbDNNHandle_t h, int32_t i) {
  return get_io_desc(d, s, t, h, i, false, "hbDNNGetOutputDesc");
}

int32_t get_model_desc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t h) {
  if (desc == nullptr || size == nullptr || type == nullptr)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetModelDesc: NULL argument");
  OBPU_VIEW("hbDNNGetModelDesc", h);
  return give_desc(v->model->desc, desc, size, type);
}

int32_t get_compile_bpu_core_num(int32_t* n, hbDNNHandle_t h) {
  if (n == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetCompileBpuCoreNum: NULL argument");
  OBPU_VIEW("hbDNNGetCompileBpuCoreNum", h);
  *n = v->model->core_num;
  return HB_UCP_SUCCESS;
}

int32_t get_hbm_desc(char const** desc, uint32_t* size, int32_t* type, hbDNNPackedHandle_t packed, int32_t index) {
  if (desc == nullptr || size == nullptr || type == nullptr)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetHBMDesc: NULL argument");
  const rt::capi::PackPin p = pack_of(packed);
  if (p == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetHBMDesc: invalid packed handle");
  if (index < 0 || index >= static_cast<int32_t>(p->file_desc.size()))
    return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetHBMDesc: file index " + std::to_string(index) +
                                             " out of range (" + std::to_string(p->file_desc.size()) + " file(s))");
  return give_desc(p->file_desc[static_cast<size_t>(index)], desc, size, type);
}

// taskHandle == NULL: run now with the default scheduling and wait.
int32_t infer_sync(const ModelView& v, const std::vector<rt::IoBuffer>& ins, const std::vector<rt::IoBuffer>& outs) {
  std::shared_ptr<rt::Task> task;
  rt::Status st = rt::submit_run(&task, v.model, ins, outs, rt::CtrlParam{}, false);
  if (!st.ok()) return to_ucp(st);
  st = rt::wait_task(task.get(), 0);
  rt::release_task(task);
  return st.ok() ? HB_UCP_SUCCESS : fail(to_ucp(st), "hbDNNInferV2: " + st.message());
}

int32_t infer_v2(hbUCPTaskHandle_t* task_handle, hbDNNTensor* output, hbDNNTensor const* input, hbDNNHandle_t h) {
  if (output == nullptr || input == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNInferV2: NULL argument");
  OBPU_VIEW("hbDNNInferV2", h);
  std::vector<rt::IoBuffer> ins, outs;
  rt::Status st = to_io_buffers(*v, input, output, &ins, &outs);
  if (!st.ok()) return to_ucp(st);
  if (task_handle == nullptr) return infer_sync(*v, ins, outs);
  std::shared_ptr<rt::Task> task;
  if (*task_handle != nullptr) {
    task = Registry::get().task(*task_handle);
    if (!task)
      return fail(HB_UCP_TASK_HANDLE_INVALID, "hbDNNInferV2: *taskHandle is not a task (set it to NULL for a new task)");
    if (rt::task_started(task.get()))
      return fail(HB_UCP_API_USE_ERROR, "hbDNNInferV2: the task was submitted already; sub-tasks are added before "
                                        "hbUCPSubmitTask");
  }
  const bool is_new = !task;
  st = rt::submit_run(&task, v->model, ins, outs, rt::CtrlParam{}, true);
  if (!st.ok()) return to_ucp(st);
  if (is_new) *task_handle = Registry::get().add_task(task);
  return HB_UCP_SUCCESS;
}

int32_t get_task_output_props(hbDNNTensorProperties* props, hbUCPTaskHandle_t task_handle, int32_t sub,
                              int32_t index) {
  if (props == nullptr) return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetTaskOutputTensorProperties: NULL argument");
  auto task = task_handle == nullptr ? nullptr : Registry::get().task(task_handle);
  if (!task) return fail(HB_UCP_TASK_HANDLE_INVALID, "hbDNNGetTaskOutputTensorProperties: invalid task handle");
  const size_t runs = rt::task_run_count(task.get());
  if (sub < 0 || static_cast<size_t>(sub) >= runs)
    return fail(HB_UCP_INVALID_ARGUMENT, "hbDNNGetTaskOutputTensorProperties: sub-task " + std::to_string(sub) +
                                             " out of range (" + std::to_string(runs) + " sub-task(s))");
  // Every output of an OpenBPU model is static: the model's properties are
  // the actual ones. (A live task keeps its pack, hence the view, loaded.)
  const auto view = Views::get().of(rt::task_run_model(task.get(), static_cast<size_t>(sub)));
  if (view == nullptr) return fail(HB_UCP_TASK_HANDLE_INVALID, "hbDNNGetTaskOutputTensorProperties: the task's model is gone");
  return view_props(props, *view, index, false, "hbDNNGetTaskOutputTensorProperties");
}

// obpuInferWithLayerOutputs of this generation: the values in gen-B terms
// (layer_view: logical order, byte strides, SCALE).
class LayerCallback final : public rt::LayerValueObserver {
 public:
  LayerCallback(obpuLayerOutputCallback cb, void* user) : cb_(cb), user_(user) {}

 protected:
  bool report(const rt::LayerValue& v) override {
    ViewTensor t;
    layer_view(*v.desc, &t);
    obpuLayerOutput o{};
    copy_layer_names(v, &o);
    o.properties = t.props;
    return cb_(&o, user_) == 0;
  }

 private:
  obpuLayerOutputCallback cb_;
  void* user_;
};

int32_t infer_with_layer_outputs(hbDNNTensor** output, hbDNNTensor const* input, hbDNNHandle_t h,
                                 obpuLayerOutputCallback callback, void* user) {
  if (output == nullptr || *output == nullptr || input == nullptr || callback == nullptr)
    return fail(HB_UCP_INVALID_ARGUMENT, "obpuInferWithLayerOutputs: NULL argument");
  OBPU_VIEW("obpuInferWithLayerOutputs", h);
  std::vector<rt::IoBuffer> ins, outs;
  rt::Status st = to_io_buffers(*v, input, *output, &ins, &outs);
  if (!st.ok()) return to_ucp(st);
  rt::CtrlParam ctrl;
  ctrl.observer = std::make_shared<LayerCallback>(callback, user);
  std::shared_ptr<rt::Task> task;
  st = rt::submit_run(&task, v->model, ins, outs, ctrl, false);
  if (!st.ok()) return to_ucp(st);
  st = rt::wait_task(task.get(), 0);
  rt::release_task(task);
  return st.ok() ? HB_UCP_SUCCESS : fail(to_ucp(st), "obpuInferWithLayerOutputs: " + st.message());
}

const DnnApi kApi = {
    kBridgeVersion,
    initialize_from_files,
    initialize_from_ddr,
    release,
    get_model_name_list,
    get_model_handle,
    get_input_count,
    get_input_name,
    get_input_props,
    get_output_count,
    get_output_name,
    get_output_props,
    get_input_desc,
    get_output_desc,
    get_model_desc,
    get_compile_bpu_core_num,
    get_hbm_desc,
    infer_v2,
    get_task_output_props,
};

}  // namespace

}  // namespace openbpu::ucp

OBPU_UCP_API const openbpu::ucp::DnnApi* openbpu_ucp_dnn_api(uint32_t version) {
  return version == openbpu::ucp::kBridgeVersion ? &openbpu::ucp::kApi : nullptr;
}

OBPU_UCP_API int32_t obpuInferWithLayerOutputs(hbDNNTensor** output, hbDNNTensor const* input,
                                               hbDNNHandle_t dnnHandle, obpuLayerOutputCallback callback,
                                               void* userData) {
  return openbpu::ucp::infer_with_layer_outputs(output, input, dnnHandle, callback, userData);
}
