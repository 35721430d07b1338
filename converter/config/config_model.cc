// SPDX-License-Identifier: Apache-2.0
// The config rules that need the float model's inputs, and the built-in
// config of --fast-perf.
#include <filesystem>

#include "bpu_sim/isa/march.h"
#include "converter/config/config_internal.h"

namespace openbpu::cvt {

using cfg::fail;
using cfg::Warn;

namespace {

namespace fs = std::filesystem;

bool is_dynamic(const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d <= 0) return true;  // ONNX '?'/-1 and the vendor's 0
  return false;
}

std::vector<std::string> model_names(const std::vector<ModelInput>& model) {
  std::vector<std::string> names;
  for (const ModelInput& m : model) names.push_back(m.name);
  return names;
}

const ModelInput* find_input(const std::vector<ModelInput>& model, const std::string& name) {
  for (const ModelInput& m : model)
    if (m.name == name) return &m;
  return nullptr;
}

// Names from the model when the yaml has none, counts, existence, shapes.
void match_inputs(Config& c, const std::vector<ModelInput>& model, const Warn& warn) {
  std::vector<InputParameter>& ins = c.input_parameters;
  const std::string names = cfg::py_list(model_names(model));
  if (model.empty()) fail("input_parameters", "the model has no inputs");
  bool named = false;
  for (const InputParameter& in : ins) named = named || !in.name.empty();
  if (!named) {
    if (model.size() > 1)
      fail("input_parameters.input_name",
           "Model has more than one input! It is required to explicitly give input names to "
           "ensure sequence is correct. Model inputs: " +
               names);
    if (ins.size() != model.size())
      fail("input_parameters.input_type_rt", "the config describes " + std::to_string(ins.size()) +
                                                 " inputs but the model has " +
                                                 std::to_string(model.size()) + ": " + names);
    ins[0].name = model[0].name;
  } else {
    if (ins.size() != model.size())
      fail("input_parameters.input_name",
           "Wrong num of input names received. Num of input name given: " +
               std::to_string(ins.size()) + ", while model file has " +
               std::to_string(model.size()) + " inputs: " + names);
    for (const InputParameter& in : ins)
      if (!find_input(model, in.name))
        fail("input_parameters.input_name",
             "Input name does not exist in model file: " + in.name + ". name list: " + names);
  }

  for (size_t i = 0; i < ins.size(); ++i) {
    InputParameter& in = ins[i];
    const std::vector<int64_t>& ms = find_input(model, in.name)->shape;
    if (in.shape.empty()) {
      if (is_dynamic(ms))
        fail("input_parameters.input_shape",
             "The input_shape " + cfg::py_list(ms) + " of the model input '" + in.name +
                 "' is a dynamic shape. Please configure the 'input_shape' option in "
                 "'input_parameters'");
      in.shape = ms;
      continue;
    }
    // Filling a dynamic dimension is what input_shape is for; only a
    // changed static dimension (or rank) overrides the model.
    bool differs = in.shape.size() != ms.size();
    for (size_t d = 0; !differs && d < ms.size(); ++d) differs = ms[d] > 0 && ms[d] != in.shape[d];
    if (differs)
      warn("input_parameters.input_shape",
           "For input " + std::to_string(i) + ": user input shape: " + cfg::py_list(in.shape) +
               " is different from model file input shape: " + cfg::py_list(ms) +
               ". Using user input info");
  }
}

std::string check_file(const std::string& option, const std::string& path, const std::string& ext) {
  if (path.size() < ext.size() || path.compare(path.size() - ext.size(), ext.size(), ext) != 0)
    fail(option, "file invalid: '" + path + "'. It should be a '" + ext + "' file");
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) fail(option, "Can not find file given: " + path);
  return path;
}

