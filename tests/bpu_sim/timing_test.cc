// SPDX-License-Identifier: Apache-2.0
// The bernoulli2 timing model reproduces the reference measurement: MobileNetV1
// 224x224 nv12 on RDK X3, BPU subgraph 3.43 ms (seeds: hrt_model_exec perf
// profiler.log, BPU_MOBILENET_subgraph_0 avg_time 3.42556 ms).
#include <gtest/gtest.h>

#include "bpu_sim/isa/codec.h"
#include "bpu_sim/isa/march.h"
#include "bpu_sim/timing.h"
#include "schema/writer.h"
#include "tests/common/test_models.h"

namespace {

using namespace openbpu;

double bpu_ms(const std::vector<uint8_t>& file, const char* march_name, double max_fc_us, size_t* fcs) {
  fb::ModelFileT f;
  std::vector<uint8_t> data;
  std::string err;
  EXPECT_TRUE(model::unpack_model_file(file.data(), file.size(), &f, &data, &err)) << err;
  const auto* bpu = f.models[0]->segments[0]->kind.AsBpuProgram();
  std::vector<isa::Instruction> prog;
  EXPECT_TRUE(isa::decode_program(data.data() + bpu->code->offset(), bpu->code->size(), &prog, &err)) << err;
  const isa::MarchInfo& m = *isa::find_march(march_name);
  const auto split = sim::split_function_calls(prog, m, max_fc_us);
  uint64_t cycles = 0;
  for (const auto& fc : split) cycles += fc.cycles;
  *fcs = split.size();
  return sim::cycles_to_us(cycles, m) / 1000.0;
}

TEST(Timing, MobileNetV1Bernoulli2MatchesBoardMeasurement) {
  openbpu::testing::MobileNetV1 net;
  size_t fcs = 0;
  const double ms = bpu_ms(net.build(), "bernoulli2", 0, &fcs);
  EXPECT_EQ(fcs, 1u);
  EXPECT_NEAR(ms, 3.43, 3.43 * 0.05) << "estimated BPU time " << ms << " ms";
}

TEST(Timing, FunctionCallsRespectMaxTimePerFc) {
  openbpu::testing::MobileNetV1 net;
  const auto file = net.build();
  size_t fcs_1ms = 0, fcs_none = 0;
  const double total = bpu_ms(file, "bernoulli2", 0, &fcs_none);
  const double split = bpu_ms(file, "bernoulli2", 1000.0, &fcs_1ms);
  EXPECT_GE(fcs_1ms, 4u);  // 3.4 ms of work in <= 1 ms calls
  // Each fc adds its fixed overhead, nothing else changes.
  EXPECT_GT(split, total);
  EXPECT_LT(split, total * 1.01);
}

TEST(Timing, FasterMarchesEstimateLess) {
  openbpu::testing::MobileNetV1 net;
  size_t fcs = 0;
  net.march = "bayes-e";
  const double x5 = bpu_ms(net.build(), "bayes-e", 0, &fcs);
  net.march = "bayes";
  const double j5 = bpu_ms(net.build(), "bayes", 0, &fcs);
  EXPECT_LT(x5, 3.43);
  EXPECT_LT(j5, x5);
}

}  // namespace

// The board CPU side of bernoulli2 reproduces the RDK X3 profile of the
// reference documents (MobileNetV1: Dequantize_fc7 0.12307 ms and Softmax_prob
// 0.13367 ms for 1000 values; whole model 4.003 ms, BPU subgraph 3.426 ms).
TEST(Timing, Bernoulli2CpuOperatorsMatchBoardProfile) {
  const isa::MarchInfo& m = *isa::find_march("bernoulli2");
  EXPECT_NEAR(sim::estimate_cpu_op_us("Dequantize", 1000, m), 123.07, 123.07 * 0.02);
  EXPECT_NEAR(sim::estimate_cpu_op_us("Softmax", 1000, m), 133.67, 133.67 * 0.02);
  std::vector<sim::SegmentCost> segs(3);
  segs[0].bpu = true;
  segs[0].cycles = static_cast<uint64_t>(3425.56 * m.clock_mhz);
  segs[1].op_type = "Dequantize";
  segs[1].elements = 1000;
  segs[2].op_type = "Softmax";
  segs[2].elements = 1000;
  EXPECT_NEAR(sim::estimate_model_us(segs, m), 4003.1, 4003.1 * 0.02);
  // Bigger tensors cost more; transcendental operators more per element.
  EXPECT_GT(sim::estimate_cpu_op_us("Dequantize", 100000, m), sim::estimate_cpu_op_us("Dequantize", 1000, m));
  EXPECT_GT(sim::estimate_cpu_op_us("Sigmoid", 100000, m), sim::estimate_cpu_op_us("Relu", 100000, m));
}
