// SPDX-License-Identifier: Apache-2.0
// The hb_mapper makertbin yaml: the vendor templates parse unchanged, every
// accepted spelling, one test per rejected setting (the message must name
// the group and key), the model-dependent step, --fast-perf, and the
// normalized echo reading back to the same Config.
#include "converter/config/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace openbpu::cvt {
namespace {

namespace fs = std::filesystem;

// A scratch directory with the files configs point at: dummy models,
// calibration directories and a custom op file.
class ConfigTest : public ::testing::Test {
 protected:
  // One scratch directory for the whole suite (creating it per test costs
  // more than the tests); tests only add files under their own names.
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "openbpu_config_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    for (const char* f :
         {"model.onnx", "model.caffemodel", "model.prototxt", "custom_op/sample_custom.py"})
      touch(f);
    for (const char* d : {"calibration_data", "calibration_data_rgb_f32",
                          "calibration_data_feature", "cal_gray", "sub"})
      fs::create_directories(dir_ / d);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static void touch(const std::string& rel) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << "x";
  }
  std::string path(const std::string& rel) const {
    return (dir_ / rel).lexically_normal().string();
  }

  // Copies a sample yaml next to the dummy files and loads it.
  bool load_sample(const std::string& name, Config* c) {
    fs::copy_file(fs::path(OPENBPU_CONFIG_SAMPLES) / name, dir_ / name,
                  fs::copy_options::overwrite_existing);
    warnings_.clear();
    return load_config(path(name), c, &warnings_, &error_);
  }
  bool parse(const std::string& text, Config* c, const std::string& model_type = "") {
    warnings_.clear();
    return parse_config(text, dir_.string(), c, &warnings_, &error_, model_type);
  }
  // Parses text that must be rejected and returns the message.
  std::string error_of(const std::string& text) {
    Config c;
    EXPECT_FALSE(parse(text, &c)) << text;
    return error_;
  }
  bool warned(const std::string& needle) const {
    for (const std::string& w : warnings_)
      if (w.find(needle) != std::string::npos) return true;
    return false;
  }

  static fs::path dir_;
  std::vector<std::string> warnings_;
  std::string error_;
};

fs::path ConfigTest::dir_;

// A minimal valid X5 config, edited per test.
class Yaml {
 public:
  Yaml() {
    set("model_parameters", "onnx_model", "'model.onnx'");
    set("model_parameters", "march", "'bayes-e'");
    set("input_parameters", "input_type_rt", "'nv12'");
    set("input_parameters", "input_type_train", "'rgb'");
    set("input_parameters", "input_layout_train", "'NCHW'");
    set("input_parameters", "norm_type", "'data_scale'");
    set("input_parameters", "scale_value", "0.003921568627451");
    set("calibration_parameters", "cal_data_dir", "'./calibration_data_rgb_f32'");
    set("compiler_parameters", "optimize_level", "'O3'");
  }
  Yaml& set(const std::string& group, const std::string& key, const std::string& value) {
    for (auto& g : groups_)
      if (g.first == group) {
        for (auto& kv : g.second)
          if (kv.first == key) {
            kv.second = value;
            return *this;
          }
        g.second.emplace_back(key, value);
        return *this;
      }
    groups_.push_back({group, {{key, value}}});
    return *this;
  }
  Yaml& erase(const std::string& group, const std::string& key) {
    for (auto& g : groups_)
      for (size_t i = 0; i < g.second.size(); ++i)
        if (g.first == group && g.second[i].first == key) g.second.erase(g.second.begin() + i);
    return *this;
  }
  std::string str() const {
    std::string s;
    for (const auto& g : groups_) {
      s += g.first + ":\n";
      for (const auto& kv : g.second) s += "  " + kv.first + ": " + kv.second + "\n";
    }
    return s;
  }

 private:
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> groups_;
};

std::vector<float> f(std::initializer_list<float> v) { return v; }

// Field by field, so a field echo_yaml forgets shows up here.
void expect_same(const Config& a, const Config& b) {
  const ModelParameters &ma = a.model_parameters, &mb = b.model_parameters;
  EXPECT_EQ(ma.model_type, mb.model_type);
  EXPECT_EQ(ma.onnx_model, mb.onnx_model);
  EXPECT_EQ(ma.caffe_model, mb.caffe_model);
  EXPECT_EQ(ma.prototxt, mb.prototxt);
  EXPECT_EQ(ma.march, mb.march);
  EXPECT_EQ(ma.output_model_file_prefix, mb.output_model_file_prefix);
  EXPECT_EQ(ma.working_dir, mb.working_dir);
  EXPECT_EQ(ma.layer_out_dump, mb.layer_out_dump);
  EXPECT_EQ(ma.output_layout, mb.output_layout);
  EXPECT_EQ(ma.output_nodes, mb.output_nodes);
  EXPECT_EQ(ma.remove_node_type, mb.remove_node_type);
  EXPECT_EQ(ma.remove_node_name, mb.remove_node_name);
  EXPECT_EQ(ma.debug_mode, mb.debug_mode);
  EXPECT_TRUE(ma.node_info == mb.node_info);
  ASSERT_EQ(a.input_parameters.size(), b.input_parameters.size());
  for (size_t i = 0; i < a.input_parameters.size(); ++i) {
    const InputParameter &x = a.input_parameters[i], &y = b.input_parameters[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type_train, y.type_train);
    EXPECT_EQ(x.layout_train, y.layout_train);
    EXPECT_EQ(x.type_rt, y.type_rt);
    EXPECT_EQ(x.layout_rt, y.layout_rt);
    EXPECT_EQ(x.space_and_range, y.space_and_range);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.batch, y.batch);
    EXPECT_EQ(x.norm_type, y.norm_type);
    EXPECT_EQ(x.mean, y.mean);
    EXPECT_EQ(x.scale, y.scale);
    EXPECT_EQ(x.cal_data_dir, y.cal_data_dir);
    EXPECT_EQ(x.cal_data_type, y.cal_data_type);
    EXPECT_EQ(x.cal_data_type_inferred, y.cal_data_type_inferred);
    EXPECT_EQ(x.input_source, y.input_source);
  }
  EXPECT_EQ(a.input_batch_set, b.input_batch_set);
  const CalibrationParameters &ca = a.calibration_parameters, &cb = b.calibration_parameters;
  EXPECT_EQ(ca.calibration_type, cb.calibration_type);
  EXPECT_EQ(ca.preprocess_on, cb.preprocess_on);
  EXPECT_EQ(ca.per_channel, cb.per_channel);
  EXPECT_EQ(ca.max_percentile, cb.max_percentile);
  EXPECT_EQ(ca.run_on_cpu, cb.run_on_cpu);
  EXPECT_EQ(ca.run_on_bpu, cb.run_on_bpu);
  EXPECT_EQ(ca.optimization, cb.optimization);
  EXPECT_EQ(ca.enable_int16, cb.enable_int16);
  EXPECT_EQ(ca.quant_config.file, cb.quant_config.file);
  EXPECT_EQ(ca.quant_config.all_node_type, cb.quant_config.all_node_type);
  EXPECT_EQ(ca.quant_config.model_output_type, cb.quant_config.model_output_type);
  EXPECT_EQ(ca.quant_config.op_types, cb.quant_config.op_types);
  EXPECT_EQ(ca.quant_config.node_types, cb.quant_config.node_types);
  const CompilerParameters &pa = a.compiler_parameters, &pb = b.compiler_parameters;
  EXPECT_EQ(pa.compile_mode, pb.compile_mode);
  EXPECT_EQ(pa.balance_factor, pb.balance_factor);
  EXPECT_EQ(pa.debug, pb.debug);
  EXPECT_EQ(pa.core_num, pb.core_num);
  EXPECT_EQ(pa.optimize_level, pb.optimize_level);
  EXPECT_EQ(pa.max_time_per_fc, pb.max_time_per_fc);
  EXPECT_EQ(pa.jobs, pb.jobs);
  EXPECT_EQ(pa.advice, pb.advice);
  EXPECT_EQ(pa.ability_entry, pb.ability_entry);
  EXPECT_EQ(a.custom_op.enabled, b.custom_op.enabled);
  EXPECT_EQ(a.custom_op.method, b.custom_op.method);
  EXPECT_EQ(a.custom_op.dir, b.custom_op.dir);
  EXPECT_EQ(a.custom_op.register_files, b.custom_op.register_files);
  EXPECT_EQ(a.metadata(), b.metadata());
  EXPECT_EQ(a.echo_yaml(), b.echo_yaml());
}

// echo_yaml() parses back (from another directory: paths are absolute now)
// to the same Config.
void expect_echo_round_trip(const Config& c) {
  Config back;
  std::string error;
  ASSERT_TRUE(parse_config(c.echo_yaml(), "/", &back, nullptr, &error)) << error << "\n"
                                                                        << c.echo_yaml();
  // Names known only from the model come back as configured ones.
  expect_same(c, back);
}

// ---------------------------------------------------------------- templates

