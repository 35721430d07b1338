// SPDX-License-Identifier: Apache-2.0
// The backend registry: the one list of the backends built into bpu_driver.
#include "bpu_driver/backend.h"
#include "bpu_driver/src/host/host_backend.h"

namespace openbpu::drv {

const std::vector<BackendEntry>& backends() {
  static const std::vector<BackendEntry> table = {
      {"sim", "in-process simulator: runs every function call on bpu_sim's bit-exact kernels",
       create_sim_backend},
      {"null", "timing only: each function call takes its estimated board time, nothing is computed",
       create_null_backend},
  };
  return table;
}

const BackendEntry* find_backend(const std::string& name) {
  for (const BackendEntry& e : backends())
    if (name == e.name) return &e;
  return nullptr;
}

std::string backend_names() {
  std::string s;
  for (const BackendEntry& e : backends()) s += std::string(s.empty() ? "" : ", ") + e.name;
  return s;
}

}  // namespace openbpu::drv
