// SPDX-License-Identifier: Apache-2.0
// The converter's compiler stages one at a time, without torch or node:
//   - the operator table is consistent and every BPU operator has a test
//     here (Emitters.EveryBpuOperator lists them);
//   - placement follows the march limits of bpu_sim/isa/march.h, and what it
//     accepts at the limits the simulator's validator accepts for that march;
//   - calibration methods on histograms with known answers;
//   - the memory planner (liveness reuse, views, debug builds);
//   - each emitter: a one-operator graph compiled and run on the host (the
//     simulator's reference kernels) against the float graph (the runtime's
//     CPU operators).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "bpu_sim/validate.h"
#include "converter/codegen/compiler.h"
#include "converter/codegen/fusion.h"
#include "converter/codegen/memory_plan.h"
#include "converter/codegen/quant_params.h"
#include "converter/codegen/quantized_graph.h"
#include "converter/ops/op_unit.h"
#include "converter/passes/passes.h"
#include "converter/quant/calibration.h"
#include "converter/quant/equalization.h"
#include "converter/quant/method_search.h"
#include "converter/quant/weight_rounding.h"
#include "converter/report/similarity.h"
#include "tests/converter/graph_builder.h"

namespace openbpu::cvt {
namespace {

using namespace graph_test;  // the shared graph builder

rt::Attrs float_attr(const char* name, float v, rt::Attrs a = {}) {
  rt::AttrValue x;
  x.type = rt::AttrValue::kFloat;
  x.f = v;
  a.set(name, x);
  return a;
}

rt::Attrs string_attr(const char* name, const std::string& v, rt::Attrs a = {}) {
  rt::AttrValue x;
  x.type = rt::AttrValue::kString;
  x.s = v;
  a.set(name, x);
  return a;
}

rt::Attrs ints_attr2(const char* n1, std::vector<int64_t> v1, const char* n2, std::vector<int64_t> v2) {
  rt::Attrs a = ints_attr(n1, std::move(v1));
  rt::AttrValue x;
  x.type = rt::AttrValue::kInts;
  x.ints = std::move(v2);
  a.set(n2, x);
  return a;
}

const isa::MarchInfo& march(const char* name) { return *isa::find_march(name); }

// A graph compiled for a march with max calibration over a few samples.
struct Compiled {
  Graph g;
  Placement pl;
  CompiledModel cm;
  std::vector<Sample> samples;
};

::testing::AssertionResult compile_graph(Graph g, const char* march_name, bool force_bpu, Compiled* out,
                                         CompileOptions co = {}) {
  std::string err;
  if (fold_constants(&g, &err) < 0) return ::testing::AssertionFailure() << "shapes: " << err;
  PlacementOptions po;
  po.march = &march(march_name);
  if (force_bpu)
    for (const auto& n : g.nodes) po.run_on_bpu.insert(n.name);
  out->pl = place(&g, po);
  out->g = g;
  for (uint32_t seed = 1; seed <= 4; ++seed) out->samples.push_back(random_inputs(out->g, seed));
  FloatExecutor fe;
  CalibrationStats stats;
  if (!fe.prepare(out->g, &err) || !collect_stats(fe, out->samples, &stats, &err))
    return ::testing::AssertionFailure() << "calibration: " << err;
  co.march = &march(march_name);
  if (!compile(out->g, out->pl, thresholds_for(out->g, stats, CalCandidate{}), co, &out->cm, &err))
    return ::testing::AssertionFailure() << "compile: " << err;
  return ::testing::AssertionSuccess();
}

const NodePlacement& placement_of(const Graph& g, const Placement& pl, const std::string& node) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].name == node) return pl.nodes[i];
  static const NodePlacement none;
  ADD_FAILURE() << "no node " << node;
  return none;
}
const NodePlacement& placement_of(const Compiled& c, const std::string& node) { return placement_of(c.g, c.pl, node); }

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return aa == 0 && bb == 0 ? 1.0 : ab / std::sqrt(aa * bb);
}

// Every BPU subgraph's program is valid for the march (regions from the
// quantized graph's values).
void expect_valid_for_march(const Compiled& c, const isa::MarchInfo& m) {
  for (const Node& n : c.cm.graph.nodes) {
    if (n.op_type != "BpuSubgraph") continue;
    CompiledSubgraph sg;
    std::string err;
    ASSERT_TRUE(program_from_attrs(n.attrs, &sg, &err)) << err;
    sim::RegionLayout r;
    for (size_t i = 0; i + 1 < n.inputs.size(); ++i)
      r.inputs.push_back(static_cast<uint64_t>(c.cm.graph.value(n.inputs[i])->byte_size));
    for (const auto& o : n.outputs) r.outputs.push_back(static_cast<uint64_t>(c.cm.graph.value(o)->byte_size));
    const Value* consts = c.cm.graph.value(n.inputs.back());
    r.constants = consts->data->data();
    r.constants_size = consts->data->size();
    r.scratch_size = sg.scratch_size;
    r.march = &m;
    EXPECT_TRUE(sim::validate_program(sg.program, r, &err)) << n.name << ": " << err;
  }
}

// ---- the operator table ------------------------------------------------------

TEST(OpTable, IsConsistent) {
  EXPECT_TRUE(op_table_errors().empty());
  ASSERT_EQ(op_units().size(), static_cast<size_t>(OpId::kCount));
  for (size_t i = 0; i < op_units().size(); ++i) {
    const OpUnit& u = *op_units()[i];
    EXPECT_EQ(static_cast<size_t>(u.id), i) << u.op_type;
    if (u.place != nullptr) {
      EXPECT_NE(u.emit, nullptr) << u.op_type << " is placed on the BPU but has no emitter";
      EXPECT_NE(std::string(u.limits), "") << u.op_type << " has no supported_ops.md line";
    }
    Node n;
    n.domain = u.domain;
    n.op_type = u.op_type;
    EXPECT_EQ(find_op_unit(n), &u);
  }
  Node unknown;
  unknown.op_type = "InstanceNormalization";
  EXPECT_EQ(find_op_unit(unknown), nullptr);
}

TEST(OpTable, SupportedOpsListsEveryBpuOperator) {
  const std::string md = supported_ops_markdown();
  for (const OpUnit* u : op_units()) {
    const std::string row = std::string("| ") + (std::string(u->domain).empty() ? "" : std::string(u->domain) + "::") +
                            u->op_type + " | " + u->table_type + " | ";
    EXPECT_EQ(md.find(row) != std::string::npos, u->place != nullptr) << u->op_type;
  }
}

// ---- placement ---------------------------------------------------------------

// conv(k x k) -> relu -> conv(1x1): the first conv at the given kernel size.
Graph conv_chain(int64_t k, int64_t channels = 8) {
  Builder b;
  const std::string x = b.input("x", {1, channels, 40, 40});
  std::string y = b.node("Conv", {x, b.constant("w", {channels, channels, k, k})}, ints_attr("kernel_shape", {k, k}));
  y = b.node("Relu", {y});
  b.output(b.node("Conv", {y, b.constant("w2", {4, channels, 1, 1})}));
  return b.g;
}

TEST(Placement, KernelLimitsOfEachMarch) {
  int count = 0;
  const isa::MarchInfo* marches = isa::all_marches(&count);
  for (int i = 0; i < count; ++i) {
    const isa::MarchInfo& m = marches[i];
    const int k = m.limits.max_kernel;
    Compiled at, above;
    ASSERT_TRUE(compile_graph(conv_chain(k), m.name, false, &at));
    const NodePlacement& p = placement_of(at, "Conv_0");
    EXPECT_EQ(p.device, Device::kBpu) << m.name << " kernel " << k << ": " << p.reason;
    expect_valid_for_march(at, m);
    ASSERT_TRUE(compile_graph(conv_chain(k + 1), m.name, false, &above));
    const NodePlacement& q = placement_of(above, "Conv_0");
    EXPECT_EQ(q.device, Device::kCpu) << m.name;
    EXPECT_NE(q.reason.find("kernel size " + std::to_string(k + 1) + " exceeds " + std::to_string(k)),
              std::string::npos)
        << q.reason;
  }
}

