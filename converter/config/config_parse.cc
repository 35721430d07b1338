// SPDX-License-Identifier: Apache-2.0
// yaml -> Config, and every rule the yaml alone decides. The vendor tool
// validates with a closed schema and then per key (horizon_tc_ui); the order
// of the groups and most message texts follow it so users find the same
// diagnostics, prefixed with "<group>.<key>:".
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "bpu_sim/isa/march.h"
#include "converter/config/config_internal.h"

namespace openbpu::cvt {

using cfg::fail;
using cfg::Warn;

namespace {

namespace fs = std::filesystem;
using OptStrings = std::vector<std::optional<std::string>>;

// --- the schema ------------------------------------------------------------

const char* const kGroups[] = {"model_parameters", "input_parameters", "calibration_parameters",
                               "compiler_parameters", "custom_op"};

const std::vector<std::string>& group_keys(const std::string& group) {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"model_parameters",
       {"onnx_model", "caffe_model", "prototxt", "march", "output_model_file_prefix", "working_dir",
        "layer_out_dump", "output_nodes", "remove_node_type", "remove_node_name",
        "set_node_data_type", "debug_mode", "node_info", "log_level", "output_layout"}},
      {"input_parameters",
       {"input_name", "input_type_train", "input_layout_train", "input_type_rt", "input_layout_rt",
        "input_space_and_range", "input_shape", "input_batch", "norm_type", "mean_value",
        "scale_value", "separate_batch"}},
      {"calibration_parameters",
       {"cal_data_dir", "cal_data_type", "calibration_type", "preprocess_on", "max_percentile",
        "per_channel", "run_on_cpu", "run_on_bpu", "optimization", "enable_int16",
        "min_output_cosine", "cross_layer_equalization", "quant_config"}},
      {"compiler_parameters",
       {"compile_mode", "balance_factor", "debug", "core_num", "optimize_level", "input_source",
        "max_time_per_fc", "jobs", "advice", "ability_entry"}},
      {"custom_op", {"custom_op_method", "op_register_files", "custom_op_dir"}},
  };
  return keys.at(group);
}

// Keys of the newer hb_compile (J6/S100) yaml that hb_mapper never had.
bool is_hb_compile_key(const std::string& key) {
  static const std::set<std::string> keys = {
      "separate_name", "std_value", "enable_vpu", "hbdk3_compatible_mode", "extra_params", "cali_extra_param"};
  return keys.count(key) != 0;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, key.size() / 3) + 1;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(cfg::lower(key), c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

std::string unknown_key_message(const std::string& group, const std::string& key) {
  for (const char* other : kGroups) {
    const auto& keys = group_keys(other);
    if (other != group && std::find(keys.begin(), keys.end(), key) != keys.end())
      return "unknown key in " + group + "; '" + key + "' belongs to " + other;
  }
  if (is_hb_compile_key(key))
    return "unknown key; '" + key +
           "' is a key of hb_compile (J6/S100 toolchain) that this converter does not support yet "
           "(hb_mapper and hb_compile share the keys of docs/config.md)";
  std::string hint = closest(key, group_keys(group));
  return "unknown key" + (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)") +
         "; valid keys: " + cfg::join(group_keys(group), ", ");
}

const char* node_kind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

// --- one group's keys --------------------------------------------------------

class Group {
 public:
  Group(std::string name, const YAML::Node& node, const Warn& warn) : name_(std::move(name)) {
    if (!node || node.IsNull()) return;  // "group:" with every key commented out
    if (!node.IsMap())
      fail(name_, std::string("expected a mapping of keys, got ") + node_kind(node));
    const auto& allowed = group_keys(name_);
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) fail(name_, "keys must be plain names");
      const std::string key = it->first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail(where(key), unknown_key_message(name_, key));
      // PyYAML keeps the last of duplicated keys; say so, it is rarely meant.
      if (values_.count(key))
        warn(where(key), "given more than once; the last value (line " +
                             std::to_string(it->first.Mark().line + 1) + ") is used");
      values_[key] = it->second;
    }
  }

  const std::string& name() const { return name_; }
  std::string where(const std::string& key) const { return name_ + "." + key; }
  bool empty() const { return values_.empty(); }
  // The value, or an invalid node when the key is absent or null.
  YAML::Node get(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end() || it->second.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
    return it->second;
  }
  bool has(const std::string& key) const { return get(key).IsDefined(); }

  // A scalar as text; "" when absent.
  std::string str(const std::string& key) const {
    YAML::Node n = get(key);
    if (!n.IsDefined()) return "";
    if (!n.IsScalar()) fail(where(key), std::string("expected a string, got ") + node_kind(n));
    return cfg::trim(n.Scalar());
  }

  std::optional<bool> boolean(const std::string& key) const {
    YAML::Node n = get(key);
    if (!n.IsDefined()) return std::nullopt;
    if (!n.IsScalar()) fail(where(key), std::string("expected True or False, got ") + node_kind(n));
    auto v = cfg::parse_bool(n.Scalar());
    if (!v) fail(where(key), "expected True or False, got '" + n.Scalar() + "'");
    return v;
  }

  std::optional<long long> integer(const std::string& key) const {
    YAML::Node n = get(key);
    if (!n.IsDefined()) return std::nullopt;
    if (!n.IsScalar()) fail(where(key), std::string("expected an integer, got ") + node_kind(n));
    if (cfg::trim(n.Scalar()).empty()) return std::nullopt;
    auto v = cfg::parse_int(n.Scalar());
    if (!v) fail(where(key), "expected an integer, got '" + n.Scalar() + "'");
    return v;
  }

  std::optional<double> number(const std::string& key) const {
    YAML::Node n = get(key);
    if (!n.IsDefined()) return std::nullopt;
    if (!n.IsScalar()) fail(where(key), std::string("expected a number, got ") + node_kind(n));
    if (cfg::trim(n.Scalar()).empty()) return std::nullopt;
    auto v = cfg::parse_float(n.Scalar());
    if (!v) fail(where(key), "expected a number, got '" + n.Scalar() + "'");
    return v;
  }

  // A ';' list ('a; b; c') or a yaml list; empty when absent or ''.
  OptStrings list(const std::string& key) const {
    YAML::Node n = get(key);
    if (!n.IsDefined()) return {};
    if (n.IsScalar()) return cfg::split_list(n.Scalar());
    if (!n.IsSequence())
      fail(where(key), std::string("expected a ';'-separated string, got ") + node_kind(n));
    OptStrings out;
    for (const YAML::Node& e : n) {
      if (e.IsNull()) {
        out.emplace_back(std::nullopt);
        continue;
      }
      if (!e.IsScalar())
        fail(where(key), std::string("list items must be strings, got ") + node_kind(e));
      std::string s = cfg::trim(e.Scalar());
      if (s.empty() || s == "None")
        out.emplace_back(std::nullopt);
      else
        out.emplace_back(s);
    }
    return out;
  }

  // A list without placeholders (node names and the like).
  std::vector<std::string> names(const std::string& key) const {
    std::vector<std::string> out;
    for (const auto& item : list(key))
      if (item) out.push_back(*item);
    return out;
  }

 private:
  std::string name_;
  std::map<std::string, YAML::Node> values_;
};

