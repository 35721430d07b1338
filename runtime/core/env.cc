// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/env.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <sys/stat.h>

#include "bpu_sim/executor.h"
#include "runtime/core/log.h"

extern char** environ;

namespace openbpu::rt {

namespace {

// An integer in [lo, hi], the whole value (no trailing characters).
bool parse_int(const char* v, long lo, long hi, long* out) {
  char* end = nullptr;
  errno = 0;
  const long l = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || errno != 0 || l < lo || l > hi) return false;
  *out = l;
  return true;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// HB_DNN_SIM_PLATFORM: the vendor names (BERNOULLI2, BAYES, BAYES-E ...) and
// our march names, case-insensitively.
const isa::MarchInfo* find_platform(const char* v) {
  const std::string up = upper(v);
  int n = 0;
  const isa::MarchInfo* all = isa::all_marches(&n);
  for (int i = 0; i < n; ++i) {
    std::string hw = all[i].hw_name, hw_nodash = hw;
    hw_nodash.erase(std::remove(hw_nodash.begin(), hw_nodash.end(), '-'), hw_nodash.end());
    if (up == hw || up == upper(all[i].name) || up == hw_nodash) return &all[i];
  }
  return nullptr;
}

std::string platform_names() {
  int n = 0;
  const isa::MarchInfo* all = isa::all_marches(&n);
  std::string s;
  for (int i = 0; i < n; ++i) s += std::string(s.empty() ? "" : ", ") + all[i].hw_name;
  return s + " (or the march names, any case)";
}

std::string kernel_names() {
  std::string s;
  for (const sim::KernelTable* t : sim::available_kernels()) s += std::string(s.empty() ? "" : ", ") + t->name;
  return s;
}

// One variable: how to read it into Env, and what it accepts (for errors
// and docs/environment.md). parse returns false for a bad value.
struct Var {
  const char* name;
  bool (*parse)(const char* v, Env* e);
  std::string (*accepted)();
};

std::string text(const char* s) { return s; }

// HB_UCP_LOG_LEVEL and HB_NN_LOG_LEVEL (the UCP generation's two names).
bool parse_ucp_log_level(const char* v, Env* e) {
  long l = 0;
  return parse_int(v, 0, 6, &l) && ((e->ucp_log_level = static_cast<int>(l)), true);
}
std::string ucp_log_levels() { return "an integer 0..6 (UCP scale: 0 trace .. 3 warning .. 6 never)"; }

const std::vector<Var>& variables() {
  static const std::vector<Var> vars = {
      {"HB_DNN_LOG_LEVEL",
       [](const char* v, Env* e) {
         long l = 0;
         return parse_int(v, 0, 6, &l) && ((e->log_level = static_cast<int>(l)), true);
       },
       [] { return text("an integer 0..6 (0 none, 1 debug, 2 info, 3 warning, 4 error, 5 fatal)"); }},
      // The UCP generation's level (libhbucp.so); HB_UCP_LOG_LEVEL, parsed
      // after HB_NN_LOG_LEVEL, wins when both are set.
      {"HB_NN_LOG_LEVEL", parse_ucp_log_level, ucp_log_levels},
      {"HB_UCP_LOG_LEVEL", parse_ucp_log_level, ucp_log_levels},
      {"HB_DNN_SIM_PLATFORM",
       [](const char* v, Env* e) { return (e->sim_platform = find_platform(v)) != nullptr; }, platform_names},
      {"HB_DNN_PROFILER_LOG_PATH",
       [](const char* v, Env* e) {
         struct stat st {};
         if (::stat(v, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
         e->profiler_log_path = v;
         return true;
       },
       [] { return text("an existing directory"); }},
      {"HB_MAX_TASK_NUM",
       [](const char* v, Env* e) {
         long l = 0;
         return parse_int(v, 1, 32, &l) && ((e->max_task_num = static_cast<int>(l)), true);
       },
       [] { return text("an integer 1..32"); }},
      {"HB_MAX_THREAD_NUM",
       [](const char* v, Env* e) {
         long l = 0;
         return parse_int(v, 1, 64, &l) && ((e->max_thread_num = static_cast<int>(l)), true);
       },
       [] { return text("an integer 1..64"); }},
      {"OPENBPU_DEVICE_BACKEND",
       [](const char* v, Env* e) {
         e->device_backend = v;  // the name is checked against drv::backends() when the device is created
         return true;
       },
       [] { return text("a device backend name (sim, null)"); }},
      {"OPENBPU_SIM_PACED",
       [](const char* v, Env* e) {
         e->paced_set = true;
         if (std::strcmp(v, "true") == 0) return (e->paced = true);
         if (std::strcmp(v, "false") == 0) return !(e->paced = false);
         char* end = nullptr;
         const double scale = std::strtod(v, &end);
         if (end == v || *end != '\0' || !(scale >= 0.0 && scale <= 1e6)) return false;
         e->paced = scale > 0.0;
         e->pace_scale = scale > 0.0 ? scale : 1.0;
         return true;
       },
       [] { return text("0, 1, true, false, or a board time scale in (0, 1e6]"); }},
      {"OPENBPU_SIM_WATCHDOG_MS",
       [](const char* v, Env* e) {
         long l = 0;
         return parse_int(v, 1, 3600 * 1000, &l) && ((e->watchdog_us = static_cast<uint64_t>(l) * 1000), true);
       },
       [] { return text("milliseconds 1..3600000"); }},
      {"OPENBPU_FC_TIMEOUT_MS",
       [](const char* v, Env* e) {
         long l = 0;
         return parse_int(v, 0, 3600 * 1000, &l) && ((e->fc_timeout_us = static_cast<uint64_t>(l) * 1000), true);
       },
       [] { return text("milliseconds 0..3600000 (0 = none)"); }},
      {"OPENBPU_SIM_KERNELS",
       [](const char* v, Env* e) {
         if (sim::find_kernels(v) == nullptr) return false;
         e->sim_kernels = v;
         return true;
       },
       kernel_names},
      {"OPENBPU_SIM_THREADS",
       [](const char* v, Env* e) {
         long l = 0;
         if (!parse_int(v, 1, 64, &l)) return false;
         e->sim_threads = static_cast<int>(l);
         e->sim_threads_set = true;
         return true;
       },
       [] { return text("an integer 1..64"); }},
      {"OPENBPU_SPIN_US",
       [](const char* v, Env* e) {
         long l = 0;
         return parse_int(v, 0, 1000, &l) && ((e->spin_ns = static_cast<uint64_t>(l) * 1000), true);
       },
       [] { return text("microseconds 0..1000 (0 = no polling)"); }},
  };
  return vars;
}

// Vendor variables OpenBPU's libdnn does not implement: set, they are
// logged as ignored rather than silently dropped.
const char* const kIgnored[] = {"HB_DNN_CONV_MAP_PATH", "HB_DNN_DUMP_PATH", "HB_DNN_PLUGIN_PATH",
                                "HB_DNN_SIM_BPU_MEM_SIZE", "HB_DNN_ENABLE_DSP"};

struct Parsed {
  Env env;
  std::vector<std::string> errors, warnings;
};

// Parses without logging (the log's level comes from here).
Parsed parse() {
  Parsed p;
  for (const Var& var : variables()) {
    const char* v = std::getenv(var.name);
    if (v == nullptr || *v == '\0') continue;
    Env candidate = p.env;
    if (var.parse(v, &candidate)) {
      p.env = candidate;
    } else {
      p.errors.push_back(std::string("environment variable ") + var.name + "='" + v + "' is not valid; accepted: " +
                         var.accepted());
    }
  }
  for (const char* name : kIgnored)
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0')
      p.warnings.push_back(std::string("environment variable ") + name + "='" + v +
                           "' is not supported by OpenBPU's libdnn and is ignored (docs/environment.md)");
  // Names under our prefixes that nothing reads are probably typos.
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e, name = kv.substr(0, kv.find('='));
    const bool ours = name.rfind("HB_DNN_", 0) == 0 || name.rfind("HB_MAX_", 0) == 0 ||
                      name.rfind("OPENBPU_SIM_", 0) == 0 || name.rfind("OPENBPU_DEVICE_", 0) == 0 ||
                      name.rfind("OPENBPU_FC_", 0) == 0;
    if (!ours) continue;
    bool known = std::any_of(variables().begin(), variables().end(), [&](const Var& v) { return name == v.name; });
    known = known || std::any_of(std::begin(kIgnored), std::end(kIgnored), [&](const char* n) { return name == n; });
    if (!known) p.warnings.push_back("environment variable " + name + " is not read by libdnn (docs/environment.md)");
  }
  return p;
}

const Parsed& parsed() {
  static const Parsed p = parse();
  return p;
}

}  // namespace

const Env& env() { return parsed().env; }

Status env_status() {
  const Parsed& p = parsed();
  static std::once_flag logged;
  std::call_once(logged, [&p] {
    for (const auto& w : p.warnings) OBPU_LOGW("%s", w.c_str());
    for (const auto& e : p.errors) OBPU_LOGE("%s", e.c_str());
  });
  if (p.errors.empty()) return Status::Ok();
  return Status(kInvalidArgument, p.errors.front());
}

}  // namespace openbpu::rt