TEST(Placement, ChannelLimitAndUnknownOperators) {
  Graph g = conv_chain(1, march("bernoulli2").limits.max_channels + 8);
  std::string err;
  ASSERT_GE(fold_constants(&g, &err), 0) << err;
  PlacementOptions po;
  po.march = &march("bernoulli2");
  Placement pl = place(&g, po);
  EXPECT_EQ(placement_of(g, pl, "Conv_0").device, Device::kCpu);
  EXPECT_NE(placement_of(g, pl, "Conv_0").reason.find("channels 2056 exceed 2048"), std::string::npos);

  Builder b;
  const std::string x = b.input("x", {1, 4, 8, 8});
  std::string y = b.node("Conv", {x, b.constant("w", {4, 4, 1, 1})});
  y = b.node("InstanceNormalization", {y, b.constant("s", {4}), b.constant("bias", {4})});
  b.output(b.node("Conv", {y, b.constant("w2", {4, 4, 1, 1})}));
  ASSERT_GE(fold_constants(&b.g, &err), 0) << err;
  pl = place(&b.g, po);
  EXPECT_EQ(pl.subgraphs, 2);
  EXPECT_EQ(placement_of(b.g, pl, "InstanceNormalization_1").reason,
            "InstanceNormalization is not supported on the BPU");
}

// A copy of the (folded) graph src placed for march m.
Placement place_copy(const Graph& src, const char* m, Graph* g, std::set<std::string> run_on_bpu = {}) {
  *g = src;
  PlacementOptions po;
  po.march = &march(m);
  po.run_on_bpu = std::move(run_on_bpu);
  return place(g, po);
}

TEST(Placement, ReshapeFamilyFollowsTheMarchAndPassiveTailsStayOnTheCpu) {
  Builder b;
  const std::string x = b.input("x", {1, 4, 8, 8});
  std::string y = b.node("Conv", {x, b.constant("w", {4, 4, 1, 1})});
  y = b.node("Reshape", {y, b.ints("shape", {1, 8, 4, 8})});
  y = b.node("Conv", {y, b.constant("w2", {4, 8, 1, 1})});
  b.output(b.node("Transpose", {y}, ints_attr("perm", {0, 2, 3, 1})));
  std::string err;
  ASSERT_GE(fold_constants(&b.g, &err), 0) << err;
  for (const char* m : {"bernoulli2", "bayes-e"}) {
    Graph g;
    const Placement pl = place_copy(b.g, m, &g);
    std::map<std::string, const NodePlacement*> by_op;
    for (size_t i = 0; i < g.nodes.size(); ++i) by_op[g.nodes[i].op_type] = &pl.nodes[i];
    EXPECT_EQ(by_op["Reshape"]->device, march(m).limits.reshape ? Device::kBpu : Device::kCpu) << m;
    if (!march(m).limits.reshape) {
      EXPECT_EQ(by_op["Reshape"]->reason, "Reshape: Reshape-type operators run on the CPU on this march");
    }
    EXPECT_EQ(by_op["Transpose"]->device, Device::kCpu) << m;  // passive, at the tail
  }
}

TEST(Placement, ElementwiseIslandsBetweenCpuOperatorsRunOnTheCpu) {
  // Conv -> InstanceNorm (CPU) -> Add, Sigmoid, Mul -> InstanceNorm (CPU)
  // -> Conv -> Add: the first Add, the Sigmoid and the Mul would be a BPU
  // subgraph of their own (int8 roundings for three element-wise
  // operations); the last Add reads a BPU Conv and stays with it.
  Builder b;
  const std::string x = b.input("x", {1, 4, 8, 8});
  std::string y = b.node("Conv", {x, b.constant("w", {4, 4, 1, 1})});
  y = b.node("InstanceNormalization", {y, b.constant("s", {4}), b.constant("bias", {4})});
  y = b.node("Add", {y, b.constant("a", {1, 4, 1, 1})});
  y = b.node("Sigmoid", {y});
  y = b.node("Mul", {y, b.constant("m", {1, 4, 1, 1})});
  y = b.node("InstanceNormalization", {y, b.constant("s2", {4}), b.constant("bias2", {4})});
  y = b.node("Conv", {y, b.constant("w2", {4, 4, 1, 1})});
  b.output(b.node("Add", {y, b.constant("a2", {1, 4, 1, 1})}));
  std::string err;
  ASSERT_GE(fold_constants(&b.g, &err), 0) << err;
  for (const char* m : {"bernoulli2", "bayes-e"}) {
    Graph g;
    Placement pl = place_copy(b.g, m, &g);
    EXPECT_EQ(pl.subgraphs, 2) << m;
    for (const char* n : {"Add_2", "Sigmoid_3", "Mul_4"}) {
      EXPECT_EQ(placement_of(g, pl, n).device, Device::kCpu) << m << " " << n;
      EXPECT_NE(placement_of(g, pl, n).reason.find("element-wise island"), std::string::npos) << n;
    }
    EXPECT_EQ(placement_of(g, pl, "Add_7").device, Device::kBpu) << m;
    // Forced onto the BPU, the island stays there (its own subgraph).
    pl = place_copy(b.g, m, &g, {"Mul_4"});
    EXPECT_EQ(pl.subgraphs, 3) << m;
    EXPECT_EQ(placement_of(g, pl, "Add_2").device, Device::kBpu) << m;
  }
}

// ---- calibration methods -----------------------------------------------------

TEST(Calibration, ThresholdsOfKnownHistograms) {
  // Uniform |x| over [0, 1]: the p-th percentile is p, the MSE optimum close
  // to the max (no outliers to clip).
  std::vector<double> uniform(2048, 10.0);
  EXPECT_NEAR(percentile_threshold(uniform, 1.0, 0.5), 0.5, 1e-3);
  EXPECT_NEAR(percentile_threshold(uniform, 1.0, 0.99), 0.99, 1e-3);
  EXPECT_GT(mse_threshold(uniform, 1.0), 0.9);
  // Mass near 0 with one far outlier: KL and MSE clip it, max keeps it.
  std::vector<double> outlier(2048, 0.0);
  for (int i = 0; i < 200; ++i) outlier[static_cast<size_t>(i)] = 100000.0 - 400.0 * i;
  outlier[2047] = 1.0;
  EXPECT_LT(kl_threshold(outlier, 10.0), 2.0);
  EXPECT_LT(mse_threshold(outlier, 10.0), 2.0);
  EXPECT_NEAR(percentile_threshold(outlier, 10.0, 1.0), 10.0, 1e-9);
}

