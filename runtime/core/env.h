// SPDX-License-Identifier: Apache-2.0
// Every environment variable libdnn reads, parsed in this one place, once
// per process (docs/environment.md is the table). A malformed or unknown
// value is an error: env_status() names the variable and the accepted
// values, and the model load (or memory allocation) that needs the
// environment fails with it. Vendor variables OpenBPU does not implement
// are logged as ignored.
#ifndef OPENBPU_RUNTIME_CORE_ENV_H_
#define OPENBPU_RUNTIME_CORE_ENV_H_

#include <cstdint>
#include <string>

#include "bpu_sim/isa/march.h"
#include "runtime/core/status.h"

namespace openbpu::rt {

struct Env {
  int log_level = 3;                             // HB_DNN_LOG_LEVEL (vendor scale 0..6)
  int ucp_log_level = -1;                        // HB_UCP_LOG_LEVEL, else HB_NN_LOG_LEVEL (0..6); -1 = unset
  const isa::MarchInfo* sim_platform = nullptr;  // HB_DNN_SIM_PLATFORM; nullptr = first model's march
  std::string profiler_log_path;                 // HB_DNN_PROFILER_LOG_PATH; empty = no session
  int max_task_num = 8;                          // HB_MAX_TASK_NUM, 1..32
  int max_thread_num = 4;                        // HB_MAX_THREAD_NUM, 1..64
  std::string device_backend = "sim";            // OPENBPU_DEVICE_BACKEND (checked against drv::backends())
  bool paced = false;                            // OPENBPU_SIM_PACED
  bool paced_set = false;                        //   (the variable was given)
  double pace_scale = 1.0;
  uint64_t watchdog_us = 2'000'000;              // OPENBPU_SIM_WATCHDOG_MS
  uint64_t fc_timeout_us = 0;                    // OPENBPU_FC_TIMEOUT_MS; 0 = none
  std::string sim_kernels;                       // OPENBPU_SIM_KERNELS; empty = fastest
  int sim_threads = 1;                           // OPENBPU_SIM_THREADS, 1..64
  bool sim_threads_set = false;
  uint64_t spin_ns = 20'000;                     // OPENBPU_SPIN_US, 0..1000 (bpu_driver/spin.h)
};

// The parsed environment (defaults for variables that are unset or bad).
const Env& env();
// Ok, or kInvalidArgument naming the first malformed variable (every bad
// one is logged once, with its accepted values).
Status env_status();

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CORE_ENV_H_
