// SPDX-License-Identifier: Apache-2.0
#include "converter/options.h"

#include <algorithm>
#include <set>

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

PlacementOptions placement_options(const Config& c, const isa::MarchInfo& march, const Graph& g, MapperLog& log) {
  PlacementOptions po;
  po.march = &march;
  const auto& cp = c.calibration_parameters;
  po.run_on_cpu.insert(cp.run_on_cpu.begin(), cp.run_on_cpu.end());
  po.run_on_bpu.insert(cp.run_on_bpu.begin(), cp.run_on_bpu.end());
  for (const auto& [name, info] : c.model_parameters.node_info) {
    if (info.on == "CPU") po.run_on_cpu.insert(name);
    if (info.on == "BPU") po.run_on_bpu.insert(name);
  }
  std::set<std::string> node_names;
  for (const auto& n : g.nodes) node_names.insert(n.name);
  for (const auto& name : po.run_on_cpu)
    if (!node_names.count(name)) log.warn("run_on_cpu: node '" + name + "' is not in the optimized model");
  for (const auto& name : po.run_on_bpu)
    if (!node_names.count(name)) log.warn("run_on_bpu: node '" + name + "' is not in the optimized model");
  return po;
}

namespace {

bool has_optimization(const Config& c, const std::string& o) {
  const auto& opts = c.calibration_parameters.optimization;
  return std::find(opts.begin(), opts.end(), o) != opts.end();
}

// int16 activations: node_info OutputType int16 (per node) or optimization
// set_all_nodes_int16 (marches with int16 only).
void int16_options(const Config& c, const isa::MarchInfo& march, const Graph& g, MapperLog& log,
                   CompileOptions* co) {
  for (const auto& [name, info] : c.model_parameters.node_info)
    if (info.output_type == "int16" && !march.int16)
      log.warn("node_info " + name + ": OutputType int16 needs a march with int16 (bayes, bayes-e, nash); " +
               march.name + " keeps int8");
    else if (info.output_type == "int16")
      for (const auto& n : g.nodes)
        if (n.name == name)
          for (const auto& o : n.outputs) co->int16_values.insert(o);
  if (has_optimization(c, "set_all_nodes_int16")) {
    if (march.int16)
      co->all_int16 = true;
    else
      log.warn(std::string("optimization set_all_nodes_int16: march ") + march.name +
               " has no int16 support; activations stay int8");
  }
}

}  // namespace

CompileOptions compile_options(const Config& c, const isa::MarchInfo& march, const Graph& g,
                               const CalibrationStats& stats, MapperLog& log) {
  CompileOptions co;
  co.march = &march;
  co.max_time_per_fc_us = static_cast<double>(c.compiler_parameters.max_time_per_fc);
  co.model_name = c.model_parameters.output_model_file_prefix;
  if (has_optimization(c, "set_model_output_int8")) co.int32_tail = false;
  int16_options(c, march, g, log, &co);
  if (has_optimization(c, "bias_correction"))
    for (const auto& [name, st] : stats.values)
      if (!st.channel_sum.empty()) co.channel_means[name] = st.channel_mean();
  return co;
}

BinWriteOptions bin_write_options(const Config& c, const std::map<std::string, std::string>& rt_override,
                                  const std::string& mapper_version) {
  const auto& mp = c.model_parameters;
  BinWriteOptions bo;
  bo.model_name = mp.output_model_file_prefix;
  bo.march = mp.march;
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