TEST(Calibration, StatsAndCandidates) {
  Builder b;
  const std::string x = b.input("x", {1, 2, 4, 4});
  b.output(b.node("Relu", {x}));
  std::string err;
  ASSERT_GE(fold_constants(&b.g, &err), 0) << err;
  std::vector<Sample> samples = {random_inputs(b.g, 1), random_inputs(b.g, 2)};
  FloatExecutor fe;
  CalibrationStats stats;
  ASSERT_TRUE(fe.prepare(b.g, &err) && collect_stats(fe, samples, &stats, &err)) << err;
  double mx = 0;
  for (const auto& s : samples)
    for (double v : s.at("x").to_doubles()) mx = std::max(mx, std::fabs(v));
  EXPECT_DOUBLE_EQ(stats.values.at("x").max_abs, mx);
  EXPECT_DOUBLE_EQ(stats.threshold("x", CalMethod::kMax, 1.0), mx);

  auto labels = [](const std::vector<CalCandidate>& c) {
    std::vector<std::string> l;
    for (const auto& x : c) l.push_back(x.label);
    return l;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(labels(calibration_candidates("max", std::nullopt, false)), V{"max"});
  EXPECT_EQ(labels(calibration_candidates("max", 0.9999f, false)), V{"max-percentile:percentile=0.99990"});
  EXPECT_EQ(labels(calibration_candidates("kl", std::nullopt, false)), V{"kl"});
  EXPECT_EQ(labels(calibration_candidates("default", std::nullopt, true)), V{"max"});
  EXPECT_EQ(labels(calibration_candidates("default", std::nullopt, false)),
            (V{"max-percentile:percentile=0.99995", "kl", "mse", "max"}));
}

// A classifier's Softmax saturates on confident inputs: its probabilities
// do not tell a fine input scale from a 4x coarser one, its logits do. The
// method choice and the threshold search score such an output by its
// Softmax input (OutputScorer with logits, scored_value).
TEST(Calibration, SoftmaxOutputsAreScoredByTheirLogits) {
  Builder b;
  const std::string x = b.input("x", {1, 16, 4, 4});
  const std::string c = b.node("Conv", {x, b.constant("w", {4, 16, 4, 4}, -3.0f, 3.0f)}, ints_attr("kernel_shape", {4, 4}));
  const std::string logits = b.node("Flatten", {c});
  const std::string y = b.node("Softmax", {logits});
  b.output(y);
  Compiled fine;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", false, &fine));
  EXPECT_EQ(scored_value(fine.g, fine.pl, y), logits);
  std::string err;
  FloatExecutor fe;
  CalibrationStats stats;
  ASSERT_TRUE(fe.prepare(fine.g, &err) && collect_stats(fe, fine.samples, &stats, &err)) << err;
  auto thr = thresholds_for(fine.g, stats, CalCandidate{});
  thr.at(x) *= 4;
  CompileOptions co;
  co.march = &march("bayes-e");
  CompiledModel coarse;
  ASSERT_TRUE(compile(fine.g, fine.pl, thr, co, &coarse, &err)) << err;
  double out_fine = 0, out_coarse = 0, logit_fine = 0, logit_coarse = 0;
  OutputScorer outputs, by_logits;
  ASSERT_TRUE(outputs.init(fine.g, fine.samples, 4, &err) &&
              by_logits.init(fine.g, fine.samples, 4, &err, &fine.pl));
  ASSERT_TRUE(outputs.score(fine.cm, &out_fine, &err) && outputs.score(coarse, &out_coarse, &err)) << err;
  ASSERT_TRUE(by_logits.score(fine.cm, &logit_fine, &err) && by_logits.score(coarse, &logit_coarse, &err)) << err;
  // (here the probabilities even rank the coarse scale higher)
  EXPECT_LT(out_fine - out_coarse, kMinScoreGain) << out_fine << " " << out_coarse;
  EXPECT_GT(logit_fine - logit_coarse, 10 * kMinScoreGain) << logit_fine << " " << logit_coarse;

  // A Softmax forced onto the BPU (run_on_bpu) keeps its input inside the
  // subgraph: the output itself is scored.
  Compiled on_bpu;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &on_bpu));
  EXPECT_EQ(scored_value(on_bpu.g, on_bpu.pl, y), y);
  OutputScorer bpu_scorer;
  double bpu_score = 0;
  ASSERT_TRUE(bpu_scorer.init(on_bpu.g, on_bpu.samples, 4, &err, &on_bpu.pl) &&
              bpu_scorer.score(on_bpu.cm, &bpu_score, &err)) << err;
}

// ---- memory planner ----------------------------------------------------------

struct Planned {
  Graph g;
  std::vector<SubgraphPlan> plans;
  std::map<std::string, QParams> q;
};

Planned plan_chain(const std::vector<std::string>& ops) {
  Builder b;
  std::string y = b.input("x", {1, 8, 8, 8});
  for (const auto& op : ops)
    y = op == "Reshape" ? b.node(op, {y, b.ints("shape", {1, 8, 8, 8})}) : b.node(op, {y});
  b.output(y);
  Planned p;
  std::string err;
  EXPECT_GE(fold_constants(&b.g, &err), 0) << err;
  PlacementOptions po;
  po.march = &march("bayes-e");
  for (const auto& n : b.g.nodes) po.run_on_bpu.insert(n.name);
  const Placement pl = place(&b.g, po);
  p.g = b.g;
  EXPECT_TRUE(plan_subgraphs(p.g, pl, {}, &p.plans, &err)) << err;
  p.q = assign_qparams(p.g, pl, p.plans, {}, {});
  return p;
}

TEST(MemoryPlan, ReusesDeadValuesUnlessDebugging) {
  const Planned p = plan_chain({"Sigmoid", "Tanh", "Exp", "Neg"});
  ASSERT_EQ(p.plans.size(), 1u);
  const auto& ops = p.plans[0].ops;
  const std::string a = ops[0].outputs[0], b = ops[1].outputs[0], c = ops[2].outputs[0], out = ops[3].outputs[0];
  const uint64_t block = native_bytes(logical4({1, 8, 8, 8}), isa::DType::kInt8, march("bayes-e").channel_align);
  const MemoryPlan reuse = plan_memory(p.g, p.plans[0], p.q, {}, {march("bayes-e").channel_align, false});
  EXPECT_EQ(reuse.refs.at("x").region, isa::Region::kInput);
  EXPECT_EQ(reuse.refs.at(out).region, isa::Region::kOutput);
  EXPECT_EQ(reuse.refs.at(a).region, isa::Region::kScratch);
  EXPECT_NE(reuse.refs.at(a).offset, reuse.refs.at(b).offset);  // both live while b is computed
  EXPECT_EQ(reuse.refs.at(c).offset, reuse.refs.at(a).offset);  // a is dead by then
  EXPECT_EQ(reuse.scratch_size, 2 * block);
  const MemoryPlan debug = plan_memory(p.g, p.plans[0], p.q, {}, {march("bayes-e").channel_align, true});
  EXPECT_EQ(std::set<uint64_t>({debug.refs.at(a).offset, debug.refs.at(b).offset, debug.refs.at(c).offset}).size(),
            3u);
  EXPECT_EQ(debug.scratch_size, 3 * block);
}

TEST(MemoryPlan, LayoutPreservingReshapeIsAView) {
  const Planned p = plan_chain({"Sigmoid", "Reshape", "Tanh"});
  const auto& ops = p.plans[0].ops;
  const MemoryPlan mp = plan_memory(p.g, p.plans[0], p.q, {}, {march("bayes-e").channel_align, false});
  const std::string s = ops[0].outputs[0], r = ops[1].outputs[0];
  ASSERT_TRUE(mp.alias_of.count(r));
  EXPECT_EQ(mp.root(r), s);
  EXPECT_EQ(mp.refs.at(r).offset, mp.refs.at(s).offset);
  // Compiled, the view emits nothing: Sigmoid and Tanh tables only.
  Builder b;
  std::string y = b.node("Sigmoid", {b.input("x", {1, 8, 8, 8})});
  y = b.node("Reshape", {y, b.ints("shape", {1, 8, 8, 8})});
  b.output(b.node("Tanh", {y}));
  Compiled c;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &c));
  ASSERT_EQ(c.cm.subgraphs.size(), 1u);
  EXPECT_EQ(c.cm.subgraphs[0].program.size(), 2u);
}

// ---- emitters --------------------------------------------------------------------

// Builds the node under test on x [1, 8, 8, 8] and returns its output.
using Case = std::function<std::string(Builder&, const std::string&)>;

std::string conv3(Builder& b, const std::string& x) {
  return b.node("Conv", {x, b.constant("w", {8, 8, 3, 3}), b.constant("bias", {8})},
                ints_attr2("kernel_shape", {3, 3}, "pads", {1, 1, 1, 1}));
}