std::string one_of(const std::string& value, const std::vector<std::string>& allowed) {
  return "'" + value + "' is not one of " + cfg::join(allowed, ", ");
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// --- model_parameters ------------------------------------------------------

std::string check_model_file(const Group& g, const std::string& key, const std::string& value,
                             const std::string& ext, const std::string& base_dir) {
  std::string path = cfg::abs_path(base_dir, value);
  if (path.size() < ext.size() || path.compare(path.size() - ext.size(), ext.size(), ext) != 0)
    fail(g.where(key), "file invalid: '" + path + "'. It should be a '" + ext + "' file");
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    fail(g.where(key), "Can not find " + key + " file given: " + path + ", please check '" + key +
                           "' in model_parameters");
  return path;
}

void parse_node_info_string(const Group& g, const std::string& key, const std::string& text,
                            std::map<std::string, NodeInfo>* out) {
  for (const auto& item : cfg::split_list(text)) {
    if (!item) continue;
    size_t colon = item->find(':');
    if (colon == std::string::npos || item->find(':', colon + 1) != std::string::npos)
      fail(g.where(key),
           "The format you gave is " + text +
               ", currently we only support Conv_0:int16;Conv_1:int16 (or the dict form)");
    std::string node = cfg::trim(item->substr(0, colon));
    std::string type = cfg::lower(cfg::trim(item->substr(colon + 1)));
    if (node.empty()) fail(g.where(key), "empty node name in '" + *item + "'");
    if (type != "int8" && type != "int16")
      fail(g.where(key), "node '" + node + "': " + one_of(type, {"int8", "int16"}));
    (*out)[node].output_type = type;
  }
}

void parse_node_info_map(const Group& g, const std::string& key, const YAML::Node& map,
                         std::map<std::string, NodeInfo>* out) {
  static const std::regex input_k("^InputType([0-9]+)$");
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string node = cfg::trim(it->first.as<std::string>(""));
    if (node.empty()) fail(g.where(key), "empty node name");
    const YAML::Node settings = it->second;  // a copy: it-> yields a temporary
    if (settings.IsNull()) continue;
    if (!settings.IsMap())
      fail(g.where(key),
           "node '" + node + "': The format you gave is " + node_kind(settings) +
               ", currently we only support {Conv_0: {'ON': 'BPU', 'InputType0': 'int16', "
               "'OutputType': 'int16'}}");
    NodeInfo& info = (*out)[node];
    for (auto kv = settings.begin(); kv != settings.end(); ++kv) {
      const std::string k = cfg::trim(kv->first.as<std::string>(""));
      if (!kv->second.IsScalar())
        fail(g.where(key),
             "node '" + node + "', " + k + ": expected a string, got " + node_kind(kv->second));
      const std::string v = cfg::trim(kv->second.Scalar());
      std::smatch m;
      if (k == "ON") {
        std::string on = cfg::upper(v);
        if (on != "BPU" && on != "CPU")
          fail(g.where(key), "node '" + node + "', ON: " + one_of(v, {"BPU", "CPU"}));
        info.on = on;
        continue;
      }
      std::string type = cfg::lower(v);
      if (k != "InputType" && k != "OutputType" && !std::regex_match(k, m, input_k))
        fail(g.where(key),
             "node '" + node + "': The format you gave is " + k +
                 ", currently we only support ON, OutputType, InputType and InputType<k>"
                 " (OutputType cannot be indexed)");
      if (type != "int8" && type != "int16")
        fail(g.where(key), "node '" + node + "', " + k + ": " + one_of(v, {"int8", "int16"}));
      if (k == "InputType")
        info.input_type = type;
      else if (k == "OutputType")
        info.output_type = type;
      else if (const auto index = cfg::parse_int(m[1].str()); index && *index <= std::numeric_limits<int>::max())
        info.input_types[static_cast<int>(*index)] = type;
      else
        fail(g.where(key), "node '" + node + "', " + k.substr(0, 40) + (k.size() > 40 ? "...: " : ": ") +
                               "input index out of range 0.." + std::to_string(std::numeric_limits<int>::max()));
    }
  }
}

void parse_node_info(const Group& g, const std::string& key, std::map<std::string, NodeInfo>* out) {
  YAML::Node n = g.get(key);
  if (!n.IsDefined()) return;
  if (n.IsScalar())
    parse_node_info_string(g, key, n.Scalar(), out);
  else if (n.IsMap())
    parse_node_info_map(g, key, n, out);
  else
    fail(g.where(key), std::string("expected 'node:int16;...' or a mapping, got ") + node_kind(n));
}

