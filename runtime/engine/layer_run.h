// SPDX-License-Identifier: Apache-2.0
// Host execution of a BPU segment for per-layer outputs: the program is
// decoded from the file and run with the simulator's kernels (bit-exact with
// the device) on the task's own memory.
#ifndef OPENBPU_RUNTIME_ENGINE_LAYER_RUN_H_
#define OPENBPU_RUNTIME_ENGINE_LAYER_RUN_H_

#include <cstdint>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/loader/model.h"

namespace openbpu::rt {

// ptr: the run's bound address per model tensor; scratch: the segment's
// scratch area in the task arena.
Status run_bpu_on_host(const Model& model, size_t segment, const std::vector<uint8_t*>& ptr, uint8_t* scratch);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_ENGINE_LAYER_RUN_H_