const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> c = {
      {"Conv", [](Builder& b, const std::string& x) { return conv3(b, x); }},
      {"ConvTranspose",
       [](Builder& b, const std::string& x) {
         return b.node("ConvTranspose", {x, b.constant("w", {8, 4, 2, 2})}, ints_attr2("kernel_shape", {2, 2}, "strides", {2, 2}));
       }},
      {"BatchNormalization",
       [](Builder& b, const std::string& x) {
         return b.node("BatchNormalization", {x, b.constant("g", {8}, 0.5f, 1.5f), b.constant("beta", {8}),
                                              b.constant("mean", {8}), b.constant("var", {8}, 0.5f, 2.0f)});
       }},
      {"MaxPool", [](Builder& b, const std::string& x) {
         return b.node("MaxPool", {x}, ints_attr2("kernel_shape", {3, 3}, "strides", {2, 2})); }},
      {"AveragePool", [](Builder& b, const std::string& x) {
         return b.node("AveragePool", {x}, ints_attr2("kernel_shape", {2, 2}, "strides", {2, 2})); }},
      {"GlobalAveragePool", [](Builder& b, const std::string& x) { return b.node("GlobalAveragePool", {x}); }},
      {"GlobalMaxPool", [](Builder& b, const std::string& x) { return b.node("GlobalMaxPool", {x}); }},
      {"ReduceMean", [](Builder& b, const std::string& x) {  // over H, W; C; the tokens' last axis; C and H; ...
         b.output(b.node("ReduceMean", {x}, int_attr("keepdims", 0, ints_attr("axes", {1}))));
         b.output(b.node("ReduceMean", {b.node("Reshape", {x, b.ints("s", {1, 8, 64})})},
                         int_attr("keepdims", 0, ints_attr("axes", {-1}))));
         b.output(b.node("ReduceMean", {x}, int_attr("keepdims", 0, ints_attr("axes", {1, 2}))));
         b.output(b.node("ReduceMean", {x}, int_attr("keepdims", 1, ints_attr("axes", {0, 1, 3}))));
         return b.node("ReduceMean", {x}, int_attr("keepdims", 1, ints_attr("axes", {2, 3}))); }},
      {"ReduceSum", [](Builder& b, const std::string& x) {  // axes as an input (opset 13): C; W
         b.output(b.node("ReduceSum", {x, b.ints("a", {1})}, int_attr("keepdims", 0)));
         return b.node("ReduceSum", {x, b.ints("a2", {-1})}); }},
      {"Add", [](Builder& b, const std::string& x) { return b.node("Add", {x, b.constant("c", {1, 8, 1, 1})}); }},
      {"Sub", [](Builder& b, const std::string& x) { return b.node("Sub", {x, b.node("Sigmoid", {x})}); }},
      {"Mul", [](Builder& b, const std::string& x) { return b.node("Mul", {x, b.constant("c", {1, 1, 8, 8})}); }},
      {"Div", [](Builder& b, const std::string& x) { return b.node("Div", {x, b.scalar(2.5f)}); }},
      {"Max", [](Builder& b, const std::string& x) { return b.node("Max", {x, b.node("Neg", {x})}); }},
      {"Min", [](Builder& b, const std::string& x) { return b.node("Min", {x, b.constant("c", {8})}); }},
      {"Relu", [](Builder& b, const std::string& x) { return b.node("Relu", {x}); }},
      {"Clip", [](Builder& b, const std::string& x) { return b.node("Clip", {x, b.scalar(-0.5f), b.scalar(1.0f)}); }},
      {"LeakyRelu", [](Builder& b, const std::string& x) { return b.node("LeakyRelu", {x}, float_attr("alpha", 0.1f)); }},
      {"PRelu", [](Builder& b, const std::string& x) { return b.node("PRelu", {x, b.scalar(0.25f)}); }},
      {"Sigmoid", [](Builder& b, const std::string& x) { return b.node("Sigmoid", {x}); }},
      {"Tanh", [](Builder& b, const std::string& x) { return b.node("Tanh", {x}); }},
      {"HardSigmoid", [](Builder& b, const std::string& x) { return b.node("HardSigmoid", {x}); }},
      {"HardSwish", [](Builder& b, const std::string& x) { return b.node("HardSwish", {x}); }},
      {"openbpu::Swish", [](Builder& b, const std::string& x) { return b.node("Swish", {x}, {}, "openbpu"); }},
      {"openbpu::Gelu", [](Builder& b, const std::string& x) { return b.node("Gelu", {x}, {}, "openbpu"); }},
      {"Elu", [](Builder& b, const std::string& x) { return b.node("Elu", {x}); }},
      {"Selu", [](Builder& b, const std::string& x) { return b.node("Selu", {x}); }},
      {"Softplus", [](Builder& b, const std::string& x) { return b.node("Softplus", {x}); }},
      {"Exp", [](Builder& b, const std::string& x) { return b.node("Exp", {x}); }},
      {"Erf", [](Builder& b, const std::string& x) { return b.node("Erf", {x}); }},
      {"Abs", [](Builder& b, const std::string& x) { return b.node("Abs", {x}); }},
      {"Neg", [](Builder& b, const std::string& x) { return b.node("Neg", {x}); }},
      {"Reciprocal", [](Builder& b, const std::string& x) {
         return b.node("Reciprocal", {b.node("Add", {b.node("Sigmoid", {x}), b.scalar(0.5f)})}); }},
      {"Sqrt", [](Builder& b, const std::string& x) { return b.node("Sqrt", {b.node("Abs", {x})}); }},
      {"Resize",
       [](Builder& b, const std::string& x) {
         return b.node("Resize", {x, b.constant_values("roi", {0}, {}), b.constant_values("sc", {4}, {1, 1, 2, 2})},
                       string_attr("mode", "linear"));
       }},
      {"Upsample",
       [](Builder& b, const std::string& x) {
         return b.node("Upsample", {x, b.constant_values("sc", {4}, {1, 1, 2, 2})});
       }},
      {"Concat", [](Builder& b, const std::string& x) {
         return b.node("Concat", {x, b.node("Sigmoid", {x})}, int_attr("axis", 1)); }},
      {"Split",
       [](Builder& b, const std::string& x) {
         const std::string first = b.node("Split", {x, b.ints("split", {4, 4})}, int_attr("axis", 1));
         const std::string second = b.g.nodes.back().name + "_out2";
         b.g.nodes.back().outputs.push_back(second);
         b.g.values[second].name = second;
         return b.node("Sub", {first, second});
       }},
      {"Slice",
       [](Builder& b, const std::string& x) {
         return b.node("Slice", {x, b.ints("st", {1, 2}), b.ints("en", {7, 8}), b.ints("ax", {2, 3}), b.ints("sp", {2, 1})});
       }},
      {"Pad", [](Builder& b, const std::string& x) {
         return b.node("Pad", {x, b.ints("pads", {0, 0, 1, 2, 0, 0, 2, 1})}); }},
      {"ArgMax",
       [](Builder& b, const std::string& x) {
         const std::string y = b.node("ArgMax", {x}, int_attr("axis", 1));
         b.g.values[y].elem_type = kInt64;
         return y;
       }},
      {"Reshape", [](Builder& b, const std::string& x) { return b.node("Reshape", {x, b.ints("s", {1, 16, 4, 8})}); }},
      {"Flatten", [](Builder& b, const std::string& x) { return b.node("Flatten", {x}); }},
      {"Squeeze", [](Builder& b, const std::string& x) {
         return b.node("Squeeze", {b.node("ReduceMean", {x}, int_attr("keepdims", 1, ints_attr("axes", {2, 3}))),
                                   b.ints("a", {3})}); }},
      {"Unsqueeze", [](Builder& b, const std::string& x) {
         return b.node("Unsqueeze", {b.node("Flatten", {x}), b.ints("a", {2})}); }},
      {"Transpose", [](Builder& b, const std::string& x) {  // 4-D, then 3-D and 2-D (tokens)
         const std::string t = b.node("Transpose", {x}, ints_attr("perm", {0, 2, 1, 3}));
         const std::string r = b.node("Transpose", {b.node("Reshape", {t, b.ints("s", {1, 8, 64})})},
                                      ints_attr("perm", {0, 2, 1}));
         return b.node("Transpose", {b.node("Reshape", {r, b.ints("s2", {64, 8})})}); }},
      {"DepthToSpace", [](Builder& b, const std::string& x) {
         return b.node("DepthToSpace", {x}, int_attr("blocksize", 2)); }},
      {"SpaceToDepth", [](Builder& b, const std::string& x) {
         return b.node("SpaceToDepth", {x}, int_attr("blocksize", 2)); }},
      {"MatMul", [](Builder& b, const std::string& x) {
         // x * sigmoid(x)^T per channel, then a matrix shared by the channels, then a constant weight
         const std::string t = b.node("Transpose", {b.node("Sigmoid", {x})}, ints_attr("perm", {0, 1, 3, 2}));
         const std::string p = b.node("MatMul", {x, t});
         const std::string w = b.node("Reshape", {b.node("Slice", {p, b.ints("st", {0}), b.ints("en", {1}),
                                                                   b.ints("ax", {1})}), b.ints("s", {1, 8, 8})});
         return b.node("MatMul", {b.node("MatMul", {p, w}), b.constant("w", {8, 5})}); }},
      {"Softmax", [](Builder& b, const std::string& x) {  // over the channels, then used on the BPU
         return b.node("Add", {b.node("Softmax", {b.node("Mul", {x, b.scalar(3.0f)})}, int_attr("axis", 1)), x}); }},
      {"LayerNormalization", [](Builder& b, const std::string& x) {
         return b.node("LayerNormalization", {x, b.constant("g", {8}, 0.5f, 1.5f), b.constant("b", {8}, -0.2f, 0.2f)},
                       float_attr("epsilon", 1e-5f, int_attr("axis", -1))); }},
  };
  return c;
}

// Operators covered elsewhere: Preprocess by the e2e conversions with image
// inputs (tests/converter/e2e, nv12/rgb/bgr).
const std::set<std::string> kCoveredElsewhere = {"openbpu::Preprocess"};

std::string unit_name(const OpUnit& u) {
  return std::string(u.domain).empty() ? u.op_type : std::string(u.domain) + "::" + u.op_type;
}

