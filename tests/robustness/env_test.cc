// SPDX-License-Identifier: Apache-2.0
// libdnn's environment variables (runtime/core/env.cc, docs/environment.md):
// a malformed or unknown value fails the model load and the memory API with
// a log line naming the variable and what it accepts; good values work;
// vendor variables OpenBPU does not implement are logged as ignored. The
// environment is read once per process: ctest runs every case in its own.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "tests/common/dnn_calls.h"
#include "tests/common/test_models.h"

namespace {

struct Outcome {
  int32_t rc = 0;
  std::string log;
};

// Sets the variables (before any library call of this process), then loads
// TinyCnn from memory with the log captured.
Outcome load_with(const std::vector<std::pair<const char*, const char*>>& vars) {
  for (const auto& [k, v] : vars) setenv(k, v, 1);
  const openbpu::testing::LoadOutcome l = openbpu::testing::load_from_ddr(openbpu::testing::TinyCnn{}.build());
  if (l.rc == HB_DNN_SUCCESS) {
    EXPECT_EQ(hbDNNRelease(l.pack), HB_DNN_SUCCESS);
  }
  return Outcome{l.rc, l.log};
}

struct BadCase {
  const char* name;
  const char* variable;
  const char* value;
  const char* accepted;  // a piece of the accepted values the log must list
};

class BadEnv : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadEnv, FailsTheLoadAndTheMemoryApiNamingTheVariable) {
  const BadCase& c = GetParam();
  const Outcome o = load_with({{c.variable, c.value}});
  EXPECT_EQ(o.rc, HB_DNN_INVALID_ARGUMENT) << o.log;
  EXPECT_NE(o.log.find("[E][DNN]"), std::string::npos) << o.log;
  EXPECT_NE(o.log.find(std::string(c.variable) + "='" + c.value + "'"), std::string::npos) << o.log;
  EXPECT_NE(o.log.find(c.accepted), std::string::npos) << o.log;
  hbSysMem mem{};
  EXPECT_EQ(hbSysAllocCachedMem(&mem, 64), HB_SYS_INVALID_ARGUMENT);
}

INSTANTIATE_TEST_SUITE_P(
    Variables, BadEnv,
    ::testing::Values(BadCase{"LogLevel", "HB_DNN_LOG_LEVEL", "loud", "0..6"},
                      BadCase{"UcpLogLevel", "HB_UCP_LOG_LEVEL", "7", "0..6"},
                      BadCase{"Platform", "HB_DNN_SIM_PLATFORM", "BERNOULLI9", "BAYES-E"},
                      BadCase{"ProfilerPath", "HB_DNN_PROFILER_LOG_PATH", "/nonexistent/obpu", "existing directory"},
                      BadCase{"MaxTaskNumZero", "HB_MAX_TASK_NUM", "0", "1..32"},
                      BadCase{"MaxTaskNumTooMany", "HB_MAX_TASK_NUM", "33", "1..32"},
                      BadCase{"MaxTaskNumTrailing", "HB_MAX_TASK_NUM", "8x", "1..32"},
                      BadCase{"MaxThreadNum", "HB_MAX_THREAD_NUM", "65", "1..64"},
                      BadCase{"Backend", "OPENBPU_DEVICE_BACKEND", "board", "sim, null"},
                      BadCase{"Paced", "OPENBPU_SIM_PACED", "fast", "time scale"},
                      BadCase{"PacedNegative", "OPENBPU_SIM_PACED", "-2", "time scale"},
                      BadCase{"Watchdog", "OPENBPU_SIM_WATCHDOG_MS", "0", "1..3600000"},
                      BadCase{"FcTimeout", "OPENBPU_FC_TIMEOUT_MS", "-1", "0..3600000"},
                      BadCase{"Kernels", "OPENBPU_SIM_KERNELS", "avx3", "reference"},
                      BadCase{"Threads", "OPENBPU_SIM_THREADS", "100", "1..64"},
                      BadCase{"Spin", "OPENBPU_SPIN_US", "5000", "0..1000"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(Env, KernelTableWithTheNullBackendIsAnError) {
  const Outcome o = load_with({{"OPENBPU_DEVICE_BACKEND", "null"}, {"OPENBPU_SIM_KERNELS", "reference"}});
  EXPECT_EQ(o.rc, HB_DNN_INVALID_ARGUMENT) << o.log;
  EXPECT_NE(o.log.find("runs no kernels"), std::string::npos) << o.log;
}

TEST(Env, GoodValuesLoad) {
  const Outcome o = load_with({{"OPENBPU_SIM_KERNELS", "reference"},
                               {"OPENBPU_SIM_PACED", "false"},
                               {"OPENBPU_SIM_THREADS", "2"},
                               {"OPENBPU_SPIN_US", "0"},
                               {"HB_MAX_TASK_NUM", "4"},
                               {"HB_DNN_SIM_PLATFORM", "bernoulli2"}});
  EXPECT_EQ(o.rc, HB_DNN_SUCCESS) << o.log;
}

TEST(Env, NullBackendLoadsAndWarnsThatNothingIsComputed) {
  const Outcome o = load_with({{"OPENBPU_DEVICE_BACKEND", "null"}});
  EXPECT_EQ(o.rc, HB_DNN_SUCCESS) << o.log;
  EXPECT_NE(o.log.find("timing only"), std::string::npos) << o.log;
}

TEST(Env, UnimplementedVendorVariablesAndTyposAreLogged) {
  const Outcome o = load_with({{"HB_DNN_DUMP_PATH", "/tmp"}, {"OPENBPU_SIM_PACE", "1"}});
  EXPECT_EQ(o.rc, HB_DNN_SUCCESS) << o.log;
  EXPECT_NE(o.log.find("HB_DNN_DUMP_PATH='/tmp' is not supported"), std::string::npos) << o.log;
  EXPECT_NE(o.log.find("OPENBPU_SIM_PACE is not read"), std::string::npos) << o.log;
}

}  // namespace
