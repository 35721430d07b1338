// SPDX-License-Identifier: Apache-2.0
// The host CPU's vector features, detected once per process: the one place
// every optimized code path (the simulator's kernel tables, the runtime's
// CPU operators) asks before it runs code built for an instruction set
// extension. On x86-64, __builtin_cpu_supports also checks that the OS
// saves the vector state (XCR0), so a hypervisor that hides AVX-512 is
// handled; on aarch64 the kernel's HWCAP bits are read.
#ifndef OPENBPU_BPU_SIM_CPU_FEATURES_H_
#define OPENBPU_BPU_SIM_CPU_FEATURES_H_

namespace openbpu::sim {

struct CpuFeatures {
  bool avx2 = false;        // AVX2 + FMA + OS support for ymm state
  bool avx512vnni = false;  // AVX-512 F/BW/VL + VNNI + OS support for zmm state
  bool avx512vbmi = false;  // the above and AVX-512 VBMI (byte permutes)
  // avx512vnni and AMX tiles with int8 products, the OS saving tile state
  // (XCR0) and (Linux) this process permitted to use it (arch_prctl).
  bool amx = false;
  bool neon = false;
  bool neon_dot = false;  // ARMv8.2 SDOT/UDOT
};

const CpuFeatures& cpu_features();

}  // namespace openbpu::sim

#endif  // OPENBPU_BPU_SIM_CPU_FEATURES_H_