TEST(Emitters, EveryBpuOperatorHasACase) {
  for (const OpUnit* u : op_units()) {
    if (u->place != nullptr && !kCoveredElsewhere.count(unit_name(*u))) {
      EXPECT_TRUE(cases().count(unit_name(*u))) << unit_name(*u) << " has no emitter test in compiler_test.cc";
    }
  }
}

class EmitterTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EmitterTest, MatchesTheFloatGraph) {
  Builder b(GetParam() == "Upsample" ? 9 : 13);  // Upsample is deprecated from opset 10
  b.output(cases().at(GetParam())(b, b.input("x", {1, 8, 8, 8})));
  Compiled c;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &c));
  // The operator under test is on the BPU.
  const std::string op = GetParam().substr(GetParam().rfind(':') + 1);
  bool placed = false;
  for (size_t i = 0; i < c.g.nodes.size(); ++i)
    if (c.g.nodes[i].op_type == op) {
      EXPECT_EQ(c.pl.nodes[i].device, Device::kBpu) << c.pl.nodes[i].reason;
      placed = true;
    }
  EXPECT_TRUE(placed);
  expect_valid_for_march(c, march("bayes-e"));
  for (const Sample& s : c.samples) {
    const auto f = run(c.g, s), q = run(c.cm.graph, s);
    for (const auto& [name, fv] : f) {
      const auto& qv = q.at(name);
      ASSERT_EQ(fv.size(), qv.size()) << name;
      if (op == "ArgMax") {
        size_t agree = 0;
        for (size_t i = 0; i < fv.size(); ++i) agree += fv[i] == qv[i];
        EXPECT_GE(agree, fv.size() * 8 / 10) << name;
        continue;
      }
      EXPECT_GT(cosine(fv, qv), 0.995) << name;
    }
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> n;
  for (const auto& [k, v] : cases()) n.push_back(k);
  return n;
}

INSTANTIATE_TEST_SUITE_P(Units, EmitterTest, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param;
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

// int16 activations have scales ~256x finer than int8's, so the int32 bias
// of a channel with tiny weights and a large bias (a folded BatchNorm of a
// nearly constant channel, as in PP-OCRv4 rec's first convolution) would
// not fit at s_in * max|w| / 127: its weight scale is widened instead of
// clipping the bias (ops::bias_fitting_scale), for int16 and int32 outputs.
TEST(Emitters, Int16ConvKeepsTheBiasOfChannelsWithTinyWeights) {
  for (const bool int32_tail : {false, true}) {
    Builder b;
    const std::string x = b.input("x", {1, 8, 8, 8});
    std::vector<float> w(8 * 8 * 3 * 3), bias(8);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (size_t i = 0; i < w.size(); ++i) w[i] = d(rng) * (i >= 7 * 72 ? 1e-4f : 1.0f);
    for (size_t c = 0; c < 8; ++c) bias[c] = c == 7 ? 3.0f : d(rng);
    b.output(b.node("Conv", {x, b.constant_values("w", {8, 8, 3, 3}, w), b.constant_values("bias", {8}, bias)},
                    ints_attr2("kernel_shape", {3, 3}, "pads", {1, 1, 1, 1})));
    CompileOptions co;
    co.all_int16 = true;
    co.int32_tail = int32_tail;
    Compiled c;
    ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &c, co));
    const auto f = run(c.g, c.samples[0]), q = run(c.cm.graph, c.samples[0]);
    const auto& fv = f.begin()->second;
    const auto& qv = q.at(f.begin()->first);
    double worst = 0;  // channel 7: 3.0 plus at most ~0.007
    for (size_t i = 7 * 64; i < 8 * 64; ++i) worst = std::max(worst, std::fabs(fv[i] - qv[i]));
    EXPECT_LT(worst, 1e-3) << "int32 tail " << int32_tail;
    EXPECT_GT(cosine(fv, qv), 0.99999) << "int32 tail " << int32_tail;
  }
}

// optimization int16_weights: convolutions reading int16 compute with two
// int8 weight planes (the low plane's result is the high plane's int16
// residual), so their weights carry about 15 bits; a conv that already takes
// a residual keeps one plane. On int16 activations the weights' rounding is
// the larger error: the two-plane output error is a small fraction of it.
TEST(Emitters, Int16WeightsAreTwoInt8Planes) {
  Builder b;
  const std::string x = b.input("x", {1, 16, 8, 8});
  const std::string r = b.node("Relu", {b.node("Conv", {x, b.constant("w0", {16, 16, 3, 3}), b.constant("b0", {16})},
                                               ints_attr2("kernel_shape", {3, 3}, "pads", {1, 1, 1, 1}))});
  const std::string y = b.node("Conv", {r, b.constant("w1", {16, 16, 1, 1})}, ints_attr("kernel_shape", {1, 1}));
  b.output(y);
  b.output(b.node("Add", {b.node("Conv", {r, b.constant("w2", {16, 16, 1, 1})}, ints_attr("kernel_shape", {1, 1})), x}));
  CompileOptions co;
  co.all_int16 = true;
  co.int32_tail = false;
  Compiled one, two;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &one, co));
  co.int16_weights = true;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &two, co));
  EXPECT_EQ(one.cm.int16_weight_convs, 0u);
  EXPECT_EQ(two.cm.int16_weight_convs, 2u);  // not the conv taking the residual x
  auto convs = [](const CompiledModel& cm) {
    size_t k = 0;
    for (const auto& sg : cm.subgraphs)
      for (const auto& ins : sg.program) k += ins.opcode == isa::Opcode::kConv;
    return k;
  };
  EXPECT_EQ(convs(two.cm), convs(one.cm) + 2);
  for (const Sample& smp : one.samples) {
    const auto f = run(one.g, smp), q1 = run(one.cm.graph, smp), q2 = run(two.cm.graph, smp);
    const auto& fv = f.at(y);
    double e1 = 0, e2 = 0;
    for (size_t i = 0; i < fv.size(); ++i) {
      e1 += (q1.at(y)[i] - fv[i]) * (q1.at(y)[i] - fv[i]);
      e2 += (q2.at(y)[i] - fv[i]) * (q2.at(y)[i] - fv[i]);
    }
    EXPECT_LT(e2, 0.01 * e1) << e2 / e1;  // measured 1.0-1.2e-4
  }
}

// Compiles b symmetric and asymmetric (with or without the int32 tail)
// and checks the zero points of r (a Relu's output) and h (a hard-swish's),
// the instructions carrying them, and that y is closer to float.
void expect_asymmetric_gain(const Builder& b, const std::string& r, const std::string& h, const std::string& y,
                            bool tail) {
  SCOPED_TRACE(tail ? "int32 tail" : "int8 output");
  CompileOptions co;
  co.int32_tail = tail;
  Compiled sym, asym;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &sym, co));
  co.asymmetric = true;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &asym, co));
  std::map<std::string, QParams> q;
  for (const auto& t : asym.cm.traces) q[t.value] = t.q;
  EXPECT_EQ(q.at(r).zero_point, -128);  // [0, T]: 255 steps
  EXPECT_GT(q.at(h).zero_point, -128);  // hard-swish's lowest value -0.375
  EXPECT_LT(q.at(h).zero_point, -100);
  EXPECT_EQ(q.at(y).zero_point, 0);     // read by the CPU
  size_t padded = 0, elt = 0, pool = 0;
  for (const auto& sg : asym.cm.subgraphs)
    for (const auto& ins : sg.program) {
      if (const auto* c = std::get_if<isa::Conv>(&ins.body)) padded += c->pad_value == -128;
      if (const auto* e = std::get_if<isa::Eltwise>(&ins.body)) elt += e->zero_a != 0 && e->zero_b != 0;
      if (const auto* p = std::get_if<isa::Pool>(&ins.body)) pool += p->zero_in != 0 && p->zero_out != 0;
    }
  EXPECT_EQ(padded, 1u);  // the 3x3 conv reading the Relu
  EXPECT_EQ(elt, 1u);
  EXPECT_EQ(pool, 1u);
  double e_sym = 0, e_asym = 0;
  for (const Sample& smp : sym.samples) {
    const auto f = run(sym.g, smp), qs = run(sym.cm.graph, smp), qa = run(asym.cm.graph, smp);
    for (size_t i = 0; i < f.at(y).size(); ++i) {
      e_sym += (qs.at(y)[i] - f.at(y)[i]) * (qs.at(y)[i] - f.at(y)[i]);
      e_asym += (qa.at(y)[i] - f.at(y)[i]) * (qa.at(y)[i] - f.at(y)[i]);
    }
  }
  EXPECT_LT(e_asym, 0.95 * e_sym) << e_asym / e_sym;  // measured 0.894
}

