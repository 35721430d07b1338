// SPDX-License-Identifier: Apache-2.0
// Differential tests of the optimized non-convolution kernels (pool, eltwise,
// lut, resize, move, fill, argmax, preprocess, matmul) against the reference kernels
// on every dispatch path usable here: random shapes and strided views
// (channel strides, padded pixels, broadcast and in-place operands), every
// data-type combination the validator accepts, extreme multipliers and
// shifts, saturating values.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bpu_sim/kernels/kernels.h"
#include "tests/bpu_sim/opt_test_util.h"

#if defined(OPENBPU_TEST_SIMDE_VBMI)
namespace openbpu::sim::kern {
const OpsIsa& avx512vbmi_emulated_ops();  // opt_ops_simde.cc
}  // namespace openbpu::sim::kern
#endif

namespace openbpu::sim::test {
namespace {

#if defined(OPENBPU_TEST_SIMDE_VBMI)
// The portable table with the AVX-512 VBMI rows built against SIMDe: they
// run here on CPUs without AVX-512 VBMI too.
void pool_vbmi_emulated(const isa::Pool& p, const Memory& m) {
  kern::pool(p, m, &kern::avx512vbmi_emulated_ops());
}
void eltwise_vbmi_emulated(const isa::Eltwise& e, const Memory& m) {
  kern::eltwise(e, m, &kern::avx512vbmi_emulated_ops());
}
void lut_vbmi_emulated(const isa::Lut& l, const Memory& m) {
  kern::lut(l, m, &kern::avx512vbmi_emulated_ops());
}
const KernelTable* vbmi_emulated_table() {
  static const KernelTable t = [] {
    KernelTable k = *find_kernels("portable");
    k.name = "avx512vbmi-rows-simde";
    k.pool = pool_vbmi_emulated;
    k.eltwise = eltwise_vbmi_emulated;
    k.lut = lut_vbmi_emulated;
    return k;
  }();
  return &t;
}
#endif

// Every usable table, and the SIMDe build of the AVX-512 rows where there is one.
std::vector<const KernelTable*> tables_under_test() {
  std::vector<const KernelTable*> t = optimized_tables();
#if defined(OPENBPU_TEST_SIMDE_VBMI)
  t.push_back(vbmi_emulated_table());
#endif
  return t;
}

using isa::DType;

int reps() {
#if defined(__aarch64__)
  return 120;  // under qemu
#else
  return 400;
#endif
}

DType pick_type(Rng& r, std::vector<DType> v) { return r.pick(v); }

void requant_params(Rng& r, int32_t* m, int32_t* s, int max_shift = 63) {
  switch (r.uniform(0, 3)) {
    case 0:  // identity-like
      *s = r.uniform(0, 30);
      *m = 1 << *s;
      break;
    case 1:  // anything valid
      *m = r.chance(0.2) ? INT32_MAX : r.uniform(1, INT32_MAX);
      *s = r.uniform(0, max_shift);
      break;
    case 2:  // small ratios with ties
      *m = r.uniform(1, 15);
      *s = r.uniform(0, 6);
      break;
    default:  // typical ratio near 1
      *m = r.uniform(1 << 30, INT32_MAX);
      *s = std::min(max_shift, 30 + r.uniform(-1, 2));
  }
}

void acts(Rng& r, DType out, int32_t* lo, int32_t* hi) {
  const int32_t tlo = out == DType::kInt8 ? -128 : -32768, thi = out == DType::kInt8 ? 127 : 32767;
  *lo = tlo, *hi = thi;
  if (r.chance(0.3)) *lo = 0;
  if (r.chance(0.2)) *hi = std::max(*lo, r.uniform(0, 100));
}

// Runs `make` until it yields a valid instruction, then compares every path.
void check(const char* what, uint32_t seed,
           const std::function<bool(Rng&, isa::Instruction*, Arena*)>& make) {
  Rng r(seed);
  const auto tables = tables_under_test();
  int done = 0, tries = 0;
  while (done < reps() && tries < reps() * 50) {
    ++tries;
    isa::Instruction ins;
    Arena a;
    if (!make(r, &ins, &a)) continue;
    if (a.scratch.empty()) a.scratch.resize(16);
    if (a.output.empty()) a.output.resize(16);
    if (a.input.empty()) a.input.resize(16);
    std::string err;
    if (!validate_instruction(ins, a.layout(), &err)) continue;
    ++done;
    for (const KernelTable* t : tables)
      ASSERT_TRUE(same_as_reference(ins, a, *t)) << what << " case " << done;
  }
  EXPECT_EQ(done, reps()) << what << ": too few valid draws";
}

std::vector<int> dims4(Rng& r) {
  return {r.uniform(1, 2), r.uniform(1, 9), r.uniform(1, 9),
          r.pick<int>({1, 3, 7, 8, 16, 17, 33, 64, 100})};
}

// A zero point for an operand of type t: asymmetric int8 values sometimes.
int32_t zero_point(Rng& r, DType t) {
  return t == DType::kInt8 && r.chance(0.25) ? r.uniform(-128, 127) : 0;
}

TEST(OptOps, Pool) {
  check("pool", 11, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Pool p;
    p.kind = r.chance(0.5) ? isa::PoolKind::kMax : isa::PoolKind::kAvg;
    const std::vector<int> d = dims4(r);
    p.kernel_h = r.uniform(1, 4), p.kernel_w = r.uniform(1, 4);
    if (r.chance(0.15)) p.kernel_h = d[1], p.kernel_w = d[2];  // global
    p.stride_h = r.uniform(1, 3), p.stride_w = r.uniform(1, 3);
    p.dilation_h = r.chance(0.8) ? 1 : 2, p.dilation_w = r.chance(0.8) ? 1 : 2;
    p.pad_top = r.uniform(0, 2), p.pad_bottom = r.uniform(0, 2);
    p.pad_left = r.uniform(0, 2), p.pad_right = r.uniform(0, 2);
    p.count_include_pad = r.chance(0.5);
    const int sh = p.dilation_h * (p.kernel_h - 1) + 1, sw = p.dilation_w * (p.kernel_w - 1) + 1;
    if (d[1] + p.pad_top + p.pad_bottom < sh || d[2] + p.pad_left + p.pad_right < sw) return false;
    const int oh = (d[1] + p.pad_top + p.pad_bottom - sh) / p.stride_h + 1;
    const int ow = (d[2] + p.pad_left + p.pad_right - sw) / p.stride_w + 1;
    const DType it = pick_type(r, {DType::kInt8, DType::kInt8, DType::kInt16});
    const DType ot = pick_type(r, {DType::kInt8, DType::kInt8, DType::kInt16});
    p.in = place(r, &a->input, isa::Region::kInput, it, d, true);
    p.out = place(r, &a->output, isa::Region::kOutput, ot, {d[0], oh, ow, d[3]}, true);
    requant_params(r, &p.multiplier, &p.shift, p.kind == isa::PoolKind::kAvg ? 40 : 63);
    acts(r, ot, &p.act_min, &p.act_max);
    p.zero_in = zero_point(r, it), p.zero_out = zero_point(r, ot);
    ins->opcode = isa::Opcode::kPool;
    ins->body = p;
    return true;
  });
}

// int8 average pooling over more than 256 taps per output (the AVX2 row
// adds 32 channels in int16 and widens every 256 taps) on values mostly at
// one end of int8, so that a late widening would overflow: global and
// large kernels, channels around 32.
TEST(OptOps, AvgPoolInt8ManyTaps) {
  check("avg pool int8 many taps", 23, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Pool p;
    p.kind = isa::PoolKind::kAvg;
    const std::vector<int> d = {1, r.uniform(12, 24), r.uniform(22, 40),
                                r.pick<int>({32, 33, 40, 64, 100})};
    p.kernel_h = d[1] - r.uniform(0, 2), p.kernel_w = d[2] - r.uniform(0, 2);
    p.stride_h = p.stride_w = 1, p.dilation_h = p.dilation_w = 1;
    p.count_include_pad = true;
    p.in = place(r, &a->input, isa::Region::kInput, DType::kInt8, d, false);
    const int8_t v = r.chance(0.5) ? -128 : 127;
    for (uint8_t& b : a->input) b = static_cast<uint8_t>(r.chance(0.95) ? v : r.uniform(-128, 127));
    const int oh = d[1] - p.kernel_h + 1, ow = d[2] - p.kernel_w + 1;
    p.out = place(r, &a->output, isa::Region::kOutput, DType::kInt8, {1, oh, ow, d[3]}, false);
    requant_params(r, &p.multiplier, &p.shift, 40);
    acts(r, DType::kInt8, &p.act_min, &p.act_max);
    ins->opcode = isa::Opcode::kPool;
    ins->body = p;
    return true;
  });
}

