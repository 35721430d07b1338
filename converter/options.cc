// SPDX-License-Identifier: Apache-2.0
#include "converter/options.h"

#include <algorithm>
#include <regex>
#include <set>

#include "converter/ops/op_unit.h"

namespace openbpu::cvt {

std::vector<PreprocessSpec> preprocess_specs(const Config& c) {
  std::vector<PreprocessSpec> out;
  for (const auto& in : c.input_parameters) {
    PreprocessSpec p;
    p.input = in.name;
    p.type_rt = in.type_rt;
    p.layout_rt = in.layout_rt;
    p.type_train = in.type_train;
    p.layout_train = in.layout_train;
    p.space_and_range = in.space_and_range;
    if (in.norm_type.find("mean") != std::string::npos) p.mean = in.mean;
    if (in.norm_type.find("scale") != std::string::npos) p.scale = in.scale;
    out.push_back(p);
  }
  return out;
}

std::vector<CalInputSpec> cal_specs(const Config& c) {
  std::vector<CalInputSpec> out;
  for (const auto& in : c.input_parameters) {
    CalInputSpec s;
    s.input = in.name;
    s.dir = in.cal_data_dir;
    s.dtype = in.cal_data_type.empty() ? "uint8" : in.cal_data_type;
    s.shape = in.shape;
    if (in.batch > 1 && !s.shape.empty()) s.shape[0] = in.batch;
    s.type_train = in.type_train;
    s.type_rt = in.type_rt;
    s.layout_train = in.layout_train;
    s.space_and_range = in.space_and_range;
    out.push_back(s);
  }
  return out;
}

namespace {

const Node* find_node(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

// A node name a setting (`key`, e.g. "node_info") gives: the node of the
// optimized graph, or the one the optimizer merged it into (logged), or
// nullptr with a warning saying why the setting has no effect (`report`
// false: no log, the name was reported before).
const Node* resolve_node(const Graph& g, const std::string& key, const std::string& name, MapperLog& log,
                         bool report = true) {
  if (const Node* n = find_node(g, name)) return n;
  const auto m = g.merged.find(name);
  if (m == g.merged.end()) {
    std::string hint;
    const auto cut = name.rfind('_');
    if (cut != std::string::npos && cut > 0)
      if (const Node* near = find_node(g, name.substr(0, cut)); near != nullptr)
        hint = " (the model has '" + near->name + "', a " + near->op_type + ")";
    if (report)
      log.warn(key + " '" + name + "': no such node in the model or among the nodes the optimizer merged" + hint +
               "; this setting has no effect");
    return nullptr;
  }
  const MergedNode& mn = m->second;
  const Node* into = mn.into.empty() ? nullptr : find_node(g, mn.into);
  if (into == nullptr) {
    if (report)
      log.warn(key + " '" + name + "': the optimizer removed this " + mn.op_type +
               (mn.into.empty() ? " (no node computes it now)" : "") + "; this setting has no effect");
    return nullptr;
  }
  if (report)
    log.info(key + " '" + name + "': the optimizer merged this " + mn.op_type + " into " + into->op_type + " '" +
             into->name + "'; the setting applies to it");
  return into;
}

}  // namespace

PlacementOptions placement_options(const Config& c, const isa::MarchInfo& march, const Graph& g, MapperLog& log) {
  PlacementOptions po;
  po.march = &march;
  const auto& cp = c.calibration_parameters;
  const auto force = [&](const std::string& key, const std::string& name, std::set<std::string>* to) {
    if (const Node* n = resolve_node(g, key, name, log)) to->insert(n->name);
  };
  for (const auto& name : cp.run_on_cpu) force("run_on_cpu", name, &po.run_on_cpu);
  for (const auto& name : cp.run_on_bpu) force("run_on_bpu", name, &po.run_on_bpu);
  for (const auto& [name, info] : c.model_parameters.node_info) {
    if (info.on == "CPU") force("node_info ON: CPU", name, &po.run_on_cpu);
    if (info.on == "BPU") force("node_info ON: BPU", name, &po.run_on_bpu);
  }
  return po;
}

namespace {

bool has_optimization(const Config& c, const std::string& o) {
  const auto& opts = c.calibration_parameters.optimization;
  return std::find(opts.begin(), opts.end(), o) != opts.end();
}

void add_values(const std::vector<std::string>& values, const std::string& type, CompileOptions* co) {
  for (const auto& v : values)
    if (!v.empty()) (type == "int16" ? co->int16_values : co->int8_values).insert(v);
}

// The non-constant inputs of a node (input k only when k >= 0).
std::vector<std::string> node_inputs(const Graph& g, const Node& n, int k = -1) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value* v = g.value(n.inputs[i]);
    if ((k < 0 || static_cast<size_t>(k) == i) && v != nullptr && !v->is_constant()) out.push_back(n.inputs[i]);
  }
  return out;
}

// The values a node_info type names: node n's inputs (input k only when
// k >= 0) or outputs. For a node the optimizer merged into `into`, only the
// ones `into` still reads or writes; the others are internal to the fused
// operator (warned: no tensor to type).
std::vector<std::string> typed_values(const Graph& g, const std::string& name, const Node& into, bool outputs,
                                      int k, const std::string& what, MapperLog& log) {
  const auto m = g.merged.find(name);
  if (into.name == name || m == g.merged.end())
    return outputs ? into.outputs : node_inputs(g, into, k);
  const std::vector<std::string>& vs = outputs ? m->second.outputs : m->second.inputs;
  const std::vector<std::string>& ends = outputs ? into.outputs : into.inputs;
  std::vector<std::string> out;
  for (size_t i = 0; i < vs.size(); ++i) {
    const Value* v = g.value(vs[i]);
    if ((k >= 0 && static_cast<size_t>(k) != i) || vs[i].empty() || (v != nullptr && v->is_constant())) continue;
    if (v != nullptr && std::find(ends.begin(), ends.end(), vs[i]) != ends.end()) {
      out.push_back(vs[i]);
      log.info("node_info '" + name + "' " + what + ": applies to '" + vs[i] + "', an " +
               (outputs ? "output" : "input") + " of " + into.op_type + " '" + into.name + "'");
    } else {
      log.warn("node_info '" + name + "' " + what + ": value '" + vs[i] + "' is internal to " + into.op_type +
               " '" + into.name + "' (the optimizer fused them; the operator computes it at its own precision, "
               "docs/numerics.md); no effect");
    }
  }
  return out;
}

// Activation types per node: node_info OutputType / InputType / InputType<k>
// (int8 or int16; node_info is rejected on bernoulli2 by the config), on
// the node or the one the optimizer merged it into.
void node_info_types(const Config& c, const isa::MarchInfo& march, const Graph& g, MapperLog& log,
                     CompileOptions* co) {
  for (const auto& [name, info] : c.model_parameters.node_info) {
    const bool typed = !info.output_type.empty() || !info.input_type.empty() || !info.input_types.empty();
    if (!typed) continue;
    const Node* n = resolve_node(g, "node_info", name, log, info.on.empty());  // else placement reported it
    if (n == nullptr) continue;
    if (!march.int16) {
      log.warn("node_info " + name + ": int16 needs a march with int16 (bayes, bayes-e, nash); " + march.name +
               " keeps int8");
      continue;
    }
    if (!info.output_type.empty())
      add_values(typed_values(g, name, *n, true, -1, "OutputType " + info.output_type, log), info.output_type, co);
    if (!info.input_type.empty())
      add_values(typed_values(g, name, *n, false, -1, "InputType " + info.input_type, log), info.input_type, co);
    for (const auto& [k, type] : info.input_types)
      add_values(typed_values(g, name, *n, false, k, "InputType" + std::to_string(k) + " " + type, log), type, co);
  }
}

// optimization set_<Kind>_input_int8/16 and set_<Kind>_output_int8/16: every
// node of that ONNX type (the ones that can run on the BPU).
void optimization_types(const Config& c, const isa::MarchInfo& march, const Graph& g, const Placement& pl,
                        MapperLog& log, CompileOptions* co) {
  static const std::regex per_kind("^set_([A-Za-z0-9]+)_(input|output)_(int8|int16)$");
  for (const auto& o : c.calibration_parameters.optimization) {
    std::smatch m;
    if (!std::regex_match(o, m, per_kind)) continue;
    const std::string kind = m[1], side = m[2], type = m[3];
    if (type == "int16" && !march.int16) continue;  // rejected by the config on bernoulli2
    int bpu_nodes = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op_type != kind || i >= pl.nodes.size() || pl.nodes[i].device != Device::kBpu) continue;
      ++bpu_nodes;
      add_values(side == "output" ? n.outputs : node_inputs(g, n), type, co);
    }
    if (bpu_nodes == 0)
      log.warn("optimization " + o + ": no " + kind + " node runs on the BPU" +
               (kind == "Softmax" ? " (a Softmax at the model's head or tail runs on the CPU in float)" : "") +
               "; it has no effect");
  }
}

