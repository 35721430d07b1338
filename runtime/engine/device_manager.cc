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

drv::SimOptions sim_options() {
  drv::SimOptions o;
  const char* p = std::getenv("OPENBPU_SIM_PACED");
  o.paced = p != nullptr && (std::string(p) == "1" || std::string(p) == "true");
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

drv::Device* current_device() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_device.get();
}

}  // namespace openbpu::rt
