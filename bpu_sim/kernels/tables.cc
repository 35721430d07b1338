// SPDX-License-Identifier: Apache-2.0
// Kernel tables of the optimized paths. Each table pairs the convolution
// parts of one instruction set with the portable optimized kernels of the
// other instructions; an ISA's code is only reached through its table, which
// best_kernels() selects only when the CPU supports it.
#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

void conv_portable(const isa::Conv& c, const Memory& m) { conv(portable_isa(), c, m); }
void deconv_portable(const isa::Conv& c, const Memory& m) { deconv(portable_isa(), c, m); }
void eltwise_portable(const isa::Eltwise& e, const Memory& m) { eltwise(e, m, nullptr); }
void lut_portable(const isa::Lut& l, const Memory& m) { lut(l, m, nullptr); }
void pool_portable(const isa::Pool& p, const Memory& m) { pool(p, m, nullptr); }

// A table: one instruction set's convolution and rows, the portable drivers.
#define OPENBPU_TABLE(NAME, CONV, DECONV, POOL, ELTWISE, LUT)                               \
  {                                                                                          \
    .name = NAME, .conv = CONV, .deconv = DECONV, .pool = POOL, .eltwise = ELTWISE, .lut = LUT, \
    .resize = resize, .move = move, .fill = fill, .argmax = argmax, .preprocess = preprocess, \
    .matmul = matmul, .softmax = softmax, .layernorm = layernorm                             \
  }

const KernelTable kPortable = OPENBPU_TABLE("portable", conv_portable, deconv_portable, pool_portable, eltwise_portable, lut_portable);

#if defined(__x86_64__)
void conv_avx2(const isa::Conv& c, const Memory& m) { conv(avx2_isa(), c, m); }
void conv_avx512vnni(const isa::Conv& c, const Memory& m) { conv(avx512vnni_isa(), c, m); }
void deconv_avx2(const isa::Conv& c, const Memory& m) { deconv(avx2_isa(), c, m); }
void deconv_avx512vnni(const isa::Conv& c, const Memory& m) { deconv(avx512vnni_isa(), c, m); }
void eltwise_avx2(const isa::Eltwise& e, const Memory& m) { eltwise(e, m, &avx2_ops()); }
void lut_avx2(const isa::Lut& l, const Memory& m) { lut(l, m, &avx2_ops()); }
void pool_avx2(const isa::Pool& p, const Memory& m) { pool(p, m, &avx2_ops()); }
const KernelTable kAvx2 = OPENBPU_TABLE("avx2", conv_avx2, deconv_avx2, pool_avx2, eltwise_avx2, lut_avx2);
// AVX-512 VNNI CPUs have AVX2: its rows serve the other instructions, or
// the AVX-512 ones where the CPU also has VBMI (Ice Lake, Zen 4 and later).
const OpsIsa& avx512_rows() {
  static const OpsIsa* const ops = cpu_features().avx512vbmi ? &avx512vbmi_ops() : &avx2_ops();
  return *ops;
}
void eltwise_avx512(const isa::Eltwise& e, const Memory& m) { eltwise(e, m, &avx512_rows()); }
void lut_avx512(const isa::Lut& l, const Memory& m) { lut(l, m, &avx512_rows()); }
void pool_avx512(const isa::Pool& p, const Memory& m) { pool(p, m, &avx512_rows()); }
const KernelTable kAvx512Vnni =
    OPENBPU_TABLE("avx512vnni", conv_avx512vnni, deconv_avx512vnni, pool_avx512, eltwise_avx512, lut_avx512);
#endif
#if defined(__aarch64__)
void conv_neon(const isa::Conv& c, const Memory& m) { conv(neon_isa(), c, m); }
void conv_neondot(const isa::Conv& c, const Memory& m) { conv(neondot_isa(), c, m); }
void deconv_neon(const isa::Conv& c, const Memory& m) { deconv(neon_isa(), c, m); }
void deconv_neondot(const isa::Conv& c, const Memory& m) { deconv(neondot_isa(), c, m); }
const KernelTable kNeon = OPENBPU_TABLE("neon", conv_neon, deconv_neon, pool_portable, eltwise_portable, lut_portable);
const KernelTable kNeonDot = OPENBPU_TABLE("neondot", conv_neondot, deconv_neondot, pool_portable, eltwise_portable, lut_portable);
#endif

#undef OPENBPU_TABLE

}  // namespace

size_t kernel_tables(TableEntry* out, size_t max) {
  const CpuFeatures& f = cpu_features();
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
