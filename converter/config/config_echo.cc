// SPDX-License-Identifier: Apache-2.0
// Config -> normalized yaml (the "Dump config:" log and the model's config
// echo) and Config -> the vendor's model metadata strings.
#include <yaml-cpp/yaml.h>

#include "converter/config/config_internal.h"

namespace openbpu::cvt {

namespace {

// One value per input in the vendor's list syntax; unknown values are the
// 'None' placeholder, which parse_config reads back as "not given".
template <class F>
std::string per_input(const std::vector<InputParameter>& ins, F value) {
  std::vector<std::string> items;
  for (const InputParameter& in : ins) {
    std::string v = value(in);
    items.push_back(v.empty() ? "None" : v);
  }
  return cfg::join(items, "; ");
}

template <class F>
bool any_input(const std::vector<InputParameter>& ins, F pred) {
  for (const InputParameter& in : ins)
    if (pred(in)) return true;
  return false;
}

std::string numbers(const std::vector<float>& v, const char* sep) {
  std::vector<std::string> items;
  for (float x : v) items.push_back(cfg::format_float(x));
  return cfg::join(items, sep);
}

// The configured input sources with every named input's resolved source.
std::map<std::string, std::string> input_sources(const Config& c) {
  std::map<std::string, std::string> out = c.compiler_parameters.input_source;
  for (const InputParameter& in : c.input_parameters)
    if (!in.name.empty() && !in.input_source.empty()) out[in.name] = in.input_source;
  return out;
}

class Writer {
 public:
  Writer() { e_.SetIndent(2); }
  void begin(const char* group) { e_ << YAML::Key << group << YAML::Value << YAML::BeginMap; }
  void end() { e_ << YAML::EndMap; }
  void str(const char* key, const std::string& v) {
    e_ << YAML::Key << key << YAML::Value << YAML::SingleQuoted << v;
  }
  void list(const char* key, const std::vector<std::string>& v) {
    if (!v.empty()) str(key, cfg::join(v, "; "));
  }
  void boolean(const char* key, bool v) {
    e_ << YAML::Key << key << YAML::Value << YAML::TrueFalseBool << YAML::LowerCase << v;
  }
  template <class T>
  void num(const char* key, T v) {
    e_ << YAML::Key << key << YAML::Value << v;
  }
  void raw_num(const char* key, const std::string& v) {
    e_ << YAML::Key << key << YAML::Value << v;
  }
  YAML::Emitter& emitter() { return e_; }
  std::string text() const { return std::string(e_.c_str()) + "\n"; }