void parse_model_parameters(const Group& g, const std::string& base_dir,
                            const std::string& model_type, Config* c, const Warn& warn) {
  ModelParameters& m = c->model_parameters;
  const std::string onnx = g.str("onnx_model"), caffe = g.str("caffe_model"),
                    proto = g.str("prototxt");
  if (!model_type.empty() && model_type != "onnx" && model_type != "caffe")
    fail("--model-type", one_of(model_type, {"onnx", "caffe"}));
  if (model_type == "onnx" && onnx.empty())
    fail(g.where("onnx_model"),
         "model type is onnx but can not find onnx_model in config yaml, "
         "please check 'onnx_model' in model_parameters");
  if (model_type == "caffe" && caffe.empty())
    fail(g.where("caffe_model"),
         "model type is caffe but can not find caffe_model in config yaml, "
         "please check 'caffe_model' in model_parameters");
  if (!onnx.empty() && (!caffe.empty() || !proto.empty()))
    fail(g.where("onnx_model"),
         "both onnx_model and caffe_model/prototxt are given; configure either "
         "onnx_model or caffe_model + prototxt");
  if (onnx.empty() && caffe.empty() && proto.empty())
    fail(g.where("onnx_model"),
         "Missing model file input. Please input caffe_model or onnx_model in "
         "yaml config file");
  if (onnx.empty()) {
    if (caffe.empty())
      fail(g.where("caffe_model"), "Key 'model_parameters' error: Missing keys: 'caffe_model'");
    if (proto.empty())
      fail(g.where("prototxt"), "Key 'model_parameters' error: Missing keys: 'prototxt'");
    m.model_type = "caffe";
    m.caffe_model = check_model_file(g, "caffe_model", caffe, ".caffemodel", base_dir);
    m.prototxt = check_model_file(g, "prototxt", proto, ".prototxt", base_dir);
  } else {
    m.model_type = "onnx";
    m.onnx_model = check_model_file(g, "onnx_model", onnx, ".onnx", base_dir);
  }

  const std::string march = g.str("march");
  if (march.empty())
    fail(g.where("march"),
         "missing (required): bernoulli2 (RDK X3), bayes (RDK Ultra/J5), "
         "bayes-e (RDK X5), nash-e, nash-m");
  const isa::MarchInfo* info = isa::find_march(march);
  if (!info) {
    int count = 0;
    const isa::MarchInfo* all = isa::all_marches(&count);
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.push_back(all[i].name);
    fail(g.where("march"), "User input march invalid: " + one_of(march, names));
  }
  m.march = info->name;

  if (g.has("output_model_file_prefix")) {
    m.output_model_file_prefix = g.str("output_model_file_prefix");
    if (m.output_model_file_prefix.empty())
      fail(g.where("output_model_file_prefix"), "must not be empty");
    // Every output stays inside working_dir: a file name prefix, no path.
    if (m.output_model_file_prefix.find('\0') != std::string::npos)
      fail(g.where("output_model_file_prefix"), "contains a NUL byte");
    else if (m.output_model_file_prefix.find('/') != std::string::npos)
      fail(g.where("output_model_file_prefix"),
           "'" + m.output_model_file_prefix + "' contains '/'; it is a file name prefix inside working_dir");
    else if (m.output_model_file_prefix == "." || m.output_model_file_prefix == "..")
      fail(g.where("output_model_file_prefix"), "'" + m.output_model_file_prefix + "' is not a file name prefix");
  }
  std::string wd = g.str("working_dir");
  if (wd.find('\0') != std::string::npos) fail(g.where("working_dir"), "contains a NUL byte");
  m.working_dir = cfg::abs_path(base_dir, wd.empty() ? "./model_output" : wd);
  if (m.working_dir == "/")
    fail(g.where("working_dir"), "'" + wd + "' is the root folder '/'; give a folder for the outputs");
  m.layer_out_dump = g.boolean("layer_out_dump").value_or(false);

  if (g.has("log_level"))
    warn(g.where("log_level"),
         "User input 'log_level' is deprecated, Console log level is set as info, "
         "and logfile log level is set as debug.");
  if (g.has("output_layout")) {
    std::string layout = cfg::upper(g.str("output_layout"));
    if (!layout.empty() && layout != "NCHW" && layout != "NHWC")
      fail(g.where("output_layout"), one_of(layout, {"NCHW", "NHWC"}));
    m.output_layout = layout;
    warn(g.where("output_layout"), "deprecated; outputs keep the model's layout");
  }

  m.output_nodes = g.names("output_nodes");
  static const std::vector<std::string> removable = {
      "Quantize", "Transpose", "Dequantize", "Cast", "Reshape", "Softmax", "DequantizeFilter"};
  m.remove_node_type = g.names("remove_node_type");
  for (const std::string& t : m.remove_node_type)
    if (!contains(removable, t))
      fail(g.where("remove_node_type"), "Unsupport remove " + t + " now; " + one_of(t, removable));
  m.remove_node_name = g.names("remove_node_name");

  for (const std::string& mode : g.names("debug_mode")) {
    if (mode != "dump_calibration_data")
      fail(g.where("debug_mode"),
           "User input debug_mode invalid: " + one_of(mode, {"dump_calibration_data"}));
    m.debug_mode = mode;
  }

  // set_node_data_type first, node_info over it (per node and key).
  if (g.has("set_node_data_type")) {
    warn(g.where("set_node_data_type"),
         "The parameter 'set_node_data_type' will be deprecated and the "
         "parameter 'node_info' will provide the relevant functionality.");
    parse_node_info(g, "set_node_data_type", &m.node_info);
  }
  if (g.has("node_info")) {
    if (g.has("set_node_data_type"))
      warn(g.where("node_info"),
           "You configured both parameter set_node_data_type and parameter node_info. "
           "We will use the configuration of parameter node_info as the highest priority");
    parse_node_info(g, "node_info", &m.node_info);
  }
  if (!m.node_info.empty() && m.march == "bernoulli2")
    fail(g.where(g.has("node_info") ? "node_info" : "set_node_data_type"),
         "not supported on march bernoulli2 (RDK X3: no int16; place nodes with "
         "calibration_parameters.run_on_cpu / run_on_bpu)");
}

// --- input_parameters -------------------------------------------------------

const std::vector<std::string> kRtTypes = {"nv12", "yuv444", "rgb", "bgr", "gray", "featuremap"};
const std::vector<std::string> kTrainTypes = {"rgb", "bgr", "yuv444", "gray", "featuremap"};
// Accepted like the vendor tool (its internal lists), not documented.
const std::vector<std::string> kInternalTypes = {"yuv444_128", "yuv_bt601_full", "yuv_bt601_video"};

// The input_type_train -> input_type_rt conversions besides identity.
bool legal_transform(const std::string& train, const std::string& rt) {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"rgb", {"bgr", "nv12", "yuv444", "yuv444_128", "yuv420sp_bt601_video"}},
      {"bgr", {"rgb", "nv12", "yuv444", "yuv444_128", "yuv420sp_bt601_video"}},
      {"yuv444", {"yuv444_128", "nv12"}},
  };
  if (train == rt) return true;
  auto it = table.find(train);
  return it != table.end() && contains(it->second, rt);
}

struct InputCount {
  size_t n = 0;
  std::string from;  // the key the count comes from

  void expect(const Group& g, const std::string& key, size_t given) const {
    if (given != n)
      fail(g.where(key), "Wrong num of " + key + " received. Num of " + key +
                             " given: " + std::to_string(given) + ", expect: " + std::to_string(n) +
                             " (one per input; the input count comes from " + from + ")");
  }
};

std::vector<std::string> required_list(const Group& g, const std::string& key,
                                       const InputCount& count, const std::string& example) {
  OptStrings items = g.list(key);
  if (items.empty())
    fail(g.where(key),
         "missing (required): one value per input separated by ';', e.g. '" + example + "'");
  count.expect(g, key, items.size());
  std::vector<std::string> out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i])
      fail(g.where(key),
           "input " + std::to_string(i) + " has no value ('None' is not allowed here)");
    out.push_back(*items[i]);
  }
  return out;
}