// optimization asymmetric: int8 values bounded below by their operator (a
// fused Relu, a table's lowest entry, an average of those) between operators
// that take zero points get them; the instructions carry them (pad value,
// eltwise and pool fields) and the outputs stay closer to float than with
// symmetric values. A value read by the CPU (the output) stays symmetric.
TEST(Emitters, AsymmetricActivationsTakeZeroPoints) {
  Builder b(14);  // HardSwish
  const std::string x = b.input("x", {1, 16, 8, 8});
  const auto conv = [&](const std::string& in, const char* w, int64_t k) {
    return b.node("Conv", {in, b.constant(w, {16, 16, k, k})},
                  ints_attr2("kernel_shape", {k, k}, "pads", {k / 2, k / 2, k / 2, k / 2}));
  };
  const std::string r = b.node("Relu", {conv(x, "w0", 3)});
  const std::string h = b.node("HardSwish", {conv(r, "w1", 3)});
  const std::string se = b.node("Sigmoid", {conv(b.node("GlobalAveragePool", {h}), "w2", 1)});
  const std::string y = conv(b.node("Mul", {h, se}), "w3", 1);
  b.output(y);
  for (const bool tail : {false, true}) expect_asymmetric_gain(b, r, h, y, tail);
}

// optimization asymmetric: a value read only by table lookups is quantized
// where they are not flat (quant_params.cc table_window): a hard-swish input
// from -3 on, a sigmoid input between its two tails. A value a convolution
// also reads keeps [-T, T]. The tables' outputs stay closer to float.
TEST(Emitters, TablesWindowTheirInputs) {
  Builder b(14);  // HardSwish
  const std::string x = b.input("x", {1, 16, 8, 8});
  const auto conv = [&](const std::string& in, const char* w) {
    return b.node("Conv", {in, b.constant(w, {16, 16, 3, 3}, -2.0f, 2.0f)},
                  ints_attr2("kernel_shape", {3, 3}, "pads", {1, 1, 1, 1}));
  };
  const std::string c0 = conv(x, "w0"), c1 = conv(x, "w1"), c2 = conv(x, "w2");
  const std::string h = b.node("HardSwish", {c0}), s = b.node("Sigmoid", {c1});
  const std::string sum = b.node("Add", {b.node("Add", {h, s}), b.node("Tanh", {c2})});
  const std::string y = b.node("Conv", {sum, b.constant("w3", {4, 16, 1, 1})});
  b.output(y);
  b.output(b.node("Conv", {c2, b.constant("w4", {4, 16, 1, 1})}));  // c2: also a convolution's input
  CompileOptions co;
  Compiled sym, asym;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &sym, co));
  co.asymmetric = true;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &asym, co));
  std::map<std::string, QParams> qs, qa;
  for (const auto& t : sym.cm.traces) qs[t.value] = t.q;
  for (const auto& t : asym.cm.traces) qa[t.value] = t.q;
  const auto lo = [](const QParams& p) { return (-128.0 - p.zero_point) * p.scale; };
  const auto hi = [](const QParams& p) { return (127.0 - p.zero_point) * p.scale; };
  // Hard-swish: the range starts where the table leaves 0 by a quarter of its
  // output step, at or a little above -3; its top stays T.
  ASSERT_GT(qs.at(c0).scale * 127, 6.0);
  const double l0 = lo(qa.at(c0)), hs = l0 * std::clamp(l0 + 3, 0.0, 6.0) / 6;
  EXPECT_GE(l0, -3.0 - qa.at(c0).scale);
  EXPECT_LE(std::fabs(hs), qa.at(h).scale / 4 + qa.at(c0).scale);
  EXPECT_NEAR(hi(qa.at(c0)), qs.at(c0).scale * 127, qa.at(c0).scale);
  EXPECT_LT(hi(qa.at(c1)) - lo(qa.at(c1)), 0.8 * 2 * qs.at(c1).scale * 127);  // sigmoid: both tails
  EXPECT_EQ(qa.at(c2).zero_point, 0);
  EXPECT_EQ(qa.at(c2).scale, qs.at(c2).scale);
  double e_sym = 0, e_asym = 0;
  for (const Sample& smp : sym.samples) {
    const auto f = run(sym.g, smp), q_s = run(sym.cm.graph, smp), q_a = run(asym.cm.graph, smp);
    for (size_t i = 0; i < f.at(y).size(); ++i) {
      e_sym += (q_s.at(y)[i] - f.at(y)[i]) * (q_s.at(y)[i] - f.at(y)[i]);
      e_asym += (q_a.at(y)[i] - f.at(y)[i]) * (q_a.at(y)[i] - f.at(y)[i]);
    }
  }
  EXPECT_LT(e_asym, e_sym) << e_asym / e_sym;
}

// A value read only by tables is quantized where they are not flat; its
// QParams keep those bounds and the similarity report measures it against
// the float value clamped to them (what its readers see), so the per-node
// cosine of a hard-swish input clipped at -3 is not reported as lost.
TEST(Similarity, WindowedValuesCompareWhereTheirTablesAreNotFlat) {
  Builder b(14);  // HardSwish
  const std::string x = b.input("x", {1, 16, 8, 8});
  const std::string c = b.node("Conv", {x, b.constant("w", {16, 16, 3, 3}, -2.0f, 2.0f)},
                               ints_attr2("kernel_shape", {3, 3}, "pads", {1, 1, 1, 1}));
  const std::string c2 = b.node("Conv", {x, b.constant("w2", {16, 16, 3, 3}, -2.0f, 2.0f)},
                                ints_attr2("kernel_shape", {3, 3}, "pads", {1, 1, 1, 1}));
  b.output(b.node("HardSwish", {c}));
  b.output(b.node("Conv", {c2, b.constant("w3", {4, 16, 1, 1})}));
  CompileOptions co;
  co.asymmetric = true;
  co.no_scratch_reuse = true;
  Compiled a;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &a, co));
  std::map<std::string, QParams> q;
  for (const auto& t : a.cm.traces) q[t.value] = t.q;
  EXPECT_NEAR(q.at(c).flat_below, -3.0, 2 * q.at(c).scale);
  EXPECT_EQ(q.at(c).flat_above, INFINITY);
  EXPECT_EQ(q.at(c2).flat_below, -INFINITY);  // read by a convolution
  Similarity sim;
  std::string err;
  ASSERT_TRUE(compute_similarity(a.g, a.cm, a.samples[0], &sim, &err)) << err;
  const std::map<std::string, double> cos(sim.nodes.begin(), sim.nodes.end());
  EXPECT_GT(cos.at(c), 0.999);
  EXPECT_GT(cos.at(c2), 0.999);
}

// Reparameterized depthwise kernels hold large taps that nearly cancel; on
// a nearly flat input their output is the small remainder. Rounding each tap
// to nearest moves the kernel's sum by up to several steps (an offset on
// every flat region); the converter keeps the integer sum closest to the
// real one (conv.cc round_weights).
TEST(Emitters, DepthwiseKernelsKeepTheirSum) {
  Builder b;
  const std::string x = b.input("x", {1, 8, 8, 8});
  std::vector<float> w(8 * 9);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-8.0f, 8.0f);
  for (size_t c = 0; c < 8; ++c) {
    float sum = 0;
    for (size_t k = 0; k < 9; ++k) sum += w[c * 9 + k] = d(rng);
    w[c * 9 + 4] -= sum - 0.01f;  // the taps cancel up to 0.01
  }
  // A flat input (1.0) with small detail (0.01 x N(0, 1)).
  const std::string flat = b.node("Add", {b.node("Mul", {x, b.scalar(0.01f)}), b.scalar(1.0f)});
  b.output(b.node("Conv", {flat, b.constant_values("w", {8, 1, 3, 3}, w), b.constant_values("bias", {8}, std::vector<float>(8, 0.0f))},
                  int_attr("group", 8, ints_attr("kernel_shape", {3, 3}))));
  CompileOptions co;
  co.all_int16 = true;
  Compiled c;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &c, co));
  for (const Sample& s : c.samples) {
    const auto f = run(c.g, s), q = run(c.cm.graph, s);
    EXPECT_GT(cosine(f.begin()->second, q.at(f.begin()->first)), 0.99);
  }
}