 private:
  YAML::Emitter e_;
};

}  // namespace

std::string Config::echo_yaml() const {
  Writer w;
  YAML::Emitter& e = w.emitter();
  e << YAML::BeginMap;

  const ModelParameters& m = model_parameters;
  w.begin("model_parameters");
  if (m.model_type == "caffe") {
    w.str("caffe_model", m.caffe_model);
    w.str("prototxt", m.prototxt);
  } else {
    w.str("onnx_model", m.onnx_model);
  }
  w.str("march", m.march);
  w.str("output_model_file_prefix", m.output_model_file_prefix);
  w.str("working_dir", m.working_dir);
  w.boolean("layer_out_dump", m.layer_out_dump);
  if (!m.output_layout.empty()) w.str("output_layout", m.output_layout);
  w.list("output_nodes", m.output_nodes);
  w.list("remove_node_type", m.remove_node_type);
  w.list("remove_node_name", m.remove_node_name);
  if (!m.debug_mode.empty()) w.str("debug_mode", m.debug_mode);
  if (!m.node_info.empty()) {
    e << YAML::Key << "node_info" << YAML::Value << YAML::BeginMap;
    for (const auto& [node, info] : m.node_info) {
      e << YAML::Key << node << YAML::Value << YAML::BeginMap;
      if (!info.on.empty()) w.str("ON", info.on);
      if (!info.input_type.empty()) w.str("InputType", info.input_type);
      for (const auto& [k, t] : info.input_types)
        w.str(("InputType" + std::to_string(k)).c_str(), t);
      if (!info.output_type.empty()) w.str("OutputType", info.output_type);
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  w.end();

  const auto& ins = input_parameters;
  w.begin("input_parameters");
  if (any_input(ins, [](const InputParameter& in) { return !in.name.empty(); }))
    w.str("input_name", per_input(ins, [](const InputParameter& in) { return in.name; }));
  w.str("input_type_train", per_input(ins, [](const InputParameter& in) { return in.type_train; }));
  w.str("input_layout_train",
        per_input(ins, [](const InputParameter& in) { return in.layout_train; }));
  w.str("input_type_rt", per_input(ins, [](const InputParameter& in) { return in.type_rt; }));
  if (any_input(ins, [](const InputParameter& in) { return !in.layout_rt.empty(); }))
    w.str("input_layout_rt", per_input(ins, [](const InputParameter& in) { return in.layout_rt; }));
  w.str("input_space_and_range",
        per_input(ins, [](const InputParameter& in) { return in.space_and_range; }));
  if (any_input(ins, [](const InputParameter& in) { return !in.shape.empty(); }))
    w.str("input_shape",
          per_input(ins, [](const InputParameter& in) { return cfg::format_shape(in.shape); }));
  if (input_batch_set && !ins.empty()) w.num("input_batch", ins[0].batch);
  w.str("norm_type", per_input(ins, [](const InputParameter& in) { return in.norm_type; }));
  if (any_input(ins, [](const InputParameter& in) { return !in.mean.empty(); }))
    w.str("mean_value",
          per_input(ins, [](const InputParameter& in) { return numbers(in.mean, " "); }));
  if (any_input(ins, [](const InputParameter& in) { return !in.scale.empty(); }))
    w.str("scale_value",
          per_input(ins, [](const InputParameter& in) { return numbers(in.scale, " "); }));
  w.end();

  const CalibrationParameters& p = calibration_parameters;
  w.begin("calibration_parameters");
  if (p.needs_data() &&
      any_input(ins, [](const InputParameter& in) { return !in.cal_data_dir.empty(); }))
    w.str("cal_data_dir", per_input(ins, [](const InputParameter& in) { return in.cal_data_dir; }));
  // Inferred types stay placeholders so they are inferred again on reading.
  if (p.needs_data() &&
      any_input(ins, [](const InputParameter& in) { return !in.cal_data_type_inferred; }))
    w.str("cal_data_type", per_input(ins, [](const InputParameter& in) {
            return in.cal_data_type_inferred ? std::string() : in.cal_data_type;
          }));
  w.str("calibration_type", p.calibration_type);
  if (p.preprocess_on) w.boolean("preprocess_on", true);
  w.boolean("per_channel", p.per_channel);
  if (p.max_percentile) w.raw_num("max_percentile", cfg::format_float(*p.max_percentile));
  w.list("run_on_cpu", p.run_on_cpu);
  w.list("run_on_bpu", p.run_on_bpu);
  w.list("optimization", p.optimization);
  if (p.enable_int16) w.boolean("enable_int16", *p.enable_int16);
  if (p.min_output_cosine) w.raw_num("min_output_cosine", cfg::format_float(*p.min_output_cosine));
  if (p.cross_layer_equalization) w.boolean("cross_layer_equalization", *p.cross_layer_equalization);
  if (!p.quant_config.file.empty()) w.str("quant_config", p.quant_config.file);
  w.end();

  const CompilerParameters& cp = compiler_parameters;
  w.begin("compiler_parameters");
  w.str("compile_mode", cp.compile_mode);
  if (cp.balance_factor) w.num("balance_factor", *cp.balance_factor);
  w.boolean("debug", cp.debug);
  w.num("core_num", cp.core_num);
  w.str("optimize_level", cp.optimize_level);
  std::map<std::string, std::string> sources = input_sources(*this);
  if (!sources.empty()) {
    e << YAML::Key << "input_source" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, src] : sources) w.str(name.c_str(), src);
    e << YAML::EndMap;
  }
  w.num("max_time_per_fc", cp.max_time_per_fc);
  if (cp.jobs) w.num("jobs", *cp.jobs);
  if (cp.advice) w.num("advice", *cp.advice);
  if (!cp.ability_entry.empty()) w.str("ability_entry", cp.ability_entry);
  w.end();

  if (custom_op.enabled) {
    w.begin("custom_op");
    w.str("custom_op_method", custom_op.method);
    if (!custom_op.dir.empty()) w.str("custom_op_dir", custom_op.dir);
    w.list("op_register_files", custom_op.register_files);
    w.end();
  }
  e << YAML::EndMap;
  return w.text();
}

std::map<std::string, std::string> Config::metadata() const {
  auto py_bool = [](bool v) { return std::string(v ? "True" : "False"); };
  auto joined = [this](auto value) {
    std::vector<std::string> items;
    for (const InputParameter& in : input_parameters) items.push_back(value(in));
    return cfg::join(items, ";");
  };
  std::map<std::string, std::string> md;
  const ModelParameters& m = model_parameters;
  md["MARCH"] = m.march;
  if (m.model_type == "caffe") {
    md["CAFFE_MODEL"] = m.caffe_model;
    md["PROTOTXT"] = m.prototxt;
  } else {
    md["ONNX_MODEL"] = m.onnx_model;
  }
  md["LAYER_OUT_DUMP"] = py_bool(m.layer_out_dump);
  md["LOG_LEVEL"] = "DEBUG";  // the vendor tool always logs to its file at DEBUG
  md["WORKING_DIR"] = m.working_dir;
  md["MODEL_PREFIX"] = m.output_model_file_prefix;
  if (!m.output_layout.empty()) md["OUTPUT_LAYOUT"] = m.output_layout;
  if (!m.output_nodes.empty()) md["OUTPUT_NODES"] = cfg::join(m.output_nodes, ";");
  if (!m.remove_node_type.empty()) md["REMOVE_NODE_TYPE"] = cfg::join(m.remove_node_type, ";");
  if (!m.remove_node_name.empty()) md["REMOVE_NODE_NAME"] = cfg::join(m.remove_node_name, ";");
  if (!m.debug_mode.empty()) md["DEBUG_MODE"] = m.debug_mode;
  if (!m.node_info.empty()) {
    // Python dict text, as the vendor tool prints its node dict.
    std::string s = "{";
    bool first_node = true;
    for (const auto& [node, info] : m.node_info) {
      std::vector<std::string> kv;
      if (!info.on.empty()) kv.push_back("'ON': '" + info.on + "'");
      if (!info.input_type.empty()) kv.push_back("'InputType': '" + info.input_type + "'");
      for (const auto& [k, t] : info.input_types)
        kv.push_back("'InputType" + std::to_string(k) + "': '" + t + "'");
      if (!info.output_type.empty()) kv.push_back("'OutputType': '" + info.output_type + "'");
      s += (first_node ? "'" : ", '") + node + "': {" + cfg::join(kv, ", ") + "}";
      first_node = false;
    }
    md["NODE_INFO"] = s + "}";
  }

  md["INPUT_NAMES"] = joined([](const InputParameter& in) { return in.name; });
  md["INPUT_TYPE_RT"] = joined([](const InputParameter& in) { return in.type_rt; });
  md["INPUT_SPACE_AND_RANGE"] = joined([](const InputParameter& in) { return in.space_and_range; });
  md["INPUT_TYPE_TRAIN"] = joined([](const InputParameter& in) { return in.type_train; });
  md["INPUT_LAYOUT_RT"] = joined([](const InputParameter& in) { return in.layout_rt; });
  md["INPUT_LAYOUT_TRAIN"] = joined([](const InputParameter& in) { return in.layout_train; });
  md["NORM_TYPE"] = joined([](const InputParameter& in) { return in.norm_type; });
  md["MEAN_VALUE"] = joined([](const InputParameter& in) { return numbers(in.mean, ","); });
  md["SCALE_VALUE"] = joined([](const InputParameter& in) { return numbers(in.scale, ","); });
  md["INPUT_SHAPE"] = joined([](const InputParameter& in) { return cfg::format_shape(in.shape); });
  if (input_batch_set && !input_parameters.empty())
    md["INPUT_BATCH"] = std::to_string(input_parameters[0].batch);

  const CalibrationParameters& p = calibration_parameters;
  if (p.needs_data()) {
    md["CALI_DIR"] = joined([](const InputParameter& in) { return in.cal_data_dir; });
    md["CAL_DATA_TYPE"] = joined([](const InputParameter& in) { return in.cal_data_type; });
  }
  md["CALI_TYPE"] = p.calibration_type;
  md["PREPROCESS_ON"] = py_bool(p.preprocess_on);
  md["PER_CHANNEL"] = py_bool(p.per_channel);
  if (p.max_percentile) md["MAX_PERCENTILE"] = cfg::format_float(*p.max_percentile);
  if (!p.optimization.empty()) md["OPTIMIZATION"] = cfg::join(p.optimization, ";");
  if (!p.run_on_cpu.empty()) md["RUN_ON_CPU"] = cfg::join(p.run_on_cpu, ";");
  if (!p.run_on_bpu.empty()) md["RUN_ON_BPU"] = cfg::join(p.run_on_bpu, ";");
  if (p.enable_int16) md["16BIT_QUANTIZE"] = py_bool(*p.enable_int16);
  if (p.min_output_cosine) md["MIN_OUTPUT_COSINE"] = cfg::format_float(*p.min_output_cosine);
  if (!p.quant_config.file.empty()) md["QUANT_CONFIG"] = p.quant_config.file;
  if (custom_op.enabled) {
    md["CUSTOM_OP_METHOD"] = custom_op.method;
    md["CUSTOM_OP_DIR"] = custom_op.dir;
    md["CUSTOM_OP_REGISTER_FILES"] = cfg::join(custom_op.register_files, ";");
  }

  const CompilerParameters& cp = compiler_parameters;
  md["DEBUG"] = py_bool(cp.debug);
  md["COMPILE_MODE"] = cp.compile_mode;
  // The compiler options in the vendor's hbdk-cc spelling
  // ("--O3 --debug --core-num 1 --fast --jobs 4" in its logs).
  std::vector<std::string> opts = {"--" + cp.optimize_level};
  if (cp.debug) opts.push_back("--debug");
  opts.push_back("--core-num " + std::to_string(cp.core_num));
  if (cp.compile_mode == "latency") opts.push_back("--fast");
  if (cp.balance_factor) opts.push_back("--balance " + std::to_string(*cp.balance_factor));
  if (cp.max_time_per_fc) opts.push_back("--max-time-per-fc " + std::to_string(cp.max_time_per_fc));
  if (cp.jobs) opts.push_back("--jobs " + std::to_string(*cp.jobs));
  if (cp.advice) opts.push_back("--advice " + std::to_string(*cp.advice));
  md["hbdk_pass_through_params"] = cfg::join(opts, " ");
  std::string src = "{";
  for (const auto& [name, s] : input_sources(*this)) src += "'" + name + "': '" + s + "', ";
  md["input-source"] = src + "'_default_value': 'ddr'}";
  md["hbdk_params"] = "hbdk_pass_through_params input-source";
  return md;
}

}  // namespace openbpu::cvt
