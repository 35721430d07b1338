// SPDX-License-Identifier: Apache-2.0
// Host execution of a BPU segment for per-layer outputs: the program is
// decoded from the file and run with the simulator's kernels (bit-exact with
// the device) on the task's own memory.
#ifndef OPENBPU_RUNTIME_ENGINE_LAYER_RUN_H_
#define OPENBPU_RUNTIME_ENGINE_LAYER_RUN_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/loader/model.h"

namespace openbpu::rt {

// Called after the last instruction of each debug-recorded layer with the
// address of each of its outputs; false stops the run.
using LayerDone = std::function<bool(const LayerRecord& layer, const std::vector<const uint8_t*>& outputs)>;

// ptr: the run's bound address per model tensor; scratch: the segment's
// scratch area in the task arena; on_layer may be empty.
Status run_bpu_on_host(const Model& model, size_t segment, const std::vector<uint8_t*>& ptr, uint8_t* scratch,
                       const LayerDone& on_layer = {});

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_ENGINE_LAYER_RUN_H_