// int8 max pooling as the converter emits it (identity multiplier, the same
// zero point in and out -- 0, or an asymmetric value's --, channel stride
// 1): the runs of output pixels whose taps lie inside the image in one ISA
// row call, the border pixels, channel tails, wide maps.
TEST(OptOps, MaxPoolInt8Runs) {
  check("max pool int8", 16, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Pool p;
    p.kind = isa::PoolKind::kMax;
    const std::vector<int> d = {r.uniform(1, 2), r.uniform(1, 12), r.uniform(1, 24),
                                r.pick<int>({1, 3, 16, 31, 32, 33, 64, 65, 100, 130})};
    p.kernel_h = r.uniform(1, 4), p.kernel_w = r.uniform(1, 4);
    p.stride_h = r.uniform(1, 3), p.stride_w = r.uniform(1, 3);
    p.dilation_h = r.chance(0.8) ? 1 : 2, p.dilation_w = r.chance(0.8) ? 1 : 2;
    p.pad_top = r.uniform(0, 2), p.pad_bottom = r.uniform(0, 2);
    p.pad_left = r.uniform(0, 2), p.pad_right = r.uniform(0, 2);
    const int sh = p.dilation_h * (p.kernel_h - 1) + 1, sw = p.dilation_w * (p.kernel_w - 1) + 1;
    if (d[1] + p.pad_top + p.pad_bottom < sh || d[2] + p.pad_left + p.pad_right < sw) return false;
    const int oh = (d[1] + p.pad_top + p.pad_bottom - sh) / p.stride_h + 1;
    const int ow = (d[2] + p.pad_left + p.pad_right - sw) / p.stride_w + 1;
    p.in = place(r, &a->input, isa::Region::kInput, DType::kInt8, d, false);
    p.out = place(r, &a->output, isa::Region::kOutput, DType::kInt8, {d[0], oh, ow, d[3]}, false);
    p.shift = r.uniform(0, 30);
    p.multiplier = 1 << p.shift;
    p.zero_in = p.zero_out = r.chance(0.5) ? r.uniform(-128, 127) : 0;
    acts(r, DType::kInt8, &p.act_min, &p.act_max);
    ins->opcode = isa::Opcode::kPool;
    ins->body = p;
    return true;
  });
}

