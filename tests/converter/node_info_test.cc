// SPDX-License-Identifier: Apache-2.0
// Node names in node_info / run_on_cpu after the optimizer: a name of a node
// that a pass fused (the ReduceMean of a decomposed LayerNorm, now one
// LayerNormalization) applies to the fused node, its types to the values the
// fused node still reads or writes (the others are internal: warned); a
// removed identity and an unknown name are warned, naming the node.
#include <gtest/gtest.h>

#include <algorithm>

#include "converter/options.h"
#include "converter/passes/passes.h"
#include "tests/converter/graph_builder.h"

namespace openbpu::cvt {
namespace {

using namespace graph_test;

class CaptureLog : public MapperLog {
 public:
  std::vector<std::string> infos, warnings;
  void debug(const std::string&) override {}
  void info(const std::string& m) override { infos.push_back(m); }
  void warn(const std::string& m) override { warnings.push_back(m); }
  void error(const std::string& m) override { warnings.push_back(m); }
  void progress(size_t, size_t) override {}
  // The one message containing every part; "" when none or several do.
  static std::string find(const std::vector<std::string>& ms, std::initializer_list<std::string> parts) {
    std::string hit;
    int n = 0;
    for (const auto& m : ms)
      if (std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return m.find(p) != std::string::npos; }))
        hit = m, ++n;
    return n == 1 ? hit : "";
  }
};

struct LayerNormGraph {
  Builder b;
  std::string relu_out, ln_out;
  std::string name(const std::string& op, int k = 0) const {  // the k-th node of type op, before optimization
    for (const auto& n : before.nodes)
      if (n.op_type == op && k-- == 0) return n.name;
    return "";
  }
  Graph before;
  LayerNormGraph() {
    const std::string x = b.input("x", {1, 5, 8});
    relu_out = b.node("Relu", {b.node("Identity", {x})});
    rt::Attrs axes = ints_attr("axes", {-1});
    const std::string mean = b.node("ReduceMean", {relu_out}, axes);
    const std::string d = b.node("Sub", {relu_out, mean});
    const std::string var = b.node("ReduceMean", {b.node("Pow", {d, b.scalar(2.0f)})}, axes);
    const std::string sd = b.node("Sqrt", {b.node("Add", {var, b.scalar(1e-5f)})});
    ln_out = b.node("Add", {b.node("Mul", {b.node("Div", {d, sd}), b.constant("gamma", {8})}),
                            b.constant("beta", {8})});
    b.output(b.node("Sigmoid", {ln_out}));
    std::string err;
    EXPECT_GE(fold_constants(&b.g, &err), 0) << err;
    before = b.g;
    EXPECT_TRUE(optimize(&b.g, &err)) << err;
  }
};

TEST(NodeInfo, PassesRecordWhatTheyMerged) {
  LayerNormGraph t;
  const std::string div = t.name("Div");
  const Node* ln = nullptr;
  for (const auto& n : t.b.g.nodes)
    if (n.op_type == "LayerNormalization") ln = &n;
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->name, div);  // the fused node keeps the Div's name
  for (const char* op : {"ReduceMean", "Sub", "Pow", "Sqrt", "Mul"}) {
    ASSERT_TRUE(t.b.g.merged.count(t.name(op))) << op;
    EXPECT_EQ(t.b.g.merged.at(t.name(op)).into, div) << op;
    EXPECT_EQ(t.b.g.merged.at(t.name(op)).op_type, op);
  }
  EXPECT_EQ(t.b.g.merged.at(t.name("ReduceMean", 1)).into, div);
  EXPECT_EQ(t.b.g.merged.at(t.name("Add", 1)).into, div);  // the beta Add
  ASSERT_TRUE(t.b.g.merged.count(t.name("Identity")));
  EXPECT_EQ(t.b.g.merged.at(t.name("Identity")).into, "");  // removed: nothing took it over
}