// mean_value / scale_value: per input, nullopt = not given.
std::vector<std::optional<std::vector<float>>> number_lists(const Group& g, const std::string& key,
                                                            size_t n) {
  std::vector<std::optional<std::vector<float>>> out;
  YAML::Node node = g.get(key);
  if (!node.IsDefined()) return out;
  auto numbers = [&](const std::string& text) {
    auto v = cfg::parse_numbers(text);
    if (!v)
      fail(g.where(key), "Wrong " + key + " format '" + text +
                             "', please refer to user manual "
                             "(numbers separated by spaces, inputs by ';')");
    return *v;
  };
  if (node.IsScalar()) {
    for (const auto& item : cfg::split_list(node.Scalar()))
      out.push_back(item ? std::optional(numbers(*item)) : std::nullopt);
    return out;
  }
  if (!node.IsSequence())
    fail(g.where(key), std::string("expected numbers, got ") + node_kind(node));
  // A flat list of numbers is the per-channel values of the only input;
  // otherwise the list has one entry per input.
  bool flat = n == 1;
  for (const YAML::Node& e : node)
    flat = flat && e.IsScalar() && cfg::parse_float(e.Scalar()).has_value();
  if (flat) {
    std::vector<float> v;
    for (const YAML::Node& e : node) v.push_back(static_cast<float>(*cfg::parse_float(e.Scalar())));
    out.push_back(v);
    return out;
  }
  for (const YAML::Node& e : node) {
    if (e.IsNull()) {
      out.push_back(std::nullopt);
    } else if (e.IsScalar()) {
      std::string s = cfg::trim(e.Scalar());
      out.push_back(s.empty() || s == "None" ? std::nullopt : std::optional(numbers(s)));
    } else if (e.IsSequence()) {
      std::vector<float> v;
      for (const YAML::Node& x : e) {
        if (!x.IsScalar())
          fail(g.where(key), "expected numbers, got a nested " + std::string(node_kind(x)));
        v.push_back(numbers(x.Scalar()).at(0));
      }
      out.push_back(v);
    } else {
      fail(g.where(key), std::string("expected numbers, got ") + node_kind(e));
    }
  }
  return out;
}

std::vector<std::optional<std::vector<int64_t>>> shape_lists(const Group& g, size_t n) {
  std::vector<std::optional<std::vector<int64_t>>> out;
  const std::string key = "input_shape";
  YAML::Node node = g.get(key);
  if (!node.IsDefined()) return out;
  auto shape = [&](const std::string& text) {
    auto v = cfg::parse_shape(text);
    if (!v)
      fail(g.where(key), "Input shape parse failed. Input: '" + text +
                             "' (expected positive dimensions joined by 'x', e.g. 1x3x224x224)");
    return *v;
  };
  if (node.IsSequence()) {
    bool flat = n == 1;  // [1, 3, 224, 224] for the only input
    for (const YAML::Node& e : node)
      flat = flat && e.IsScalar() && cfg::parse_int(e.Scalar()).has_value();
    if (flat) {
      std::vector<int64_t> dims;
      for (const YAML::Node& e : node) dims.push_back(*cfg::parse_int(e.Scalar()));
      for (int64_t d : dims)
        if (d <= 0) fail(g.where(key), "Input shape parse failed. Input: " + cfg::py_list(dims));
      out.push_back(dims);
      return out;
    }
    // One entry per input: 'NxCxHxW', [N, C, H, W] or null.
    for (const YAML::Node& e : node) {
      if (e.IsNull()) {
        out.push_back(std::nullopt);
      } else if (e.IsScalar()) {
        std::string s = cfg::trim(e.Scalar());
        out.push_back(s.empty() || s == "None" ? std::nullopt : std::optional(shape(s)));
      } else if (e.IsSequence()) {
        std::vector<std::string> dims;
        for (const YAML::Node& d : e) dims.push_back(d.IsScalar() ? d.Scalar() : "?");
        out.push_back(shape(cfg::join(dims, "x")));
      } else {
        fail(g.where(key), std::string("expected shapes, got ") + node_kind(e));
      }
    }
    return out;
  }
  for (const auto& item : g.list(key))
    out.push_back(item ? std::optional(shape(*item)) : std::nullopt);
  return out;
}

void parse_input_names(const Group& g, const OptStrings& names, size_t n, std::vector<InputParameter>& inputs) {
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!names[i]) {
      if (n > 1)
        fail(g.where("input_name"), "input " + std::to_string(i) +
                                        " has no name; every input needs "
                                        "its name when there are several");
      continue;
    }
    if (!seen.insert(*names[i]).second)
      fail(g.where("input_name"), "Input names duplicated: '" + *names[i] + "'");
    inputs[i].name = *names[i];
  }

}

void parse_input_types(const Group& g, const InputCount& count, std::vector<InputParameter>& inputs) {
  const size_t n = count.n;
  // Types and layouts.
  std::vector<std::string> all_rt = kRtTypes, all_train = kTrainTypes;
  all_rt.insert(all_rt.end(), kInternalTypes.begin(), kInternalTypes.end());
  all_train.insert(all_train.end(), kInternalTypes.begin(), kInternalTypes.end());
  auto rt = required_list(g, "input_type_rt", count, "nv12");
  auto train = required_list(g, "input_type_train", count, "rgb");
  auto layout_train = required_list(g, "input_layout_train", count, "NCHW");
  for (size_t i = 0; i < n; ++i) {
    InputParameter& in = inputs[i];
    in.type_rt = cfg::lower(rt[i]);
    if (!contains(all_rt, in.type_rt)) fail(g.where("input_type_rt"), one_of(rt[i], kRtTypes));
    in.type_train = cfg::lower(train[i]);
    if (!contains(all_train, in.type_train))
      fail(g.where("input_type_train"), one_of(train[i], kTrainTypes));
    in.layout_train = cfg::upper(layout_train[i]);
    if (in.layout_train != "NCHW" && in.layout_train != "NHWC")
      fail(g.where("input_layout_train"), one_of(layout_train[i], {"NCHW", "NHWC"}));
  }

}

// The J6/S100 yaml (nash marches, seed 004) has no input_layout_rt: its
// runtime takes images as NHWC planes and featuremaps in the training layout.
// A layout given there is checked and used like hb_mapper's.
void parse_input_layouts_rt(const Group& g, const InputCount& count, const std::string& march,
                            std::vector<InputParameter>& inputs, const Warn& warn) {
  const bool nash = march.rfind("nash", 0) == 0;
  const size_t n = count.n;
  OptStrings layout_rt = g.list("input_layout_rt");
  if (!layout_rt.empty()) count.expect(g, "input_layout_rt", layout_rt.size());
  for (size_t i = 0; i < n; ++i) {
    InputParameter& in = inputs[i];
    std::optional<std::string> l = layout_rt.empty() ? std::nullopt : layout_rt[i];
    if (in.type_rt == "nv12") {
      // nv12 is a planar Y + interleaved UV buffer: it has no NCHW/NHWC.
      if (l)
        warn(g.where("input_layout_rt"),
             "Nv12 input layout info received. input " + std::to_string(i) +
                 " input_type_rt is nv12 and layout '" + *l + "' is not needed.");
      continue;
    }
    if (!l && nash) l = in.type_rt == "featuremap" ? in.layout_train : "NHWC";
    if (!l)
      fail(g.where("input_layout_rt"),
           "Input_layout_rt missing. input " + std::to_string(i) + " input_type_rt is: " +
               in.type_rt + ". input_layout_rt is required for this type (NCHW or NHWC)");
    in.layout_rt = cfg::upper(*l);
    if (in.layout_rt != "NCHW" && in.layout_rt != "NHWC")
      fail(g.where("input_layout_rt"), one_of(*l, {"NCHW", "NHWC"}));
  }

}