TEST(OptOps, Eltwise) {
  check("eltwise", 12, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Eltwise e;
    e.kind = static_cast<isa::EltwiseKind>(r.uniform(1, 5));
    const int rank = r.uniform(1, 6);
    std::vector<int> d;
    for (int k = 0; k < rank; ++k) d.push_back(r.uniform(1, k == rank - 1 ? 40 : 4));
    const DType ta = pick_type(r, {DType::kInt8, DType::kInt16}),
                tb = pick_type(r, {DType::kInt8, DType::kInt16});
    const DType to = pick_type(r, {DType::kInt8, DType::kInt16});
    e.a = place(r, &a->input, isa::Region::kInput, ta, d, true);
    e.b = place(r, &a->scratch, isa::Region::kScratch, tb, d, true);
    if (r.chance(0.2)) {  // broadcast b along a random dimension
      const int k = r.uniform(0, rank - 1);
      e.b.strides[k] = 0;
    }
    if (r.chance(0.2) && to == tb) {
      e.out = e.b;  // in place
      for (int k = 0; k < isa::kMaxRank; ++k)
        if (e.out.strides[k] == 0 && e.out.dims[k] > 1) return false;
    } else {
      e.out = place(r, &a->output, isa::Region::kOutput, to, d, true);
    }
    requant_params(r, &e.multiplier_a, &e.shift);
    e.multiplier_b = r.chance(0.5) ? e.multiplier_a : r.uniform(1, INT32_MAX);
    acts(r, to, &e.act_min, &e.act_max);
    e.zero_a = zero_point(r, ta), e.zero_b = zero_point(r, tb), e.zero_out = zero_point(r, to);
    ins->opcode = isa::Opcode::kEltwise;
    ins->body = e;
    return true;
  });
}

