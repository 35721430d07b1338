// SPDX-License-Identifier: Apache-2.0
// The `hb_mapper makertbin` yaml config: parsing, validation, normalization.
//
// Configs written for the vendor tool must work unchanged, so the parser
// accepts every spelling the vendor's documentation and sample configs use
// ('a; b' lists, 'None' placeholders, per-channel numbers with or without
// quotes, True/False as yaml booleans or strings, numbers as strings) and
// the closed schema of the vendor's config checker (unknown keys fail).
// Validation runs in two steps because part of it needs the float model:
//   1. load_config / parse_config: everything the yaml alone decides;
//   2. validate_with_model: input names, counts and shapes against the model.
// Errors are one line, "<group>.<key>: <what is wrong>", so the log can print
// "Parse '<group>' failed!" the way the vendor tool does (config_error_group).
#ifndef OPENBPU_CONVERTER_CONFIG_CONFIG_H_
#define OPENBPU_CONVERTER_CONFIG_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace openbpu::cvt {

// One entry of model_parameters.node_info (set_node_data_type entries land
// here too, as OutputType).
struct NodeInfo {
  std::string on;                          // "", "BPU" or "CPU"
  std::string input_type;                  // "", "int8" or "int16": every input
  std::map<int, std::string> input_types;  // InputType<k>: input k only
  std::string output_type;                 // "", "int8" or "int16": every output

  bool operator==(const NodeInfo& o) const {
    return on == o.on && input_type == o.input_type && input_types == o.input_types &&
           output_type == o.output_type;
  }
};

struct ModelParameters {
  std::string model_type;  // "onnx" or "caffe" (from the key that is present)
  std::string onnx_model;  // absolute paths (relative ones resolved against the yaml's dir)
  std::string caffe_model;
  std::string prototxt;
  std::string march;  // canonical name: bernoulli2, bayes, bayes-e, nash-e, nash-m
  std::string output_model_file_prefix = "model";
  std::string working_dir;  // absolute; default "<yaml dir>/model_output" (not created here)
  bool layer_out_dump = false;
  std::string output_layout;  // deprecated; "", "NCHW" or "NHWC"
  std::vector<std::string> output_nodes;
  std::vector<std::string> remove_node_type;  // order matters (removed one after another)
  std::vector<std::string> remove_node_name;
  std::string debug_mode;  // "" or "dump_calibration_data"
  // Node name -> settings; node_info entries over set_node_data_type ones.
  std::map<std::string, NodeInfo> node_info;
};

struct InputParameter {
  std::string name;          // "" until known (single-input model without input_name)
  std::string type_train;    // rgb, bgr, yuv444, gray, featuremap (+ vendor internal types)
  std::string layout_train;  // NCHW or NHWC
  std::string type_rt;       // nv12, yuv444, rgb, bgr, gray, featuremap (+ internal types)
  std::string layout_rt;     // NCHW, NHWC, or "" for nv12 (no layout)
  std::string space_and_range = "regular";  // regular or bt601_video (nv12 only)
  std::vector<int64_t> shape;  // empty = read from the model (validate_with_model fills it)
  int batch = 1;               // input_batch (one value for every input)
  std::string norm_type = "no_preprocess";
  std::vector<float> mean;  // empty, one value, or one per channel
  std::vector<float> scale;
  std::string cal_data_dir;   // absolute; "" when the calibration type needs no data
  std::string cal_data_type;  // uint8, float32, int32, int16, int8 ("" with cal_data_dir "")
  bool cal_data_type_inferred = false;  // from the _f32 suffix rule, not the yaml
  std::string input_source;             // ddr, pyramid, resizer; "" until the name is known
};

// quant_config (hb_compile, seed 004): computation types at three levels,
// read from its JSON file; the smaller level wins (node > op type > model).
// Types are "int8" or "int16" (float16 is rejected: no float16 compute).
struct QuantConfig {
  std::string file;                               // absolute; empty: none
  std::string all_node_type;                      // model_config.all_node_type
  std::string model_output_type;                  // model_config.model_output_type
  std::map<std::string, std::string> op_types;    // op_config: ONNX op type -> type
  std::map<std::string, std::string> node_types;  // node_config: node name -> type
};

struct CalibrationParameters {
  std::string calibration_type = "default";  // default, mix, kl, max, load, skip
  bool preprocess_on = false;                // deprecated
  bool per_channel = false;
  std::optional<float> max_percentile;  // 0..1, used by "max"
  std::vector<std::string> run_on_cpu;  // node names, checked by the converter
  std::vector<std::string> run_on_bpu;
  std::vector<std::string> optimization;  // e.g. set_model_output_int8, run_fast
  std::optional<bool> enable_int16;       // J5-era legacy switch
  // Ours: the accuracy budget (mean output cosine to the float model on the
  // scoring samples); int16 promotion to reach it, makertbin fails without.
  std::optional<double> min_output_cosine;
  // Ours: True tries cross-layer equalization (default/mix, int8
  // activations) as a calibration candidate, kept when the scoring samples
  // measure it better; off unless set (docs/converter.md).
  std::optional<bool> cross_layer_equalization;
  QuantConfig quant_config;

