// SPDX-License-Identifier: Apache-2.0
#include "tests/fuzz/fuzz_converter.h"

#include <sys/stat.h>
#include <unistd.h>

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <vector>

#include "converter/config/config.h"
#include "converter/frontend/onnx/onnx_io.h"
#include "converter/ir/graph.h"

namespace openbpu::fuzz {

namespace {

std::string& dir() {
  static std::string d;
  return d;
}

std::string& error_text() {
  static std::string e;
  return e;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// input [1,3,32,32] -> Conv(w: 4x3x3x3 in w.dat, pads 1) -> y
onnx::ModelProto fixture_model() {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(11);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("input");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 3, 32, 32}) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {4, 3, 3, 3}) w->add_dims(d);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("w.dat");
  auto* n = g->add_node();
  n->set_op_type("Conv");
  n->set_name("conv0");
  n->add_input("input");
  n->add_input("w");
  n->add_output("y");
  auto* pads = n->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  return m;
}

const int64_t kHostile[] = {0, -1, 1, 2, 3, -2, 7, 64, 1 << 20, std::numeric_limits<int32_t>::max(),
                            std::numeric_limits<int32_t>::min(), int64_t{1} << 32, int64_t{1} << 62,
                            std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
const char* const kOps[] = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "Scan", "Loop", "If",
                            "Reshape", "Transpose", "Concat", "Split", "Gather", "Resize", "Upsample", "Tile",
                            "Expand", "Einsum", "DepthToSpace", "SpaceToDepth", "Pad", "Slice", "TopK", "LRN",
                            "ConstantOfShape", "OneHot", "Squeeze", "Unsqueeze", "Flatten", "ReduceMean",
                            "Softmax", "MatMul", "Gemm", "Range", "GridSample", "RoiAlign", "CumSum", "Col2Im",
                            "MaxUnpool", "GlobalAveragePool", "BatchNormalization", "InstanceNormalization",
                            "Compress", "ScatterND", "GatherND", "Unique", "NonZero", "Trilu", "Where", "Constant"};
const char* const kAttrs[] = {"strides", "kernel_shape", "pads", "dilations", "group", "axis", "axes", "perm",
                              "blocksize", "split", "output_shape", "output_padding", "keepdims", "k", "body",
                              "then_branch", "num_scan_inputs", "value", "to", "size", "equation", "mode"};
const char* const kLocations[] = {"w.dat", "passwd", "..", "/etc/passwd", "cal", "absent", "cal/../w.dat", ""};
const char* const kExtents[] = {"0", "abc", "-1", "99999999999999999999", "432", "4611686018427387904", " 4", "1e3"};

template <class T> T pick(std::mt19937& rng, const T* items, size_t n) { return items[rng() % n]; }
#define PICK(rng, arr) pick(rng, arr, sizeof(arr) / sizeof(arr[0]))

void mutate_attribute(onnx::NodeProto* n, std::mt19937& rng) {
  if (n->attribute_size() > 0 && rng() % 4 == 0) {  // drop one
    n->mutable_attribute()->DeleteSubrange(static_cast<int>(rng() % n->attribute_size()), 1);
    return;
  }
  onnx::AttributeProto* a = nullptr;
  if (n->attribute_size() > 0 && rng() % 2 == 0) {
    a = n->mutable_attribute(static_cast<int>(rng() % n->attribute_size()));
  } else {
    a = n->add_attribute();
    a->set_name(PICK(rng, kAttrs));
    const int kinds[] = {onnx::AttributeProto::INT, onnx::AttributeProto::INTS, onnx::AttributeProto::FLOAT,
                         onnx::AttributeProto::STRING, onnx::AttributeProto::GRAPH, onnx::AttributeProto::TENSOR};
    a->set_type(static_cast<onnx::AttributeProto::AttributeType>(PICK(rng, kinds)));
  }
  switch (a->type()) {
    case onnx::AttributeProto::INT: a->set_i(PICK(rng, kHostile)); break;
    case onnx::AttributeProto::INTS: {
      const int len = static_cast<int>(rng() % 7);
      a->clear_ints();
      for (int i = 0; i < len; ++i) a->add_ints(rng() % 3 ? static_cast<int64_t>(rng() % 4) : PICK(rng, kHostile));
      break;
    }
    case onnx::AttributeProto::GRAPH: a->mutable_g()->set_name("b"); break;
    case onnx::AttributeProto::TENSOR: {
      auto* t = a->mutable_t();
      t->set_data_type(static_cast<int32_t>(rng() % 17));
      t->add_dims(PICK(rng, kHostile));
      break;
    }
    case onnx::AttributeProto::STRING: a->set_s(rng() % 2 ? "ij,jk->ik" : "...,..."); break;
    default: a->set_f(static_cast<float>(PICK(rng, kHostile))); break;
  }
}

