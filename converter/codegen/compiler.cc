// SPDX-License-Identifier: Apache-2.0
// compile(): the compiler's stages in order (docs/converter.md):
//   1. fusion pass               codegen/fusion.cc
//   2. quantization parameters   codegen/quant_params.cc (incl. the int32 tail rule)
//   3. per subgraph: memory plan codegen/memory_plan.cc,
//      emission                  the operator units' emitters (converter/ops/),
//      function calls and cost   bpu_sim/timing.h
//   4. quantized-graph export    codegen/quantized_graph.cc
#include "converter/codegen/compiler.h"

#include <algorithm>
#include <cctype>

#include "bpu_sim/isa/codec.h"
#include "bpu_sim/timing.h"
#include "converter/codegen/fusion.h"
#include "converter/codegen/memory_plan.h"
#include "converter/codegen/quant_params.h"
#include "converter/codegen/quantized_graph.h"
#include "converter/ops/op_unit.h"
#include "runtime/core/tensor.h"
#include "converter/ops/op_util.h"

namespace openbpu::cvt {

namespace {

bool fail(std::string* e, const std::string& m) {
  *e = m;
  return false;
}

// "<MODEL>_subgraph_<k>" with the model name upper-cased, non-alphanumerics as '_'.
std::string subgraph_name(const std::string& model_name, size_t k) {
  std::string upper;
  for (unsigned char c : model_name) upper += static_cast<char>(std::isalnum(c) ? std::toupper(c) : '_');
  return upper + "_subgraph_" + std::to_string(k);
}

// The record of op's instructions [first, first + count) and what it computes.
LayerSpan layer_span(const Graph& g, const Op& op, uint32_t first, uint32_t count) {
  LayerSpan l;
  l.node = g.nodes[op.nodes[0]].name;
  l.op_type = g.nodes[op.nodes[0]].op_type;
  l.first = first;
  l.count = count;
  for (size_t n : op.nodes) l.nodes.push_back(g.nodes[n].name);
  for (const std::string& o : op.outputs) {
    if (o.empty()) continue;
    std::string name = o;
    for (size_t n : op.nodes) {
      const auto& outs = g.nodes[n].outputs;
      const auto it = std::find(outs.begin(), outs.end(), o);
      if (it == outs.end()) continue;
      const auto k = it - outs.begin();
      name = rt::layer_dump_name(g.nodes[n].name, static_cast<size_t>(k));
    }
    l.outputs.push_back(o);
    l.output_names.push_back(name);
  }
  return l;
}

// Emission of one subgraph's ops into ctx (views emit nothing).
bool emit_ops(LoweringContext& ctx, SubgraphPlan plan, const MemoryPlan& mem, std::vector<LayerSpan>* layers,
              std::string* error) {
  for (size_t oi = 0; oi < plan.ops.size(); ++oi) {
    Op& op = plan.ops[oi];
    const auto first = static_cast<uint32_t>(ctx.pb.program().size());
    if (!mem.alias_of.count(op.outputs[0])) {  // else the output is a view of the input
      op.scratch_offset = mem.scratch_offset[oi];
      if (!op.unit->emit(ctx, op, error)) return false;
    }
    layers->push_back(layer_span(ctx.graph, op, first, static_cast<uint32_t>(ctx.pb.program().size()) - first));
  }
  if (!ctx.pb.program().empty()) return true;
  // A subgraph made only of views: copy each output so the program has work.
  for (const auto& o : plan.outputs) {
    const std::string in = mem.root(o);
    ops::emit_move(ctx, ctx.ref(in), ctx.ref(o), ctx.qp(in).scale, ctx.qp(o).scale);
  }
  return true;
}

// Memory plan, emission, function calls and cost of subgraph k.
bool compile_subgraph(const Graph& g, const SubgraphPlan& plan, const std::map<std::string, QParams>& q, size_t k,
                      const CompileOptions& opt, CompiledSubgraph* sg, std::vector<LayerTrace>* traces,
                      std::string* error) {
  const MemoryPlan mem = plan_memory(g, plan, q, image_inputs(g), {opt.march->channel_align, opt.no_scratch_reuse});
  LoweringContext ctx(g, *opt.march);
  ctx.q = q;
  ctx.refs = mem.refs;
  ctx.channel_means = &opt.channel_means;
  ctx.rounded_weights = opt.rounded_weights.get();
  if (!emit_ops(ctx, plan, mem, &sg->layers, error)) return false;
  sg->name = subgraph_name(opt.model_name, k);
  sg->program = ctx.pb.program();
  sg->constants = ctx.pb.constants();
  sg->scratch_size = mem.scratch_size;
  for (const auto& fc : sim::split_function_calls(sg->program, *opt.march, opt.max_time_per_fc_us)) {
    sg->fcs.push_back({fc.first, fc.count, fc.cycles});
    sg->est_cycles += fc.cycles;
  }
  for (const auto& ins : sg->program) sg->macs += sim::estimate_cost(ins, *opt.march).macs;
  for (const Op& op : plan.ops)
    for (const auto& o : op.outputs)
      if (!o.empty() && ctx.refs.count(o)) traces->push_back({o, static_cast<int>(k), ctx.refs.at(o), q.at(o)});
  return true;
}

}  // namespace

void set_program_attrs(const CompiledSubgraph& sg, rt::Attrs* attrs) {
  rt::AttrValue code;
  code.type = rt::AttrValue::kString;
  const std::vector<uint8_t> bytes = isa::encode_program(sg.program);
  code.s.assign(bytes.begin(), bytes.end());
  attrs->set("code", code);
  rt::AttrValue scratch;
  scratch.type = rt::AttrValue::kInt;
  scratch.i = static_cast<int64_t>(sg.scratch_size);
  attrs->set("scratch_size", scratch);
  rt::AttrValue fcs;
  fcs.type = rt::AttrValue::kInts;
  for (const auto& fc : sg.fcs)
    for (uint64_t v : fc) fcs.ints.push_back(static_cast<int64_t>(v));
  attrs->set("fcs", fcs);
  rt::AttrValue macs;
  macs.type = rt::AttrValue::kInt;
  macs.i = static_cast<int64_t>(sg.macs);
  attrs->set("macs", macs);
}

bool program_from_attrs(const rt::Attrs& attrs, CompiledSubgraph* sg, std::string* error) {
  const std::string code = attrs.get_string("code", "");
  if (!isa::decode_program(reinterpret_cast<const uint8_t*>(code.data()), code.size(), &sg->program, error))
    return false;
  sg->scratch_size = static_cast<uint64_t>(attrs.get_int("scratch_size", 0));
  const std::vector<int64_t> f = attrs.get_ints("fcs");
  if (f.size() % 3 != 0) return fail(error, "bad function call table");
  sg->fcs.clear();
  for (size_t i = 0; i < f.size(); i += 3)
    sg->fcs.push_back({static_cast<uint64_t>(f[i]), static_cast<uint64_t>(f[i + 1]), static_cast<uint64_t>(f[i + 2])});
  sg->macs = static_cast<uint64_t>(attrs.get_int("macs", 0));
  return true;
}

namespace {

// Marks the convolutions that compute with 16-bit weights (CompileOptions::
// int16_weights); returns how many.
size_t with_int16_weights(const Graph& g, const std::map<std::string, QParams>& q, std::vector<SubgraphPlan>* plans) {
  size_t marked = 0;
  for (SubgraphPlan& plan : *plans)
    for (Op& op : plan.ops) {
      if (op.unit->id != OpId::kConv || !op.residual.empty()) continue;
      const auto in = q.find(g.nodes[op.nodes[0]].inputs[0]), out = q.find(op.outputs[0]);
      if (in == q.end() || out == q.end() || in->second.dtype != isa::DType::kInt16 || out->second.dtype == isa::DType::kInt32)
        continue;
      op.int16_weights = true;
      ++marked;
    }
  return marked;
}

}  // namespace

bool compile(const Graph& g, const Placement& placement, const std::map<std::string, double>& thresholds,
             const CompileOptions& opt, CompiledModel* out, std::string* error) {
  std::vector<SubgraphPlan> plans;
  if (!plan_subgraphs(g, placement, FusionOptions{opt.fuse}, &plans, error)) return false;
  const std::map<std::string, QParams> q =
      assign_qparams(g, placement, plans, thresholds,
                     QuantOptions{opt.int32_tail, opt.int16_values, opt.all_int16, opt.int8_values, opt.asymmetric});
  out->int16_weight_convs = opt.int16_weights ? with_int16_weights(g, q, &plans) : 0;
  out->subgraphs.clear();
  out->traces.clear();
  for (size_t k = 0; k < plans.size(); ++k) {
    CompiledSubgraph sg;
    if (!compile_subgraph(g, plans[k], q, k, opt, &sg, &out->traces, error)) return false;
    out->subgraphs.push_back(std::move(sg));
  }
  if (!export_quantized_graph(g, placement, plans, out->subgraphs, q, opt.march->channel_align, &out->graph, error))
    return false;
  out->thresholds = thresholds;
  return true;
}

bool calibrated_values(const Graph& g, const Placement& placement, const CompileOptions& opt,
                       std::set<std::string>* values, std::string* error) {
  std::vector<SubgraphPlan> plans;
  if (!plan_subgraphs(g, placement, FusionOptions{opt.fuse}, &plans, error)) return false;
  assign_qparams(g, placement, plans, {}, QuantOptions{opt.int32_tail, opt.int16_values, opt.all_int16, opt.int8_values},
                 values);
  return true;
}

}  // namespace openbpu::cvt
