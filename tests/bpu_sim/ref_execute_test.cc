// SPDX-License-Identifier: Apache-2.0
// ref::execute dispatches each opcode to its kernel: the same instruction run
// through execute() and through the kernel directly gives identical memory;
// an instruction whose body does not match its opcode changes nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include <vector>

#include "bpu_sim/reference/kernels.h"
#include "tests/bpu_sim/ref_test_util.h"

namespace openbpu::sim::test {
namespace {

using isa::DType;
using isa::Opcode;
using isa::Region;

// Builds one instruction of every opcode over tensors of tm.
std::vector<isa::Instruction> all_instructions(TestMemory& tm) {
  std::vector<isa::Instruction> v;
  const isa::TensorRef in = tm.tensor(Region::kInput, DType::kInt8, {1, 4, 4, 3}, true);
  tm.fill_random(in);
  auto out = [&](std::vector<int> dims, DType t = DType::kInt8) {
    return tm.tensor(Region::kOutput, t, dims, true);
  };
  isa::Conv conv;
  conv.in = in;
  conv.out = out({1, 4, 4, 2});
  conv.kernel_h = conv.kernel_w = 3;
  conv.pad_top = conv.pad_left = conv.pad_bottom = conv.pad_right = 1;
  std::vector<int64_t> w(2 * 9 * 3);
  for (auto& x : w) x = tm.rand_int(-128, 127);
  conv.weight = tm.constants(DType::kInt8, w);
  conv.multiplier = tm.constants(DType::kInt32, {1 << 30, 1 << 29});
  conv.shift = tm.constants(DType::kInt8, {36, 36});
  v.push_back({Opcode::kConv, conv});
  isa::Conv deconv = conv;
  deconv.out = out({1, 4, 4, 2});
  v.push_back({Opcode::kDeconv, deconv});
  isa::Pool pool;
  pool.in = in;
  pool.out = out({1, 2, 2, 3});
  pool.kind = isa::PoolKind::kAvg;
  pool.kernel_h = pool.kernel_w = pool.stride_h = pool.stride_w = 2;
  v.push_back({Opcode::kPool, pool});
  isa::Eltwise elt;
  elt.a = elt.b = in;
  elt.out = out({1, 4, 4, 3});
  elt.kind = isa::EltwiseKind::kSub;
  elt.multiplier_b = 1 << 29;
  v.push_back({Opcode::kEltwise, elt});
  isa::Lut lut;
  lut.in = in;
  lut.out = out({1, 4, 4, 3}, DType::kInt16);
  std::vector<int64_t> table(256);
  for (auto& x : table) x = tm.rand_int(-32768, 32767);
  lut.table = tm.constants(DType::kInt16, table);
  v.push_back({Opcode::kLut, lut});
  isa::Resize rs;
  rs.in = in;
  rs.out = out({1, 7, 5, 3});
  rs.mode = isa::ResizeMode::kBilinear;
  rs.y_step = 37000;
  rs.x_step = 50000;
  v.push_back({Opcode::kResize, rs});
  isa::Move mv;
  mv.in = in;
  mv.out = out({1, 4, 4, 3}, DType::kInt32);
  v.push_back({Opcode::kMove, mv});
  isa::Fill fill;
  fill.out = out({1, 2, 3, 4});
  fill.value = -7;
  v.push_back({Opcode::kFill, fill});
  isa::ArgMax am;
  am.in = in;
  am.out = out({1, 4, 4, 1}, DType::kInt32);
  v.push_back({Opcode::kArgMax, am});
  isa::Preprocess pre;
  pre.in = tm.tensor(Region::kInput, DType::kUInt8, {1, 4, 4, 3}, true);
  pre.out = out({1, 4, 4, 3});
  pre.src_format = isa::ImageFormat::kYUV444;
  pre.dst_format = isa::ImageFormat::kBGR;
  v.push_back({Opcode::kPreprocess, pre});
  isa::MatMul mm;
  mm.a = in;                      // [1, 4, 4, 3] as [B0, B1, M, K]
  mm.b = out({1, 4, 3, 5});        // read from the output region
  mm.out = out({1, 4, 4, 5});
  mm.multiplier = 1 << 20;
  mm.shift = 24;
  v.push_back({Opcode::kMatMul, mm});
  isa::Softmax sm;
  sm.in = in;
  sm.out = out({1, 4, 4, 3});
  std::vector<int64_t> exp_table(isa::kSoftmaxTableSize);
  for (size_t j = 0; j < exp_table.size(); ++j) exp_table[j] = 32768 >> std::min<size_t>(j, 15);
  sm.table = tm.constants(DType::kInt32, exp_table);
  v.push_back({Opcode::kSoftmax, sm});
  isa::LayerNorm ln;
  ln.in = in;
  ln.out = out({1, 4, 4, 3});
  ln.gamma = tm.constants(DType::kInt32, {1000, -2000, 3000});
  v.push_back({Opcode::kLayerNorm, ln});
  return v;
}

void direct(const isa::Instruction& ins, const Memory& mem) {
  switch (ins.opcode) {
    case Opcode::kConv:
      ref::conv(std::get<isa::Conv>(ins.body), mem);
      break;
    case Opcode::kDeconv:
      ref::deconv(std::get<isa::Conv>(ins.body), mem);
      break;
    case Opcode::kPool:
      ref::pool(std::get<isa::Pool>(ins.body), mem);
      break;
    case Opcode::kEltwise:
      ref::eltwise(std::get<isa::Eltwise>(ins.body), mem);
      break;
    case Opcode::kLut:
      ref::lut(std::get<isa::Lut>(ins.body), mem);
      break;
    case Opcode::kResize:
      ref::resize(std::get<isa::Resize>(ins.body), mem);
      break;
    case Opcode::kMove:
      ref::move(std::get<isa::Move>(ins.body), mem);
      break;
    case Opcode::kFill:
      ref::fill(std::get<isa::Fill>(ins.body), mem);
      break;
    case Opcode::kArgMax:
      ref::argmax(std::get<isa::ArgMax>(ins.body), mem);
      break;
    case Opcode::kPreprocess:
      ref::preprocess(std::get<isa::Preprocess>(ins.body), mem);
      break;
    case Opcode::kMatMul:
      ref::matmul(std::get<isa::MatMul>(ins.body), mem);
      break;
    case Opcode::kSoftmax:
      ref::softmax(std::get<isa::Softmax>(ins.body), mem);
      break;
    case Opcode::kLayerNorm:
      ref::layernorm(std::get<isa::LayerNorm>(ins.body), mem);
      break;
  }
}

TEST(RefExecute, DispatchesEveryOpcode) {
  TestMemory a(5), b(5);  // identical contents
  const std::vector<isa::Instruction> prog = all_instructions(a);
  all_instructions(b);
  ASSERT_EQ(a.region(Region::kOutput), b.region(Region::kOutput));
  const Memory ma = a.bind(), mb = b.bind();
  for (const isa::Instruction& ins : prog) {
    const std::vector<uint8_t> before = a.region(Region::kOutput);
    ref::execute(ins, ma);
    direct(ins, mb);
    EXPECT_EQ(a.region(Region::kOutput), b.region(Region::kOutput)) << isa::opcode_name(ins.opcode);
    EXPECT_NE(a.region(Region::kOutput), before)
        << isa::opcode_name(ins.opcode) << " wrote nothing";
  }
}

TEST(RefExecute, MismatchedBodyDoesNothing) {
  TestMemory tm(6);
  const std::vector<isa::Instruction> prog = all_instructions(tm);
  const Memory mem = tm.bind();
  const std::vector<uint8_t> before = tm.region(Region::kOutput);
  isa::Instruction bad = prog[2];  // a Pool body
  bad.opcode = Opcode::kConv;
  ref::execute(bad, mem);
  bad.opcode = Opcode::kMove;
  ref::execute(bad, mem);
  EXPECT_EQ(tm.region(Region::kOutput), before);
}

}  // namespace
}  // namespace openbpu::sim::test