void parse_space_and_range(const Group& g, const InputCount& count, std::vector<InputParameter>& inputs) {
  OptStrings space = g.list("input_space_and_range");
  if (!space.empty()) count.expect(g, "input_space_and_range", space.size());
  for (size_t i = 0; i < space.size(); ++i) {
    if (!space[i]) continue;
    std::string s = cfg::lower(*space[i]);
    if (s != "regular" && s != "bt601_video")
      fail(g.where("input_space_and_range"), "Invalid input_space_and_range received. " +
                                                 one_of(*space[i], {"regular", "bt601_video"}));
    if (s == "bt601_video" && inputs[i].type_rt != "nv12")
      fail(g.where("input_space_and_range"),
           "Input_type_rt and input_space_and_range combination invalid. "
           "input_space_and_range: bt601_video and input_type_rt " +
               inputs[i].type_rt + " (bt601_video needs nv12)");
    inputs[i].space_and_range = s;
  }

}

void check_input_combinations(const Group& g, const std::string& march, const std::vector<InputParameter>& inputs) {
  const size_t n = inputs.size();
  // Combinations of types, layouts and march.
  for (size_t i = 0; i < n; ++i) {
    const InputParameter& in = inputs[i];
    if ((in.type_rt == "yuv444" || in.type_rt == "yuv444_128") && in.layout_rt == "NCHW" &&
        march == "bernoulli2")
      fail(g.where("input_layout_rt"),
           "Input " + std::to_string(i) + " has input_type_rt " + in.type_rt +
               " with input_layout_rt NCHW is not supported on bernoulli2 for now.");
    const std::string eff = cfg::effective_rt_type(in);
    if (!legal_transform(in.type_train, eff))
      fail(g.where("input_type_rt"),
           "Input " + std::to_string(i) + " has input_type_train '" + in.type_train +
               "' is not supported transform to input_type_rt '" + eff + "' for now.");
  }

}

void parse_shapes_and_batch(const Group& g, const InputCount& count, Config* c) {
  const std::string& march = c->model_parameters.march;
  std::vector<InputParameter>& inputs = c->input_parameters;
  const size_t n = count.n;
  // Shapes (empty = from the model) and batch.
  auto shapes = shape_lists(g, n);
  if (!shapes.empty()) count.expect(g, "input_shape", shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i)
    if (shapes[i]) inputs[i].shape = *shapes[i];

  OptStrings batch = g.list("input_batch");
  if (!batch.empty()) {
    if (batch.size() != 1)
      fail(g.where("input_batch"), "input_batch option can only receive one input. There are " +
                                       std::to_string(batch.size()) + " given");
    if (batch[0]) {
      auto b = cfg::parse_int(*batch[0]);
      if (!b) fail(g.where("input_batch"), "expected an integer, got '" + *batch[0] + "'");
      const long long max = march == "bernoulli2" ? 128 : 4096;
      if (*b < 1 || *b > max)
        fail(g.where("input_batch"), "Input_batch value should between 1 and " +
                                         std::to_string(max) + " on " + march + ", got " +
                                         std::to_string(*b));
      for (InputParameter& in : inputs) in.batch = static_cast<int>(*b);
      c->input_batch_set = true;
    }
  }
  // hb_compile's separated batch mode (one model input per batch item) is
  // not implemented: only its default, False, is accepted.
  if (g.has("separate_batch") && g.boolean("separate_batch").value_or(true))
    fail(g.where("separate_batch"),
         "True (one model input per batch item) is not supported; the batch is one input of input_batch items "
         "(separate_batch False)");
}

void parse_preprocessing(const Group& g, const InputCount& count, std::vector<InputParameter>& inputs,
                         const Warn& warn) {
  const size_t n = count.n;
  // Preprocessing.
  static const std::vector<std::string> norm_types = {"no_preprocess", "data_mean", "data_scale",
                                                      "data_mean_and_scale"};
  OptStrings norm = g.list("norm_type");
  if (!norm.empty()) count.expect(g, "norm_type", norm.size());
  auto means = number_lists(g, "mean_value", n);
  auto scales = number_lists(g, "scale_value", n);
  if (!means.empty()) count.expect(g, "mean_value", means.size());
  if (!scales.empty()) count.expect(g, "scale_value", scales.size());
  for (size_t i = 0; i < n; ++i) {
    InputParameter& in = inputs[i];
    const std::string idx = "input " + std::to_string(i);
    if (!norm.empty() && norm[i]) {
      std::string t = cfg::lower(*norm[i]);
      // The mean_file variants predate mean_value as numbers; the vendor
      // tool reads their mean_value as numbers all the same.
      if (t == "mean_file" || t == "mean_file_and_scale") {
        std::string now = t == "mean_file" ? "data_mean" : "data_mean_and_scale";
        warn(g.where("norm_type"), "'" + t + "' is deprecated, using '" + now + "'");
        t = now;
      }
      if (!contains(norm_types, t))
        fail(g.where("norm_type"), "Norm type given invalid: " + one_of(*norm[i], norm_types));
      in.norm_type = t;
    }
    if (in.norm_type != "no_preprocess" && in.type_rt == "featuremap")
      fail(g.where("norm_type"),
           idx +
               " has input_type_rt featuremap, this input only support norm_type "
               "no_preprocess (got '" +
               in.norm_type + "')");
    const int channels = config_type_channels(in.type_train);
    auto take = [&](const char* key, const char* what,
                    std::vector<std::optional<std::vector<float>>>& given,
                    std::vector<float>* dst) {
      std::optional<std::vector<float>> v = given.empty() ? std::nullopt : given[i];
      bool needed = in.norm_type.find(what) != std::string::npos;
      if (!needed) {
        if (v)
          warn(g.where(key),
               idx + " has norm_type '" + in.norm_type + "', its " + key + " is ignored");
        return;
      }
      if (!v)
        fail(g.where(key), std::string(what == std::string("mean") ? "Mean" : "Scale") +
                               " value not given: " + idx + " norm type " + in.norm_type +
                               " require " + what + " value input but not given");
      if (v->size() != 1 && static_cast<int>(v->size()) != channels)
        fail(g.where(key), idx + " has " + std::to_string(v->size()) +
                               " values; give one value or one per channel (" +
                               std::to_string(channels) + " for input_type_train " + in.type_train +
                               ")");
      *dst = *v;
    };
    take("mean_value", "mean", means, &in.mean);
    take("scale_value", "scale", scales, &in.scale);
  }
}