TEST_F(ConfigTest, X3DocTemplateParses) {
  Config c;
  ASSERT_TRUE(load_sample("x3_doc_template.yaml", &c)) << error_;
  const ModelParameters& m = c.model_parameters;
  EXPECT_EQ(m.model_type, "onnx");
  EXPECT_EQ(m.onnx_model, path("model.onnx"));
  EXPECT_EQ(m.march, "bernoulli2");
  EXPECT_EQ(m.output_model_file_prefix, "mobilenetv1");
  EXPECT_EQ(m.working_dir, path("model_output_dir"));
  EXPECT_FALSE(m.layer_out_dump);
  EXPECT_EQ(m.output_nodes, std::vector<std::string>{"fc7"});
  EXPECT_EQ(m.remove_node_type, std::vector<std::string>{"Dequantize"});
  EXPECT_EQ(m.remove_node_name, std::vector<std::string>{"fc7_dequantize"});
  ASSERT_EQ(c.input_parameters.size(), 1u);
  const InputParameter& in = c.input_parameters[0];
  EXPECT_EQ(in.name, "data");
  EXPECT_EQ(in.type_train, "bgr");
  EXPECT_EQ(in.layout_train, "NCHW");
  EXPECT_EQ(in.shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(in.batch, 1);
  EXPECT_TRUE(c.input_batch_set);
  EXPECT_EQ(in.norm_type, "data_mean_and_scale");
  EXPECT_EQ(in.mean, f({103.94f, 116.78f, 123.68f}));
  EXPECT_EQ(in.scale, f({0.017f}));
  EXPECT_EQ(in.type_rt, "yuv444");
  EXPECT_EQ(in.space_and_range, "regular");
  EXPECT_EQ(in.layout_rt, "NHWC");
  EXPECT_EQ(in.cal_data_dir, path("calibration_data"));
  EXPECT_EQ(in.cal_data_type, "float32");
  EXPECT_FALSE(in.cal_data_type_inferred);
  EXPECT_EQ(in.input_source, "ddr");  // yuv444 comes from memory
  EXPECT_EQ(c.calibration_parameters.calibration_type, "default");
  EXPECT_EQ(c.compiler_parameters.compile_mode, "latency");
  EXPECT_FALSE(c.compiler_parameters.debug);
  EXPECT_EQ(c.compiler_parameters.core_num, 1);
  EXPECT_EQ(c.compiler_parameters.optimize_level, "O3");
  EXPECT_FALSE(c.custom_op.enabled);
  // float32 data in a directory without the _f32 suffix: the key wins.
  EXPECT_TRUE(warned(
      "calibration_parameters.cal_data_type: The calibration dir name suffix is not the same"));
  expect_echo_round_trip(c);
}

TEST_F(ConfigTest, X3DocTemplateCaffeParses) {
  Config c;
  ASSERT_TRUE(load_sample("x3_doc_template_caffe.yaml", &c)) << error_;
  EXPECT_EQ(c.model_parameters.model_type, "caffe");
  EXPECT_EQ(c.model_parameters.caffe_model, path("model.caffemodel"));
  EXPECT_EQ(c.model_parameters.prototxt, path("model.prototxt"));
  EXPECT_TRUE(c.model_parameters.onnx_model.empty());
  EXPECT_EQ(c.metadata().at("CAFFE_MODEL"), path("model.caffemodel"));
  EXPECT_EQ(c.metadata().count("ONNX_MODEL"), 0u);
  expect_echo_round_trip(c);
}

TEST_F(ConfigTest, X5DocTemplateParses) {
  Config c;
  ASSERT_TRUE(load_sample("x5_doc_template.yaml", &c)) << error_;
  EXPECT_EQ(c.model_parameters.march, "bayes-e");
  const auto& ni = c.model_parameters.node_info;
  ASSERT_EQ(ni.size(), 3u);
  const NodeInfo& conv = ni.at("/model.0/conv/Conv");
  EXPECT_EQ(conv.on, "BPU");
  EXPECT_EQ(conv.input_type, "int16");
  EXPECT_EQ(conv.output_type, "int16");
  const InputParameter& in = c.input_parameters[0];
  EXPECT_EQ(in.type_rt, "nv12");
  EXPECT_EQ(in.layout_rt, "");
  EXPECT_EQ(in.input_source, "pyramid");
  EXPECT_EQ(c.calibration_parameters.max_percentile, 1.0f);
  EXPECT_EQ(c.calibration_parameters.optimization,
            std::vector<std::string>{"set_model_output_int16"});
  EXPECT_EQ(c.compiler_parameters.max_time_per_fc, 1000);
  EXPECT_EQ(c.compiler_parameters.jobs, 8);
  EXPECT_EQ(c.compiler_parameters.input_source.at("data"), "pyramid");
  expect_echo_round_trip(c);
}

// Seed 004's hb_compile template with only paths changed: every key of it
// parses; J6 has no input_layout_rt (images NHWC at run time).
TEST_F(ConfigTest, J6DocTemplateParses) {
  Config c;
  ASSERT_TRUE(load_sample("j6_doc_template.yaml", &c)) << error_;
  const ModelParameters& m = c.model_parameters;
  EXPECT_EQ(m.march, "nash-e");
  EXPECT_EQ(m.output_nodes, std::vector<std::string>{"OP_name"});
  EXPECT_EQ(m.remove_node_name, std::vector<std::string>{"OP_name"});
  ASSERT_EQ(c.input_parameters.size(), 1u);
  const InputParameter& in = c.input_parameters[0];
  EXPECT_EQ(in.type_rt, "yuv444");
  EXPECT_EQ(in.layout_rt, "NHWC");
  EXPECT_EQ(in.space_and_range, "regular");
  EXPECT_EQ(c.calibration_parameters.calibration_type, "kl");
  EXPECT_EQ(c.compiler_parameters.input_source.at("data"), "pyramid");
  EXPECT_EQ(c.compiler_parameters.max_time_per_fc, 1000);
  EXPECT_EQ(c.compiler_parameters.jobs, 8);
  EXPECT_TRUE(c.calibration_parameters.quant_config.file.empty());
  expect_echo_round_trip(c);
  // A featuremap input takes its training layout; hb_mapper's marches still
  // need input_layout_rt.
  Config f;
  ASSERT_TRUE(parse(Yaml().set("model_parameters", "march", "'nash-m'").set("input_parameters", "input_type_rt", "'featuremap'")
                        .set("input_parameters", "input_type_train", "'featuremap'").set("input_parameters", "input_layout_train", "'NHWC'")
                        .set("input_parameters", "norm_type", "'no_preprocess'").erase("input_parameters", "scale_value").str(), &f))
      << error_;
  EXPECT_EQ(f.input_parameters[0].layout_rt, "NHWC");
  EXPECT_NE(error_of(Yaml().set("input_parameters", "input_type_rt", "'rgb'").str()).find("Input_layout_rt missing"),
            std::string::npos);
}

// cross_layer_equalization (ours): unset by default, read as a boolean,
// echoed; a warning when the calibration type does not use it.
TEST_F(ConfigTest, CrossLayerEqualizationIsAnOptIn) {
  Config c;
  ASSERT_TRUE(parse(Yaml().str(), &c)) << error_;
  EXPECT_FALSE(c.calibration_parameters.cross_layer_equalization.has_value());
  ASSERT_TRUE(parse(Yaml().set("calibration_parameters", "cross_layer_equalization", "True").str(), &c)) << error_;
  EXPECT_EQ(c.calibration_parameters.cross_layer_equalization, std::optional<bool>(true));
  EXPECT_FALSE(warned("cross_layer_equalization"));
  expect_echo_round_trip(c);
  ASSERT_TRUE(parse(Yaml().set("calibration_parameters", "calibration_type", "'kl'")
                        .set("calibration_parameters", "cross_layer_equalization", "True").str(), &c)) << error_;
  EXPECT_TRUE(warned("calibration_parameters.cross_layer_equalization: only used when calibration_type is default or mix"));
}

// quant_config (seed 004's JSON template, comments included) maps to
// per-level types; what has no counterpart is an error naming it.
TEST_F(ConfigTest, J6QuantConfigParsesAndRejectsWhatDoesNotMap) {
  fs::copy_file(fs::path(OPENBPU_CONFIG_SAMPLES) / "j6_quant_config.json", dir_ / "j6_quant_config.json",
                fs::copy_options::overwrite_existing);
  const auto yaml = [](const std::string& march, const std::string& file) {
    return Yaml().set("model_parameters", "march", "'" + march + "'")
        .set("calibration_parameters", "quant_config", "'" + file + "'").str();
  };
  Config c;
  ASSERT_TRUE(parse(yaml("nash-e", "j6_quant_config.json"), &c)) << error_;
  const QuantConfig& q = c.calibration_parameters.quant_config;
  EXPECT_EQ(q.file, path("j6_quant_config.json"));
  EXPECT_EQ(q.all_node_type, "int16");
  EXPECT_EQ(q.model_output_type, "int8");
  EXPECT_EQ(q.op_types, (std::map<std::string, std::string>{{"Add", "int16"}, {"Conv", "int8"}}));
  EXPECT_EQ(q.node_types, (std::map<std::string, std::string>{{"Add_1", "int8"}, {"Conv_0", "int16"}}));
  expect_echo_round_trip(c);
  EXPECT_NE(error_of(yaml("bernoulli2", "j6_quant_config.json")).find("int16 needs a march with int16"),
            std::string::npos);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"node_config": {"Conv_0": {"type": "float16"}}})", "node_config.Conv_0.type: float16 computation is not supported"},
      {R"({"model_config": {"all_node_type": "int16/float16"}})", "'int16/float16' is not one of int8, int16, float16"},
      {R"({"model_config": {"all_node_types": "int16"}})", "model_config.all_node_types: unknown key"},
      {R"({"op_config": {"Conv": {"type": "int16", "qtype": 1}}})", "op_config.Conv.qtype: unknown key"},
      {R"({"op_config": {"Conv": {}}})", "op_config.Conv: missing \"type\""},
      {R"({"layer_config": {}})", "layer_config: unknown key"},
      {R"({"node_config": [1]})", "node_config: must be a JSON object"},
      {R"({"node_config": )", "is not valid JSON"},
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    const std::string name = "q" + std::to_string(i) + ".json";
    std::ofstream(dir_ / name) << bad[i].first;
    const std::string e = error_of(yaml("nash-e", name));
    EXPECT_NE(e.find("calibration_parameters.quant_config"), std::string::npos) << e;
    EXPECT_NE(e.find(bad[i].second), std::string::npos) << bad[i].first << " -> " << e;
  }
  EXPECT_NE(error_of(yaml("nash-e", "missing.json")).find("cannot read the quant_config file"), std::string::npos);
}

// hb_compile on the nash marches: resizer inputs (Y, UV and a ROI tensor at
// run time) take nv12 or gray as on the 1.x marches (seed 004).
TEST_F(ConfigTest, NashResizerTakesNv12OrGray) {
  Config c;
  ASSERT_TRUE(parse(Yaml().set("model_parameters", "march", "'nash-e'")
                        .set("input_parameters", "input_name", "'data'")
                        .set("compiler_parameters", "input_source", "{data: resizer}").str(),
                    &c))
      << error_;
  EXPECT_EQ(c.input_parameters[0].input_source, "resizer");
  const std::string e = error_of(Yaml().set("model_parameters", "march", "'nash-m'")
                                     .set("input_parameters", "input_name", "'data'")
                                     .set("input_parameters", "input_type_rt", "rgb")
                                     .set("input_parameters", "input_layout_rt", "NHWC")
                                     .set("compiler_parameters", "input_source", "{data: resizer}").str());
  EXPECT_NE(e.find("input type rt : rgb does not support input_source resizer"), std::string::npos) << e;
}

TEST_F(ConfigTest, SeparateBatchOnlyFalse) {
  Config c;
  EXPECT_TRUE(parse(Yaml().set("input_parameters", "separate_batch", "False").str(), &c)) << error_;
  EXPECT_NE(error_of(Yaml().set("input_parameters", "separate_batch", "True").str())
                .find("input_parameters.separate_batch: True (one model input per batch item) is not supported"),
            std::string::npos);
}

