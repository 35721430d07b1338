// SPDX-License-Identifier: Apache-2.0
// Kernel tables of the optimized paths. Each table pairs the convolution
// parts of one instruction set with the portable optimized kernels of the
// other instructions; an ISA's code is only reached through its table, which
// best_kernels() selects only when the CPU supports it.
#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

// One instruction set's convolution entries.
template <const ConvIsa& (*Isa)()>
void conv_with(const isa::Conv& c, const Memory& m) { conv(Isa(), c, m); }
template <const ConvIsa& (*Isa)()>
void deconv_with(const isa::Conv& c, const Memory& m) { deconv(Isa(), c, m); }
template <const ConvIsa& (*Isa)()>
void prepare_with(const isa::Conv& c, const Memory& m, bool transposed, bool nonneg_input) {
  prepare_conv(Isa(), c, m, transposed, nonneg_input);
}
void eltwise_portable(const isa::Eltwise& e, const Memory& m) { eltwise(e, m, nullptr); }
void lut_portable(const isa::Lut& l, const Memory& m) { lut(l, m, nullptr); }
void pool_portable(const isa::Pool& p, const Memory& m) { pool(p, m, nullptr); }

// A table: one instruction set's convolution and rows, the portable drivers.
#define OPENBPU_TABLE(NAME, ISA, POOL, ELTWISE, LUT)                                                   \
  {                                                                                                     \
    .name = NAME, .conv = conv_with<ISA>, .deconv = deconv_with<ISA>, .pool = POOL, .eltwise = ELTWISE, \
    .lut = LUT, .resize = resize, .move = move, .fill = fill, .argmax = argmax, .preprocess = preprocess, \
    .matmul = matmul, .softmax = softmax, .layernorm = layernorm, .prepare_conv = prepare_with<ISA>     \
  }

const KernelTable kPortable = OPENBPU_TABLE("portable", portable_isa, pool_portable, eltwise_portable, lut_portable);

#if defined(__x86_64__)
void eltwise_avx2(const isa::Eltwise& e, const Memory& m) { eltwise(e, m, &avx2_ops()); }
void lut_avx2(const isa::Lut& l, const Memory& m) { lut(l, m, &avx2_ops()); }
void pool_avx2(const isa::Pool& p, const Memory& m) { pool(p, m, &avx2_ops()); }
const KernelTable kAvx2 = OPENBPU_TABLE("avx2", avx2_isa, pool_avx2, eltwise_avx2, lut_avx2);
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
    OPENBPU_TABLE("avx512vnni", avx512vnni_isa, pool_avx512, eltwise_avx512, lut_avx512);
const KernelTable kAmx = OPENBPU_TABLE("amx", amx_isa, pool_avx512, eltwise_avx512, lut_avx512);
#endif
#if defined(__aarch64__)
const KernelTable kNeon = OPENBPU_TABLE("neon", neon_isa, pool_portable, eltwise_portable, lut_portable);
const KernelTable kNeonDot = OPENBPU_TABLE("neondot", neondot_isa, pool_portable, eltwise_portable, lut_portable);
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
  add(&kAmx, f.amx);
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
