// SPDX-License-Identifier: Apache-2.0
// The process's BPU device: the fc scheduler over the backend that
// OPENBPU_DEVICE_BACKEND names (drv::backends(); default `sim`). The platform
// (march) is fixed by HB_DNN_SIM_PLATFORM or, when unset, by the first model
// loaded, as on the vendor's x86 simulator; models of another march are then
// incompatible.
#ifndef OPENBPU_RUNTIME_DEVICE_DEVICE_MANAGER_H_
#define OPENBPU_RUNTIME_DEVICE_DEVICE_MANAGER_H_

#include "bpu_driver/scheduler.h"
#include "runtime/core/status.h"

namespace openbpu::rt {

// Device for a model of `march` (creating it on first use).
Status device_for_march(const isa::MarchInfo& march, drv::Device** out);

// Device for the memory API: the process's device, or (before any model is
// loaded) a simulator device that runs no jobs and only provides memory.
drv::Device* memory_device();

// The process's device (the fc scheduler over the selected backend) if a
// model has created it, else nullptr. Tests and tools reach the scheduler's
// hooks (trace, fault injection, stepping) through it.
drv::Scheduler* current_device();

// The simulated platform: the device's march, else HB_DNN_SIM_PLATFORM's,
// else nullptr (fixed later by the first model loaded).
const isa::MarchInfo* platform_march();

// Scheduler options of the device created by the first model load (tests,
// tools: deterministic stepping, pacing, watchdog); they replace the
// environment's. The backend stays the environment's choice. False when the
// device exists already.
bool set_scheduler_options(const drv::SchedulerOptions& options);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_DEVICE_DEVICE_MANAGER_H_