TEST_F(ConfigTest, J5AllKeysParse) {
  Config c;
  ASSERT_TRUE(load_sample("j5_all_keys.yaml", &c)) << error_;
  const ModelParameters& m = c.model_parameters;
  EXPECT_EQ(m.march, "bayes");
  EXPECT_EQ(m.working_dir, path("model_output"));
  EXPECT_EQ(m.output_nodes, (std::vector<std::string>{"conv_out_1", "conv_out_2"}));
  EXPECT_EQ(m.remove_node_type.size(), 6u);
  EXPECT_EQ(m.debug_mode, "dump_calibration_data");
  // set_node_data_type and node_info merge, node_info on top.
  ASSERT_EQ(m.node_info.size(), 3u);
  EXPECT_EQ(m.node_info.at("Conv_0").output_type, "int16");
  EXPECT_EQ(m.node_info.at("Conv_1").on, "BPU");
  EXPECT_EQ(m.node_info.at("Conv_1").input_types.at(0), "int16");
  EXPECT_EQ(m.node_info.at("Conv_1").output_type, "int16");
  EXPECT_EQ(m.node_info.at("Softmax_3").on, "CPU");
  EXPECT_TRUE(warned("model_parameters.set_node_data_type"));
  EXPECT_TRUE(
      warned("model_parameters.node_info: You configured both parameter set_node_data_type"));
  EXPECT_TRUE(
      warned("calibration_parameters.run_on_cpu: You configured both parameter run_on_cpu"));
  ASSERT_EQ(c.input_parameters.size(), 2u);
  const InputParameter &a = c.input_parameters[0], &b = c.input_parameters[1];
  EXPECT_EQ(a.name, "input_name1");
  EXPECT_EQ(a.space_and_range, "bt601_video");
  EXPECT_EQ(a.layout_rt, "");  // nv12 has no layout
  EXPECT_TRUE(warned("input_parameters.input_layout_rt: Nv12 input layout info received"));
  EXPECT_EQ(a.mean, f({123.675f, 116.28f, 103.53f}));
  EXPECT_TRUE(b.mean.empty());
  EXPECT_EQ(b.layout_rt, "NCHW");
  EXPECT_EQ(b.shape, (std::vector<int64_t>{1, 10, 1, 1}));
  EXPECT_EQ(a.input_source, "pyramid");
  EXPECT_EQ(b.input_source, "ddr");
  const CalibrationParameters& p = c.calibration_parameters;
  EXPECT_EQ(p.calibration_type, "max");
  EXPECT_EQ(p.max_percentile, 0.99995f);
  EXPECT_TRUE(p.per_channel);
  EXPECT_EQ(p.run_on_cpu, (std::vector<std::string>{"Conv_5", "Conv_6"}));
  EXPECT_EQ(p.run_on_bpu, std::vector<std::string>{"Reshape_7"});
  EXPECT_EQ(p.optimization,
            (std::vector<std::string>{"set_Softmax_input_int8", "set_Softmax_output_int8"}));
  const CompilerParameters& cp = c.compiler_parameters;
  EXPECT_EQ(cp.compile_mode, "balance");
  EXPECT_EQ(cp.balance_factor, 50);
  EXPECT_EQ(cp.max_time_per_fc, 4294967295LL);
  EXPECT_EQ(cp.advice, 1);
  EXPECT_TRUE(c.custom_op.enabled);
  EXPECT_EQ(c.custom_op.method, "register");
  EXPECT_EQ(c.custom_op.dir, path("custom_op"));
  EXPECT_EQ(c.custom_op.register_files, std::vector<std::string>{"sample_custom.py"});
  expect_echo_round_trip(c);
}

TEST_F(ConfigTest, X5ModelZooConfigParsesAndTakesTheModelInput) {
  Config c;
  ASSERT_TRUE(load_sample("x5_model_zoo.yaml", &c)) << error_;
  const InputParameter& in = c.input_parameters[0];
  EXPECT_EQ(in.name, "");         // input_name: "" -> from the model
  EXPECT_TRUE(in.shape.empty());  // input_shape: '' -> from the model
  EXPECT_EQ(in.mean, f({123.675f, 116.28f, 103.53f}));
  EXPECT_EQ(in.scale, f({0.01712475f, 0.017507f, 0.01742919f}));
  EXPECT_EQ(in.input_source, "");  // decided once the name is known
  EXPECT_EQ(c.model_parameters.remove_node_type.size(), 5u);
  EXPECT_EQ(c.calibration_parameters.optimization, std::vector<std::string>{"set_all_nodes_int16"});
  ASSERT_TRUE(validate_with_model(c, {{"images", {1, 3, 224, 224}}}, &warnings_, &error_))
      << error_;
  EXPECT_EQ(c.input_parameters[0].name, "images");
  EXPECT_EQ(c.input_parameters[0].shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(c.input_parameters[0].input_source, "pyramid");
  EXPECT_TRUE(
      warned("Input node images's input_source not set, it will be set to pyramid by default"));
  expect_echo_round_trip(c);
}

TEST_F(ConfigTest, X3ScriptStyleConfigParses) {
  Config c;
  ASSERT_TRUE(load_sample("x3_script_style.yaml", &c)) << error_;
  EXPECT_TRUE(warned("model_parameters.log_level: User input 'log_level' is deprecated"));
  const InputParameter& in = c.input_parameters[0];
  EXPECT_TRUE(in.mean.empty());  // mean_value: '' next to data_scale
  EXPECT_EQ(in.scale, f({0.003921568627451f}));
  EXPECT_EQ(in.cal_data_type, "float32");  // from the _f32 suffix
  EXPECT_TRUE(in.cal_data_type_inferred);
  EXPECT_EQ(c.calibration_parameters.max_percentile, 0.99999f);  // a string number
  EXPECT_EQ(c.compiler_parameters.core_num, 2);
  EXPECT_EQ(c.model_parameters.working_dir, path("tmp/makert_model"));
  expect_echo_round_trip(c);
}

// ------------------------------------------------------------------ syntax

TEST_F(ConfigTest, DefaultsOfAMinimalConfig) {
  Config c;
  ASSERT_TRUE(parse(Yaml().str(), &c)) << error_;
  const ModelParameters& m = c.model_parameters;
  EXPECT_EQ(m.output_model_file_prefix, "model");
  EXPECT_EQ(m.working_dir, path("model_output"));
  EXPECT_FALSE(m.layer_out_dump);
  const InputParameter& in = c.input_parameters[0];
  EXPECT_EQ(in.space_and_range, "regular");
  EXPECT_EQ(in.batch, 1);
  EXPECT_FALSE(c.input_batch_set);
  EXPECT_EQ(c.calibration_parameters.calibration_type, "default");
  EXPECT_FALSE(c.calibration_parameters.per_channel);
  EXPECT_FALSE(c.calibration_parameters.max_percentile.has_value());
  const CompilerParameters& cp = c.compiler_parameters;
  EXPECT_EQ(cp.compile_mode, "latency");
  EXPECT_TRUE(cp.debug);
  EXPECT_EQ(cp.core_num, 1);
  EXPECT_EQ(cp.max_time_per_fc, 0);
  Config d;
  ASSERT_TRUE(parse(Yaml()
                        .erase("compiler_parameters", "optimize_level")
                        .erase("input_parameters", "norm_type")
                        .erase("input_parameters", "scale_value")
                        .str(),
                    &d))
      << error_;
  EXPECT_EQ(d.compiler_parameters.optimize_level, "O0");
  EXPECT_EQ(d.input_parameters[0].norm_type, "no_preprocess");
}

TEST_F(ConfigTest, ListSeparatorsWithAndWithoutSpaces) {
  for (const char* v : {"'a;b;c'", "'a; b; c'", "'a ;b ; c;'", "\"a; b;c\"", "[a, b, c]"}) {
    Config c;
    ASSERT_TRUE(parse(Yaml().set("calibration_parameters", "run_on_cpu", v).str(), &c))
        << v << ": " << error_;
    EXPECT_EQ(c.calibration_parameters.run_on_cpu, (std::vector<std::string>{"a", "b", "c"})) << v;
  }
}

TEST_F(ConfigTest, PerChannelNumberSpellings) {
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"103.94 116.78 123.68", {103.94f, 116.78f, 123.68f}},    // a yaml string without quotes
      {"'103.94 116.78 123.68'", {103.94f, 116.78f, 123.68f}},  // quoted
      {"'128.0'", {128.0f}},
      {"127.5", {127.5f}},  // a yaml number
      {"128", {128.0f}},
      {"[103.94, 116.78, 123.68]", {103.94f, 116.78f, 123.68f}},  // a yaml list
      {"'103.94,116.78,123.68'", {103.94f, 116.78f, 123.68f}},    // commas
      {"'  1e2   2.5 '", {100.0f, 2.5f}},
  };
  for (const auto& [text, want] : cases) {
    if (want.size() == 2) continue;  // 2 values fit neither 1 nor 3 channels, checked below
    Config c;
    ASSERT_TRUE(parse(Yaml()
                          .set("input_parameters", "norm_type", "data_mean")
                          .erase("input_parameters", "scale_value")
                          .set("input_parameters", "mean_value", text)
                          .str(),
                      &c))
        << text << ": " << error_;
    EXPECT_EQ(c.input_parameters[0].mean, want) << text;
  }
  EXPECT_NE(error_of(Yaml().set("input_parameters", "scale_value", "'  1e2   2.5 '").str())
                .find("input_parameters.scale_value: input 0 has 2 values"),
            std::string::npos);
}

