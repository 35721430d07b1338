// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/model_info.h"

#include <map>
#include <sstream>

#include "converter/config/config_internal.h"
#include "schema/writer.h"

namespace openbpu::cvt {

namespace {

using Md = std::map<std::string, std::string>;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  for (auto& x : out) {
    const size_t b = x.find_first_not_of(' '), e = x.find_last_not_of(' ');
    x = b == std::string::npos ? "" : x.substr(b, e - b + 1);
  }
  return out;
}

// "key<pad>: value" with the key padded to 20 columns as the vendor tool does.
std::string kv(const std::string& key, const std::string& value) {
  std::string k = key;
  if (k.size() < 20) k.resize(20, ' ');
  return k + ": " + value;
}

std::string get(const Md& md, const char* key) {
  auto it = md.find(key);
  return it == md.end() ? "" : it->second;
}

void add_if(std::vector<std::string>* out, const Md& md, const char* key, const char* label) {
  const std::string v = get(md, key);
  if (!v.empty()) out->push_back(kv(label, v));
}

std::string banner(const std::string& name) {
  const std::string mid = " " + name + " ";
  const size_t width = 50;
  if (mid.size() + 2 >= width) return "*" + mid + "*";
  const size_t left = (width - mid.size()) / 2;
  return std::string(left, '*') + mid + std::string(width - mid.size() - left, '*');
}

void model_parameters(const Md& md, std::vector<std::string>* out) {
  out->push_back("############# model_parameters info #############");
  if (!get(md, "CAFFE_MODEL").empty()) {
    out->push_back(kv("caffe_model", get(md, "CAFFE_MODEL")));
    out->push_back(kv("prototxt", get(md, "PROTOTXT")));
  } else {
    out->push_back(kv("onnx_model", get(md, "ONNX_MODEL")));
  }
  out->push_back(kv("BPU march", get(md, "MARCH")));
  out->push_back(kv("layer_out_dump", get(md, "LAYER_OUT_DUMP")));
  out->push_back(kv("log_level", get(md, "LOG_LEVEL")));
  out->push_back(kv("working dir", get(md, "WORKING_DIR")));
  out->push_back("output_model_file_prefix: " + get(md, "MODEL_PREFIX"));
  add_if(out, md, "OUTPUT_LAYOUT", "output_layout");
  add_if(out, md, "OUTPUT_NODES", "output_nodes");
  add_if(out, md, "REMOVE_NODE_TYPE", "remove node type");
  add_if(out, md, "REMOVE_NODE_NAME", "remove node name");
  add_if(out, md, "SET_NODE_DATA_TYPE", "set node data type");
  add_if(out, md, "DEBUG_MODE", "debug_mode");
  add_if(out, md, "NODE_INFO", "node info");
}

void input_parameters(const Md& md, std::vector<std::string>* out) {
  out->push_back("############# input_parameters info #############");
  const std::vector<std::string> names = split(get(md, "INPUT_NAMES"), ';');
  auto item = [&](const char* key, size_t i) {
    const std::vector<std::string> v = split(get(md, key), ';');
    return i < v.size() && v[i] != "None" ? v[i] : std::string();
  };
  const bool cal_dirs = !get(md, "CALI_DIR").empty();
  for (size_t i = 0; i < names.size(); ++i) {
    out->push_back("------------------------------------------");
    out->push_back("---------input info : " + names[i] + " ---------");
    out->push_back(kv("input_name", names[i]));
    out->push_back(kv("input_type_rt", item("INPUT_TYPE_RT", i)));
    out->push_back(kv("input_space&range", item("INPUT_SPACE_AND_RANGE", i)));
    const std::string layout_rt = item("INPUT_LAYOUT_RT", i);
    out->push_back(kv("input_layout_rt", layout_rt.empty() ? "None" : layout_rt));
    out->push_back(kv("input_type_train", item("INPUT_TYPE_TRAIN", i)));
    out->push_back(kv("input_layout_train", item("INPUT_LAYOUT_TRAIN", i)));
    out->push_back(kv("norm_type", item("NORM_TYPE", i)));
    out->push_back(kv("input_shape", item("INPUT_SHAPE", i)));
    add_if(out, md, "INPUT_BATCH", "input_batch");
    const std::string mean = item("MEAN_VALUE", i), scale = item("SCALE_VALUE", i);
    if (!mean.empty()) out->push_back(kv("mean_value", mean + ","));
    if (!scale.empty()) out->push_back(kv("scale_value", scale + ","));
    if (cal_dirs) out->push_back(kv("cal_data_dir", item("CALI_DIR", i)));
    const std::string cal_type = item("CAL_DATA_TYPE", i);
    if (!cal_type.empty()) out->push_back(kv("cal_data_type", cal_type));
    out->push_back("---------input info : " + names[i] + " end -------");
  }
  out->push_back("------------------------------------------");
}

void calibration_and_compiler(const Md& md, std::vector<std::string>* out) {
  out->push_back("############# calibration_parameters info #############");
  out->push_back(kv("preprocess_on", get(md, "PREPROCESS_ON")));
  out->push_back(kv("calibration_type", get(md, "CALI_TYPE")));
  add_if(out, md, "MAX_PERCENTILE", "max_percentile");
  add_if(out, md, "OPTIMIZATION", "optimization");
  add_if(out, md, "PER_CHANNEL", "per_channel");
  add_if(out, md, "RUN_ON_CPU", "run_on_cpu");
  add_if(out, md, "RUN_ON_BPU", "run_on_bpu");
  add_if(out, md, "16BIT_QUANTIZE", "16 bit quantize");
  if (!get(md, "CUSTOM_OP_METHOD").empty()) {
    out->push_back("############# custom_op info #############");
    out->push_back(kv("custom_op_method", get(md, "CUSTOM_OP_METHOD")));
    out->push_back(kv("custom_op_dir", get(md, "CUSTOM_OP_DIR")));
    out->push_back(kv("custom_op_reg_files", get(md, "CUSTOM_OP_REGISTER_FILES")));
  }
  out->push_back("############# compiler_parameters info #############");
  add_if(out, md, "DEBUG", "debug");
  add_if(out, md, "COMPILE_MODE", "compile_mode");
  // The keys hbdk_params lists, each itself a metadata entry.
  for (const std::string& key : split(get(md, "hbdk_params"), ' ')) {
    if (key.empty()) continue;
    out->push_back(key.size() < 20 ? kv(key, get(md, key.c_str())) : key + ": " + get(md, key.c_str()));
  }
}

std::string type_list(const fb::ModelT& m, bool inputs) {
  std::string s = "[";
  const size_t n = inputs ? m.inputs.size() : m.outputs.size();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t t = inputs ? m.inputs[i]->tensor : m.outputs[i]->tensor;
    if (i) s += ", ";
    s += t < m.tensors.size() ? vendor_type_name(static_cast<int>(m.tensors[t]->data_type)) : "?";
  }
  return s + "]";
}

}  // namespace