void parse_input_parameters(const Group& g, Config* c, const Warn& warn) {
  const std::string& march = c->model_parameters.march;
  OptStrings names = g.list("input_name");
  InputCount count;
  if (!names.empty()) {
    count = {names.size(), "input_name"};
  } else {
    OptStrings rt = g.list("input_type_rt");
    if (rt.empty())
      fail(g.where("input_type_rt"),
           "missing (required): one of " + cfg::join(kRtTypes, ", ") + " per input");
    count = {rt.size(), "input_type_rt"};
  }
  const size_t n = count.n;
  std::vector<InputParameter>& inputs = c->input_parameters;
  inputs.assign(n, InputParameter());

  parse_input_names(g, names, n, inputs);
  parse_input_types(g, count, inputs);
  parse_input_layouts_rt(g, count, march, inputs, warn);
  parse_space_and_range(g, count, inputs);
  check_input_combinations(g, march, inputs);
  parse_shapes_and_batch(g, count, c);
  parse_preprocessing(g, count, inputs, warn);
}

// --- calibration_parameters ------------------------------------------------

void parse_calibration_parameters(const Group& g, const std::string& base_dir, Config* c,
                                  const Warn& warn) {
  CalibrationParameters& p = c->calibration_parameters;
  const size_t n = c->input_parameters.size();
  static const std::vector<std::string> types = {"default", "mix", "kl", "max", "load", "skip"};
  if (g.has("calibration_type")) {
    std::string t = cfg::lower(g.str("calibration_type"));
    if (!contains(types, t))
      fail(g.where("calibration_type"), "User input calibration_type invalid, " + one_of(t, types));
    p.calibration_type = t;
  }

  OptStrings dirs = g.list("cal_data_dir");
  OptStrings dtypes = g.list("cal_data_type");
  if (!p.needs_data()) {
    if (!dirs.empty())
      warn(g.where("cal_data_dir"),
           "calibration_type is " + p.calibration_type + ", cal_data_dir is not used");
    if (!dtypes.empty())
      warn(g.where("cal_data_type"),
           "calibration_type is " + p.calibration_type + ", cal_data_type is not used");
  } else {
    if (dirs.empty())
      fail(g.where("cal_data_dir"),
           "missing: calibration_type '" + p.calibration_type +
               "' needs one calibration data directory per input (calibration_type "
               "'skip' calibrates with random data, for performance checks only)");
    if (dirs.size() != n)
      fail(g.where("cal_data_dir"), "Wrong cal_dir num given, cal_dir num " +
                                        std::to_string(dirs.size()) +
                                        " is not equal to input num " + std::to_string(n));
    static const std::vector<std::string> dtype_names = {"uint8", "float32", "int32", "int16",
                                                         "int8"};
    if (!dtypes.empty() && dtypes.size() != n)
      fail(g.where("cal_data_type"), "Wrong cal_data_type num given, cal_data_type num " +
                                         std::to_string(dtypes.size()) +
                                         " is not equal to input num " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
      InputParameter& in = c->input_parameters[i];
      if (!dirs[i])
        fail(g.where("cal_data_dir"), "input " + std::to_string(i) + " has no directory");
      in.cal_data_dir = cfg::abs_path(base_dir, *dirs[i]);
      std::error_code ec;
      if (!fs::is_directory(in.cal_data_dir, ec))
        fail(g.where("cal_data_dir"), "Cal_data_dir does not exist: " + in.cal_data_dir);
      // The vendor's rule: a directory name ending in _f32 holds float32
      // files, anything else uint8; an explicit cal_data_type wins.
      const bool f32_dir = in.cal_data_dir.size() >= 4 &&
                           in.cal_data_dir.compare(in.cal_data_dir.size() - 4, 4, "_f32") == 0;
      std::optional<std::string> t = dtypes.empty() ? std::nullopt : dtypes[i];
      if (!t) {
        in.cal_data_type = f32_dir ? "float32" : "uint8";
        in.cal_data_type_inferred = true;
        continue;
      }
      std::string type = cfg::lower(*t);
      if (!contains(dtype_names, type))
        fail(g.where("cal_data_type"),
             "User input cal_data_type invalid, " + one_of(*t, dtype_names));
      in.cal_data_type = type;
      if (f32_dir != (type == "float32"))
        warn(g.where("cal_data_type"),
             "The calibration dir name suffix is not the same as the value " + type +
                 " of the parameter cal_data_type, the parameter setting will prevail (" +
                 in.cal_data_dir + ")");
    }
  }

  if (auto v = g.boolean("preprocess_on")) {
    p.preprocess_on = *v;
    if (*v)
      warn(g.where("preprocess_on"),
           "User input 'preprocess_on' will be deprecated. If you want to simplify the "
           "calibration process, please use 'skip' in 'calibration_type'");
  }
  p.per_channel = g.boolean("per_channel").value_or(false);
  if (p.per_channel && (p.calibration_type == "default" || p.calibration_type == "mix"))
    warn(g.where("per_channel"),
         "only used when calibration_type is kl or max, ignored with '" + p.calibration_type + "'");
  if (auto v = g.number("max_percentile")) {
    if (*v < 0 || *v > 1)
      fail(g.where("max_percentile"),
           "Invalid max_percentile: " + cfg::trim(g.get("max_percentile").Scalar()) +
               ", avaliable range: 0~1");
    p.max_percentile = static_cast<float>(*v);
    if (p.calibration_type != "max")
      warn(g.where("max_percentile"),
           "only used when calibration_type is max, ignored with '" + p.calibration_type + "'");
  }
  if (auto v = g.number("min_output_cosine")) {
    if (!(*v > 0 && *v <= 1))
      fail(g.where("min_output_cosine"),
           "Invalid min_output_cosine: " + cfg::trim(g.get("min_output_cosine").Scalar()) +
               ", a cosine similarity in (0, 1]");
    p.min_output_cosine = *v;
  }
  p.cross_layer_equalization = g.boolean("cross_layer_equalization");
  if (p.cross_layer_equalization && p.calibration_type != "default" && p.calibration_type != "mix")
    warn(g.where("cross_layer_equalization"),
         "only used when calibration_type is default or mix, ignored with '" + p.calibration_type + "'");
  p.run_on_cpu = g.names("run_on_cpu");
  p.run_on_bpu = g.names("run_on_bpu");
  const std::string& march = c->model_parameters.march;
  if (march != "bernoulli2" && !c->model_parameters.node_info.empty()) {
    for (const char* key : {"run_on_cpu", "run_on_bpu"})
      if (!g.names(key).empty())
        warn(g.where(key),
             std::string("You configured both parameter ") + key +
                 " and parameter node_info. "
                 "We will use the configuration of parameter node_info as the highest priority");
  }

  // optimization: ';' list (',' too: the X5 logs echo it comma separated).
  // The quantizer owns the values (new ones appear per release), so only
  // their shape is checked here; int16 needs a march with int16.
  static const std::regex known(
      "^(set_model_output_int(8|16)|set_[A-Za-z0-9]+_(input|output)_int(8|16)|set_all_nodes_int16|"
      "asymmetric|"
      "bias_correction|int16_weights|lstm_batch_last|run_fast)$");
  static const std::regex word("^[A-Za-z0-9_]+$");
  for (const std::string& item : g.names("optimization")) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ',')) {
      part = cfg::trim(part);
      if (part.empty()) continue;
      if (!std::regex_match(part, word))
        fail(g.where("optimization"), "invalid value '" + part + "'");
      if (!std::regex_match(part, known))
        warn(g.where("optimization"),
             "'" + part + "' is not a known optimization; passed to the quantizer as is");
      if (march == "bernoulli2" && part.find("int16") != std::string::npos)
        fail(g.where("optimization"), "'" + part +
                                          "' is not supported on bernoulli2 (no int16; "
                                          "set_model_output_int8 only)");
      p.optimization.push_back(part);
    }
  }
  if (g.has("quant_config"))
    p.quant_config = cfg::parse_quant_config(g.where("quant_config"), cfg::abs_path(base_dir, g.str("quant_config")),
                                             c->model_parameters.march);
  if (auto v = g.boolean("enable_int16")) {
    p.enable_int16 = *v;
    warn(g.where("enable_int16"),
         "deprecated (J5 only); use node_info or optimization set_<Op>_output_int16");
  }
}