// int8 feature maps as the converter lays them out (NHWC, long channel
// rows, per-channel or per-tensor broadcast of b as in squeeze-excitation
// blocks): the instruction sets' vector rows and their scalar tails.
TEST(OptOps, EltwiseInt8FeatureMaps) {
  check("eltwise int8", 15, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Eltwise e;
    e.kind = r.pick<isa::EltwiseKind>(
        {isa::EltwiseKind::kAdd, isa::EltwiseKind::kSub, isa::EltwiseKind::kMul, isa::EltwiseKind::kMax});
    const std::vector<int> d = {1, r.uniform(1, 6), r.uniform(1, 6), r.uniform(1, 200)};
    e.a = place(r, &a->input, isa::Region::kInput, DType::kInt8, d, false);
    e.b = place(r, &a->scratch, isa::Region::kScratch, DType::kInt8, d, false);
    const int bc = r.uniform(0, 3);
    if (bc == 1) e.b.strides[1] = e.b.strides[2] = 0;  // one value per channel
    if (bc == 2) e.b.strides[3] = 0;                    // one value per pixel
    // In place over b (scratch, which the comparison covers) or a new output.
    e.out = bc == 0 && r.chance(0.3) ? e.b
                                     : place(r, &a->output, isa::Region::kOutput, DType::kInt8, d, false);
    requant_params(r, &e.multiplier_a, &e.shift);
    if (r.chance(0.5)) {  // converter-like: M in [2^30, 2^31), S in [30, 50]
      e.multiplier_a = r.uniform(1 << 30, INT32_MAX);
      e.shift = r.uniform(30, 50);
    }
    e.multiplier_b = r.chance(0.5) ? e.multiplier_a : r.uniform(1, INT32_MAX);
    acts(r, DType::kInt8, &e.act_min, &e.act_max);
    if (r.chance(0.3))  // asymmetric operands (the converter's optimization asymmetric)
      e.zero_a = r.uniform(-128, 127), e.zero_b = r.uniform(-128, 127), e.zero_out = r.uniform(-128, 127);
    ins->opcode = isa::Opcode::kEltwise;
    ins->body = e;
    return true;
  });
}

// Asymmetric squeeze-excitation products: an int8 Mul of a map by a
// per-channel operand (either side, in place or not) with zero points, the
// path outside the instruction sets' rows (eltwise_channel_mul_zp).
TEST(OptOps, EltwiseInt8ChannelMulZeroPoints) {
  check("eltwise int8 channel mul zero points", 17, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Eltwise e;
    e.kind = isa::EltwiseKind::kMul;
    const std::vector<int> d = {r.uniform(1, 2), r.uniform(1, 6), r.uniform(1, 6), r.uniform(1, 300)};
    const bool channel_a = r.chance(0.5);
    e.a = place(r, &a->input, isa::Region::kInput, DType::kInt8, d, false);
    e.b = place(r, &a->scratch, isa::Region::kScratch, DType::kInt8, d, false);
    isa::TensorRef& pc = channel_a ? e.a : e.b;
    pc.strides[1] = pc.strides[2] = 0;  // one value per channel
    e.out = !channel_a && r.chance(0.3) ? e.a
                                        : place(r, &a->output, isa::Region::kOutput, DType::kInt8, d, false);
    e.multiplier_a = r.uniform(1 << 30, INT32_MAX);
    e.shift = r.uniform(30, 50);
    acts(r, DType::kInt8, &e.act_min, &e.act_max);
    e.zero_a = r.uniform(-128, 127), e.zero_b = r.uniform(-128, 127), e.zero_out = r.uniform(-128, 127);
    ins->opcode = isa::Opcode::kEltwise;
    ins->body = e;
    return true;
  });
}

TEST(OptOps, Lut) {
  check("lut", 13, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Lut l;
    const DType it = pick_type(r, {DType::kInt8, DType::kInt16}),
                ot = pick_type(r, {DType::kInt8, DType::kInt16});
    const std::vector<int> d = dims4(r);
    l.in = place(r, &a->input, isa::Region::kInput, it, d, true);
    l.out = place(r, &a->output, isa::Region::kOutput, ot, d, true);
    const int entries = it == DType::kInt8 ? 256 : 513;
    std::vector<uint8_t> table(static_cast<size_t>(entries * isa::dtype_size(ot)));
    r.fill(table.data(), table.size(), true);
    l.table = add_const(&a->consts, table.data(), table.size(), static_cast<uint32_t>(entries));
    ins->opcode = isa::Opcode::kLut;
    ins->body = l;
    return true;
  });
}

