// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the config parser, the model-dependent validation and
// the echo/metadata writer. Internal to converter/config.
#ifndef OPENBPU_CONVERTER_CONFIG_CONFIG_INTERNAL_H_
#define OPENBPU_CONVERTER_CONFIG_CONFIG_INTERNAL_H_

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "converter/config/config.h"
#include "converter/ir/graph.h"

namespace openbpu::cvt::cfg {

// Validation failures unwind to the public entry points, which turn them
// into the one-line error (the converter library builds with exceptions).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ConfigError("<where>: <what>"); `where` is "group.key" or "group".
[[noreturn]] void fail(const std::string& where, const std::string& what);

// Collects warnings in the same "<where>: <what>" form (sink may be null).
class Warn {
 public:
  explicit Warn(std::vector<std::string>* sink) : sink_(sink) {}
  void operator()(const std::string& where, const std::string& what) const {
    if (sink_) sink_->push_back(where + ": " + what);
  }

 private:
  std::vector<std::string>* sink_;
};

std::string trim(const std::string& s);
std::string lower(std::string s);
std::string upper(std::string s);
std::string join(const std::vector<std::string>& items, const std::string& sep);

// Number and boolean spellings accepted from yaml text (plain or quoted).
std::optional<long long> parse_int(const std::string& s);
std::optional<double> parse_float(const std::string& s);  // finite values only
std::optional<bool> parse_bool(const std::string& s);     // True/False/yes/no/on/off, any case

// The vendor's list syntax: quotes dropped, one trailing ';' ignored, items
// split on ';' and trimmed, 'None' and empty items are placeholders (nullopt).
std::vector<std::optional<std::string>> split_list(const std::string& s);
// Per-channel numbers of one input: separated by spaces (commas tolerated).
// nullopt when an item is not a number.
std::optional<std::vector<float>> parse_numbers(const std::string& s);
// "1x3x224x224" -> dims; nullopt unless every dim is a positive integer.
std::optional<std::vector<int64_t>> parse_shape(const std::string& s);

// Shortest text that reads back as the same float ("0.017", "103.94", "1").
std::string format_float(float v);
using cvt::format_shape;  // 1x3x224x224 (converter/ir/graph.h)
std::string py_list(const std::vector<int64_t>& shape);       // [1, 3, 224, 224]
std::string py_list(const std::vector<std::string>& items);   // ['a', 'b']

// Absolute, lexically normalized path without a trailing separator.
std::string abs_path(const std::string& base_dir, const std::string& path);

// Reads and checks a quant_config JSON file (comments allowed, as the
// seed's template has them); `where` names the yaml key in errors.
QuantConfig parse_quant_config(const std::string& where, const std::string& file, const std::string& march);

// Effective runtime type the vendor's transform table uses: nv12 with
// bt601_video becomes yuv420sp_bt601_video.
std::string effective_rt_type(const InputParameter& in);

// Rules that need an input's shape (run for every input whose shape is
// known): channel count vs input_type_train/input_layout_train, even H/W for
// nv12/yuv444, first dim 1 with input_batch, resizer size on bernoulli2.
void check_input_shapes(const Config& config);
// Gives each named input its input_source (configured or the default for
// its input_type_rt) and checks the source supports the type.
void resolve_input_sources(Config& config, const Warn& warn);

}  // namespace openbpu::cvt::cfg

#endif  // OPENBPU_CONVERTER_CONFIG_CONFIG_INTERNAL_H_
