// SPDX-License-Identifier: Apache-2.0
// Run-time CPU feature detection for the kernel dispatch. On x86-64,
// __builtin_cpu_supports also checks that the OS saves the vector state
// (XCR0), so a hypervisor that hides AVX-512 is handled.
#include "bpu_sim/kernels/kernels.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace openbpu::sim::kern {

CpuFeatures detect_cpu() {
  CpuFeatures f;
#if defined(__x86_64__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512vnni = f.avx2 && __builtin_cpu_supports("avx512f") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512vnni");
#elif defined(__aarch64__)
  f.neon = true;
#if defined(__linux__) && defined(HWCAP_ASIMDDP)
  f.neon_dot = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
#endif
  return f;
}

}  // namespace openbpu::sim::kern
