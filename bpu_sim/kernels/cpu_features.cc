// SPDX-License-Identifier: Apache-2.0
// Run-time CPU feature detection (bpu_sim/cpu_features.h).
#include "bpu_sim/cpu_features.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace openbpu::sim {

namespace {

#if defined(__x86_64__)
// AMX-TILE and AMX-INT8, tile state enabled in XCR0 (bits 17, 18), and the
// process's permission to use it (Linux 5.16+: ARCH_REQ_XCOMP_PERM for
// XTILEDATA, feature 18; other systems: not used).
bool amx_usable() {
  if (!__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-int8")) return false;
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & (3u << 17)) != (3u << 17)) return false;
#if defined(__linux__)
  constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512vnni = f.avx2 && __builtin_cpu_supports("avx512f") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512vnni");
  f.avx512vbmi = f.avx512vnni && __builtin_cpu_supports("avx512vbmi");
  f.amx = f.avx512vnni && amx_usable();
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
