// SPDX-License-Identifier: Apache-2.0
// Whole-program bit-exactness: writer-built models (MobileNetV1 nv12 with
// random weights, the nv12 classifier) run through sim::execute_range with the
// reference table and with every optimized table usable here; outputs and the
// whole scratch arena (every intermediate tensor) must be identical, with one
// and two host threads. Also checks that a second run allocates no new plan
// (same result, same timing class) and prints the timings.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "bpu_sim/executor.h"
#include "bpu_sim/isa/codec.h"
#include "bpu_sim/validate.h"
#include "schema/writer.h"
#include "tests/bpu_sim/opt_test_util.h"
#include "tests/common/test_models.h"

namespace openbpu::sim::test {
namespace {

struct Program {
  std::vector<isa::Instruction> ins;
  std::vector<uint8_t> data;  // file data section (constants inside)
  const uint8_t* constants = nullptr;
  uint64_t constants_size = 0, scratch_size = 0;
  uint64_t input_size = 0, output_size = 0;
};

void extend(const isa::TensorRef& t, uint64_t* in, uint64_t* out) {
  int64_t last = 0;
  for (int k = 0; k < isa::kMaxRank; ++k) last += (t.dims[k] - 1) * t.strides[k];
  const uint64_t end = t.offset + static_cast<uint64_t>(last + 1) * isa::dtype_size(t.dtype);
  if (t.region == isa::Region::kInput) *in = std::max(*in, end);
  if (t.region == isa::Region::kOutput) *out = std::max(*out, end);
}

bool load(const std::vector<uint8_t>& file, Program* p) {
  fb::ModelFileT f;
  std::string err;
  if (!model::unpack_model_file(file.data(), file.size(), &f, &p->data, &err)) return false;
  const auto* bpu = f.models[0]->segments[0]->kind.AsBpuProgram();
  if (!isa::decode_program(p->data.data() + bpu->code->offset(), bpu->code->size(), &p->ins, &err))
    return false;
  p->constants = p->data.data() + bpu->constants->offset();
  p->constants_size = bpu->constants->size();
  p->scratch_size = bpu->scratch_size;
  for (const auto& i : p->ins) {
    std::visit(
        [&](const auto& b) {
          using T = std::decay_t<decltype(b)>;
          if constexpr (std::is_same_v<T, isa::Fill>) {
            extend(b.out, &p->input_size, &p->output_size);
          } else if constexpr (std::is_same_v<T, isa::Eltwise> || std::is_same_v<T, isa::MatMul>) {
            extend(b.a, &p->input_size, &p->output_size);
            extend(b.b, &p->input_size, &p->output_size);
            extend(b.out, &p->input_size, &p->output_size);
          } else {
            extend(b.in, &p->input_size, &p->output_size);
            extend(b.out, &p->input_size, &p->output_size);
            if constexpr (std::is_same_v<T, isa::Preprocess>) {
              const uint64_t uv = b.in.offset + b.uv_offset +
                                  static_cast<uint64_t>(b.in.dims[1] / 2) * b.uv_row_stride;
              p->input_size = std::max(p->input_size, uv);
            }
          }
        },
        i.body);
  }
  RegionLayout l;
  l.inputs = {p->input_size};
  l.outputs = {p->output_size};
  l.constants = p->constants;
  l.constants_size = p->constants_size;
  l.scratch_size = p->scratch_size;
  if (!validate_program(p->ins, l, &err)) {
    ADD_FAILURE() << err;
    return false;
  }
  return true;
}

struct Run {
  std::vector<uint8_t> input, output, scratch;
  double ms = 0;
};

Run run(const Program& p, const std::vector<uint8_t>& input, const KernelTable& t, int reps) {
  Run r;
  r.input = input;
  r.output.assign(p.output_size, 0x5a);
  r.scratch.assign(p.scratch_size, 0xa5);
  Memory m;
  m.inputs.push_back({r.input.data(), r.input.size()});
  m.outputs.push_back({r.output.data(), r.output.size()});
  m.constants = {const_cast<uint8_t*>(p.constants), p.constants_size};
  m.scratch = {r.scratch.data(), r.scratch.size()};
  r.ms = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    execute_range(p.ins, 0, p.ins.size(), m, t);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    r.ms = std::min(r.ms, ms);
  }
  return r;
}

void check_model(const std::vector<uint8_t>& file, const char* name, int reps) {
  Program p;
  ASSERT_TRUE(load(file, &p));
  std::vector<uint8_t> input(p.input_size);
  Rng rng(5);
  rng.fill(input.data(), input.size(), false);
  const Run ref = run(p, input, reference_kernels(), 1);
  std::printf("%s: %zu instructions, reference %.1f ms\n", name, p.ins.size(), ref.ms);
  const SplitEveryConvolution split;
  for (const KernelTable* t : optimized_tables()) {
    for (int threads : {1, 2}) {
      set_sim_threads(threads);
      const Run got = run(p, input, *t, reps);
      EXPECT_TRUE(got.output == ref.output) << name << " output differs on " << t->name;
      EXPECT_TRUE(got.scratch == ref.scratch) << name << " scratch differs on " << t->name;
      std::printf("%s: %-10s threads %d: %.2f ms (%.0fx the reference)\n", name, t->name, threads,
                  got.ms, ref.ms / got.ms);
    }
  }
  set_sim_threads(1);
}

TEST(OptModel, MobileNetV1MatchesReferenceOnEveryPath) {
  openbpu::testing::MobileNetV1 net;
#if defined(__aarch64__)
  net.h = net.w = 64;  // under qemu
#endif
  check_model(net.build(), "mobilenetv1", 3);
}

TEST(OptModel, Nv12ClassifierMatchesReferenceOnEveryPath) {
  openbpu::testing::Nv12Classifier net;
  net.h = net.w = 64;
  check_model(net.build(), "nv12_classifier", 2);
}

// A program prepared at load (pinned constants) runs its first time with
// the plans prepare built, bit-exact; unpinning drops them.
TEST(OptModel, PreparedPlansServeTheFirstRun) {
  openbpu::testing::MobileNetV1 net;
  net.h = net.w = 64;
  Program p;
  ASSERT_TRUE(load(net.build(), &p));
  std::vector<uint8_t> input(p.input_size);
  Rng rng(9);
  rng.fill(input.data(), input.size(), false);
  const test::Run ref = run(p, input, reference_kernels(), 1);
  for (const KernelTable* t : optimized_tables()) {
    ASSERT_NE(t->prepare_conv, nullptr) << t->name;
    const std::vector<uint8_t> blob(p.constants, p.constants + p.constants_size);  // a fresh address
    Program q = p;
    q.constants = blob.data();
    const size_t before = conv_plan_count();
    pin_constants(blob.data(), blob.size());
    Memory m;
    m.constants = {const_cast<uint8_t*>(blob.data()), blob.size()};
    prepare(q.ins, m, *t);
    const size_t prepared = conv_plan_count();
    EXPECT_GT(prepared, before + 10) << t->name;
    const test::Run got = run(q, input, *t, 1);
    EXPECT_EQ(conv_plan_count(), prepared) << t->name << ": the first run built plans";
    EXPECT_TRUE(got.output == ref.output) << t->name;
    EXPECT_TRUE(got.scratch == ref.scratch) << t->name;
    unpin_constants(blob.data());
    EXPECT_EQ(conv_plan_count(), before) << t->name;
  }
}

}  // namespace
}  // namespace openbpu::sim::test
