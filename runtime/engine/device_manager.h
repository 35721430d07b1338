// SPDX-License-Identifier: Apache-2.0
// The process's BPU device. On the simulator the platform (march) is fixed by
// HB_DNN_SIM_PLATFORM or, when unset, by the first model loaded, as on the
// vendor's x86 simulator; models of another march are then incompatible.
#ifndef OPENBPU_RUNTIME_ENGINE_DEVICE_MANAGER_H_
#define OPENBPU_RUNTIME_ENGINE_DEVICE_MANAGER_H_

#include "bpu_driver/device.h"
#include "runtime/core/status.h"

namespace openbpu::rt {

// Device for a model of `march` (creating it on first use).
Status device_for_march(const isa::MarchInfo& march, drv::Device** out);

// Device for the memory API: the process's device, or (before any model is
// loaded) a simulator device that runs no jobs and only provides memory.
drv::Device* memory_device();

// The process's device if a model has created it, else nullptr.
drv::Device* current_device();

// The simulated platform: the device's march, else HB_DNN_SIM_PLATFORM's,
// else nullptr (fixed later by the first model loaded).
const isa::MarchInfo* platform_march();

// Options of the simulator device created by the first model load (tests,
// tools: deterministic stepping, pacing, watchdog); they replace the
// environment's. False when the device exists already.
bool set_sim_options(const drv::SimOptions& options);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_ENGINE_DEVICE_MANAGER_H_