// ... but kernels whose flat response nearest rounding keeps (their tap sum
// moved by less than its own size) are rounded to nearest: restoring those
// sums as well measured worse on held-out lines (docs/converter.md "int16
// and the weights").
TEST(Emitters, KernelsKeepingTheirFlatResponseRoundToNearest) {
  Builder b;
  const std::string x = b.input("x", {1, 8, 8, 8});
  std::vector<float> w(8 * 9);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(0.5f, 8.0f);  // sums of 9 * 4 = 36 on average
  for (float& v : w) v = d(rng);
  b.output(b.node("Conv", {x, b.constant_values("w", {8, 1, 3, 3}, w)},
                  int_attr("group", 8, ints_attr("kernel_shape", {3, 3}))));
  CompileOptions co;
  co.all_int16 = true;
  Compiled c;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", true, &c, co));
  const auto& sg = c.cm.subgraphs.at(0);
  const isa::Conv* conv = nullptr;
  for (const auto& ins : sg.program)
    if (ins.opcode == isa::Opcode::kConv) conv = &std::get<isa::Conv>(ins.body);
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->weight.count, w.size());
  const auto* q = reinterpret_cast<const int8_t*>(sg.constants.data() + conv->weight.offset);
  int moved = 0;  // channels whose nearest rounding moves the sum by more than half a step
  for (size_t ch = 0; ch < 8; ++ch) {
    float mx = 0;
    double sum_x = 0;
    int sum_q = 0;
    for (size_t k = 0; k < 9; ++k) mx = std::max(mx, w[ch * 9 + k]);
    for (size_t k = 0; k < 9; ++k) {
      const double xk = w[ch * 9 + k] / (mx / 127.0f);
      sum_x += xk;
      sum_q += q[ch * 9 + k];
      EXPECT_EQ(q[ch * 9 + k], static_cast<int8_t>(std::round(xk))) << "channel " << ch << " tap " << k;
    }
    moved += std::fabs(sum_q - sum_x) > 0.5;
  }
  EXPECT_GT(moved, 0);  // kept sums would have changed those
}

// Compiles g all-int16 with weights rounded to nearest and rounded for the
// output error (quant/weight_rounding.cc, `rounded_nodes` of them kept);
// the squared output error on inputs other than the calibration samples is
// well below nearest rounding's.
void expect_rounding_lowers_the_error(Graph g, size_t rounded_nodes, size_t moment_inputs) {
  std::string err;
  ASSERT_GE(fold_constants(&g, &err), 0) << err;
  PlacementOptions po;
  po.march = &march("bayes-e");
  const Placement pl = place(&g, po);
  std::vector<Sample> cal;
  for (uint32_t seed = 1; seed <= 16; ++seed) cal.push_back(random_inputs(g, seed));
  CalibrationStats stats;
  stats.moment_inputs = weight_rounding_inputs(g, pl);
  EXPECT_EQ(stats.moment_inputs.size(), moment_inputs);
  FloatExecutor fe;
  ASSERT_TRUE(fe.prepare(g, &err) && collect_stats(fe, cal, &stats, &err)) << err;
  CompileOptions co;
  co.march = po.march;
  co.all_int16 = true;  // the weights' error dominates
  CompiledModel nearest, rounded;
  const auto thr = thresholds_for(g, stats, CalCandidate{});
  ASSERT_TRUE(compile(g, pl, thr, co, &nearest, &err)) << err;
  co.rounded_weights = std::make_shared<const std::map<std::string, RoundedWeights>>(round_weights_for_error(g, pl, stats));
  EXPECT_EQ(co.rounded_weights->size(), rounded_nodes);
  ASSERT_TRUE(compile(g, pl, thr, co, &rounded, &err)) << err;
  for (uint32_t seed = 100; seed < 104; ++seed) {
    const Sample s = random_inputs(g, seed);
    const auto f = run(g, s), qn = run(nearest.graph, s), qr = run(rounded.graph, s);
    for (const auto& [name, fv] : f) {
      double en = 0, er = 0;
      for (size_t i = 0; i < fv.size(); ++i) {
        en += (qn.at(name)[i] - fv[i]) * (qn.at(name)[i] - fv[i]);
        er += (qr.at(name)[i] - fv[i]) * (qr.at(name)[i] - fv[i]);
      }
      EXPECT_LT(er, 0.7 * en) << name << " seed " << seed;
    }
  }
}

// A 1x1 convolution reading strongly correlated channels (a 1x1 expansion
// of 4 channels into 32) and a MatMul with a constant weight. The expansion
// reading x's 4 independent channels gains nothing on the samples it was
// not rounded from (its rounding is nearest's) and is left out; the two
// reading the correlated 32 channels are rounded.
TEST(Calibration, WeightsRoundedForTheOutputError) {
  Builder b;
  const std::string x = b.input("x", {1, 4, 8, 8});
  const std::string wide = b.node("Conv", {x, b.constant("w0", {32, 4, 1, 1})}, ints_attr("kernel_shape", {1, 1}));
  const std::string y = b.node("Conv", {wide, b.constant("w1", {16, 32, 1, 1})}, ints_attr("kernel_shape", {1, 1}));
  const std::string t = b.node("Reshape", {wide, b.ints("s", {1, 32, 64})});
  const std::string z = b.node("MatMul", {b.node("Transpose", {t}, ints_attr("perm", {0, 2, 1})), b.constant("w2", {32, 16})});
  b.output(b.node("Sigmoid", {y}));
  b.output(b.node("Sigmoid", {z}));
  expect_rounding_lowers_the_error(b.g, 2, 3);  // moments of x, wide and its transpose
}

// An all-zero weight row with a bias: the emitter's scale of that row comes
// from the bias (bias_fitting_scale), not the rounding's, so that row stays
// nearest; the other rows keep their rounding (PP-OCRv4 rec's Conv.28 and
// Conv.30 were left wholly nearest when one row's scale differed).
TEST(Calibration, RoundedWeightsSurviveAnUnforeseenRowScale) {
  Builder b;
  const std::string x = b.input("x", {1, 4, 8, 8});
  const std::string wide = b.node("Conv", {x, b.constant("w0", {32, 4, 1, 1})}, ints_attr("kernel_shape", {1, 1}));
  std::vector<float> w1(16 * 32), bias(16, 0.25f);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = i < 32 ? 0.0f : std::sin(1.3f * static_cast<float>(i));
  const std::string y = b.node("Conv", {wide, b.constant_values("w1", {16, 32, 1, 1}, w1), b.constant_values("b1", {16}, bias)},
                               ints_attr("kernel_shape", {1, 1}));
  b.output(b.node("Sigmoid", {y}));
  expect_rounding_lowers_the_error(b.g, 1, 2);
}