void mutate_tensor(onnx::TensorProto* t, std::mt19937& rng) {
  switch (rng() % 3) {
    case 0:
      if (t->dims_size() > 0 && rng() % 2) t->set_dims(static_cast<int>(rng() % t->dims_size()), PICK(rng, kHostile));
      else t->add_dims(PICK(rng, kHostile));
      break;
    case 1: {
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      t->clear_raw_data();
      t->clear_external_data();
      const char* keys[] = {"location", "offset", "length", "checksum"};
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < n; ++i) {
        auto* kv = t->add_external_data();
        kv->set_key(i == 0 ? "location" : PICK(rng, keys));
        kv->set_value(i == 0 ? PICK(rng, kLocations) : PICK(rng, kExtents));
      }
      break;
    }
    default: t->set_data_type(static_cast<int32_t>(rng() % 17)); break;
  }
}

void mutate_model(onnx::ModelProto* m, std::mt19937& rng) {
  auto* g = m->mutable_graph();
  onnx::NodeProto* n = g->node_size() ? g->mutable_node(static_cast<int>(rng() % g->node_size())) : nullptr;
  switch (rng() % 8) {
    case 0: case 1: case 2:
      if (n) mutate_attribute(n, rng);
      break;
    case 3:
      if (n) n->set_op_type(PICK(rng, kOps));
      break;
    case 4:
      if (g->initializer_size()) mutate_tensor(g->mutable_initializer(static_cast<int>(rng() % g->initializer_size())), rng);
      break;
    case 5:
      if (g->input_size()) {
        auto* shape = g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
        if (shape->dim_size() && rng() % 2) shape->mutable_dim(static_cast<int>(rng() % shape->dim_size()))->set_dim_value(PICK(rng, kHostile));
        else shape->add_dim()->set_dim_value(static_cast<int64_t>(rng() % 5));
      }
      break;
    case 6:
      if (n && n->input_size()) {
        const std::string names[] = {"", "y", "input", "w", std::string("in\0put", 6), "absent"};
        n->set_input(static_cast<int>(rng() % n->input_size()), PICK(rng, names));
      }
      break;
    default:
      if (m->opset_import_size()) m->mutable_opset_import(0)->set_version(static_cast<int64_t>(rng() % 22));
      break;
  }
}

}  // namespace

void converter_init() {
  if (!dir().empty()) return;
  char tmpl[] = "/tmp/obpu_fuzz_converter_XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  if (d == nullptr) std::abort();
  dir() = d;
  std::vector<float> w(4 * 3 * 3 * 3, 0.1f);
  write_bytes(dir() + "/w.dat", std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
  std::string model;
  fixture_model().SerializeToString(&model);
  write_bytes(dir() + "/model.onnx", model);
  ::symlink("/etc/passwd", (dir() + "/passwd").c_str());
  ::mkfifo((dir() + "/fifo").c_str(), 0644);
  ::mkdir((dir() + "/cal").c_str(), 0755);
  write_bytes(dir() + "/cal/a.bin", std::string(3 * 32 * 32, '\x10'));
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(dir(), ec);
  });
}

const std::string& converter_dir() { return dir(); }

const std::string& last_error() { return error_text(); }

Stage onnx_import_one(const uint8_t* data, size_t size) {
  onnx::ModelProto m;
  if (size > (64u << 20) || !m.ParseFromArray(data, static_cast<int>(size))) return Stage::kUnparsed;
  cvt::Graph g;
  std::string& err = error_text();
  if (!cvt::onnxio::import_model(m, dir(), &g, &err)) return Stage::kRefused;
  // Dynamic input dimensions as hb_mapper's input_shape would give them.
  for (const auto& in : g.inputs) {
    cvt::Value* v = g.value(in);
    for (int64_t& d : v->shape)
      if (d < 0) d = 1;
  }
  if (!g.check_tensor_sizes(&err) || !cvt::onnxio::infer_shapes(&g, &err) || !g.check_tensor_sizes(&err))
    return Stage::kImported;
  return Stage::kInferred;
}

Stage yaml_config_one(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  cvt::Config c;
  std::vector<std::string> warnings;
  std::string& err = error_text();
  if (!cvt::parse_config(text, dir(), &c, &warnings, &err)) return Stage::kRefused;
  if (!cvt::validate_with_model(c, {{"input", {1, 3, 32, 32}}}, &warnings, &err)) return Stage::kImported;
  (void)c.echo_yaml();
  return Stage::kInferred;
}

size_t onnx_mutate(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  onnx::ModelProto m;
  if (!m.ParseFromArray(data, static_cast<int>(size))) return 0;
  std::mt19937 rng(seed);
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < rounds; ++i) mutate_model(&m, rng);
  std::string out;
  if (!m.SerializeToString(&out) || out.size() > max_size) return 0;
  std::copy(out.begin(), out.end(), data);
  return out.size();
}

}  // namespace openbpu::fuzz
