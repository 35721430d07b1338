// SPDX-License-Identifier: Apache-2.0
#include "runtime/device/device_manager.h"

#include <memory>
#include <mutex>
#include <string>

#include "bpu_sim/executor.h"
#include "runtime/core/env.h"
#include "runtime/core/log.h"

namespace openbpu::rt {

namespace {

std::mutex g_mu;
std::unique_ptr<drv::Scheduler> g_device;  // never destroyed before exit handlers run

bool g_have_options = false;
drv::SchedulerOptions g_options;  // set_scheduler_options, else from the environment

// The device's options from the environment (runtime/core/env.h).
drv::DeviceOptions device_options() {
  const Env& e = env();
  drv::DeviceOptions d;
  d.backend = e.device_backend;
  d.backend_options.kernels = e.sim_kernels;
  if (g_have_options) {
    d.scheduler = g_options;
  } else {
    d.scheduler.paced = e.paced;
    d.scheduler.pace_scale = e.pace_scale;
    d.scheduler.watchdog_us = e.watchdog_us;
    d.scheduler.spin_ns = e.spin_ns;
  }
  return d;
}

Status create(const isa::MarchInfo& march, std::unique_ptr<drv::Scheduler>* out) {
  OBPU_RETURN_IF_ERROR(env_status());
  const drv::DeviceOptions options = device_options();
  if (drv::find_backend(options.backend) == nullptr)
    return error(kInvalidArgument, "environment variable OPENBPU_DEVICE_BACKEND='" + options.backend +
                                       "' is not a device backend; accepted: " + drv::backend_names());
  std::string err;
  *out = drv::create_device(march, options, &err);
  if (!*out)
    return error(kInvalidArgument, "OPENBPU_DEVICE_BACKEND='" + options.backend + "' with OPENBPU_SIM_KERNELS='" +
                                       options.backend_options.kernels + "': " + err);
  if (env().sim_threads_set) sim::set_sim_threads(env().sim_threads);  // OPENBPU_SIM_THREADS
  sim::set_sim_spin_ns(env().spin_ns);                                 // OPENBPU_SPIN_US
  return Status::Ok();
}

Status create_locked(const isa::MarchInfo& march) {
  OBPU_RETURN_IF_ERROR(create(march, &g_device));
  const drv::DeviceInfo& info = g_device->info();
  OBPU_LOGI("BPU device: backend %s, platform %s, %d core(s)", info.backend.c_str(), march.hw_name, march.cores);
  if (!info.computes)
    OBPU_LOGW("BPU device backend '%s' is timing only: BPU outputs are not computed", info.backend.c_str());
  return Status::Ok();
}

}  // namespace

Status device_for_march(const isa::MarchInfo& march, drv::Device** out) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_device) {
    OBPU_RETURN_IF_ERROR(env_status());
    const isa::MarchInfo* platform = env().sim_platform;  // HB_DNN_SIM_PLATFORM
    OBPU_RETURN_IF_ERROR(create_locked(platform != nullptr ? *platform : march));
  }
  const isa::MarchInfo* dev = g_device->info().march;
  if (dev->march != march.march)
    return error(kIncompatibleModel,
                 std::string("model built for march ") + march.name +
                     " cannot run on the simulated BPU platform " + dev->hw_name +
                     " (fixed by HB_DNN_SIM_PLATFORM or the first model loaded in this process)");
  *out = g_device.get();
  return Status::Ok();
}

drv::Device* memory_device() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_device) {
    // Memory is platform-independent on the in-process backends; a device
    // created here only fixes the platform when HB_DNN_SIM_PLATFORM says so.
    if (!env_status().ok()) return nullptr;
    if (const isa::MarchInfo* platform = env().sim_platform) {
      if (!create_locked(*platform).ok()) return nullptr;
    } else {
      static std::unique_ptr<drv::Scheduler> host_memory;
      if (!host_memory && !create(isa::march_info(isa::March::kBernoulli2), &host_memory).ok()) return nullptr;
      return host_memory.get();
    }
  }
  return g_device.get();
}

bool set_scheduler_options(const drv::SchedulerOptions& options) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_device) return false;
  g_options = options;
  g_have_options = true;
  return true;
}

drv::Scheduler* current_device() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_device.get();
}

const isa::MarchInfo* platform_march() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_device) return g_device->info().march;
  if (!env_status().ok()) return nullptr;
  return env().sim_platform;  // HB_DNN_SIM_PLATFORM
}

}  // namespace openbpu::rt