TEST(NodeInfo, FusedNodesNamesApplyToTheFusedNode) {
  LayerNormGraph t;
  const std::string div = t.name("Div"), mean = t.name("ReduceMean"), pow = t.name("Pow");
  Config c;
  c.model_parameters.march = "bayes-e";
  NodeInfo cpu_int16;
  cpu_int16.on = "CPU";
  cpu_int16.input_type = "int16";
  cpu_int16.output_type = "int16";
  NodeInfo out16;
  out16.output_type = "int16";
  NodeInfo bpu;
  bpu.on = "BPU";
  c.model_parameters.node_info = {{mean, cpu_int16}, {pow, out16}, {div + "_mul", bpu}, {t.name("Identity"), bpu}};
  c.model_parameters.node_info[t.name("Add", 1)] = out16;  // the beta Add: its output is the fused node's
  const isa::MarchInfo* march = isa::find_march("bayes-e");
  ASSERT_NE(march, nullptr);
  CaptureLog log;
  const PlacementOptions po = placement_options(c, *march, t.b.g, log);
  EXPECT_EQ(po.run_on_cpu, std::set<std::string>{div});
  EXPECT_TRUE(po.run_on_bpu.empty());
  EXPECT_NE(CaptureLog::find(log.infos, {mean, "merged this ReduceMean into LayerNormalization '" + div + "'"}), "");
  EXPECT_NE(CaptureLog::find(log.warnings, {"'" + div + "_mul'", "no such node", "the model has '" + div +
                                            "', a LayerNormalization", "no effect"}), "")
      << ::testing::PrintToString(log.warnings);
  EXPECT_NE(CaptureLog::find(log.warnings, {t.name("Identity"), "removed this Identity", "no effect"}), "");

  const CompileOptions co = compile_options(c, *march, t.b.g, Placement{}, log);
  // ReduceMean's input (the Relu's output) is the fused node's input; its
  // output (the mean) and everything Pow reads and writes are internal.
  EXPECT_EQ(co.int16_values, (std::set<std::string>{t.relu_out, t.ln_out}));
  EXPECT_NE(CaptureLog::find(log.infos, {mean, "InputType int16", "'" + t.relu_out + "'", "an input of"}), "");
  EXPECT_NE(CaptureLog::find(log.warnings, {mean, "OutputType int16", "internal to LayerNormalization", div}), "");
  EXPECT_NE(CaptureLog::find(log.warnings, {pow, "OutputType int16", "internal to LayerNormalization"}), "");
  EXPECT_NE(CaptureLog::find(log.infos, {t.name("Add", 1), "OutputType int16", "'" + t.ln_out + "'", "an output of"}),
            "");
}

// An int16 request the compiler cannot honour (a Transpose's output takes
// its input's type) is warned after compilation, naming the value to ask.
TEST(NodeInfo, Int16RequestsTheCompiledModelKeepsInt8AreWarned) {
  Builder b;
  const std::string x = b.input("x", {1, 4, 6, 8});
  const std::string r = b.node("Relu", {x});
  rt::Attrs perm = ints_attr("perm", {0, 2, 3, 1});
  const std::string t = b.node("Transpose", {r}, perm);
  b.output(b.node("Sigmoid", {t}));
  CompiledModel cm;
  for (const auto& [v, dt] : {std::pair{r, isa::DType::kInt8}, std::pair{t, isa::DType::kInt8}}) {
    LayerTrace tr;
    tr.value = v;
    tr.q.dtype = dt;
    cm.traces.push_back(tr);
  }
  CompileOptions co;
  co.int16_values = {t};
  CaptureLog log;
  warn_unmet_int16(co, b.g, cm, log);
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(CaptureLog::find(log.warnings, {"'" + t + "'", "is int8 in the compiled model", "Transpose",
                                            "ask int16 for that value instead", "'" + r + "'"}), "")
      << log.warnings[0];
  cm.traces[1].q.dtype = isa::DType::kInt16;  // honoured: no warning
  CaptureLog quiet;
  warn_unmet_int16(co, b.g, cm, quiet);
  EXPECT_TRUE(quiet.warnings.empty());
}

}  // namespace
}  // namespace openbpu::cvt
