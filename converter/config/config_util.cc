// SPDX-License-Identifier: Apache-2.0
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

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

}  // namespace openbpu::cvt::cfg