std::string vendor_type_name(int data_type) {
  // hbDNNDataType -> the vendor tool's InputDataType name and number.
  static const std::map<int, std::pair<const char*, int>> kNames = {
      {0, {"GRAY", 6}},   {1, {"NV12", 7}},  {2, {"NV12_SEPARATE", 13}}, {3, {"YUV444", 8}},
      {4, {"RGB", 10}},   {5, {"BGR", 9}},   {6, {"S4", 20}},            {7, {"U4", 21}},
      {8, {"S8", 1}},     {9, {"U8", 2}},    {10, {"F16", 19}},          {11, {"S16", 17}},
      {12, {"U16", 18}},  {13, {"F32", 5}},  {14, {"S32", 3}},           {15, {"U32", 4}},
      {16, {"F64", 16}},  {17, {"S64", 14}}, {18, {"U64", 15}}};
  auto it = kNames.find(data_type);
  if (it == kNames.end()) return "<InputDataType.UNDEFINED: 0>";
  return "<InputDataType." + std::string(it->second.first) + ": " + std::to_string(it->second.second) + ">";
}

bool input_parameters_from_metadata(const fb::ModelT& m, std::vector<InputParameter>* out, std::string* error) {
  Md md;
  for (const auto& e : m.metadata) md[e->key] = e->value;
  auto items = [&](const char* key) { return split(get(md, key), ';'); };
  const auto names = items("INPUT_NAMES"), train = items("INPUT_TYPE_TRAIN"), ltrain = items("INPUT_LAYOUT_TRAIN"),
             rt = items("INPUT_TYPE_RT"), lrt = items("INPUT_LAYOUT_RT"), shapes = items("INPUT_SHAPE"),
             range = items("INPUT_SPACE_AND_RANGE");
  out->clear();
  for (size_t i = 0; i < names.size(); ++i) {
    InputParameter ip;
    auto at = [&](const std::vector<std::string>& v) { return i < v.size() && v[i] != "None" ? v[i] : ""; };
    ip.name = names[i];
    ip.type_train = at(train);
    ip.layout_train = at(ltrain);
    ip.type_rt = at(rt);
    ip.layout_rt = at(lrt);
    if (!at(range).empty()) ip.space_and_range = at(range);
    const auto shape = cfg::parse_shape(at(shapes));
    if (!shape || ip.type_train.empty() || ip.type_rt.empty()) {
      *error = "model '" + m.name + "': the metadata do not describe input '" + ip.name + "' (built by another tool?)";
      return false;
    }
    ip.shape = *shape;
    out->push_back(ip);
  }
  return true;
}