  // Whether the calibration type reads calibration data (all but load/skip).
  bool needs_data() const { return calibration_type != "load" && calibration_type != "skip"; }
};

struct CompilerParameters {
  std::string compile_mode = "latency";  // latency, bandwidth, balance
  std::optional<int> balance_factor;     // 0..100, with balance only
  bool debug = true;                     // the vendor's code default (its X3 docs say False)
  int core_num = 1;                      // 2 only on bernoulli2
  std::string optimize_level = "O0";     // O0..O3
  std::map<std::string, std::string> input_source;  // as configured: input name -> source
  int64_t max_time_per_fc = 0;                      // 0 or 1000..4294967295 (us)
  std::optional<int> jobs;
  std::optional<int> advice;  // us threshold for op-time diagnostics
  std::string ability_entry;  // undocumented pass-through
};

struct CustomOp {
  bool enabled = false;                     // the group is present and not empty
  std::string method;                       // "register"
  std::string dir;                          // absolute
  std::vector<std::string> register_files;  // file names inside dir
};

// A model input as the float model declares it (-1 or 0 = dynamic dimension).
struct ModelInput {
  std::string name;
  std::vector<int64_t> shape;
};

struct Config {
  ModelParameters model_parameters;
  std::vector<InputParameter> input_parameters;  // one per model input, in config order
  bool input_batch_set = false;                  // input_batch was configured
  CalibrationParameters calibration_parameters;
  CompilerParameters compiler_parameters;
  CustomOp custom_op;

  // --fast-perf: inputs are built from the model in validate_with_model.
  bool fast_perf = false;
  std::vector<std::pair<std::string, std::vector<int64_t>>> fast_perf_shapes;  // --input-shape
  std::string base_dir;  // absolute directory relative paths were resolved against

  // The normalized config as yaml (every default explicit, paths absolute,
  // lists in the vendor's 'a; b' syntax); parse_config(echo_yaml()) gives the
  // same Config. Used for the "Dump config:" log and the model's config echo.
  std::string echo_yaml() const;
  // The vendor's model metadata keys (TOOLS.md section 5): MARCH, INPUT_NAMES,
  // INPUT_TYPE_RT, ... Lists are ';'-joined per input; per-channel numbers
  // inside one input are ','-joined; booleans are "True"/"False".
  std::map<std::string, std::string> metadata() const;
};

// Reads and validates a yaml file; relative paths resolve against its
// directory. `model_type` ("onnx", "caffe" or "" for any) is hb_mapper's
// --model-type and must agree with the model key of the yaml. Returns false
// with a one-line message in *error. Warnings (deprecated keys, ignored
// values, defaults the vendor tool announces) are appended to *warnings
// (may be null).
bool load_config(const std::string& path, Config* config, std::vector<std::string>* warnings,
                 std::string* error, const std::string& model_type = "");
// Same from yaml text; base_dir is the directory relative paths resolve against.
bool parse_config(const std::string& yaml_text, const std::string& base_dir, Config* config,
                  std::vector<std::string>* warnings, std::string* error,
                  const std::string& model_type = "");

// Second validation step, once the float model's inputs are known: input
// names exist and counts match, missing names/shapes are taken from the
// model (dynamic dimensions require input_shape), user shapes that differ
// from the model warn, and every shape-dependent rule runs (channel count vs
// input_type_train/input_layout_train, even H/W for nv12/yuv444,
// input_batch needs a first dim of 1, input_source per input). For a
// --fast-perf config it builds the inputs from the model.
bool validate_with_model(Config& config, const std::vector<ModelInput>& inputs_from_model,
                         std::vector<std::string>* warnings, std::string* error);

// The built-in config of `hb_mapper makertbin --fast-perf`: featuremap
// inputs without preprocessing, skip calibration, the removable head/tail
// CPU ops removed, O3. input_shapes are the --input-shape pairs (only
// dynamic dimensions may change; a dynamic first dimension defaults to 1).
// Model path, march and shapes are checked by validate_with_model, which
// must run next. prototxt is the --proto file of a caffe model.
Config make_fast_perf_config(
    const std::string& model_path, const std::string& march, const std::string& model_type,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& input_shapes,
    const std::string& prototxt = "");

// The group an error message is about ("model_parameters", ...; "" if none),
// for the vendor's "Parse '<group>' failed!" log line.
std::string config_error_group(const std::string& error);

// Channels implied by an input_type_train (rgb/bgr/yuv444 3, gray 1, else 0).
int config_type_channels(const std::string& type_train);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_CONFIG_CONFIG_H_