TEST_F(ConfigTest, NonePlaceholdersPerInput) {
  Yaml y;
  y.set("input_parameters", "input_name", "'img; feat'")
      .set("input_parameters", "input_type_rt", "'nv12; featuremap'")
      .set("input_parameters", "input_type_train", "'rgb; featuremap'")
      .set("input_parameters", "input_layout_train", "'NCHW; NCHW'")
      .set("input_parameters", "input_layout_rt", "'None; NCHW'")
      .set("input_parameters", "input_shape", "'None; 1x10'")
      .set("input_parameters", "norm_type", "'data_mean_and_scale; no_preprocess'")
      .set("input_parameters", "mean_value", "'128; None'")
      .set("input_parameters", "scale_value", "'0.0078125; None'")
      .set("calibration_parameters", "cal_data_dir", "'calibration_data_rgb_f32; calibration_data'")
      .set("calibration_parameters", "cal_data_type", "'None; float32'");
  Config c;
  ASSERT_TRUE(parse(y.str(), &c)) << error_;
  ASSERT_EQ(c.input_parameters.size(), 2u);
  EXPECT_EQ(c.input_parameters[0].mean, f({128}));
  EXPECT_EQ(c.input_parameters[0].scale, f({0.0078125f}));
  EXPECT_TRUE(c.input_parameters[1].mean.empty());
  EXPECT_TRUE(c.input_parameters[0].shape.empty());
  EXPECT_EQ(c.input_parameters[1].shape, (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(c.input_parameters[0].cal_data_type, "float32");
  EXPECT_TRUE(c.input_parameters[0].cal_data_type_inferred);
  EXPECT_EQ(c.input_parameters[1].cal_data_type, "float32");
  EXPECT_FALSE(c.input_parameters[1].cal_data_type_inferred);
  expect_echo_round_trip(c);
}

TEST_F(ConfigTest, YamlListsPerInput) {
  Yaml y;
  y.set("input_parameters", "input_name", "[a, b]")
      .set("input_parameters", "input_type_rt", "[gray, gray]")
      .set("input_parameters", "input_type_train", "[gray, gray]")
      .set("input_parameters", "input_layout_train", "[NCHW, NHWC]")
      .set("input_parameters", "input_layout_rt", "[NCHW, NHWC]")
      .set("input_parameters", "input_shape", "['1x1x4x4', [1, 8, 8, 1]]")
      .set("input_parameters", "norm_type", "[data_scale, data_scale]")
      .set("input_parameters", "scale_value", "[0.5, [0.25]]")
      .set("calibration_parameters", "cal_data_dir", "[cal_gray, cal_gray]");
  Config c;
  ASSERT_TRUE(parse(y.str(), &c)) << error_;
  EXPECT_EQ(c.input_parameters[1].shape, (std::vector<int64_t>{1, 8, 8, 1}));
  EXPECT_EQ(c.input_parameters[0].scale, f({0.5f}));
  EXPECT_EQ(c.input_parameters[1].scale, f({0.25f}));
  EXPECT_EQ(c.input_parameters[0].input_source, "pyramid");  // gray defaults to pyramid
  Config d;
  ASSERT_TRUE(parse(Yaml().set("input_parameters", "input_shape", "[1, 3, 224, 224]").str(), &d))
      << error_;
  EXPECT_EQ(d.input_parameters[0].shape, (std::vector<int64_t>{1, 3, 224, 224}));
}

TEST_F(ConfigTest, EmptyInputShapeIsReadFromTheModel) {
  for (const char* v : {"''", "\"\"", "", "None"}) {
    Config c;
    ASSERT_TRUE(parse(Yaml().set("input_parameters", "input_shape", v).str(), &c)) << v << error_;
    EXPECT_TRUE(c.input_parameters[0].shape.empty());
    ASSERT_TRUE(validate_with_model(c, {{"x", {1, 3, 32, 64}}}, &warnings_, &error_)) << error_;
    EXPECT_EQ(c.input_parameters[0].shape, (std::vector<int64_t>{1, 3, 32, 64}));
  }
}

TEST_F(ConfigTest, BooleansAsYamlBooleansOrStrings) {
  for (const char* v : {"True", "true", "'True'", "\"true\"", "yes", "ON"}) {
    Config c;
    ASSERT_TRUE(parse(Yaml()
                          .set("model_parameters", "layer_out_dump", v)
                          .set("compiler_parameters", "debug", v)
                          .str(),
                      &c))
        << v << error_;
    EXPECT_TRUE(c.model_parameters.layer_out_dump) << v;
    EXPECT_TRUE(c.compiler_parameters.debug) << v;
  }
  for (const char* v : {"False", "false", "'False'", "no", "Off"}) {
    Config c;
    ASSERT_TRUE(parse(Yaml().set("compiler_parameters", "debug", v).str(), &c)) << v << error_;
    EXPECT_FALSE(c.compiler_parameters.debug) << v;
  }
}

TEST_F(ConfigTest, NumbersGivenAsStrings) {
  Yaml y;
  y.set("compiler_parameters", "core_num", "'1'")
      .set("compiler_parameters", "max_time_per_fc", "'1000'")
      .set("compiler_parameters", "compile_mode", "'balance'")
      .set("compiler_parameters", "balance_factor", "'50'")
      .set("compiler_parameters", "jobs", "\"8\"")
      .set("compiler_parameters", "advice", "'10'")
      .set("input_parameters", "input_batch", "'2'")
      .set("calibration_parameters", "calibration_type", "max")
      .set("calibration_parameters", "max_percentile", "'0.99995'");
  Config c;
  ASSERT_TRUE(parse(y.str(), &c)) << error_;
  EXPECT_EQ(c.compiler_parameters.core_num, 1);
  EXPECT_EQ(c.compiler_parameters.max_time_per_fc, 1000);
  EXPECT_EQ(c.compiler_parameters.balance_factor, 50);
  EXPECT_EQ(c.compiler_parameters.jobs, 8);
  EXPECT_EQ(c.compiler_parameters.advice, 10);
  EXPECT_EQ(c.input_parameters[0].batch, 2);
  EXPECT_EQ(c.calibration_parameters.max_percentile, 0.99995f);
}

TEST_F(ConfigTest, RelativePathsResolveAgainstTheYamlDirectory) {
  std::ofstream(dir_ / "sub" / "c.yaml")
      << Yaml()
             .set("model_parameters", "onnx_model", "'../model.onnx'")
             .set("model_parameters", "working_dir", "out")
             .set("calibration_parameters", "cal_data_dir", "'../calibration_data_rgb_f32/'")
             .str();
  Config c;
  ASSERT_TRUE(load_config(path("sub/c.yaml"), &c, &warnings_, &error_)) << error_;
  EXPECT_EQ(c.model_parameters.onnx_model, path("model.onnx"));
  EXPECT_EQ(c.model_parameters.working_dir, path("sub/out"));
  EXPECT_EQ(c.input_parameters[0].cal_data_dir, path("calibration_data_rgb_f32"));
  EXPECT_EQ(c.input_parameters[0].cal_data_type, "float32");  // trailing '/' does not hide _f32
  EXPECT_EQ(c.base_dir, path("sub"));
  Config abs;
  ASSERT_TRUE(parse(
      Yaml().set("model_parameters", "onnx_model", "'" + path("model.onnx") + "'").str(), &abs));
  EXPECT_EQ(abs.model_parameters.onnx_model, path("model.onnx"));
}

TEST_F(ConfigTest, NodeInfoStringForm) {
  Config c;
  ASSERT_TRUE(parse(
      Yaml().set("model_parameters", "node_info", "'Conv_0:int16; Conv_1 : int16;'").str(), &c))
      << error_;
  ASSERT_EQ(c.model_parameters.node_info.size(), 2u);
  EXPECT_EQ(c.model_parameters.node_info.at("Conv_1").output_type, "int16");
  EXPECT_EQ(c.model_parameters.node_info.at("Conv_1").on, "");
  expect_echo_round_trip(c);
}

TEST_F(ConfigTest, NodeInfoDictFormBlockStyle) {
  Config c;
  ASSERT_TRUE(parse(Yaml()
                        .set("model_parameters", "node_info",
                             "\n    Conv_2:\n      ON: cpu\n      InputType1: int16\n")
                        .str(),
                    &c))
      << error_;
  const NodeInfo& n = c.model_parameters.node_info.at("Conv_2");
  EXPECT_EQ(n.on, "CPU");
  EXPECT_EQ(n.input_types.at(1), "int16");
  EXPECT_EQ(c.metadata().at("NODE_INFO"), "{'Conv_2': {'ON': 'CPU', 'InputType1': 'int16'}}");
}

// Found by fuzz_yaml_config: an input index beyond int threw from std::stoi
// (uncaught: abort).
TEST_F(ConfigTest, NodeInfoInputIndexOutOfRangeIsAnError) {
  const std::string err =
      error_of(Yaml().set("model_parameters", "node_info", "\n    Conv_2:\n      InputType99999999999: int16\n").str());
  EXPECT_NE(err.find("node 'Conv_2', InputType99999999999: input index out of range 0..2147483647"), std::string::npos)
      << err;
}

TEST_F(ConfigTest, InputSourceAsQuotedDictAndDefaultsPerType) {
  Config c;
  ASSERT_TRUE(parse(Yaml()
                        .set("input_parameters", "input_name", "data")
                        .set("compiler_parameters", "input_source", "'{\"data\": \"resizer\"}'")
                        .str(),
                    &c))
      << error_;
  EXPECT_EQ(c.input_parameters[0].input_source, "resizer");
  const std::vector<std::pair<std::string, std::string>> defaults = {
      {"nv12", "pyramid"}, {"gray", "pyramid"}, {"rgb", "ddr"},
      {"bgr", "ddr"},      {"yuv444", "ddr"},   {"featuremap", "ddr"}};
  for (const auto& [rt, src] : defaults) {
    std::string train = rt == "nv12" || rt == "yuv444" ? "rgb" : rt;
    Yaml y;
    y.set("input_parameters", "input_name", "data")
        .set("input_parameters", "input_type_rt", rt)
        .set("input_parameters", "input_type_train", train)
        .set("input_parameters", "input_layout_rt", "NHWC");
    if (rt == "featuremap") y.set("input_parameters", "norm_type", "no_preprocess");
    if (rt == "gray") y.set("calibration_parameters", "cal_data_dir", "cal_gray");
    Config d;
    ASSERT_TRUE(parse(y.str(), &d)) << rt << ": " << error_;
    EXPECT_EQ(d.input_parameters[0].input_source, src) << rt;
  }
}

TEST_F(ConfigTest, EmptyGroupsTakeDefaults) {
  std::string text = Yaml()
                         .set("calibration_parameters", "calibration_type", "skip")
                         .erase("calibration_parameters", "cal_data_dir")
                         .erase("compiler_parameters", "optimize_level")
                         .str();
  text += "custom_op:\n";  // every key commented out, as in the templates
  Config c;
  ASSERT_TRUE(parse(text, &c)) << error_;
  EXPECT_FALSE(c.custom_op.enabled);
  EXPECT_EQ(c.compiler_parameters.optimize_level, "O0");
  // calibration_parameters and compiler_parameters may be left out entirely.
  std::string no_groups =
      "model_parameters:\n  onnx_model: model.onnx\n  march: bayes\n"
      "input_parameters:\n  input_type_rt: featuremap\n  input_type_train: featuremap\n"
      "  input_layout_train: NCHW\n  input_layout_rt: NCHW\n";
  EXPECT_NE(error_of(no_groups).find("calibration_parameters.cal_data_dir: missing"),
            std::string::npos);
}

TEST_F(ConfigTest, DuplicateKeyLastOneWinsWithAWarning) {
  std::string text = Yaml().str() + "  jobs: 2\n  jobs: 3\n";
  Config c;
  ASSERT_TRUE(parse(text, &c)) << error_;
  EXPECT_EQ(c.compiler_parameters.jobs, 3);
  EXPECT_TRUE(warned("compiler_parameters.jobs: given more than once"));
}

TEST_F(ConfigTest, EnumsAreCaseInsensitiveAndNormalized) {
  Config c;
  ASSERT_TRUE(parse(Yaml()
                        .set("input_parameters", "input_type_rt", "NV12")
                        .set("input_parameters", "input_type_train", "RGB")
                        .set("input_parameters", "input_layout_train", "nchw")
                        .set("model_parameters", "march", "Bayes-E")
                        .set("compiler_parameters", "optimize_level", "o2")
                        .str(),
                    &c))
      << error_;
  EXPECT_EQ(c.input_parameters[0].type_rt, "nv12");
  EXPECT_EQ(c.input_parameters[0].type_train, "rgb");
  EXPECT_EQ(c.input_parameters[0].layout_train, "NCHW");
  EXPECT_EQ(c.model_parameters.march, "bayes-e");
  EXPECT_EQ(c.compiler_parameters.optimize_level, "O2");
}

TEST_F(ConfigTest, DeprecatedKeysWarn) {
  Yaml y;
  y.set("model_parameters", "log_level", "'info'")
      .set("model_parameters", "output_layout", "NHWC")
      .set("model_parameters", "set_node_data_type", "'Conv_0:int16'")
      .set("calibration_parameters", "preprocess_on", "True")
      .set("calibration_parameters", "enable_int16", "False")
      .set("input_parameters", "norm_type", "mean_file_and_scale")
      .set("input_parameters", "mean_value", "128");
  Config c;
  ASSERT_TRUE(parse(y.str(), &c)) << error_;
  for (const char* key :
       {"model_parameters.log_level", "model_parameters.output_layout",
        "model_parameters.set_node_data_type", "calibration_parameters.preprocess_on",
        "calibration_parameters.enable_int16", "input_parameters.norm_type"})
    EXPECT_TRUE(warned(key)) << key;
  EXPECT_EQ(c.input_parameters[0].norm_type, "data_mean_and_scale");
  EXPECT_TRUE(c.calibration_parameters.preprocess_on);
  EXPECT_EQ(c.model_parameters.node_info.at("Conv_0").output_type, "int16");
  EXPECT_EQ(c.metadata().at("16BIT_QUANTIZE"), "False");
}

// ------------------------------------------------------------------ errors

TEST_F(ConfigTest, UnknownKeyIsRejectedWithASuggestion) {
  std::string e = error_of(Yaml().set("input_parameters", "input_typ_rt", "nv12").str());
  EXPECT_NE(e.find("input_parameters.input_typ_rt: unknown key (did you mean 'input_type_rt'?)"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, KeyInTheWrongGroupIsNamed) {
  std::string e = error_of(Yaml().set("input_parameters", "input_source", "{data: ddr}").str());
  EXPECT_NE(e.find("input_parameters.input_source: unknown key in input_parameters; 'input_source' "
                   "belongs to "
                   "compiler_parameters"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, HbCompileOnlyKeyIsRejected) {
  std::string e = error_of(Yaml().set("input_parameters", "std_value", "58.395").str());
  EXPECT_NE(e.find("input_parameters.std_value: unknown key; 'std_value' is a key of hb_compile"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, UnknownGroupIsRejected) {
  std::string e = error_of(Yaml().str() + "runtime_parameters:\n  x: 1\n");
  EXPECT_EQ(e.rfind("runtime_parameters: unknown parameter group", 0), 0u) << e;
  std::string moved = error_of(Yaml().str() + "march: bayes\n");
  EXPECT_NE(moved.find("march: is a key of model_parameters, not a group"), std::string::npos)
      << moved;
}

TEST_F(ConfigTest, MissingRequiredGroup) {
  std::string e = error_of("input_parameters:\n  input_type_rt: nv12\n");
  EXPECT_EQ(e, "model_parameters: Missing key: 'model_parameters' (group required)");
  EXPECT_EQ(config_error_group(e), "model_parameters");
}

TEST_F(ConfigTest, ConfigFileMissing) {
  Config c;
  EXPECT_FALSE(load_config(path("none.yaml"), &c, &warnings_, &error_));
  EXPECT_EQ(error_, "config: can not open yaml file '" + path("none.yaml") + "'");
}

TEST_F(ConfigTest, EmptyOrNonMappingFile) {
  EXPECT_NE(error_of("").find("the config is empty"), std::string::npos);
  EXPECT_NE(error_of("- a\n- b\n").find("yaml file parse failed"), std::string::npos);
}

TEST_F(ConfigTest, GroupOfTheWrongType) {
  std::string e = error_of(Yaml().str() + "custom_op: register\n");
  EXPECT_EQ(e, "custom_op: expected a mapping of keys, got a scalar");
}

TEST_F(ConfigTest, YamlSyntaxErrorNamesTheLine) {
  std::string e = error_of("model_parameters:\n  onnx_model: [model.onnx\n  march: bayes\n");
  EXPECT_EQ(e.rfind("yaml: yaml file parse failed. Please double check your input: line ", 0), 0u)
      << e;
}

TEST_F(ConfigTest, TabIndentationIsExplained) {
  std::string e = error_of("model_parameters:\n\tonnx_model: model.onnx\n");
  EXPECT_NE(e.find("indented with a tab"), std::string::npos) << e;
}

TEST_F(ConfigTest, WrongTypeBoolean) {
  std::string e = error_of(Yaml().set("model_parameters", "layer_out_dump", "maybe").str());
  EXPECT_EQ(e, "model_parameters.layer_out_dump: expected True or False, got 'maybe'");
}

TEST_F(ConfigTest, WrongTypeInteger) {
  std::string e = error_of(Yaml().set("compiler_parameters", "core_num", "1.5").str());
  EXPECT_EQ(e, "compiler_parameters.core_num: expected an integer, got '1.5'");
}

TEST_F(ConfigTest, WrongTypeStringGotList) {
  std::string e = error_of(Yaml().set("model_parameters", "march", "[bayes]").str());
  EXPECT_EQ(e, "model_parameters.march: expected a string, got a list");
}

TEST_F(ConfigTest, BothOnnxAndCaffeModels) {
  std::string e = error_of(Yaml()
                               .set("model_parameters", "caffe_model", "model.caffemodel")
                               .set("model_parameters", "prototxt", "model.prototxt")
                               .str());
  EXPECT_NE(
      e.find("model_parameters.onnx_model: both onnx_model and caffe_model/prototxt are given"),
      std::string::npos)
      << e;
}

TEST_F(ConfigTest, NeitherOnnxNorCaffeModel) {
  std::string e = error_of(Yaml().erase("model_parameters", "onnx_model").str());
  EXPECT_NE(e.find("model_parameters.onnx_model: Missing model file input"), std::string::npos)
      << e;
}

TEST_F(ConfigTest, CaffeModelWithoutPrototxt) {
  std::string e = error_of(Yaml()
                               .erase("model_parameters", "onnx_model")
                               .set("model_parameters", "caffe_model", "model.caffemodel")
                               .str());
  EXPECT_EQ(e, "model_parameters.prototxt: Key 'model_parameters' error: Missing keys: 'prototxt'");
}

TEST_F(ConfigTest, ModelFileMissing) {
  std::string e = error_of(Yaml().set("model_parameters", "onnx_model", "missing.onnx").str());
  EXPECT_EQ(e, "model_parameters.onnx_model: Can not find onnx_model file given: " +
                   path("missing.onnx") + ", please check 'onnx_model' in model_parameters");
}

TEST_F(ConfigTest, ModelFileWrongExtension) {
  std::string e = error_of(Yaml().set("model_parameters", "onnx_model", "model.prototxt").str());
  EXPECT_NE(e.find("model_parameters.onnx_model: file invalid"), std::string::npos) << e;
}

TEST_F(ConfigTest, ModelTypeOptionMustMatchTheYaml) {
  Config c;
  EXPECT_FALSE(parse(Yaml().str(), &c, "caffe"));
  EXPECT_NE(
      error_.find("model_parameters.caffe_model: model type is caffe but can not find caffe_model"),
      std::string::npos)
      << error_;
  EXPECT_TRUE(parse(Yaml().str(), &c, "onnx")) << error_;
}

TEST_F(ConfigTest, MarchMissing) {
  std::string e = error_of(Yaml().erase("model_parameters", "march").str());
  EXPECT_EQ(e.rfind("model_parameters.march: missing (required)", 0), 0u) << e;
}

TEST_F(ConfigTest, MarchUnknown) {
  std::string e = error_of(Yaml().set("model_parameters", "march", "bayes-x").str());
  EXPECT_EQ(e,
            "model_parameters.march: User input march invalid: 'bayes-x' is not one of bernoulli2, "
            "bayes, "
            "bayes-e, nash-e, nash-m");
}

TEST_F(ConfigTest, InputTypeRtNotInTheList) {
  std::string e = error_of(Yaml().set("input_parameters", "input_type_rt", "nv11").str());
  EXPECT_EQ(e,
            "input_parameters.input_type_rt: 'nv11' is not one of nv12, yuv444, rgb, bgr, gray, "
            "featuremap");
  EXPECT_EQ(config_error_group(e), "input_parameters");
}

TEST_F(ConfigTest, InputTypeTrainMissing) {
  std::string e = error_of(Yaml().erase("input_parameters", "input_type_train").str());
  EXPECT_EQ(e.rfind("input_parameters.input_type_train: missing (required)", 0), 0u) << e;
}

TEST_F(ConfigTest, PerInputCountsMustMatch) {
  std::string e =
      error_of(Yaml().set("input_parameters", "input_layout_train", "'NCHW; NCHW'").str());
  EXPECT_EQ(
      e.rfind(
          "input_parameters.input_layout_train: Wrong num of input_layout_train received. Num of "
          "input_layout_train given: 2, expect: 1",
          0),
      0u)
      << e;
}

TEST_F(ConfigTest, DuplicatedInputNames) {
  std::string e = error_of(Yaml().set("input_parameters", "input_name", "'a; a'").str());
  EXPECT_EQ(e, "input_parameters.input_name: Input names duplicated: 'a'");
}

// The whole input_type_train x input_type_rt table of the docs.
TEST_F(ConfigTest, TrainToRuntimeTypeTable) {
  const std::vector<std::string> rts = {"nv12", "yuv444", "rgb", "bgr", "gray", "featuremap"};
  const std::map<std::string, std::string> table = {// train -> Y/N per rt column
                                                    {"yuv444", "YYNNNN"},
                                                    {"rgb", "YYYYNN"},
                                                    {"bgr", "YYYYNN"},
                                                    {"gray", "NNNNYN"},
                                                    {"featuremap", "NNNNNY"}};
  for (const auto& [train, row] : table) {
    for (size_t j = 0; j < rts.size(); ++j) {
      Yaml y;
      y.set("input_parameters", "input_type_train", train)
          .set("input_parameters", "input_type_rt", rts[j])
          .set("input_parameters", "input_layout_rt", "NHWC")
          .set("input_parameters", "norm_type", "no_preprocess");
      Config c;
      bool ok = parse(y.str(), &c);
      EXPECT_EQ(ok, row[j] == 'Y') << train << " -> " << rts[j] << ": " << error_;
      if (!ok && row[j] == 'N') {
        EXPECT_EQ(error_, "input_parameters.input_type_rt: Input 0 has input_type_train '" + train +
                              "' is not supported transform to input_type_rt '" + rts[j] +
                              "' for now.");
      }
    }
  }
}

TEST_F(ConfigTest, GrayToBgrIsRejected) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_type_train", "gray")
                               .set("input_parameters", "input_type_rt", "bgr")
                               .set("input_parameters", "input_layout_rt", "NHWC")
                               .str());
  EXPECT_NE(e.find("Input 0 has input_type_train 'gray' is not supported transform to "
                   "input_type_rt 'bgr' for now."),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, InputLayoutRtMissing) {
  std::string e = error_of(Yaml().set("input_parameters", "input_type_rt", "rgb").str());
  EXPECT_EQ(
      e,
      "input_parameters.input_layout_rt: Input_layout_rt missing. input 0 input_type_rt is: rgb. "
      "input_layout_rt is required for this type (NCHW or NHWC)");
}

TEST_F(ConfigTest, InputLayoutRtWithNv12Warns) {
  Config c;
  ASSERT_TRUE(parse(Yaml().set("input_parameters", "input_layout_rt", "NHWC").str(), &c)) << error_;
  EXPECT_TRUE(warned("input_parameters.input_layout_rt: Nv12 input layout info received"));
  EXPECT_EQ(c.input_parameters[0].layout_rt, "");
}

TEST_F(ConfigTest, Bt601VideoOnlyWithNv12) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_type_rt", "rgb")
                               .set("input_parameters", "input_layout_rt", "NCHW")
                               .set("input_parameters", "input_space_and_range", "bt601_video")
                               .str());
  EXPECT_NE(e.find("input_parameters.input_space_and_range: Input_type_rt and "
                   "input_space_and_range combination "
                   "invalid"),
            std::string::npos)
      << e;
  Config ok;
  EXPECT_TRUE(
      parse(Yaml().set("input_parameters", "input_space_and_range", "bt601_video").str(), &ok))
      << error_;
}

TEST_F(ConfigTest, Bt601VideoNeedsRgbOrBgrTraining) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_type_train", "yuv444")
                               .set("input_parameters", "input_space_and_range", "bt601_video")
                               .str());
  EXPECT_EQ(e,
            "input_parameters.input_type_rt: Input 0 has input_type_train 'yuv444' is not "
            "supported transform "
            "to input_type_rt 'yuv420sp_bt601_video' for now.");
}

TEST_F(ConfigTest, Yuv444NchwRuntimeLayoutNotOnBernoulli2) {
  std::string e = error_of(Yaml()
                               .set("model_parameters", "march", "bernoulli2")
                               .set("input_parameters", "input_type_rt", "yuv444")
                               .set("input_parameters", "input_layout_rt", "NCHW")
                               .str());
  EXPECT_EQ(e,
            "input_parameters.input_layout_rt: Input 0 has input_type_rt yuv444 with "
            "input_layout_rt NCHW is not "
            "supported on bernoulli2 for now.");
}

TEST_F(ConfigTest, OddSizeWithNv12) {
  std::string e = error_of(Yaml().set("input_parameters", "input_shape", "1x3x223x224").str());
  EXPECT_EQ(e,
            "input_parameters.input_shape: input 0: Invalid nv12 input shape: [1, 3, 223, 224], "
            "nv12 type does "
            "not support odd size");
}

TEST_F(ConfigTest, OddSizeWithYuv444) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_type_rt", "yuv444")
                               .set("input_parameters", "input_layout_rt", "NHWC")
                               .set("input_parameters", "input_layout_train", "NHWC")
                               .set("input_parameters", "input_shape", "1x224x225x3")
                               .str());
  EXPECT_NE(e.find("input_parameters.input_shape: input 0: Invalid yuv444 input shape"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, OddSizeFromTheModel) {
  Config c;
  ASSERT_TRUE(parse(Yaml().str(), &c)) << error_;
  EXPECT_FALSE(validate_with_model(c, {{"x", {1, 3, 7, 8}}}, &warnings_, &error_));
  EXPECT_NE(
      error_.find(
          "input_parameters.input_shape: input 0 ('x'): Invalid nv12 input shape: [1, 3, 7, 8]"),
      std::string::npos)
      << error_;
  EXPECT_EQ(c.input_parameters[0].name, "");  // unchanged on failure
}

TEST_F(ConfigTest, ChannelsAtTheOtherLayoutsPositionSuggestIt) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_layout_train", "NHWC")
                               .set("input_parameters", "input_shape", "1x3x224x224")
                               .str());
  EXPECT_EQ(e,
            "input_parameters.input_layout_train: input 0: Input_layout_train says NHWC but seems "
            "like layout of "
            "input_shape is NCHW: [1, 3, 224, 224], try use NCHW in input_layout_train");
  std::string f = error_of(Yaml().set("input_parameters", "input_shape", "1x224x224x3").str());
  EXPECT_NE(f.find("Input_layout_train says NCHW but seems like layout of input_shape is NHWC"),
            std::string::npos)
      << f;
}

TEST_F(ConfigTest, ChannelCountMustMatchTheTrainType) {
  std::string e = error_of(Yaml().set("input_parameters", "input_shape", "1x4x224x224").str());
  EXPECT_NE(
      e.find(
          "input_parameters.input_shape: input 0: Input_type_train rgb input_layout_train NCHW and "
          "input_shape [1, 4, 224, 224] does not seem right"),
      std::string::npos)
      << e;
  Config c;
  ASSERT_TRUE(parse(Yaml()
                        .set("input_parameters", "input_type_train", "gray")
                        .set("input_parameters", "input_type_rt", "gray")
                        .set("input_parameters", "input_layout_rt", "NCHW")
                        .set("calibration_parameters", "cal_data_dir", "cal_gray")
                        .str(),
                    &c))
      << error_;
  EXPECT_FALSE(validate_with_model(c, {{"x", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_NE(error_.find("gray has 1 channel)"), std::string::npos) << error_;
}

TEST_F(ConfigTest, ImageInputsNeedFourDimensions) {
  std::string e = error_of(Yaml().set("input_parameters", "input_shape", "1x3x224").str());
  EXPECT_NE(e.find("input_parameters.input_shape: input 0 has input_type_train 'rgb', which needs "
                   "a 4-D shape"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, InputShapeUnparsable) {
  std::string e = error_of(Yaml().set("input_parameters", "input_shape", "1x3x?x224").str());
  EXPECT_NE(e.find("input_parameters.input_shape: Input shape parse failed. Input: '1x3x?x224'"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, InputBatchNeedsFirstDimensionOne) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_batch", "4")
                               .set("input_parameters", "input_shape", "2x3x224x224")
                               .str());
  EXPECT_NE(
      e.find(
          "input_parameters.input_batch: 'input_batch' option in 'input_parameters' is configured"),
      std::string::npos)
      << e;
  Config c;
  ASSERT_TRUE(parse(Yaml().set("input_parameters", "input_batch", "4").str(), &c)) << error_;
  EXPECT_FALSE(validate_with_model(c, {{"x", {2, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_NE(error_.find("input_parameters.input_batch"), std::string::npos) << error_;
}

TEST_F(ConfigTest, InputBatchRangePerMarch) {
  std::string e = error_of(Yaml()
                               .set("model_parameters", "march", "bernoulli2")
                               .set("input_parameters", "input_batch", "129")
                               .str());
  EXPECT_EQ(e,
            "input_parameters.input_batch: Input_batch value should between 1 and 128 on "
            "bernoulli2, got 129");
  Config c;
  EXPECT_TRUE(parse(Yaml().set("input_parameters", "input_batch", "4096").str(), &c)) << error_;
  EXPECT_NE(error_of(Yaml().set("input_parameters", "input_batch", "0").str())
                .find("input_parameters.input_batch"),
            std::string::npos);
}

TEST_F(ConfigTest, InputBatchTakesOneValue) {
  std::string e = error_of(Yaml().set("input_parameters", "input_batch", "'1; 2'").str());
  EXPECT_EQ(e,
            "input_parameters.input_batch: input_batch option can only receive one input. There "
            "are 2 given");
}

TEST_F(ConfigTest, MaxTimePerFcRange) {
  std::string e = error_of(Yaml().set("compiler_parameters", "max_time_per_fc", "500").str());
  EXPECT_EQ(e,
            "compiler_parameters.max_time_per_fc: Parameter max_time_per_fc value check failed. "
            "Please set it 0 "
            "or 1000-4294967295 (got 500)");
  EXPECT_NE(error_of(Yaml().set("compiler_parameters", "max_time_per_fc", "4294967296").str())
                .find("Please set it 0"),
            std::string::npos);
  for (const char* ok : {"0", "1000", "4294967295"}) {
    Config c;
    EXPECT_TRUE(parse(Yaml().set("compiler_parameters", "max_time_per_fc", ok).str(), &c))
        << ok << error_;
  }
}

TEST_F(ConfigTest, TwoCoresOnlyOnBernoulli2) {
  std::string e = error_of(Yaml().set("compiler_parameters", "core_num", "2").str());
  EXPECT_EQ(e,
            "compiler_parameters.core_num: 2 cores are only supported on bernoulli2 (RDK X3); "
            "bayes-e supports 1");
  EXPECT_EQ(error_of(Yaml().set("compiler_parameters", "core_num", "3").str()),
            "compiler_parameters.core_num: Wrong core num setting given, 3 should in range [1, 2]");
}

TEST_F(ConfigTest, NodeInfoNotOnBernoulli2) {
  std::string e = error_of(Yaml()
                               .set("model_parameters", "march", "bernoulli2")
                               .set("model_parameters", "node_info", "'Conv_0:int16'")
                               .str());
  EXPECT_EQ(e.rfind("model_parameters.node_info: not supported on march bernoulli2", 0), 0u) << e;
}

TEST_F(ConfigTest, NodeInfoIndexedOutputTypeRejected) {
  std::string e =
      error_of(Yaml().set("model_parameters", "node_info", "{Conv_0: {OutputType0: int16}}").str());
  EXPECT_NE(e.find("model_parameters.node_info: node 'Conv_0': The format you gave is OutputType0"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, NodeInfoValueRejected) {
  std::string e = error_of(Yaml().set("model_parameters", "node_info", "'Conv_0:int32'").str());
  EXPECT_EQ(e, "model_parameters.node_info: node 'Conv_0': 'int32' is not one of int8, int16");
  std::string on =
      error_of(Yaml().set("model_parameters", "node_info", "{Conv_0: {ON: GPU}}").str());
  EXPECT_EQ(on, "model_parameters.node_info: node 'Conv_0', ON: 'GPU' is not one of BPU, CPU");
  std::string fmt = error_of(Yaml().set("model_parameters", "node_info", "'Conv_0'").str());
  EXPECT_NE(fmt.find("currently we only support Conv_0:int16;Conv_1:int16"), std::string::npos)
      << fmt;
}

TEST_F(ConfigTest, BalanceFactorRequiredWithBalance) {
  std::string e = error_of(Yaml().set("compiler_parameters", "compile_mode", "balance").str());
  EXPECT_EQ(
      e.rfind("compiler_parameters.balance_factor: Parameter compile_mode is set to balance", 0),
      0u)
      << e;
  EXPECT_EQ(error_of(Yaml()
                         .set("compiler_parameters", "compile_mode", "balance")
                         .set("compiler_parameters", "balance_factor", "101")
                         .str()),
            "compiler_parameters.balance_factor: Invalid balance_factor received: 101, value range "
            "is 0-100");
  Config c;
  ASSERT_TRUE(parse(Yaml().set("compiler_parameters", "balance_factor", "3").str(), &c));
  EXPECT_TRUE(
      warned("compiler_parameters.balance_factor: Parameter compile_mode is not set to balance"));
  EXPECT_FALSE(c.compiler_parameters.balance_factor.has_value());
}

TEST_F(ConfigTest, CompileModeUnknown) {
  EXPECT_EQ(error_of(Yaml().set("compiler_parameters", "compile_mode", "fast").str()),
            "compiler_parameters.compile_mode: Invalid compile mode received. 'fast' is not one of "
            "latency, "
            "bandwidth, balance");
}

TEST_F(ConfigTest, OptimizeLevelUnknown) {
  EXPECT_EQ(error_of(Yaml().set("compiler_parameters", "optimize_level", "O4").str()),
            "compiler_parameters.optimize_level: User input optimize_level invalid, 'O4' is not "
            "one of O0, O1, O2, O3");
}

TEST_F(ConfigTest, MeanValueRequiredByNormType) {
  std::string e =
      error_of(Yaml().set("input_parameters", "norm_type", "data_mean_and_scale").str());
  EXPECT_EQ(e.rfind("input_parameters.mean_value: Mean value not given: input 0 norm type "
                    "data_mean_and_scale",
                    0),
            0u)
      << e;
}

TEST_F(ConfigTest, ScaleValueRequiredByNormType) {
  std::string e = error_of(Yaml().erase("input_parameters", "scale_value").str());
  EXPECT_EQ(e.rfind("input_parameters.scale_value: Scale value not given", 0), 0u) << e;
}

TEST_F(ConfigTest, MeanValueCountIsOneOrTheChannelCount) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "norm_type", "data_mean")
                               .set("input_parameters", "mean_value", "'1 2'")
                               .str());
  EXPECT_EQ(
      e,
      "input_parameters.mean_value: input 0 has 2 values; give one value or one per channel (3 for "
      "input_type_train rgb)");
}

TEST_F(ConfigTest, MeanValueCountIsOnePerInput) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "norm_type", "data_mean")
                               .set("input_parameters", "mean_value", "'1; 2'")
                               .str());
  EXPECT_EQ(e.rfind("input_parameters.mean_value: Wrong num of mean_value received", 0), 0u) << e;
}

TEST_F(ConfigTest, MeanValueNotANumber) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "norm_type", "data_mean")
                               .set("input_parameters", "mean_value", "'128 abc 1'")
                               .str());
  EXPECT_EQ(e.rfind("input_parameters.mean_value: Wrong mean_value format '128 abc 1'", 0), 0u)
      << e;
}

TEST_F(ConfigTest, UnusedMeanValueWarns) {
  Config c;
  ASSERT_TRUE(parse(Yaml().set("input_parameters", "mean_value", "128").str(), &c)) << error_;
  EXPECT_TRUE(
      warned("input_parameters.mean_value: input 0 has norm_type 'data_scale', its mean_value is "
             "ignored"));
  EXPECT_TRUE(c.input_parameters[0].mean.empty());
}

TEST_F(ConfigTest, FeaturemapOnlyWithoutPreprocessing) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_type_train", "featuremap")
                               .set("input_parameters", "input_type_rt", "featuremap")
                               .set("input_parameters", "input_layout_rt", "NCHW")
                               .str());
  EXPECT_EQ(e,
            "input_parameters.norm_type: input 0 has input_type_rt featuremap, this input only "
            "support norm_type "
            "no_preprocess (got 'data_scale')");
}

TEST_F(ConfigTest, NormTypeUnknown) {
  EXPECT_NE(
      error_of(Yaml().set("input_parameters", "norm_type", "data_std").str())
          .find("input_parameters.norm_type: Norm type given invalid: 'data_std' is not one of"),
      std::string::npos);
}

TEST_F(ConfigTest, CalDataDirRequiredUnlessSkipOrLoad) {
  std::string e = error_of(Yaml().erase("calibration_parameters", "cal_data_dir").str());
  EXPECT_EQ(
      e.rfind("calibration_parameters.cal_data_dir: missing: calibration_type 'default' needs", 0),
      0u)
      << e;
  for (const char* t : {"skip", "load"}) {
    Config c;
    ASSERT_TRUE(parse(Yaml()
                          .erase("calibration_parameters", "cal_data_dir")
                          .set("calibration_parameters", "calibration_type", t)
                          .str(),
                      &c))
        << t << error_;
    EXPECT_TRUE(c.input_parameters[0].cal_data_dir.empty());
    EXPECT_EQ(c.metadata().count("CALI_DIR"), 0u);
  }
  Config ignored;
  ASSERT_TRUE(
      parse(Yaml().set("calibration_parameters", "calibration_type", "skip").str(), &ignored));
  EXPECT_TRUE(warned(
      "calibration_parameters.cal_data_dir: calibration_type is skip, cal_data_dir is not used"));
}

TEST_F(ConfigTest, CalDataDirMustExist) {
  std::string e = error_of(Yaml().set("calibration_parameters", "cal_data_dir", "nowhere").str());
  EXPECT_EQ(e,
            "calibration_parameters.cal_data_dir: Cal_data_dir does not exist: " + path("nowhere"));
}

TEST_F(ConfigTest, CalDataDirCountMustMatch) {
  std::string e = error_of(
      Yaml().set("calibration_parameters", "cal_data_dir", "'calibration_data; cal_gray'").str());
  EXPECT_EQ(e,
            "calibration_parameters.cal_data_dir: Wrong cal_dir num given, cal_dir num 2 is not "
            "equal to input num 1");
}

TEST_F(ConfigTest, CalDataTypeInferredFromTheDirectorySuffix) {
  Config c;
  ASSERT_TRUE(
      parse(Yaml().set("calibration_parameters", "cal_data_dir", "calibration_data").str(), &c));
  EXPECT_EQ(c.input_parameters[0].cal_data_type, "uint8");
  ASSERT_TRUE(parse(Yaml().str(), &c));
  EXPECT_EQ(c.input_parameters[0].cal_data_type, "float32");
  EXPECT_TRUE(c.input_parameters[0].cal_data_type_inferred);
  // An explicit type that disagrees with the suffix wins, with a warning.
  ASSERT_TRUE(parse(Yaml().set("calibration_parameters", "cal_data_type", "uint8").str(), &c));
  EXPECT_EQ(c.input_parameters[0].cal_data_type, "uint8");
  EXPECT_TRUE(
      warned("calibration_parameters.cal_data_type: The calibration dir name suffix is not the "
             "same as the "
             "value uint8"));
  // int8 next to a non-_f32 directory counts as agreeing (the vendor's rule).
  ASSERT_TRUE(parse(Yaml()
                        .set("calibration_parameters", "cal_data_dir", "calibration_data")
                        .set("calibration_parameters", "cal_data_type", "int8")
                        .str(),
                    &c));
  EXPECT_FALSE(warned("cal_data_type"));
}

TEST_F(ConfigTest, CalDataTypeUnknown) {
  EXPECT_EQ(error_of(Yaml().set("calibration_parameters", "cal_data_type", "float16").str()),
            "calibration_parameters.cal_data_type: User input cal_data_type invalid, 'float16' is "
            "not one of uint8, "
            "float32, int32, int16, int8");
}

TEST_F(ConfigTest, CalibrationTypes) {
  for (const char* t : {"default", "mix", "kl", "max", "load", "skip"}) {
    Config c;
    EXPECT_TRUE(parse(Yaml().set("calibration_parameters", "calibration_type", t).str(), &c))
        << t << error_;
    EXPECT_EQ(c.calibration_parameters.calibration_type, t);
  }
  EXPECT_EQ(error_of(Yaml().set("calibration_parameters", "calibration_type", "minmax").str()),
            "calibration_parameters.calibration_type: User input calibration_type invalid, "
            "'minmax' is not one of "
            "default, mix, kl, max, load, skip");
}

TEST_F(ConfigTest, MaxPercentileRange) {
  EXPECT_EQ(
      error_of(Yaml().set("calibration_parameters", "max_percentile", "1.5").str()),
      "calibration_parameters.max_percentile: Invalid max_percentile: 1.5, avaliable range: 0~1");
}

TEST_F(ConfigTest, OptimizationValues) {
  Config c;
  ASSERT_TRUE(
      parse(Yaml()
                .set("calibration_parameters", "optimization", "'set_Conv_output_int16; foo_bar'")
                .str(),
            &c));
  EXPECT_TRUE(warned("calibration_parameters.optimization: 'foo_bar' is not a known optimization"));
  EXPECT_EQ(error_of(Yaml()
                         .set("model_parameters", "march", "bernoulli2")
                         .set("calibration_parameters", "optimization", "set_model_output_int16")
                         .str()),
            "calibration_parameters.optimization: 'set_model_output_int16' is not supported on "
            "bernoulli2 (no int16; "
            "set_model_output_int8 only)");
}

TEST_F(ConfigTest, InputSourceMustSupportTheRuntimeType) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_name", "data")
                               .set("compiler_parameters", "input_source", "{data: ddr}")
                               .str());
  EXPECT_EQ(e.rfind("compiler_parameters.input_source: Wrong input_source received. input type rt "
                    ": nv12 does not "
                    "support input_source ddr",
                    0),
            0u)
      << e;
  std::string r = error_of(Yaml()
                               .set("input_parameters", "input_name", "data")
                               .set("input_parameters", "input_type_rt", "rgb")
                               .set("input_parameters", "input_layout_rt", "NHWC")
                               .set("compiler_parameters", "input_source", "{data: resizer}")
                               .str());
  EXPECT_NE(r.find("input type rt : rgb does not support input_source resizer"), std::string::npos)
      << r;
}

TEST_F(ConfigTest, InputSourceValueUnknown) {
  EXPECT_EQ(error_of(Yaml().set("compiler_parameters", "input_source", "{data: camera}").str()),
            "compiler_parameters.input_source: Invalid input_source received for input 'data': "
            "'camera' is not one "
            "of ddr, pyramid, resizer");
}

TEST_F(ConfigTest, InputSourceMustBeADict) {
  EXPECT_EQ(error_of(Yaml().set("compiler_parameters", "input_source", "pyramid").str()),
            "compiler_parameters.input_source: Invalid input_source format received. input_source "
            "should be a dict, "
            "e.g. {\"data\": \"pyramid\"}");
}

TEST_F(ConfigTest, InputSourceNamesAreCheckedAgainstTheModel) {
  Config c;
  ASSERT_TRUE(
      parse(Yaml().set("compiler_parameters", "input_source", "{other: pyramid}").str(), &c))
      << error_;
  EXPECT_FALSE(validate_with_model(c, {{"data", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_EQ(
      error_,
      "compiler_parameters.input_source: Invalid input_source setting received, input name in "
      "'input_source': 'other' does not exist in model input names: ['data']");
}

TEST_F(ConfigTest, ResizerNotWithLayerOutDump) {
  std::string e = error_of(Yaml()
                               .set("input_parameters", "input_name", "data")
                               .set("model_parameters", "layer_out_dump", "True")
                               .set("compiler_parameters", "input_source", "{data: resizer}")
                               .str());
  EXPECT_NE(e.find("compiler_parameters.input_source: input 'data' uses resizer"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, RemoveNodeTypeUnknown) {
  std::string e =
      error_of(Yaml().set("model_parameters", "remove_node_type", "'Dequantize; Conv'").str());
  EXPECT_EQ(e.rfind("model_parameters.remove_node_type: Unsupport remove Conv now", 0), 0u) << e;
}

TEST_F(ConfigTest, DebugModeUnknown) {
  std::string e = error_of(Yaml().set("model_parameters", "debug_mode", "dump_all").str());
  EXPECT_EQ(e,
            "model_parameters.debug_mode: User input debug_mode invalid: 'dump_all' is not one of "
            "dump_calibration_data");
}

TEST_F(ConfigTest, JobsAndAdvice) {
  EXPECT_NE(error_of(Yaml().set("compiler_parameters", "jobs", "0").str())
                .find("compiler_parameters.jobs"),
            std::string::npos);
  EXPECT_EQ(error_of(Yaml().set("compiler_parameters", "advice", "-1").str()),
            "compiler_parameters.advice: The parameter advice, must be a positive integer");
}

TEST_F(ConfigTest, CustomOpChecks) {
  std::string base = Yaml().str();
  EXPECT_EQ(error_of(base + "custom_op:\n  op_register_files: sample_custom.py\n"),
            "custom_op.custom_op_method: Custom_op_method is not specified (use register)");
  EXPECT_NE(error_of(base + "custom_op:\n  custom_op_method: manual\n")
                .find("custom_op.custom_op_method"),
            std::string::npos);
  EXPECT_EQ(
      error_of(base + "custom_op:\n  custom_op_method: register\n  op_register_files: op.cc\n"),
      "custom_op.op_register_files: File op.cc is not a python file. Please fix its extension or "
      "remove it");
  EXPECT_EQ(error_of(base + "custom_op:\n  custom_op_method: register\n  custom_op_dir: ./none\n"),
            "custom_op.custom_op_dir: Custom_op_dir '" + path("none") + "' does not exist");
  EXPECT_NE(
      error_of(base + "custom_op:\n  custom_op_method: register\n  custom_op_dir: ./custom_op\n"
                      "  op_register_files: other.py\n")
          .find("'other.py' does not exist in"),
      std::string::npos);
}

// --------------------------------------------------------- with the model

TEST_F(ConfigTest, ModelInputNameMustExist) {
  Config c;
  ASSERT_TRUE(parse(Yaml().set("input_parameters", "input_name", "image").str(), &c));
  EXPECT_FALSE(validate_with_model(c, {{"images", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_EQ(error_,
            "input_parameters.input_name: Input name does not exist in model file: image. name "
            "list: ['images']");
}

TEST_F(ConfigTest, ModelInputCountMustMatch) {
  Config c;
  ASSERT_TRUE(parse(Yaml().set("input_parameters", "input_name", "a").str(), &c));
  EXPECT_FALSE(
      validate_with_model(c, {{"a", {1, 3, 8, 8}}, {"b", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_EQ(error_.rfind("input_parameters.input_name: Wrong num of input names received. Num of "
                         "input name given: "
                         "1, while model file has 2 inputs",
                         0),
            0u)
      << error_;
}

TEST_F(ConfigTest, SeveralModelInputsNeedNames) {
  Config c;
  ASSERT_TRUE(parse(Yaml().str(), &c));
  EXPECT_FALSE(
      validate_with_model(c, {{"a", {1, 3, 8, 8}}, {"b", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_EQ(error_.rfind("input_parameters.input_name: Model has more than one input!", 0), 0u)
      << error_;
}

TEST_F(ConfigTest, DynamicModelDimensionsNeedInputShape) {
  Config c;
  ASSERT_TRUE(parse(Yaml().str(), &c));
  EXPECT_FALSE(validate_with_model(c, {{"x", {-1, 3, 224, 224}}}, &warnings_, &error_));
  EXPECT_EQ(
      error_,
      "input_parameters.input_shape: The input_shape [-1, 3, 224, 224] of the model input 'x' is a "
      "dynamic shape. Please configure the 'input_shape' option in 'input_parameters'");
  ASSERT_TRUE(parse(Yaml().set("input_parameters", "input_shape", "1x3x224x224").str(), &c));
  ASSERT_TRUE(validate_with_model(c, {{"x", {-1, 3, 224, 224}}}, &warnings_, &error_)) << error_;
  EXPECT_FALSE(warned("is different from model file input shape"));  // filling '?' is no override
}

TEST_F(ConfigTest, InputShapeOverridingTheModelWarns) {
  Config c;
  ASSERT_TRUE(parse(Yaml().set("input_parameters", "input_shape", "1x3x320x320").str(), &c));
  ASSERT_TRUE(validate_with_model(c, {{"x", {1, 3, 224, 224}}}, &warnings_, &error_)) << error_;
  EXPECT_TRUE(warned(
      "input_parameters.input_shape: For input 0: user input shape: [1, 3, 320, 320] is different "
      "from model file input shape: [1, 3, 224, 224]. Using user input info"));
  EXPECT_EQ(c.input_parameters[0].shape, (std::vector<int64_t>{1, 3, 320, 320}));
}

TEST_F(ConfigTest, ConfigWithMoreInputsThanTheModel) {
  Config c;
  ASSERT_TRUE(parse(
      Yaml()
          .set("input_parameters", "input_type_rt", "'nv12; nv12'")
          .set("input_parameters", "input_type_train", "'rgb; rgb'")
          .set("input_parameters", "input_layout_train", "'NCHW; NCHW'")
          .set("input_parameters", "norm_type", "'data_scale; data_scale'")
          .set("input_parameters", "scale_value", "'1; 1'")
          .set("calibration_parameters", "cal_data_dir", "'calibration_data; calibration_data'")
          .str(),
      &c))
      << error_;
  EXPECT_FALSE(validate_with_model(c, {{"x", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_EQ(
      error_.rfind(
          "input_parameters.input_type_rt: the config describes 2 inputs but the model has 1", 0),
      0u)
      << error_;
}

// ---------------------------------------------------------------- fast-perf

TEST_F(ConfigTest, FastPerfConfigFromTheModel) {
  Config c = make_fast_perf_config(path("model.onnx"), "bayes-e", "onnx", {{"b", {1, 64}}});
  warnings_.clear();
  ASSERT_TRUE(
      validate_with_model(c, {{"a", {-1, 3, 224, 224}}, {"b", {1, -1}}}, &warnings_, &error_))
      << error_;
  ASSERT_EQ(c.input_parameters.size(), 2u);
  EXPECT_EQ(c.input_parameters[0].name, "a");
  EXPECT_EQ(c.input_parameters[0].shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_TRUE(
      warned("The input a has dynamic input_shape, the first dim of the [-1, 3, 224, 224] will be "
             "set to 1"));
  EXPECT_EQ(c.input_parameters[1].shape, (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(c.input_parameters[0].type_rt, "featuremap");
  EXPECT_EQ(c.input_parameters[0].input_source, "ddr");
  EXPECT_EQ(c.calibration_parameters.calibration_type, "skip");
  EXPECT_EQ(c.calibration_parameters.optimization, std::vector<std::string>{"run_fast"});
  EXPECT_EQ(c.compiler_parameters.optimize_level, "O3");
  EXPECT_EQ(c.model_parameters.remove_node_type.back(), "Softmax");
  EXPECT_EQ(c.model_parameters.output_model_file_prefix, "model");
  // The written-out config is an ordinary one.
  Config back;
  ASSERT_TRUE(parse_config(c.echo_yaml(), "/", &back, nullptr, &error_)) << error_ << c.echo_yaml();
  EXPECT_FALSE(back.fast_perf);
  EXPECT_EQ(back.input_parameters[1].shape, (std::vector<int64_t>{1, 64}));
}

TEST_F(ConfigTest, FastPerfOnlyDynamicDimensionsChange) {
  Config c = make_fast_perf_config(path("model.onnx"), "bayes", "onnx", {{"a", {1, 3, 320, 320}}});
  EXPECT_FALSE(validate_with_model(c, {{"a", {-1, 3, 224, 224}}}, &warnings_, &error_));
  EXPECT_EQ(error_,
            "--input-shape: Your input shape [1, 3, 320, 320] but model input shape is [-1, 3, "
            "224, 224], we "
            "only supports modifying the dim value of a dynamic batch");
  Config d = make_fast_perf_config(path("model.onnx"), "bayes", "onnx", {});
  EXPECT_FALSE(validate_with_model(d, {{"a", {1, 3, -1, -1}}}, &warnings_, &error_));
  EXPECT_NE(error_.find("but the dynamic batch dim is not the first dim"), std::string::npos)
      << error_;
  Config e = make_fast_perf_config(path("model.onnx"), "bayes", "onnx", {{"z", {1}}});
  EXPECT_FALSE(validate_with_model(e, {{"a", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_EQ(error_, "--input-shape: Your input name z not in model inputs ['a']");
}

TEST_F(ConfigTest, FastPerfChecksMarchAndModel) {
  Config c = make_fast_perf_config(path("model.onnx"), "bayes-x", "onnx", {});
  EXPECT_FALSE(validate_with_model(c, {{"a", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_EQ(error_.rfind("--march: 'bayes-x' is not one of", 0), 0u) << error_;
  Config m = make_fast_perf_config(path("none.onnx"), "bernoulli2", "", {});
  EXPECT_FALSE(validate_with_model(m, {{"a", {1, 3, 8, 8}}}, &warnings_, &error_));
  EXPECT_EQ(error_.rfind("--model: Can not find file given", 0), 0u) << error_;
  Config caffe = make_fast_perf_config(path("model.caffemodel"), "bernoulli2", "caffe", {},
                                       path("model.prototxt"));
  EXPECT_TRUE(validate_with_model(caffe, {{"data", {1, 3, 8, 8}}}, &warnings_, &error_)) << error_;
  EXPECT_EQ(caffe.model_parameters.remove_node_type.back(), "Reshape");  // no Softmax removal on X3
}

// ---------------------------------------------------------- echo/metadata

TEST_F(ConfigTest, EchoIsNormalizedYaml) {
  Config c;
  ASSERT_TRUE(parse(Yaml()
                        .set("input_parameters", "input_name", "data")
                        .set("calibration_parameters", "run_on_cpu", "'a;b'")
                        .str(),
                    &c))
      << error_;
  const std::string echo = c.echo_yaml();
  EXPECT_NE(echo.find("model_parameters:\n  onnx_model: '" + path("model.onnx") +
                      "'\n  march: 'bayes-e'\n"),
            std::string::npos)
      << echo;
  EXPECT_NE(echo.find("  run_on_cpu: 'a; b'\n"), std::string::npos) << echo;
  EXPECT_NE(echo.find("  debug: true\n"), std::string::npos) << echo;
  EXPECT_NE(echo.find("  input_source:\n    data: 'pyramid'\n"), std::string::npos) << echo;
  expect_echo_round_trip(c);
}

TEST_F(ConfigTest, MetadataKeys) {
  Config c;
  ASSERT_TRUE(load_sample("j5_all_keys.yaml", &c)) << error_;
  const auto md = c.metadata();
  EXPECT_EQ(md.at("MARCH"), "bayes");
  EXPECT_EQ(md.at("ONNX_MODEL"), path("model.onnx"));
  EXPECT_EQ(md.at("INPUT_NAMES"), "input_name1;input_name2");
  EXPECT_EQ(md.at("INPUT_TYPE_RT"), "nv12;featuremap");
  EXPECT_EQ(md.at("INPUT_TYPE_TRAIN"), "rgb;featuremap");
  EXPECT_EQ(md.at("INPUT_LAYOUT_RT"), ";NCHW");
  EXPECT_EQ(md.at("INPUT_LAYOUT_TRAIN"), "NCHW;NCHW");
  EXPECT_EQ(md.at("INPUT_SPACE_AND_RANGE"), "bt601_video;regular");
  EXPECT_EQ(md.at("NORM_TYPE"), "data_mean_and_scale;no_preprocess");
  EXPECT_EQ(md.at("MEAN_VALUE"), "123.675,116.28,103.53;");
  EXPECT_EQ(md.at("SCALE_VALUE"), "0.01712475,0.017507,0.01742919;");
  EXPECT_EQ(md.at("INPUT_SHAPE"), "1x3x224x224;1x10x1x1");
  EXPECT_EQ(md.at("INPUT_BATCH"), "1");
  EXPECT_EQ(md.at("CALI_TYPE"), "max");
  EXPECT_EQ(md.at("CAL_DATA_TYPE"), "float32;float32");
  EXPECT_EQ(md.at("MAX_PERCENTILE"), "0.99995");
  EXPECT_EQ(md.at("PER_CHANNEL"), "True");
  EXPECT_EQ(md.at("RUN_ON_CPU"), "Conv_5;Conv_6");
  EXPECT_EQ(md.at("REMOVE_NODE_TYPE"), "Quantize;Transpose;Dequantize;Cast;Reshape;Softmax");
  EXPECT_EQ(md.at("DEBUG"), "True");
  EXPECT_EQ(md.at("COMPILE_MODE"), "balance");
  EXPECT_EQ(md.at("LAYER_OUT_DUMP"), "False");
  EXPECT_EQ(md.at("CUSTOM_OP_METHOD"), "register");
  EXPECT_EQ(md.at("hbdk_params"), "hbdk_pass_through_params input-source");
  EXPECT_EQ(
      md.at("hbdk_pass_through_params"),
      "--O3 --debug --core-num 1 --balance 50 --max-time-per-fc 4294967295 --jobs 4 --advice 1");
  EXPECT_EQ(md.at("input-source"),
            "{'input_name1': 'pyramid', 'input_name2': 'ddr', '_default_value': 'ddr'}");
}

TEST_F(ConfigTest, ErrorGroup) {
  EXPECT_EQ(config_error_group("compiler_parameters.jobs: x"), "compiler_parameters");
  EXPECT_EQ(config_error_group("custom_op: x"), "custom_op");
  EXPECT_EQ(config_error_group("yaml: x"), "");
  EXPECT_EQ(config_error_group("--march: x"), "");
}

}  // namespace
}  // namespace openbpu::cvt