std::vector<std::string> model_info_lines(const fb::ModelT& m) {
  Md md;
  for (const auto& e : m.metadata) md[e->key] = e->value;
  std::vector<std::string> out;
  out.push_back(banner(m.name));
  out.push_back("############# model deps info #############");
  auto version = [&](const char* key) {
    const std::string v = get(md, key);
    return v.empty() ? std::string("(not recorded in this file)") : v;
  };
  out.push_back(kv("hb_mapper version", version("BUILDER_VERSION")));
  out.push_back(kv("hbdk version", version("HBDK_VERSION")));
  out.push_back(kv("hbdk runtime version", version("HBDK_RUNTIME_VERSION")));
  out.push_back(kv("horizon_nn version", version("HORIZON_NN_VERSION")));
  model_parameters(md, &out);
  input_parameters(md, &out);
  calibration_and_compiler(md, &out);
  out.push_back("--------- input/output types -------------------");
  out.push_back(kv("model input types", type_list(m, true)));
  out.push_back(kv("model output types", type_list(m, false)));
  if (!m.removed_nodes.empty()) {
    out.push_back("--------- deleted nodes -------------------");
    for (const auto& r : m.removed_nodes) out.push_back("deleted nodes: " + r->name);
  }
  return out;
}

std::vector<std::string> deleted_node_lines(const fb::ModelT& m) {
  std::vector<std::string> out;
  for (const auto& r : m.removed_nodes) out.push_back(r->name + " (" + r->op_type + "): " + r->info);
  return out;
}

std::vector<std::string> model_detail_lines(const fb::ModelT& m) {
  std::vector<std::string> out;
  auto shape = [](const std::vector<int32_t>& v) {
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + ")";
  };
  out.push_back("model " + m.name + " march " + m.march + ", estimated latency " +
                std::to_string(m.estimated_latency_us) + " us");
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const auto& t = *m.tensors[i];
    out.push_back("tensor[" + std::to_string(i) + "] " + t.name + " type " + vendor_type_name(static_cast<int>(t.data_type)) +
                  " valid " + shape(t.valid_shape) + " aligned " + shape(t.aligned_shape) +
                  (t.constant ? " constant" : ""));
  }
  for (const auto& s : m.segments) {
    std::ostringstream os;
    os << "segment " << s->name << ": ";
    if (const auto* p = s->kind.AsBpuProgram())
      os << "BPU program, " << p->fcs.size() << " function call(s), " << p->macs << " MACs";
    else if (const auto* op = s->kind.AsCpuOp())
      os << "CPU " << (op->domain.empty() ? "" : op->domain + ".") << op->op_type;
    os << ", inputs";
    for (uint32_t x : s->inputs) os << " " << x;
    os << ", outputs";
    for (uint32_t x : s->outputs) os << " " << x;
    out.push_back(os.str());
  }
  for (const auto& e : m.metadata) out.push_back("metadata " + e->key + " = " + e->value);
  out.push_back("config yaml:");
  std::istringstream yaml(m.config_yaml);
  for (std::string line; std::getline(yaml, line);) out.push_back("  " + line);
  return out;
}

}  // namespace openbpu::cvt