// quant_config (hb_compile): the computation type of each BPU node's inputs,
// node_config over op_config over model_config.all_node_type. A value read
// by an int8 and an int16 node stays int8 (the compiler's rule), logged.
void quant_config_types(const Config& c, const Graph& g, const Placement& pl, MapperLog& log, CompileOptions* co) {
  const QuantConfig& q = c.calibration_parameters.quant_config;
  if (q.file.empty()) return;
  std::set<std::string> bpu_kinds, seen_nodes;
  CompileOptions mine;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const auto node = q.node_types.find(n.name);
    const auto op = q.op_types.find(n.op_type);
    if (node != q.node_types.end()) seen_nodes.insert(n.name);
    if (i >= pl.nodes.size() || pl.nodes[i].device != Device::kBpu) {
      if (node != q.node_types.end())
        log.warn("quant_config node_config " + n.name + ": a " + n.op_type + " runs on the CPU in float; no effect");
      continue;
    }
    bpu_kinds.insert(n.op_type);
    const std::string& type = node != q.node_types.end() ? node->second
                              : op != q.op_types.end()   ? op->second
                                                         : q.all_node_type;
    if (!type.empty()) add_values(node_inputs(g, n), type, &mine);
  }
  for (const auto& v : mine.int16_values)
    if (mine.int8_values.count(v))
      log.warn("quant_config: value '" + v + "' is read by int8 and int16 nodes; it stays int8");
  co->int8_values.insert(mine.int8_values.begin(), mine.int8_values.end());
  co->int16_values.insert(mine.int16_values.begin(), mine.int16_values.end());
  for (const auto& [name, type] : q.node_types)
    if (!seen_nodes.count(name)) log.warn("quant_config node_config " + name + ": no such node in the optimized model");
  for (const auto& [kind, type] : q.op_types)
    if (!bpu_kinds.count(kind)) log.warn("quant_config op_config " + kind + ": no " + kind + " node runs on the BPU");
  if (q.model_output_type == "int8") co->int32_tail = false;
}

}  // namespace

