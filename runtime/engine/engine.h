// SPDX-License-Identifier: Apache-2.0
// The task engine. A task is one or more model runs (chained with the `more`
// flag); a run executes its model's segments in order: CPU segments on the
// CPU worker pool, BPU segments on the device. hbDNNInfer returns after
// binding buffers and queueing; nothing busy-waits.
//
// Threads: the caller of submit(), the CPU pool (HB_MAX_THREAD_NUM, default
// 4) and the device's core threads all advance tasks; at most one step of a
// task is in flight at any time, so a task's state is only touched by the
// thread running its current step, except for cancellation, which is a flag.
#ifndef OPENBPU_RUNTIME_ENGINE_ENGINE_H_
#define OPENBPU_RUNTIME_ENGINE_ENGINE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/roi_resize.h"
#include "runtime/core/status.h"
#include "runtime/loader/model.h"

namespace openbpu::rt {

inline constexpr int kMaxLiveTasks = 32;
inline constexpr int kMaxRunsPerTask = 255;

// One user buffer for a model input or output, with the properties the user
// described it with. The 1.x API describes the buffer by its alignedShape
// (the model's, or its validShape for a tight buffer); the UCP API by byte
// strides (`strides` for tensors, `row_stride` for image planes).
struct IoBuffer {
  uint8_t* data[2] = {nullptr, nullptr};  // [1] = UV plane of NV12_SEPARATE
  uint64_t size[2] = {0, 0};
  int32_t data_type = 0;
  int32_t layout = 0;
  std::vector<int32_t> valid, aligned;
  // Bytes between consecutive indices of each dimension of `valid` (layout
  // order); empty = described by `aligned`.
  std::vector<int64_t> strides;
  // Row strides of the Y and UV planes of an image input; 0 = the width of
  // `aligned` (both planes).
  int64_t row_stride[2] = {0, 0};
  // A resizer input (UCP: Y + UV + roi): the planes hold a whole
  // image_h x image_w frame, and the run crops `roi` out of it and scales it
  // to the model's input (runtime/core/roi_resize.h) when it stages inputs.
  bool resizer = false;
  RoiBox roi;
  int32_t image_h = 0, image_w = 0;
};

// Per-layer observation of a run (obpuInferWithLayerOutputs). A task with an
// observer runs its BPU segments on the host with the simulator's bit-exact
// kernels (engine/layer_run.h) instead of on the device, and reports every
// segment's outputs as they are computed.
class LayerObserver {
 public:
  virtual ~LayerObserver() = default;
  // A segment finished: its output tensors are at ptr[tensor]. False stops
  // the task.
  virtual bool segment_done(const Model& model, size_t segment, const std::vector<uint8_t*>& ptr) = 0;
  // A layer inside a BPU segment finished (models with debug records):
  // output k of the layer is at out[k]. False stops the task.
  virtual bool layer_done(const Model& model, size_t segment, const LayerRecord& layer,
                          const std::vector<const uint8_t*>& out) = 0;
};

// One value of a run as per-layer dumps report it (obpuInferWithLayerOutputs
// of both API generations): a segment's output or, inside a BPU segment with
// debug records, a layer's output.
struct LayerValue {
  std::string name;     // file-safe: layer_dump_name of the segment or layer
  std::string op_type;  // the CPU operator or the layer's main node; "" for a BPU subgraph
  std::string nodes;    // the segment's name; for a layer its ONNX nodes, ';'-separated
  std::string tensor;   // the ONNX value
  bool bpu = false;
  size_t segment = 0;
  uint32_t first = 0, count = 0;  // a layer's instructions; 0 for a segment
  const TensorDesc* desc = nullptr;
  const uint8_t* data = nullptr;
};

// The naming fields of a LayerValue copied into a per-layer output struct of
// either API generation (obpuLayerOutput: the same members, other property
// types); the strings stay owned by `v`.
template <class Out>
void copy_layer_names(const LayerValue& v, Out* o) {
  o->name = v.name.c_str();
  o->opType = v.op_type.c_str();
  o->nodes = v.nodes.c_str();
  o->tensorName = v.tensor.c_str();
  o->onBpu = v.bpu ? 1 : 0;
  o->segmentIndex = static_cast<int32_t>(v.segment);
  o->firstInstruction = static_cast<int32_t>(v.first);
  o->instructionCount = static_cast<int32_t>(v.count);
  o->data = v.data;
}

// A LayerObserver that hands every segment output and layer output, in
// execution order, to report(); false stops the task.
class LayerValueObserver : public LayerObserver {
 public:
  bool segment_done(const Model& model, size_t segment, const std::vector<uint8_t*>& ptr) final;
  bool layer_done(const Model& model, size_t segment, const LayerRecord& layer,
                  const std::vector<const uint8_t*>& out) final;

 protected:
  virtual bool report(const LayerValue& value) = 0;
};

struct CtrlParam {
  uint32_t core_mask = 0;
  int32_t priority = 0;
  int64_t custom_id = 0;
  std::shared_ptr<LayerObserver> observer;  // normally null
};

class Task;

// Creates a task (task == nullptr) or appends a run to an open one; closes it
// and starts it unless `more`. On error nothing is queued.
Status submit_run(std::shared_ptr<Task>* task, Model* model, const std::vector<IoBuffer>& inputs,
                  const std::vector<IoBuffer>& outputs, const CtrlParam& ctrl, bool more);

// The buffers of one run of a model.
struct RunBuffers {
  std::vector<IoBuffer> inputs, outputs;
};

// submit_run for several runs of one model (hbDNNRoiInfer: one run per ROI
// batch), all or nothing: every run is bound and checked before any is
// appended, and together they count against the runs a task may chain.
Status submit_runs(std::shared_ptr<Task>* task, Model* model, const std::vector<RunBuffers>& runs,
                   const CtrlParam& ctrl, bool more);

// Closes an open task (every run appended with `more`) and starts it with
// `ctrl` (the UCP API's submit). kApiUseError when it is not open.
Status start_task(const std::shared_ptr<Task>& task, const CtrlParam& ctrl);

// Whether the task was started (closed); its runs and their models.
bool task_started(Task* task);
size_t task_run_count(Task* task);
Model* task_run_model(Task* task, size_t run);

// Waits for a task: timeout_ms <= 0 waits forever.
Status wait_task(Task* task, int32_t timeout_ms);

// Cancels if still running and drops the caller's reference.
void release_task(const std::shared_ptr<Task>& task);

// Registers a completion callback (runs at once if the task already ended).
Status set_task_callback(const std::shared_ptr<Task>& task, std::function<void(int32_t)> cb);

// Estimated remaining microseconds of a task (timing model).
double task_estimate_us(Task* task);

// Number of tasks created and not released.
int live_task_count();

// hbDNNInferCtrlParam.bpuCoreId against the device's cores: 0 (any) or a
// mask of existing cores, else kInvalidArgument naming the core.
Status check_core_mask(const drv::Device& device, uint32_t core_mask);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_ENGINE_ENGINE_H_
