// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/device_manager.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/core/log.h"

namespace openbpu::rt {

namespace {

std::mutex g_mu;
std::unique_ptr<drv::Scheduler> g_device;  // never destroyed before exit handlers run

// HB_DNN_SIM_PLATFORM accepts the vendor names (BERNOULLI2, BAYES, BAYES-E ...)
// and our march names, case-insensitively.
const isa::MarchInfo* env_platform(bool* set, std::string* raw) {
  const char* v = std::getenv("HB_DNN_SIM_PLATFORM");
  *set = v != nullptr && *v != '\0';
  if (!*set) return nullptr;
  *raw = v;
  std::string up;
  for (char c : *raw) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int n = 0;
  const isa::MarchInfo* all = isa::all_marches(&n);
  for (int i = 0; i < n; ++i) {
    std::string hw = all[i].hw_name, nm = all[i].name;
    for (auto& c : nm) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string hw_nodash = hw;
    hw_nodash.erase(std::remove(hw_nodash.begin(), hw_nodash.end(), '-'), hw_nodash.end());
    if (up == hw || up == nm || up == hw_nodash) return &all[i];
  }
  return nullptr;
}

bool g_have_options = false;
drv::SchedulerOptions g_options;  // set_scheduler_options, else from the environment

// OPENBPU_DEVICE_BACKEND: a name of drv::backends() (default sim).
// OPENBPU_SIM_PACED: unset/0 = as fast as possible; 1 (or true) = each fc
// takes its estimated board time; N > 1 = N times the board time.
// OPENBPU_SIM_WATCHDOG_MS: how long a hung fc runs before its core is reset.
drv::DeviceOptions device_options() {
  drv::DeviceOptions d;
  if (const char* b = std::getenv("OPENBPU_DEVICE_BACKEND"); b != nullptr && *b != '\0') d.backend = b;
  if (g_have_options) {
    d.scheduler = g_options;
    return d;
  }
  drv::SchedulerOptions& o = d.scheduler;
  if (const char* p = std::getenv("OPENBPU_SIM_PACED"); p != nullptr && *p != '\0') {
    const std::string v = p;
    char* end = nullptr;
    const double scale = std::strtod(p, &end);
    if (v == "true") {
      o.paced = true;
    } else if (end != p && *end == '\0' && scale >= 0.0 && scale <= 1e6) {
      o.paced = scale > 0.0;
      o.pace_scale = scale > 0.0 ? scale : 1.0;
    } else {
      OBPU_LOGW("ignoring OPENBPU_SIM_PACED=%s (expected 0, 1, true or a time scale)", p);
    }
  }
  if (const char* w = std::getenv("OPENBPU_SIM_WATCHDOG_MS"); w != nullptr && *w != '\0') {
    char* end = nullptr;
    const long ms = std::strtol(w, &end, 10);
    if (end != w && *end == '\0' && ms > 0 && ms <= 3600 * 1000)
      o.watchdog_us = static_cast<uint64_t>(ms) * 1000;
    else
      OBPU_LOGW("ignoring OPENBPU_SIM_WATCHDOG_MS=%s", w);
  }
  return d;
}

Status create(const isa::MarchInfo& march, std::unique_ptr<drv::Scheduler>* out) {
  const drv::DeviceOptions options = device_options();
  std::string err;
  *out = drv::create_device(march, options, &err);
  if (!*out) return error(kInvalidArgument, "OPENBPU_DEVICE_BACKEND='" + options.backend + "': " + err);
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
    bool set = false;
    std::string raw;
    const isa::MarchInfo* env = env_platform(&set, &raw);
    if (set && env == nullptr)
      return error(kInvalidArgument, "HB_DNN_SIM_PLATFORM='" + raw + "' is not a known BPU platform");
    OBPU_RETURN_IF_ERROR(create_locked(env ? *env : march));
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
    bool set = false;
    std::string raw;
    const isa::MarchInfo* env = env_platform(&set, &raw);
    // Memory is platform-independent on the in-process backends; a device
    // created here only fixes the platform when HB_DNN_SIM_PLATFORM says so.
    if (env != nullptr) {
      if (!create_locked(*env).ok()) return nullptr;
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
  bool set = false;
  std::string raw;
  return env_platform(&set, &raw);
}

}  // namespace openbpu::rt