CompileOptions compile_options(const Config& c, const isa::MarchInfo& march, const Graph& g, const Placement& pl,
                               MapperLog& log) {
  CompileOptions co;
  co.march = &march;
  co.max_time_per_fc_us = static_cast<double>(c.compiler_parameters.max_time_per_fc);
  co.model_name = c.model_parameters.output_model_file_prefix;
  if (has_optimization(c, "set_model_output_int8")) co.int32_tail = false;
  node_info_types(c, march, g, log, &co);
  optimization_types(c, march, g, pl, log, &co);
  quant_config_types(c, g, pl, log, &co);
  if (has_optimization(c, "set_all_nodes_int16")) {
    if (march.int16)
      co.all_int16 = true;
    else
      log.warn(std::string("optimization set_all_nodes_int16: march ") + march.name +
               " has no int16 support; activations stay int8");
  }
  if (has_optimization(c, "int16_weights")) co.int16_weights = true;
  co.asymmetric = has_optimization(c, "asymmetric");  // (no int16 march: the parser refused it)
  // optimize_level O0: no optimization, i.e. no fusion of activations and
  // residual adds into the producing instruction.
  co.fuse = c.compiler_parameters.optimize_level != "O0";
  return co;
}

bool int16_possible(const Config& c, const CompileOptions& co) {
  return co.march->int16 && (co.all_int16 || !co.int16_values.empty() || c.calibration_parameters.min_output_cosine);
}

void add_calibration_options(const Config& c, const CalibrationStats& stats, CompileOptions* co) {
  if (has_optimization(c, "bias_correction"))
    for (const auto& [name, st] : stats.values)
      if (!st.channel_sum.empty()) co->channel_means[name] = st.channel_mean();
}

void log_asymmetric(const Config& c, const CompileOptions& co, const CompiledModel& cm, MapperLog& log) {
  if (!co.asymmetric) return;
  size_t int8 = 0, asym = 0;
  for (const auto& t : cm.traces)
    if (t.q.dtype == isa::DType::kInt8) ++int8, asym += t.q.zero_point != 0 ? 1 : 0;
  if (asym == 0 && !has_optimization(c, "asymmetric"))  // the method choice's format, e.g. all promoted to int16
    log.info("Asymmetric activations (chosen by the calibration): no int8 value left takes a zero point");
  else if (asym == 0)
    log.warn("optimization asymmetric: no int8 value qualifies for a zero point (docs/numerics.md \"Asymmetric "
             "activations\": between operators that take zero points in one BPU subgraph, bounded below by its "
             "operator at -T/4 or above); every activation stays symmetric");
  else
    log.info("optimization asymmetric: " + std::to_string(asym) + " of " + std::to_string(int8) +
             " int8 values take zero points");
}