// --fast-perf: the CLI values, then one featuremap input per model input
// with the model's shape; --input-shape may only fill dynamic dimensions and
// a dynamic batch dimension defaults to 1 (as the vendor tool does).
void build_fast_perf(Config& c, const std::vector<ModelInput>& model, const Warn& warn) {
  ModelParameters& m = c.model_parameters;
  const isa::MarchInfo* info = isa::find_march(m.march);
  if (!info) {
    int count = 0;
    const isa::MarchInfo* all = isa::all_marches(&count);
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.push_back(all[i].name);
    fail("--march", "'" + m.march + "' is not one of " + cfg::join(names, ", "));
  }
  m.march = info->name;
  if (m.model_type == "onnx") {
    check_file("--model", m.onnx_model, ".onnx");
  } else if (m.model_type == "caffe") {
    check_file("--model", m.caffe_model, ".caffemodel");
    if (m.prototxt.empty()) fail("--proto", "please specify caffe proto file!");
    check_file("--proto", m.prototxt, ".prototxt");
  } else {
    fail("--model-type", "'" + m.model_type + "' is not one of onnx, caffe");
  }
  if (model.empty()) fail("--model", "the model has no inputs");

  const std::string names = cfg::py_list(model_names(model));
  std::vector<std::vector<int64_t>> shapes;
  for (const ModelInput& mi : model) shapes.push_back(mi.shape);
  for (const auto& [name, shape] : c.fast_perf_shapes) {
    size_t idx = 0;
    while (idx < model.size() && model[idx].name != name) ++idx;
    if (idx == model.size())
      fail("--input-shape", "Your input name " + name + " not in model inputs " + names);
    const std::vector<int64_t>& ms = model[idx].shape;
    if (shape.size() != ms.size())
      fail("--input-shape", "Input shape " + cfg::py_list(shape) +
                                " length not equal to model input shape " + cfg::py_list(ms));
    for (size_t d = 0; d < ms.size(); ++d)
      if (shape[d] <= 0 || (ms[d] > 0 && ms[d] != shape[d]))
        fail("--input-shape", "Your input shape " + cfg::py_list(shape) +
                                  " but model input shape is " + cfg::py_list(ms) +
                                  ", we only supports modifying the dim value of a dynamic batch");
    shapes[idx] = shape;
  }
  c.input_parameters.clear();
  for (size_t i = 0; i < model.size(); ++i) {
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      if (shapes[i][d] > 0) continue;
      if (d != 0)
        fail("--input-shape", "The input " + model[i].name + " has the dynamic input_shape " +
                                  cfg::py_list(model[i].shape) +
                                  " but the dynamic batch dim is not the first dim, please "
                                  "configure the input_shape option and specify all the dynamic "
                                  "dims of this input");
      warn("--input-shape", "The input " + model[i].name +
                                " has dynamic input_shape, the first dim of the " +
                                cfg::py_list(model[i].shape) + " will be set to 1");
      shapes[i][d] = 1;
    }
    InputParameter in;
    in.name = model[i].name;
    in.type_train = in.type_rt = "featuremap";
    in.layout_train = in.layout_rt = "NCHW";
    in.shape = shapes[i];
    c.input_parameters.push_back(in);
  }
}

}  // namespace

bool validate_with_model(Config& config, const std::vector<ModelInput>& inputs_from_model,
                         std::vector<std::string>* warnings, std::string* error) {
  std::vector<std::string> local;
  Warn warn(&local);
  Config c = config;  // the caller's config changes only on success
  try {
    if (c.fast_perf)
      build_fast_perf(c, inputs_from_model, warn);
    else
      match_inputs(c, inputs_from_model, warn);
    for (const auto& entry : c.compiler_parameters.input_source)
      if (!find_input(inputs_from_model, entry.first))
        fail("compiler_parameters.input_source",
             "Invalid input_source setting received, input name in 'input_source': '" +
                 entry.first + "' does not exist in model input names: " +
                 cfg::py_list(model_names(inputs_from_model)));
    cfg::resolve_input_sources(c, warn);
    cfg::check_input_shapes(c);
  } catch (const cfg::ConfigError& e) {
    if (error) *error = e.what();
    return false;
  }
  config = std::move(c);
  if (warnings) warnings->insert(warnings->end(), local.begin(), local.end());
  if (error) error->clear();
  return true;
}

Config make_fast_perf_config(
    const std::string& model_path, const std::string& march, const std::string& model_type,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& input_shapes,
    const std::string& prototxt) {
  Config c;
  std::error_code ec;
  c.base_dir = fs::current_path(ec).string();
  c.fast_perf = true;
  c.fast_perf_shapes = input_shapes;

  ModelParameters& m = c.model_parameters;
  m.model_type = cfg::lower(model_type);
  const std::string abs = cfg::abs_path(c.base_dir, model_path);
  if (m.model_type.empty())
    m.model_type = fs::path(model_path).extension() == ".caffemodel" ? "caffe" : "onnx";
  if (m.model_type == "caffe") {
    m.caffe_model = abs;
    if (!prototxt.empty()) m.prototxt = cfg::abs_path(c.base_dir, prototxt);
  } else {
    m.onnx_model = abs;
  }
  m.march = cfg::lower(march.empty() ? "bayes" : march);  // hb_mapper's --march default
  m.output_model_file_prefix = fs::path(model_path).stem().string();
  if (m.output_model_file_prefix.empty()) m.output_model_file_prefix = "model";
  m.working_dir = cfg::abs_path(c.base_dir, "./model_output");
  // The CPU ops that can sit at the model's head or tail; removing them
  // leaves the BPU part, which is what a performance estimate measures.
  m.remove_node_type = {"Quantize", "Transpose", "Dequantize", "Cast", "Reshape"};
  if (m.march != "bernoulli2") m.remove_node_type.push_back("Softmax");

  c.calibration_parameters.calibration_type = "skip";
  c.calibration_parameters.optimization = {"run_fast"};
  c.compiler_parameters.compile_mode = "latency";
  c.compiler_parameters.optimize_level = "O3";
  c.compiler_parameters.debug = true;
  c.compiler_parameters.core_num = 1;
  return c;
}

}  // namespace openbpu::cvt
