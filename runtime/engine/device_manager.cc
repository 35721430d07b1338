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
std::unique_ptr<drv::Device> g_device;  // never destroyed before exit handlers run

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
drv::SimOptions g_options;  // set_sim_options, else from the environment

// OPENBPU_SIM_PACED: unset/0 = as fast as possible; 1 (or true) = each fc
// takes its estimated board time; N > 1 = N times the board time.
// OPENBPU_SIM_WATCHDOG_MS: how long a hung fc runs before its core is reset.
drv::SimOptions sim_options() {
  if (g_have_options) return g_options;
  drv::SimOptions o;
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
  return o;
}

Status create_locked(const isa::MarchInfo& march) {
  g_device = drv::create_sim_device(march, sim_options());
  OBPU_LOGI("simulated BPU platform %s, %d core(s)", march.hw_name, march.cores);
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
    // Memory is platform-independent on the simulator; a device created here
    // only fixes the platform when HB_DNN_SIM_PLATFORM says so.
    if (env != nullptr) {
      create_locked(*env);
    } else {
      static std::unique_ptr<drv::Device> host_memory =
          drv::create_sim_device(isa::march_info(isa::March::kBernoulli2), drv::SimOptions{});
      return host_memory.get();
    }
  }
  return g_device.get();
}

bool set_sim_options(const drv::SimOptions& options) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_device) return false;
  g_options = options;
  g_have_options = true;
  return true;
}

drv::Device* current_device() {
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