void warn_unmet_int16(const CompileOptions& co, const Graph& g, const CompiledModel& cm, MapperLog& log) {
  std::map<std::string, isa::DType> dtype;
  for (const auto& t : cm.traces) dtype[t.value] = t.q.dtype;
  for (const auto& v : co.int16_values) {
    const auto it = dtype.find(v);
    if (it == dtype.end() || it->second != isa::DType::kInt8 || co.int8_values.count(v)) continue;
    const Node* p = g.producer(v);
    const OpUnit* u = p == nullptr ? nullptr : find_op_unit(*p);
    const bool follows = u != nullptr && (u->output_scale == OutputScale::kInput ||
                                          u->output_scale == OutputScale::kInputIfNearest);
    log.warn("int16 asked for value '" + v + "' (node_info, optimization or quant_config) is int8 in the compiled " +
             "model" + (follows ? ": its producer " + p->op_type + " '" + p->name + "' gives its output the type of " +
                                      "its input '" + p->inputs[0] + "'; ask int16 for that value instead"
                                : std::string()));
  }
}

void warn_ineffective_keys(const Config& c, MapperLog& log) {
  const auto no_effect = [&](const std::string& key, const std::string& why) {
    log.warn(key + ": accepted for compatibility, no effect (" + why + ")");
  };
  const auto& mp = c.model_parameters;
  const auto& cp = c.calibration_parameters;
  const auto& cc = c.compiler_parameters;
  if (mp.layer_out_dump)
    no_effect("model_parameters.layer_out_dump", "use hb_mapper infer on the quantized model for per-layer values");
  if (cp.per_channel && cp.calibration_type != "default" && cp.calibration_type != "mix")  // else the config warns
    no_effect("calibration_parameters.per_channel", "activations have one scale per tensor");
  for (const auto& o : cp.optimization) {
    if (o == "set_model_output_int16")
      no_effect("optimization set_model_output_int16",
                "BPU outputs read by the CPU are int32 (or int8 with set_model_output_int8)");
    if (o == "lstm_batch_last") no_effect("optimization lstm_batch_last", "LSTM runs on the CPU");
    if (o == "run_fast" && !c.fast_perf) no_effect("optimization run_fast", "only --fast-perf uses it");
  }
  if (cp.quant_config.model_output_type == "int16")
    no_effect("quant_config model_config.model_output_type int16",
              "BPU outputs read by the CPU are int32 (or int8 with model_output_type int8)");
  if (cc.compile_mode != "latency")
    no_effect("compiler_parameters.compile_mode " + cc.compile_mode, "the compiler always optimizes for latency");
  if (cc.balance_factor) no_effect("compiler_parameters.balance_factor", "the compiler always optimizes for latency");
  if (!cc.ability_entry.empty()) no_effect("compiler_parameters.ability_entry", "not used by OpenBPU's compiler");
  if (c.custom_op.enabled)
    no_effect("custom_op", "the register files are not run: a model node of a custom domain is rejected as an "
                           "unsupported operator; libdnn's layer plugins run custom CPU layers of a .bin");
}

BinWriteOptions bin_write_options(const Config& c, const std::map<std::string, std::string>& rt_override,
                                  const std::string& mapper_version) {
  const auto& mp = c.model_parameters;
  BinWriteOptions bo;
  bo.model_name = mp.output_model_file_prefix;
  bo.march = mp.march;
  bo.core_num = c.compiler_parameters.core_num;
  bo.debug = c.compiler_parameters.debug;
  bo.metadata = c.metadata();
  bo.metadata["BUILDER_VERSION"] = mapper_version;
  bo.metadata["HBDK_VERSION"] = "openbpu-0.1.0";
  bo.config_yaml = c.echo_yaml();
  bo.tool_versions = {{"hb_mapper", mapper_version}, {"openbpu", "0.1.0"}};
  for (const auto& in : c.input_parameters) {
    InputMeta meta;
    auto it = rt_override.find(in.name);
    meta.type_rt = it != rt_override.end() ? it->second : in.type_rt;
    meta.type_train = in.type_train;
    meta.source = in.input_source.empty() ? (in.type_rt == "nv12" || in.type_rt == "gray" ? "pyramid" : "ddr")
                                          : in.input_source;
    bo.inputs[in.name] = meta;
  }
  return bo;
}

}  // namespace openbpu::cvt