// --- compiler_parameters ---------------------------------------------------

void parse_compiler_parameters(const Group& g, Config* c, const Warn& warn) {
  CompilerParameters& p = c->compiler_parameters;
  const std::string& march = c->model_parameters.march;
  static const std::vector<std::string> modes = {"latency", "bandwidth", "balance"};
  if (g.has("compile_mode")) {
    std::string m = cfg::lower(g.str("compile_mode"));
    if (!contains(modes, m))
      fail(g.where("compile_mode"), "Invalid compile mode received. " + one_of(m, modes));
    p.compile_mode = m;
  }
  auto bf = g.integer("balance_factor");
  if (p.compile_mode == "balance") {
    if (!bf)
      fail(g.where("balance_factor"),
           "Parameter compile_mode is set to balance, please set "
           "balance_factor (0-100) to use this mode");
    if (*bf < 0 || *bf > 100)
      fail(g.where("balance_factor"),
           "Invalid balance_factor received: " + std::to_string(*bf) + ", value range is 0-100");
    p.balance_factor = static_cast<int>(*bf);
  } else if (bf) {
    warn(g.where("balance_factor"),
         "Parameter compile_mode is not set to balance, balance_factor will not "
         "take effect.");
  }
  p.debug = g.boolean("debug").value_or(true);
  if (auto n = g.integer("core_num")) {
    if (*n != 1 && *n != 2)
      fail(g.where("core_num"),
           "Wrong core num setting given, " + std::to_string(*n) + " should in range [1, 2]");
    if (*n == 2 && march != "bernoulli2")
      fail(g.where("core_num"),
           "2 cores are only supported on bernoulli2 (RDK X3); " + march + " supports 1");
    p.core_num = static_cast<int>(*n);
  }
  if (g.has("optimize_level")) {
    std::string o = cfg::upper(g.str("optimize_level"));
    static const std::vector<std::string> levels = {"O0", "O1", "O2", "O3"};
    if (!contains(levels, o))
      fail(g.where("optimize_level"),
           "User input optimize_level invalid, " + one_of(g.str("optimize_level"), levels));
    p.optimize_level = o;
  }

  YAML::Node src = g.get("input_source");
  if (src.IsDefined() && src.IsScalar() && !cfg::trim(src.Scalar()).empty()) {
    // '{"data": "ddr"}' quoted as a whole: read the mapping inside.
    try {
      src = YAML::Load(src.Scalar());
    } catch (const YAML::Exception&) {
      src = YAML::Node();
    }
    if (!src.IsMap())
      fail(g.where("input_source"),
           "Invalid input_source format received. input_source should be a dict, "
           "e.g. {\"data\": \"pyramid\"}");
  }
  if (src.IsDefined() && src.IsMap()) {
    static const std::vector<std::string> sources = {"ddr", "pyramid", "resizer"};
    for (auto it = src.begin(); it != src.end(); ++it) {
      const std::string name = cfg::trim(it->first.as<std::string>(""));
      if (!it->second.IsScalar())
        fail(g.where("input_source"),
             "input '" + name + "': expected a string, got " + node_kind(it->second));
      const std::string v = cfg::lower(cfg::trim(it->second.Scalar()));
      if (name == "_default_value") continue;  // the vendor tool's own bookkeeping entry
      if (!contains(sources, v))
        fail(g.where("input_source"),
             "Invalid input_source received for input '" + name + "': " + one_of(v, sources));
      p.input_source[name] = v;
    }
  } else if (src.IsDefined() && !src.IsScalar()) {
    fail(g.where("input_source"),
         "Invalid input_source format received. input_source should be a dict, "
         "e.g. {\"data\": \"pyramid\"}");
  }

  if (auto v = g.integer("max_time_per_fc")) {
    if (*v != 0 && (*v < 1000 || *v > 4294967295LL))
      fail(g.where("max_time_per_fc"),
           "Parameter max_time_per_fc value check failed. Please set it 0 or "
           "1000-4294967295 (got " +
               std::to_string(*v) + ")");
    p.max_time_per_fc = *v;
  }
  if (auto v = g.integer("jobs")) {
    if (*v < 1 || *v > 1024)
      fail(g.where("jobs"), "expected a process count >= 1, got " + std::to_string(*v));
    p.jobs = static_cast<int>(*v);
  }
  if (auto v = g.integer("advice")) {
    if (*v < 0 || *v > 0x7fffffff)
      fail(g.where("advice"), "The parameter advice, must be a positive integer");
    p.advice = static_cast<int>(*v);
  }
  p.ability_entry = g.str("ability_entry");
}

// --- custom_op ---------------------------------------------------------------