// conv -> relu -> depthwise conv -> relu -> 1x1 conv with channels of very
// different ranges: equalization keeps the float function, gives the
// depthwise conv's input channels one range and meets the ranges of the 1x1
// conv's input and weight columns (sqrt(r_x r_w) each).
TEST(Calibration, CrossLayerEqualizationKeepsTheFunction) {
  Builder b;
  const std::string x = b.input("x", {1, 4, 10, 10});
  std::vector<float> wa(4 * 4 * 9);
  const float row_scale[4] = {1.0f, 0.1f, 4.0f, 0.25f};
  for (size_t i = 0; i < wa.size(); ++i) wa[i] = row_scale[i / 36] * std::sin(0.7f * static_cast<float>(i));
  std::string y = b.node("Conv", {x, b.constant_values("wa", {4, 4, 3, 3}, wa), b.constant("ba", {4})},
                         ints_attr("kernel_shape", {3, 3}));
  const std::string ra = b.node("Relu", {y});
  rt::Attrs dw = ints_attr("kernel_shape", {3, 3});
  dw = int_attr("group", 4, dw);
  y = b.node("Conv", {ra, b.constant("wb", {4, 1, 3, 3})}, dw);
  const std::string rb = b.node("Relu", {y});
  b.output(b.node("Conv", {rb, b.constant("wc", {3, 4, 1, 1})}, ints_attr("kernel_shape", {1, 1})));
  std::string err;
  ASSERT_GE(fold_constants(&b.g, &err), 0) << err;
  PlacementOptions po;
  po.march = &march("bernoulli2");
  const Placement pl = place(&b.g, po);
  std::vector<Sample> samples;
  for (uint32_t k = 0; k < 4; ++k) samples.push_back(random_inputs(b.g, k));
  Graph eq = b.g;
  std::vector<EqualizedPair> pairs;
  ASSERT_TRUE(equalize_cross_layer(&eq, pl, samples, &pairs, &err)) << err;
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].first, "Conv_0");
  EXPECT_EQ(pairs[1].second, "Conv_4");
  const Sample probe = random_inputs(b.g, 99);
  const auto before = run(b.g, probe).begin()->second, after = run(eq, probe).begin()->second;
  for (size_t i = 0; i < before.size(); ++i) EXPECT_NEAR(after[i], before[i], 1e-4 * (1 + std::fabs(before[i])));
  // Channel ranges of the Relu outputs over the samples, after equalization.
  auto ranges = [&](const std::string& v) {
    std::vector<double> r(4, 0.0);
    FloatExecutor fe;
    EXPECT_TRUE(fe.prepare(eq, &err)) << err;
    const std::set<std::string> keep = {v};
    for (const auto& s : samples) {
      std::map<std::string, Value> out;
      EXPECT_TRUE(fe.run(s, &out, &err, &keep)) << err;
      const auto d = out.at(v).to_doubles();
      for (size_t i = 0; i < d.size(); ++i) r[i / (d.size() / 4)] = std::max(r[i / (d.size() / 4)], std::fabs(d[i]));
    }
    return r;
  };
  const auto r_a = ranges(ra), r_b = ranges(rb);
  const double top = *std::max_element(r_a.begin(), r_a.end());
  for (double r : r_a) EXPECT_NEAR(r, top, 1e-4 * top);
  const auto wc = eq.value(eq.nodes.back().inputs[1])->to_doubles();
  for (size_t c = 0; c < 4; ++c) {
    double rw = 0;
    for (size_t o = 0; o < 3; ++o) rw = std::max(rw, std::fabs(wc[o * 4 + c]));
    EXPECT_NEAR(r_b[c], rw, 1e-4 * rw) << "channel " << c;
  }
}

// The rounding for the output error is kept only where it lowers the error
// on the samples it was not rounded from: inputs whose correlations differ
// between the even and the odd calibration samples (a rounding fitted to one
// half hurts the other) keep nearest rounding; consistent ones do not.
TEST(Calibration, WeightRoundingKeptOnlyWhereItGeneralises) {
  const int64_t rows = 16, n = 24;
  std::mt19937 rng(3);
  std::normal_distribution<double> nd;
  std::vector<double> w(static_cast<size_t>(rows * n));
  for (double& v : w) v = nd(rng);
  std::vector<float> s(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double mx = 0;
    for (int64_t j = 0; j < n; ++j) mx = std::max(mx, std::fabs(w[static_cast<size_t>(r * n + j)]));
    s[static_cast<size_t>(r)] = static_cast<float>(mx / 127.0);
  }
  // Moments of inputs x = A z (z: 4 independent sources), per half.
  auto moments = [&](uint32_t seed) {
    std::mt19937 g(seed);
    std::vector<double> a(static_cast<size_t>(n * 4)), h(static_cast<size_t>(n * n), 0.0);
    for (double& v : a) v = nd(g);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t k = 0; k < 4; ++k) h[static_cast<size_t>(i * n + j)] += a[static_cast<size_t>(i * 4 + k)] * a[static_cast<size_t>(j * 4 + k)];
        h[static_cast<size_t>(i * n + j)] += i == j ? 1e-3 : 0.0;
      }
    return h;
  };
  EXPECT_GT(cross_validated_gain(w, s, moments(7), moments(7), rows, n), 0.3);
  EXPECT_LT(cross_validated_gain(w, s, moments(7), moments(8), rows, n), 0.0);
  // round_weights_for_error leaves such a node out (nearest rounding).
  Builder b;
  const std::string x = b.input("x", {1, n, 4, 4});
  std::vector<float> wf(w.begin(), w.end());
  b.output(b.node("Conv", {x, b.constant_values("w", {rows, n, 1, 1}, wf)}, ints_attr("kernel_shape", {1, 1})));
  PlacementOptions po;
  po.march = &march("bayes-e");
  Graph g = b.g;
  const Placement pl = place(&g, po);
  for (uint32_t odd_seed : {7u, 8u}) {
    CalibrationStats stats;
    ValueStats& vs = stats.values[x];
    vs.odd_moments = moments(odd_seed);
    vs.moments = moments(7);
    for (size_t k = 0; k < vs.moments.size(); ++k) vs.moments[k] = (vs.moments[k] + vs.odd_moments[k]) * 100;
    for (double& v : vs.odd_moments) v *= 100;
    vs.moment_rows = 200, vs.odd_moment_rows = 100;
    EXPECT_EQ(round_weights_for_error(g, pl, stats).size(), odd_seed == 7u ? 1u : 0u) << odd_seed;
  }
}

TEST(Emitters, FusionFoldsActivationsAndResiduals) {
  Builder b;
  const std::string x = b.input("x", {1, 8, 8, 8});
  std::string y = b.node("Relu", {conv3(b, x)});
  y = b.node("Relu", {b.node("Add", {conv3(b, y), y})});
  b.output(b.node("Conv", {y, b.constant("w3", {4, 8, 1, 1})}));
  Compiled c;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", false, &c));
  ASSERT_EQ(c.cm.subgraphs.size(), 1u);
  const auto& prog = c.cm.subgraphs[0].program;
  ASSERT_EQ(prog.size(), 3u);  // conv+relu, conv+add+relu, conv (int32 tail)
  for (const auto& ins : prog) EXPECT_EQ(ins.opcode, isa::Opcode::kConv);
  EXPECT_EQ(std::get<isa::Conv>(prog[1].body).has_residual, 1);
  EXPECT_EQ(std::get<isa::Conv>(prog[2].body).out.dtype, isa::DType::kInt32);
  // Without fusion (optimize_level O0) every node is an instruction.
  CompileOptions o0;
  o0.fuse = false;
  Compiled u;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", false, &u, o0));
  EXPECT_EQ(u.cm.subgraphs[0].program.size(), 6u);
  const auto f = run(u.g, u.samples[0]), q = run(u.cm.graph, u.samples[0]);
  for (const auto& [name, fv] : f) EXPECT_GT(cosine(fv, q.at(name)), 0.99) << name;
}

// A table lookup absorbs the scalar Mul / Sub / Div / Add after it: one table
// of 2.5 sigmoid(x) - 0.75, then / 0.5 + 0.1, and one rounding. A per-channel
// Mul and a value read twice end the chain.
TEST(Emitters, TablesAbsorbScalarAffineNodes) {
  Builder b;
  const std::string x = b.input("x", {1, 8, 8, 8});
  std::string y = b.node("Sub", {b.node("Mul", {b.node("Sigmoid", {conv3(b, x)}), b.scalar(2.5f)}), b.scalar(0.75f)});
  y = b.node("Add", {b.node("Div", {y, b.scalar(0.5f)}), b.scalar(0.1f)});
  y = b.node("Mul", {b.node("Tanh", {y}), b.constant("c", {1, 8, 1, 1})});
  const std::string t = b.node("Add", {b.node("Neg", {y}), b.scalar(1.0f)});
  b.output(b.node("Conv", {b.node("Add", {b.node("Mul", {t, b.scalar(3.0f)}), t}), b.constant("w3", {4, 8, 1, 1})}));
  Compiled c;
  ASSERT_TRUE(compile_graph(b.g, "bayes-e", false, &c));
  ASSERT_EQ(c.cm.subgraphs.size(), 1u);
  std::vector<isa::Opcode> ops;
  for (const auto& ins : c.cm.subgraphs[0].program) ops.push_back(ins.opcode);
  using isa::Opcode;
  // conv, sigmoid*2.5-0.75 /0.5+0.1, tanh, mul by c, -y+1, mul 3 (t is read twice), add, conv
  const std::vector<Opcode> want = {Opcode::kConv, Opcode::kLut, Opcode::kLut, Opcode::kEltwise,
                                    Opcode::kLut,  Opcode::kEltwise, Opcode::kEltwise, Opcode::kConv};
  EXPECT_EQ(ops, want);
  for (const Sample& s : c.samples) {
    const auto f = run(c.g, s), q = run(c.cm.graph, s);
    for (const auto& [name, fv] : f) EXPECT_GT(cosine(fv, q.at(name)), 0.995) << name;
  }
}

}  // namespace
}  // namespace openbpu::cvt
