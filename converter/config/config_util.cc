// SPDX-License-Identifier: Apache-2.0
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bpu_sim/isa/march.h"
#include "converter/config/config_internal.h"

namespace openbpu::cvt::cfg {

namespace fs = std::filesystem;

void fail(const std::string& where, const std::string& what) {
  throw ConfigError(where.empty() ? what : where + ": " + what);
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::optional<long long> parse_int(const std::string& text) {
  std::string s = trim(text);
  if (s.empty()) return std::nullopt;
  size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (size_t k = i; k < s.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return std::nullopt;
  errno = 0;
  long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<double> parse_float(const std::string& text) {
  std::string s = trim(text);
  if (s.empty()) return std::nullopt;
  // strtod also reads hex floats, "inf" and "nan"; none of them is a value a
  // config means, so only decimal notation passes.
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '+' &&
        c != 'e' && c != 'E')
      return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(const std::string& text) {
  // YAML 1.1 (PyYAML, which the vendor tool uses) booleans, in any case so
  // that quoted 'True'/'False' strings work as well.
  std::string s = lower(trim(text));
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  return std::nullopt;
}

std::vector<std::optional<std::string>> split_list(const std::string& text) {
  std::string s = text;
  for (char& c : s)
    if (c == '\'' || c == '"') c = ' ';
  s = trim(s);
  std::vector<std::optional<std::string>> out;
  if (s.empty()) return out;
  if (s.back() == ';') s.pop_back();
  size_t start = 0;
  while (true) {
    size_t pos = s.find(';', start);
    std::string item =
        trim(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (item.empty() || item == "None")
      out.emplace_back(std::nullopt);
    else
      out.emplace_back(item);
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

std::optional<std::vector<float>> parse_numbers(const std::string& text) {
  std::string s = text;
  for (char& c : s)
    if (c == ',' || c == '\'' || c == '"') c = ' ';
  std::vector<float> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i == s.size()) break;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    auto v = parse_float(s.substr(i, j - i));
    if (!v) return std::nullopt;
    out.push_back(static_cast<float>(*v));
    i = j;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<std::vector<int64_t>> parse_shape(const std::string& text) {
  std::string s = lower(trim(text));
  if (s.empty()) return std::nullopt;
  std::vector<int64_t> dims;
  size_t start = 0;
  while (true) {
    size_t pos = s.find('x', start);
    auto v = parse_int(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (!v || *v <= 0) return std::nullopt;
    dims.push_back(*v);
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return dims;
}

std::string format_float(float v) {
  char buf[64];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::string py_list(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::string py_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += "'" + items[i] + "'";
  }
  return out + "]";
}

std::string abs_path(const std::string& base_dir, const std::string& path) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base_dir) / p;
  p = p.lexically_normal();
  // "dir/" normalizes to "dir/"; the vendor's os.path.abspath drops the
  // separator, which matters for the _f32 suffix rule of cal_data_dir.
  std::string s = p.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string effective_rt_type(const InputParameter& in) {
  if (in.type_rt == "nv12" && in.space_and_range == "bt601_video") return "yuv420sp_bt601_video";
  return in.type_rt;
}

namespace {

// Input types each input source can deliver (vendor input_source_support_dict).
bool source_supports(const std::string& source, const std::string& rt) {
  if (source == "pyramid" || source == "resizer")
    return rt == "nv12" || rt == "gray" || rt == "yuv420sp_bt601_video" || rt == "yuv_bt601_full";
  if (source == "ddr")
    return rt == "rgb" || rt == "bgr" || rt == "yuv444" || rt == "yuv444_128" || rt == "gray" ||
           rt == "featuremap";
  return false;
}

std::string input_label(const InputParameter& in, size_t i) {
  return "input " + std::to_string(i) + (in.name.empty() ? "" : " ('" + in.name + "')");
}

}  // namespace

void check_input_shapes(const Config& config) {
  const std::string& march = config.model_parameters.march;
  for (size_t i = 0; i < config.input_parameters.size(); ++i) {
    const InputParameter& in = config.input_parameters[i];
    const std::vector<int64_t>& s = in.shape;
    if (s.empty()) continue;
    const std::string label = input_label(in, i);
    const int channels = config_type_channels(in.type_train);
    const bool image = channels > 0;
    if (image && s.size() != 4)
      fail("input_parameters.input_shape", label + " has input_type_train '" + in.type_train +
                                               "', which needs a 4-D shape, got " + py_list(s));
    if (image) {
      const bool nhwc = in.layout_train == "NHWC";
      const int64_t c = nhwc ? s[3] : s[1];
      if (c != channels) {
        // Same diagnosis as the vendor tool: when the channel count sits at
        // the other layout's position the layout is probably wrong.
        if (nhwc && s[1] == channels)
          fail("input_parameters.input_layout_train",
               label +
                   ": Input_layout_train says NHWC but seems like layout of input_shape is NCHW: " +
                   py_list(s) + ", try use NCHW in input_layout_train");
        if (!nhwc && s[3] == channels)
          fail("input_parameters.input_layout_train",
               label +
                   ": Input_layout_train says NCHW but seems like layout of input_shape is NHWC: " +
                   py_list(s) + ", try use NHWC in input_layout_train");
        fail("input_parameters.input_shape",
             label + ": Input_type_train " + in.type_train + " input_layout_train " +
                 in.layout_train + " and input_shape " + py_list(s) + " does not seem right (" +
                 in.type_train + " has " + std::to_string(channels) + " channel" +
                 (channels == 1 ? "" : "s") + "). Please double check.");
      }
    }
    // nv12 subsamples chroma 2x2, so H and W must be even; the docs extend
    // the rule to yuv444 inputs (which the runtime feeds from nv12 sources).
    if ((in.type_rt == "nv12" || in.type_rt == "yuv444") && s.size() == 4) {
      const bool nhwc = in.layout_train == "NHWC";
      const int64_t h = nhwc ? s[1] : s[2], w = nhwc ? s[2] : s[3];
      if (h % 2 != 0 || w % 2 != 0)
        fail("input_parameters.input_shape", label + ": Invalid " + in.type_rt +
                                                 " input shape: " + py_list(s) + ", " + in.type_rt +
                                                 " type does not support odd size");
    }
    if (config.input_batch_set && s[0] != 1)
      fail("input_parameters.input_batch",
           "'input_batch' option in 'input_parameters' is configured. This option only works when "
           "the first dimension of every input is 1. Current " +
               label + " has input_shape " + py_list(s));
    if (in.input_source == "resizer" && march == "bernoulli2" && s.size() == 4) {
      const bool nhwc = in.layout_train == "NHWC";
      const int64_t hw = (nhwc ? s[1] : s[2]) * (nhwc ? s[2] : s[3]);
      if (hw >= 18432)
        fail("compiler_parameters.input_source",
             label + " uses resizer, which on bernoulli2 needs H*W < 18432 (got " +
                 std::to_string(hw) + ")");
    }
  }
}

void resolve_input_sources(Config& config, const Warn& warn) {
  const auto& configured = config.compiler_parameters.input_source;
  for (size_t i = 0; i < config.input_parameters.size(); ++i) {
    InputParameter& in = config.input_parameters[i];
    if (in.name.empty() || !in.input_source.empty()) continue;
    const std::string rt = effective_rt_type(in);
    auto it = configured.find(in.name);
    if (it == configured.end()) {
      in.input_source = source_supports("pyramid", rt) ? "pyramid" : "ddr";
      warn("compiler_parameters.input_source", "Input node " + in.name +
                                                   "'s input_source not set, it will be set to " +
                                                   in.input_source + " by default");
      continue;
    }
    // hb_compile (nash, seed 004) constrains only resizer (nv12 or gray,
    // the checks below): the UCP runtime reads every other input from
    // memory, the .hbm keeps the configured source as a record.
    const bool nash = config.model_parameters.march.rfind("nash", 0) == 0;
    if (nash && it->second != "resizer" && !source_supports(it->second, rt)) {
      warn("compiler_parameters.input_source",
           "input '" + in.name + "': input_source " + it->second + " with input_type_rt " + rt +
               " is kept as a record; the UCP runtime reads the input from memory");
      in.input_source = it->second;
      continue;
    }
    if (!source_supports(it->second, rt))
      fail("compiler_parameters.input_source",
           "Wrong input_source received. input type rt : " + rt +
               " does not support input_source " + it->second + " (input '" + in.name +
               "'; ddr takes rgb, bgr, yuv444, gray, featuremap; "
               "pyramid and resizer take nv12, gray)");
    if (it->second == "resizer" && config.model_parameters.layer_out_dump)
      fail("compiler_parameters.input_source",
           "input '" + in.name +
               "' uses resizer, which is not supported together with "
               "model_parameters.layer_out_dump: True");
    in.input_source = it->second;
  }
}


// --- quant_config (hb_compile's yaml, seed 004) ------------------------------
// The JSON file of computation types per level. What maps to our quantizer
// (int8 / int16 activations per node, per op type, for the whole model; the
// model output type) is kept; everything else is an error naming the key.
// converter/options.cc turns it into the compiler's int8 / int16 value sets.
namespace {

using nlohmann::json;

// One computation type: int8 or int16 (float16: no float16 compute here).
std::string compute_type(const std::string& where, const json& v, const isa::MarchInfo& march) {
  if (!v.is_string()) fail(where, "must be a string: int8 or int16");
  const std::string t = lower(v.get<std::string>());
  if (t == "float16")
    fail(where, "float16 computation is not supported: the BPU programs this converter emits compute int8 and "
                "int16 (use int16, or run the node on the CPU in float with node_info ON: CPU)");
  if (t != "int8" && t != "int16") fail(where, "'" + v.get<std::string>() + "' is not one of int8, int16, float16");
  if (t == "int16" && !march.int16)
    fail(where, std::string("int16 needs a march with int16 (bayes, bayes-e, nash-e, nash-m); ") + march.name +
                    " has none");
  return t;
}

void only_keys(const std::string& where, const json& obj, const std::set<std::string>& keys) {
  if (!obj.is_object()) fail(where, "must be a JSON object");
  for (const auto& [k, v] : obj.items()) {
    (void)v;
    if (!keys.count(k)) {
      std::vector<std::string> names(keys.begin(), keys.end());
      fail(where + "." + k, "unknown key; valid keys: " + join(names, ", "));
    }
  }
}

// op_config / node_config: {"<name>": {"type": "<type>"}, ...}
std::map<std::string, std::string> named_types(const std::string& where, const json& obj,
                                               const isa::MarchInfo& march) {
  std::map<std::string, std::string> out;
  if (!obj.is_object()) fail(where, "must be a JSON object of {\"<name>\": {\"type\": ...}}");
  for (const auto& [name, entry] : obj.items()) {
    const std::string w = where + "." + name;
    only_keys(w, entry, {"type"});
    if (!entry.contains("type")) fail(w, "missing \"type\"");
    out[name] = compute_type(w + ".type", entry.at("type"), march);
  }
  return out;
}

}  // namespace

QuantConfig parse_quant_config(const std::string& where, const std::string& file, const std::string& march_name) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(where, "cannot read the quant_config file '" + file + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  json doc;
  try {
    doc = json::parse(ss.str(), nullptr, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    fail(where, "'" + file + "' is not valid JSON: " + e.what());
  }
  const isa::MarchInfo* march = isa::find_march(march_name);
  if (march == nullptr) fail(where, "needs a known march");
  QuantConfig q;
  q.file = file;
  const std::string w = where + "(" + file + ")";
  only_keys(w, doc, {"model_config", "op_config", "node_config"});
  if (doc.contains("model_config")) {
    const json& m = doc.at("model_config");
    only_keys(w + ".model_config", m, {"all_node_type", "model_output_type"});
    if (m.contains("all_node_type"))
      q.all_node_type = compute_type(w + ".model_config.all_node_type", m.at("all_node_type"), *march);
    if (m.contains("model_output_type"))
      q.model_output_type = compute_type(w + ".model_config.model_output_type", m.at("model_output_type"), *march);
  }
  if (doc.contains("op_config")) q.op_types = named_types(w + ".op_config", doc.at("op_config"), *march);
  if (doc.contains("node_config")) q.node_types = named_types(w + ".node_config", doc.at("node_config"), *march);
  return q;
}

}  // namespace openbpu::cvt::cfg