TEST(OptOps, Resize) {
  check("resize", 14, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Resize z;
    z.mode = r.chance(0.5) ? isa::ResizeMode::kNearest : isa::ResizeMode::kBilinear;
    const std::vector<int> d = dims4(r);
    const int oh = r.uniform(1, 12), ow = r.uniform(1, 12);
    const DType it = pick_type(r, {DType::kInt8, DType::kInt16}),
                ot = pick_type(r, {DType::kInt8, DType::kInt16});
    z.in = place(r, &a->input, isa::Region::kInput, it, d, true);
    z.out = place(r, &a->output, isa::Region::kOutput, ot, {d[0], oh, ow, d[3]}, true);
    z.y_step = r.uniform(0, 3 << 16), z.x_step = r.uniform(0, 3 << 16);
    z.y_start = r.uniform(-(2 << 16), 2 << 16), z.x_start = r.uniform(-(2 << 16), 2 << 16);
    z.round_bias = r.pick<int>({0, 32767, 32768, r.uniform(0, 65535)});
    requant_params(r, &z.multiplier, &z.shift, z.mode == isa::ResizeMode::kBilinear ? 55 : 63);
    ins->opcode = isa::Opcode::kResize;
    ins->body = z;
    return true;
  });
}

TEST(OptOps, Move) {
  check("move", 15, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Move m;
    const int rank = r.uniform(1, 6);
    std::vector<int> d;
    for (int k = 0; k < rank; ++k) d.push_back(r.uniform(1, k == rank - 1 ? 40 : 4));
    const DType it = pick_type(r, {DType::kInt8, DType::kInt16, DType::kInt32, DType::kUInt8});
    const DType ot = pick_type(r, {DType::kInt8, DType::kInt16, DType::kInt32});
    m.in = place(r, &a->input, isa::Region::kInput, it, d, true);
    if (r.chance(0.2)) {  // transpose of the two last dimensions
      if (rank >= 2) {
        std::swap(m.in.dims[rank - 1], m.in.dims[rank - 2]);
        std::swap(m.in.strides[rank - 1], m.in.strides[rank - 2]);
        std::swap(d[rank - 1], d[rank - 2]);
      }
    }
    if (r.chance(0.15) && it == ot) {
      m.in.region = isa::Region::kScratch;  // in place in scratch
      m.in = place(r, &a->scratch, isa::Region::kScratch, it, d, true);
      m.out = m.in;
    } else {
      m.out = place(r, &a->output, isa::Region::kOutput, ot, d, true);
    }
    m.requantize = r.chance(0.5);
    if (m.requantize) requant_params(r, &m.multiplier, &m.shift);
    ins->opcode = isa::Opcode::kMove;
    ins->body = m;
    return true;
  });
}

TEST(OptOps, Fill) {
  check("fill", 16, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Fill f;
    const int rank = r.uniform(1, 6);
    std::vector<int> d;
    for (int k = 0; k < rank; ++k) d.push_back(r.uniform(1, k == rank - 1 ? 40 : 4));
    f.out = place(r, &a->output, isa::Region::kOutput,
                  pick_type(r, {DType::kInt8, DType::kInt16, DType::kInt32}), d, true);
    f.value = r.pick<int32_t>(
        {0, -1, 127, 128, -129, 40000, INT32_MIN, INT32_MAX, r.uniform(-1000, 1000)});
    ins->opcode = isa::Opcode::kFill;
    ins->body = f;
    return true;
  });
}

TEST(OptOps, ArgMax) {
  check("argmax", 17, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::ArgMax m;
    std::vector<int> d = dims4(r);
    d[3] = r.uniform(1, 64);
    m.in = place(r, &a->input,
                 pick_type(r, {DType::kInt8, DType::kInt16}) == DType::kInt8 ? isa::Region::kInput
                                                                             : isa::Region::kInput,
                 pick_type(r, {DType::kInt8, DType::kInt16}), d, true);
    m.out = place(r, &a->output, isa::Region::kOutput, DType::kInt32, {d[0], d[1], d[2], 1}, true);
    ins->opcode = isa::Opcode::kArgMax;
    ins->body = m;
    return true;
  });
}

