// SPDX-License-Identifier: Apache-2.0
// Kernel tables of the optimized paths. Each table pairs the convolution
// parts of one instruction set with the portable optimized kernels of the
// other instructions; an ISA's code is only reached through its table, which
// best_kernels() selects only when the CPU supports it.
#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

void conv_portable(const isa::Conv& c, const Memory& m) { conv(portable_isa(), c, m); }

#define OPENBPU_TABLE(NAME, CONV) \
  { NAME, CONV, deconv, pool, eltwise, lut, resize, move, fill, argmax, preprocess }

const KernelTable kPortable = OPENBPU_TABLE("portable", conv_portable);

#if defined(__x86_64__)
void conv_avx2(const isa::Conv& c, const Memory& m) { conv(avx2_isa(), c, m); }
void conv_avx512vnni(const isa::Conv& c, const Memory& m) { conv(avx512vnni_isa(), c, m); }
const KernelTable kAvx2 = OPENBPU_TABLE("avx2", conv_avx2);
const KernelTable kAvx512Vnni = OPENBPU_TABLE("avx512vnni", conv_avx512vnni);
#endif
#if defined(__aarch64__)
void conv_neon(const isa::Conv& c, const Memory& m) { conv(neon_isa(), c, m); }
void conv_neondot(const isa::Conv& c, const Memory& m) { conv(neondot_isa(), c, m); }
const KernelTable kNeon = OPENBPU_TABLE("neon", conv_neon);
const KernelTable kNeonDot = OPENBPU_TABLE("neondot", conv_neondot);
#endif

#undef OPENBPU_TABLE

}  // namespace

size_t kernel_tables(TableEntry* out, size_t max) {
  const CpuFeatures f = detect_cpu();
  size_t n = 0;
  auto add = [&](const KernelTable* t, bool ok) {
    if (n < max) out[n] = {t, ok};
    ++n;
  };
#if defined(__x86_64__)
  add(&kAvx512Vnni, f.avx512vnni);
  add(&kAvx2, f.avx2);
#endif
#if defined(__aarch64__)
  add(&kNeonDot, f.neon_dot);
  add(&kNeon, f.neon);
#endif
  add(&kPortable, true);
  (void)f;
  return n;
}

}  // namespace openbpu::sim::kern
