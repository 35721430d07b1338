// SPDX-License-Identifier: Apache-2.0
// Run-time CPU feature detection (bpu_sim/cpu_features.h).
#include "bpu_sim/cpu_features.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace openbpu::sim {

namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512vnni = f.avx2 && __builtin_cpu_supports("avx512f") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512vnni");
  f.avx512vbmi = f.avx512vnni && __builtin_cpu_supports("avx512vbmi");
#elif defined(__aarch64__)
  f.neon = true;
#if defined(__linux__) && defined(HWCAP_ASIMDDP)
  f.neon_dot = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

}  // namespace openbpu::sim