// Batched products with transposed operands (swapped strides), batches shared
// by stride 0, int8 and int16 operands (int8 x int8 takes the int32 path).
TEST(OptOps, MatMul) {
  check("matmul", 19, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::MatMul m;
    const int b0 = r.uniform(1, 2), b1 = r.uniform(1, 4), rows = r.uniform(1, 12), cols = r.uniform(1, 12);
    const int depth = r.pick<int>({1, 2, 7, 16, 33, 64, r.uniform(1, 80)});
    auto operand = [&](int d2, int d3) {
      const bool t = r.chance(0.4);
      const DType type = pick_type(r, {DType::kInt8, DType::kInt8, DType::kInt16});
      isa::TensorRef v = place(r, &a->input, isa::Region::kInput, type, {b0, b1, t ? d3 : d2, t ? d2 : d3}, true);
      if (t) std::swap(v.dims[2], v.dims[3]), std::swap(v.strides[2], v.strides[3]);
      if (r.chance(0.2)) v.strides[r.uniform(0, 1)] = 0;
      return v;
    };
    m.a = operand(rows, depth);
    m.b = operand(depth, cols);
    const DType to = pick_type(r, {DType::kInt8, DType::kInt16});
    m.out = place(r, &a->output, isa::Region::kOutput, to, {b0, b1, rows, cols}, true);
    requant_params(r, &m.multiplier, &m.shift);
    if (r.chance(0.4)) {  // per-column multipliers (a constant b quantized per column)
      std::vector<int32_t> mults(static_cast<size_t>(cols));
      for (auto& x : mults) requant_params(r, &x, &m.shift);
      m.multipliers = add_const(&a->consts, mults.data(), mults.size() * 4, static_cast<uint32_t>(cols));
    }
    acts(r, to, &m.act_min, &m.act_max);
    ins->opcode = isa::Opcode::kMatMul;
    ins->body = m;
    return true;
  });
}

TEST(OptOps, Preprocess) {
  using F = isa::ImageFormat;
  check("preprocess", 18, [](Rng& r, isa::Instruction* ins, Arena* a) {
    isa::Preprocess p;
    p.src_format = r.pick<F>({F::kNV12, F::kNV12, F::kRGB, F::kBGR, F::kYUV444, F::kGray});
    p.dst_format = r.pick<F>({F::kRGB, F::kBGR, F::kYUV444, F::kGray});
    p.range = r.chance(0.5) ? isa::ColorRange::kFull : isa::ColorRange::kVideo;
    // (widths past 64: the dense NV12 rows' blocks and their tails)
    const int n = r.uniform(1, 2), h = 2 * r.uniform(1, 6), w = 2 * (r.chance(0.5) ? r.uniform(1, 8) : r.uniform(30, 70));
    const int oc = p.dst_format == F::kGray ? 1 : 3;
    const int sc = p.src_format == F::kGray || p.src_format == F::kNV12 ? 1 : 3;
    p.src_planar = (p.src_format != F::kNV12 && p.src_format != F::kGray && r.chance(0.3)) ? 1 : 0;
    if (p.src_format == F::kNV12) {
      // Y plane rows then UV rows per batch, row stride w (+ padding).
      const int stride = w + r.uniform(0, 4);
      const int plane = stride * h + stride * (h / 2);
      p.in.region = isa::Region::kInput;
      p.in.dtype = DType::kUInt8;
      p.in.offset = static_cast<uint64_t>(r.uniform(0, 8));
      p.in.dims[0] = n, p.in.dims[1] = h, p.in.dims[2] = w, p.in.dims[3] = 1;
      p.in.strides[0] = plane, p.in.strides[1] = stride, p.in.strides[2] = 1, p.in.strides[3] = 1;
      p.uv_offset = static_cast<uint64_t>(stride) * h;
      p.uv_row_stride = stride;
      a->input.resize(p.in.offset + static_cast<size_t>(n) * plane + 8);
      r.fill(a->input.data(), a->input.size(), true);
    } else if (p.src_planar) {
      p.in = place(r, &a->input, isa::Region::kInput, DType::kUInt8, {n, sc, h, w}, false);
    } else {
      p.in = place(r, &a->input, isa::Region::kInput, DType::kUInt8, {n, h, w, sc}, true);
    }
    p.out = place(r, &a->output, isa::Region::kOutput, DType::kInt8, {n, h, w, oc}, true);
    ins->opcode = isa::Opcode::kPreprocess;
    ins->body = p;
    return true;
  });
}

}  // namespace
}  // namespace openbpu::sim::test