void parse_custom_op(const Group& g, const std::string& base_dir, Config* c) {
  CustomOp& op = c->custom_op;
  if (g.empty()) return;
  op.enabled = true;
  op.method = cfg::lower(g.str("custom_op_method"));
  if (op.method.empty())
    fail(g.where("custom_op_method"), "Custom_op_method is not specified (use register)");
  if (op.method != "register")
    fail(g.where("custom_op_method"),
         "Custom_op_method '" + op.method + "' invalid, " + one_of(op.method, {"register"}));
  std::string dir = g.str("custom_op_dir");
  std::error_code ec;
  if (!dir.empty()) {
    op.dir = cfg::abs_path(base_dir, dir);
    if (!fs::is_directory(op.dir, ec))
      fail(g.where("custom_op_dir"), "Custom_op_dir '" + op.dir + "' does not exist");
  }
  op.register_files = g.names("op_register_files");
  for (const std::string& f : op.register_files) {
    if (f.size() < 3 || f.compare(f.size() - 3, 3, ".py") != 0)
      fail(g.where("op_register_files"),
           "File " + f + " is not a python file. Please fix its extension or remove it");
    std::string path = cfg::abs_path(op.dir.empty() ? base_dir : op.dir, f);
    if (!fs::is_regular_file(path, ec))
      fail(g.where("op_register_files"),
           "'" + f + "' does not exist in " + (op.dir.empty() ? base_dir : op.dir));
  }
}

void parse_root(const YAML::Node& root, const std::string& base_dir, const std::string& model_type,
                Config* c, const Warn& warn) {
  if (!root.IsDefined() || root.IsNull())
    fail("yaml",
         "the config is empty; it needs the groups model_parameters, input_parameters, "
         "calibration_parameters and compiler_parameters");
  if (!root.IsMap())
    fail("yaml",
         std::string(
             "yaml file parse failed. Please double check your input: expected the parameter "
             "groups at the top level, got ") +
             node_kind(root));
  std::map<std::string, YAML::Node> groups;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (std::find(std::begin(kGroups), std::end(kGroups), key) == std::end(kGroups)) {
      std::string where = key.empty() ? "yaml" : key;
      std::string msg =
          "unknown parameter group; valid groups: model_parameters, input_parameters, "
          "calibration_parameters, compiler_parameters, custom_op";
      for (const char* gname : kGroups) {
        const auto& keys = group_keys(gname);
        if (std::find(keys.begin(), keys.end(), key) != keys.end())
          msg = std::string("is a key of ") + gname + ", not a group (check the indentation)";
      }
      fail(where, msg);
    }
    if (groups.count(key)) warn(key, "group given more than once; the last one is used");
    groups[key] = it->second;
  }
  for (const char* required : {"model_parameters", "input_parameters"})
    if (!groups.count(required))
      fail(required, std::string("Missing key: '") + required + "' (group required)");

  // The whole schema (unknown keys, group types) is checked before any
  // value, as the vendor tool validates its schema first.
  const Group model("model_parameters", groups["model_parameters"], warn);
  const Group input("input_parameters", groups["input_parameters"], warn);
  const Group calibration("calibration_parameters", groups["calibration_parameters"], warn);
  const Group custom("custom_op", groups["custom_op"], warn);
  const Group compiler("compiler_parameters", groups["compiler_parameters"], warn);
  Config out;
  out.base_dir = base_dir;
  // Group order as the vendor tool checks them.
  parse_model_parameters(model, base_dir, model_type, &out, warn);
  parse_input_parameters(input, &out, warn);
  parse_calibration_parameters(calibration, base_dir, &out, warn);
  parse_custom_op(custom, base_dir, &out);
  parse_compiler_parameters(compiler, &out, warn);
  cfg::resolve_input_sources(out, warn);
  cfg::check_input_shapes(out);
  *c = std::move(out);
}

std::string parse_error_text(const YAML::Exception& e, const std::string& text) {
  std::string msg = "yaml file parse failed. Please double check your input: line " +
                    std::to_string(e.mark.line + 1) + ", column " +
                    std::to_string(e.mark.column + 1) + ": " + e.msg;
  // PyYAML rejects tabs too, but users rarely see them in their editor.
  std::istringstream lines(text);
  std::string line;
  for (int i = 0; std::getline(lines, line); ++i)
    if (i <= e.mark.line + 1 && line.find('\t') != std::string::npos &&
        line.find_first_not_of(" \t") != std::string::npos &&
        line.find('\t') < line.find_first_not_of(" \t"))
      return msg + " (line " + std::to_string(i + 1) +
             " is indented with a tab; yaml needs spaces)";
  return msg;
}

}  // namespace

bool parse_config(const std::string& yaml_text, const std::string& base_dir, Config* config,
                  std::vector<std::string>* warnings, std::string* error,
                  const std::string& model_type) {
  std::vector<std::string> local;
  Warn warn(&local);
  try {
    std::error_code ec;
    const std::string base =
        cfg::abs_path(fs::current_path(ec).string(), base_dir.empty() ? "." : base_dir);
    YAML::Node root;
    try {
      root = YAML::Load(yaml_text);
    } catch (const YAML::Exception& e) {
      fail("yaml", parse_error_text(e, yaml_text));
    }
    parse_root(root, base, model_type, config, warn);
  } catch (const cfg::ConfigError& e) {
    if (error) *error = e.what();
    return false;
  } catch (const YAML::Exception& e) {
    // Conversions inside well-formed yaml (e.g. a mapping used as a key).
    if (error) *error = std::string("yaml: ") + e.what();
    return false;
  }
  if (warnings) warnings->insert(warnings->end(), local.begin(), local.end());
  if (error) error->clear();
  return true;
}

bool load_config(const std::string& path, Config* config, std::vector<std::string>* warnings,
                 std::string* error, const std::string& model_type) {
  std::ifstream f(path, std::ios::binary);
  std::error_code ec;
  if (!f || fs::is_directory(path, ec)) {
    if (error) *error = "config: can not open yaml file '" + path + "'";
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  fs::path abs = fs::absolute(path, ec);
  return parse_config(ss.str(), abs.parent_path().string(), config, warnings, error, model_type);
}

std::string config_error_group(const std::string& error) {
  size_t end = error.find_first_of(".:");
  std::string group = error.substr(0, end);
  for (const char* g : kGroups)
    if (group == g) return group;
  return "";
}

int config_type_channels(const std::string& type_train) {
  if (type_train == "gray") return 1;
  if (type_train == "rgb" || type_train == "bgr" || type_train == "yuv444" ||
      type_train == "yuv444_128" || type_train == "yuv_bt601_full" ||
      type_train == "yuv_bt601_video")
    return 3;
  return 0;
}

}  // namespace openbpu::cvt
