// SPDX-License-Identifier: Apache-2.0
#include "converter/frontend/onnx/onnx_io.h"
#include "converter/frontend/onnx/node_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include "runtime/core/tensor.h"
#include "schema/writer.h"

namespace openbpu::cvt::onnxio {

namespace {

constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 19;
constexpr int64_t kMaxIrVersion = 9;

template <class Src, class Dst> void append_cast(const Src& src, std::vector<uint8_t>* out) {
  out->resize(static_cast<size_t>(src.size()) * sizeof(Dst));
  Dst* d = reinterpret_cast<Dst*>(out->data());
  for (int i = 0; i < src.size(); ++i) d[i] = static_cast<Dst>(src.Get(i));
}

// An external-data offset or length: decimal digits, at most 2^62.
bool parse_extent(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned long long v = std::stoull(text);
  if (v > (1ull << 62)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

// The file an external-data location names, resolved with every symlink and
// required to lie inside the model's folder.
bool resolve_external(const std::string& tensor, const std::string& location, const std::string& base_dir,
                      std::string* path, std::string* error) {
  namespace fs = std::filesystem;
  const std::string what = "tensor '" + tensor + "': external data '" + location + "'";
  if (base_dir.empty()) {
    *error = what + ": external data is read for initializers only";
    return false;
  }
  if (location.empty() || location.find('\0') != std::string::npos || fs::path(location).is_absolute()) {
    *error = what + " is outside the model's folder (a path relative to it expected)";
    return false;
  }
  std::error_code ec;
  const fs::path dir = fs::canonical(base_dir, ec);
  const fs::path file = ec ? fs::path() : fs::canonical(dir / location, ec);
  if (ec) {
    *error = what + ": cannot open it: " + ec.message();
    return false;
  }
  const std::string d = dir.string() == "/" ? "/" : dir.string() + "/";
  if (file.string().compare(0, d.size(), d) != 0) {
    *error = what + " resolves to '" + file.string() + "', outside the model's folder '" + dir.string() + "'";
    return false;
  }
  *path = file.string();
  return true;
}

// Reads the `bytes` bytes of an external-data tensor. The file is opened
// without blocking and must be a regular file (no FIFO, device or folder).
bool read_external(const onnx::TensorProto& t, const std::string& base_dir, int64_t bytes, std::vector<uint8_t>* out,
                   std::string* error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    const std::string& k = kv.key();
    if (k == "location") {
      location = kv.value();
      continue;
    }
    if (k == "offset" || k == "length") {
      if (parse_extent(kv.value(), k == "offset" ? &offset : &length)) continue;
      *error = "tensor '" + t.name() + "': external data " + k + " '" + kv.value() +
               "' is not a number of bytes (0..2^62)";
      return false;
    }
    *error = "tensor '" + t.name() + "': external data key '" + k + "' is not supported (location, offset, length)";
    return false;
  }
  std::string path;
  if (!resolve_external(t.name(), location, base_dir, &path, error)) return false;
  const std::string what = "tensor '" + t.name() + "': external data '" + location + "'";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = what + (fd < 0 ? ": cannot open it: " + std::string(std::strerror(errno)) : " is not a regular file");
    if (fd >= 0) ::close(fd);
    return false;
  }
  const int64_t size = st.st_size;
  if (length < 0) length = offset <= size ? size - offset : -1;
  if (offset > size || length < 0 || length > size - offset || length != bytes) {
    *error = what + ": range offset " + std::to_string(offset) + " length " + std::to_string(length) +
             " does not fit the file (" + std::to_string(size) + " bytes) or the tensor (" + std::to_string(bytes) +
             " bytes)";
    ::close(fd);
    return false;
  }
  out->resize(static_cast<size_t>(length));
  int64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, out->data() + done, static_cast<size_t>(length - done), offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += n;
  }
  ::close(fd);
  if (done != length) {
    *error = what + ": read " + std::to_string(done) + " of " + std::to_string(length) + " bytes";
    return false;
  }
  return true;
}

void set_shape(onnx::ValueInfoProto* vi, const Value& v) {
  vi->set_name(v.name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(v.elem_type);
  if (!v.has_shape) return;
  auto* shape = tt->mutable_shape();
  for (int64_t d : v.shape) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

void read_type(const onnx::TypeProto& type, Value* v) {
  if (!type.has_tensor_type()) return;
  const auto& tt = type.tensor_type();
  if (tt.elem_type() != 0) v->elem_type = tt.elem_type();
  if (!tt.has_shape()) return;
  v->has_shape = true;
  v->shape.clear();
  for (const auto& d : tt.shape().dim())
    v->shape.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : -1);
}

// The value of a Constant node (value, value_float(s), value_int(s)).
bool constant_node_value(const onnx::NodeProto& n, Value* out, std::string* error) {
  for (const auto& a : n.attribute()) {
    Value v;
    v.has_shape = true;
    std::vector<uint8_t> bytes;
    if (a.name() == "value") return value_from_tensor(a.t(), ".", out, error);
    if (a.name() == "value_float") {
      v.elem_type = kFloat;
      const float f = a.f();
      bytes.resize(4);
      std::memcpy(bytes.data(), &f, 4);
    } else if (a.name() == "value_floats") {
      v.elem_type = kFloat;
      v.shape = {a.floats_size()};
      append_cast<decltype(a.floats()), float>(a.floats(), &bytes);
    } else if (a.name() == "value_int") {
      v.elem_type = kInt64;
      const int64_t i = a.i();
      bytes.resize(8);
      std::memcpy(bytes.data(), &i, 8);
    } else if (a.name() == "value_ints") {
      v.elem_type = kInt64;
      v.shape = {a.ints_size()};
      append_cast<decltype(a.ints()), int64_t>(a.ints(), &bytes);
    } else {
      continue;
    }
    v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    *out = std::move(v);
    return true;
  }
  *error = "Constant node '" + n.name() + "' has no supported value attribute";
  return false;
}


std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::vector<int64_t> split_ints(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ','))
    if (!t.empty()) out.push_back(std::stoll(t));
  return out;
}

// rt_type;layout;valid;aligned;byte_size;quant_type;axis;scales
std::string encode_native(const Value& v) {
  std::ostringstream s;
  s.precision(9);
  s << v.rt_type << ";" << v.layout << ";" << join(v.valid) << ";" << join(v.aligned) << ";" << v.byte_size << ";"
    << v.quant.type << ";" << v.quant.axis << ";";
  for (size_t i = 0; i < v.quant.scales.size(); ++i) s << (i ? "," : "") << v.quant.scales[i];
  return s.str();
}

bool decode_fields(const std::string& text, Value* v) {
  std::vector<std::string> f;
  std::stringstream ss(text);
  std::string t;
  while (std::getline(ss, t, ';')) f.push_back(t);
  if (f.size() < 7) return false;
  v->native = true;
  v->rt_type = std::stoi(f[0]);
  v->layout = std::stoi(f[1]);
  v->valid = split_ints(f[2]);
  v->aligned = split_ints(f[3]);
  v->byte_size = std::stoll(f[4]);
  v->quant.type = std::stoi(f[5]);
  v->quant.axis = std::stoi(f[6]);
  v->quant.scales.clear();
  if (f.size() > 7) {
    std::stringstream sc(f[7]);
    while (std::getline(sc, t, ','))
      if (!t.empty()) v->quant.scales.push_back(std::stof(t));
  }
  v->has_shape = true;
  if (!rt::is_image_type(v->rt_type)) v->shape = v->aligned;
  return true;
}

// A native value description from the model's metadata (any text: numbers
// that do not parse make it invalid, not an exception).
bool decode_native(const std::string& text, Value* v) {
  try {
    return decode_fields(text, v);
  } catch (const std::exception&) {
    return false;
  }
}

// No name of the graph holds a NUL byte (the runtime refuses such models and
// C strings would cut them short).
bool check_names(const onnx::GraphProto& graph, std::string* error) {
  auto bad = [&](const std::string& what, const std::string& name) {
    if (name.find('\0') == std::string::npos) return false;
    std::string shown = name;
    std::replace(shown.begin(), shown.end(), '\0', '?');
    *error = what + " '" + shown + "' contains a NUL byte";
    return true;
  };
  for (const auto& t : graph.initializer())
    if (bad("initializer", t.name())) return false;
  for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()})
    for (const auto& vi : *list)
      if (bad("value", vi.name())) return false;
  for (const auto& n : graph.node()) {
    if (bad("node", n.name())) return false;
    for (const auto* list : {&n.input(), &n.output()})
      for (const auto& v : *list)
        if (bad("value of node '" + n.name() + "'", v)) return false;
  }
  return true;
}

}  // namespace

bool value_from_tensor(const onnx::TensorProto& t, const std::string& base_dir, Value* out, std::string* error) {
  Value v;
  v.name = t.name();
  v.elem_type = t.data_type();
  v.has_shape = true;
  for (int64_t d : t.dims()) {
    if (d < 0) {
      *error = "tensor '" + t.name() + "' has a negative dimension";
      return false;
    }
    v.shape.push_back(d);
  }
  const int64_t n = capped_elements(v.shape);
  if (n < 0) {
    *error = "tensor '" + t.name() + "' of shape " + format_shape(v.shape) + " has more than " +
             std::to_string(kMaxTensorElements) + " elements, the converter's limit per tensor";
    return false;
  }
  const int es = elem_size(v.elem_type);
  if (es == 0) {
    *error = "tensor '" + t.name() + "' has unsupported element type " + std::to_string(t.data_type());
    return false;
  }
  std::vector<uint8_t> bytes;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!read_external(t, base_dir, n * es, &bytes, error)) return false;
  } else if (t.has_raw_data()) {
    bytes.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    switch (v.elem_type) {
      case kFloat: append_cast<decltype(t.float_data()), float>(t.float_data(), &bytes); break;
      case kDouble: append_cast<decltype(t.double_data()), double>(t.double_data(), &bytes); break;
      case kInt64: append_cast<decltype(t.int64_data()), int64_t>(t.int64_data(), &bytes); break;
      case kUint64: append_cast<decltype(t.uint64_data()), uint64_t>(t.uint64_data(), &bytes); break;
      case kUint32: append_cast<decltype(t.uint64_data()), uint32_t>(t.uint64_data(), &bytes); break;
      case kInt32: append_cast<decltype(t.int32_data()), int32_t>(t.int32_data(), &bytes); break;
      case kInt16: append_cast<decltype(t.int32_data()), int16_t>(t.int32_data(), &bytes); break;
      case kUint16: case kFloat16: append_cast<decltype(t.int32_data()), uint16_t>(t.int32_data(), &bytes); break;
      case kInt8: append_cast<decltype(t.int32_data()), int8_t>(t.int32_data(), &bytes); break;
      case kUint8: case kBool: append_cast<decltype(t.int32_data()), uint8_t>(t.int32_data(), &bytes); break;
      default: break;
    }
  }
  if (static_cast<int64_t>(bytes.size()) != n * es) {
    *error = "tensor '" + t.name() + "' holds " + std::to_string(bytes.size()) + " bytes, its shape needs " +
             std::to_string(n * es);
    return false;
  }
  v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  *out = std::move(v);
  return true;
}

void value_to_tensor(const Value& v, onnx::TensorProto* t) {
  t->set_name(v.name);
  t->set_data_type(v.elem_type);
  for (int64_t d : v.shape) t->add_dims(d);
  if (v.data) t->set_raw_data(v.data->data(), v.data->size());
}

bool attrs_from_node(const onnx::NodeProto& n, rt::Attrs* attrs, std::string* error) {
  for (const auto& a : n.attribute()) {
    rt::AttrValue v;
    switch (a.type()) {
      case onnx::AttributeProto::FLOAT: v.type = rt::AttrValue::kFloat, v.f = a.f(); break;
      case onnx::AttributeProto::INT: v.type = rt::AttrValue::kInt, v.i = a.i(); break;
      case onnx::AttributeProto::STRING: v.type = rt::AttrValue::kString, v.s = a.s(); break;
      case onnx::AttributeProto::FLOATS:
        v.type = rt::AttrValue::kFloats;
        v.floats.assign(a.floats().begin(), a.floats().end());
        break;
      case onnx::AttributeProto::INTS:
        v.type = rt::AttrValue::kInts;
        v.ints.assign(a.ints().begin(), a.ints().end());
        break;
      case onnx::AttributeProto::STRINGS:
        v.type = rt::AttrValue::kStrings;
        v.strings.assign(a.strings().begin(), a.strings().end());
        break;
      case onnx::AttributeProto::TENSOR: {
        Value tv;
        if (!value_from_tensor(a.t(), "", &tv, error)) return false;
        v.type = rt::AttrValue::kTensor;
        v.tensor = tv.data;
        v.tensor_type = to_rt_type(tv.elem_type);
        v.tensor_dims = tv.shape;
        break;
      }
      default:
        *error = "node '" + n.name() + "' (" + n.op_type() + "): attribute '" + a.name() +
                 "' of type " + std::to_string(a.type()) + " (graphs / sparse tensors) is not supported";
        return false;
    }
    attrs->set(a.name(), std::move(v));
  }
  return true;
}

void attrs_to_node(const rt::Attrs& attrs, onnx::NodeProto* n) {
  for (const auto& [name, v] : attrs.all()) {
    auto* a = n->add_attribute();
    a->set_name(name);
    switch (v.type) {
      case rt::AttrValue::kFloat: a->set_type(onnx::AttributeProto::FLOAT), a->set_f(v.f); break;
      case rt::AttrValue::kInt: a->set_type(onnx::AttributeProto::INT), a->set_i(v.i); break;
      case rt::AttrValue::kString: a->set_type(onnx::AttributeProto::STRING), a->set_s(v.s); break;
      case rt::AttrValue::kFloats:
        a->set_type(onnx::AttributeProto::FLOATS);
        for (float f : v.floats) a->add_floats(f);
        break;
      case rt::AttrValue::kInts:
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t i : v.ints) a->add_ints(i);
        break;
      case rt::AttrValue::kStrings:
        a->set_type(onnx::AttributeProto::STRINGS);
        for (const auto& s : v.strings) a->add_strings(s);
        break;
      case rt::AttrValue::kTensor: {
        a->set_type(onnx::AttributeProto::TENSOR);
        Value tv;
        tv.elem_type = from_rt_type(v.tensor_type);
        tv.shape = v.tensor_dims;
        tv.data = v.tensor;
        value_to_tensor(tv, a->mutable_t());
        break;
      }
      case rt::AttrValue::kBlob:
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(std::string(reinterpret_cast<const char*>(v.blob), v.blob_size));
        break;
    }
  }
}

bool import_model(const onnx::ModelProto& m, const std::string& base_dir, Graph* g, std::string* error) {
  if (m.ir_version() > kMaxIrVersion) {
    *error = "ONNX IR version " + std::to_string(m.ir_version()) + " is newer than supported (<= " +
             std::to_string(kMaxIrVersion) + ")";
    return false;
  }
  g->ir_version = m.ir_version();
  g->opset = -1;
  for (const auto& op : m.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") g->opset = op.version();
  if (g->opset < kMinOpset || g->opset > kMaxOpset) {
    *error = "ONNX opset " + std::to_string(g->opset) + " is not supported (supported: " +
             std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")";
    return false;
  }
  const auto& graph = m.graph();
  g->name = graph.name();
  if (static_cast<size_t>(graph.node_size()) > kMaxGraphNodes) {
    *error = "the model has " + std::to_string(graph.node_size()) + " nodes, more than the converter's limit of " +
             std::to_string(kMaxGraphNodes);
    return false;
  }
  if (!check_names(graph, error)) return false;
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) {
    Value v;
    if (!value_from_tensor(t, base_dir, &v, error)) return false;
    initializers.insert(v.name);
    g->values[v.name] = std::move(v);
  }
  for (const auto& in : graph.input()) {
    if (initializers.count(in.name())) continue;
    Value v;
    v.name = in.name();
    read_type(in.type(), &v);
    if (v.elem_type != kFloat && v.elem_type != kUint8 && v.elem_type != kInt8) {
      *error = "model input '" + in.name() + "' has element type " + elem_name(v.elem_type) +
               " (float32, uint8 or int8 expected)";
      return false;
    }
    g->values[v.name] = v;
    g->inputs.push_back(in.name());
  }
  for (const auto& vi : graph.value_info()) {
    Value& v = g->values[vi.name()];
    v.name = vi.name();
    if (!v.is_constant()) read_type(vi.type(), &v);
  }
  // Unnamed nodes get "<op>_<k>", unique among the named ones (ONNX Runtime
  // refuses a model with two nodes of one name).
  std::set<std::string> named;
  for (const auto& np : graph.node())
    if (!np.name().empty()) named.insert(np.name());
  KnownShapes shapes;  // for the attribute checks
  for (const auto& t : graph.initializer()) shapes[t.name()].assign(t.dims().begin(), t.dims().end());
  for (const auto& in : graph.input())
    if (in.type().tensor_type().has_shape()) {
      std::vector<int64_t>& dims = shapes[in.name()];
      dims.clear();
      for (const auto& d : in.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
  int unnamed = 0;
  for (const auto& np : graph.node()) {
    Node n;
    n.name = np.name();
    while (n.name.empty() || (np.name().empty() && named.count(n.name)))
      n.name = np.op_type() + "_" + std::to_string(unnamed++);
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    if (!n.domain.empty() && n.domain != "openbpu") {
      *error = "node '" + n.name + "': operator " + n.domain + "::" + n.op_type +
               " is from a custom domain the converter does not know";
      return false;
    }
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    if (!check_node_attributes(np, n.name, shapes, g->opset, error) || !attrs_from_node(np, &n.attrs, error)) return false;
    if (n.op_type == "Constant" && n.domain.empty() && n.outputs.size() == 1) {
      // Constants become values right away.
      Value v;
      if (!constant_node_value(np, &v, error)) return false;
      v.name = n.outputs[0];
      g->values[v.name] = std::move(v);
      continue;
    }
    for (const auto& o : n.outputs) {
      Value& v = g->values[o];
      v.name = o;
    }
    g->nodes.push_back(std::move(n));
  }
  // Every input must be defined somewhere (nodes may be listed out of order).
  for (const auto& n : g->nodes)
    for (const auto& in : n.inputs)
      if (!in.empty() && g->values.count(in) == 0) {
        *error = "node '" + n.name + "' reads '" + in + "', which no node, input or initializer defines";
        return false;
      }
  for (const auto& out : graph.output()) {
    Value& v = g->values[out.name()];
    v.name = out.name();
    read_type(out.type(), &v);
    g->outputs.push_back(out.name());
  }
  if (g->inputs.empty()) {
    *error = "the model has no (non-initializer) input";
    return false;
  }
  for (const auto& kv : m.metadata_props()) {
    const std::string prefix = "openbpu.native.";
    if (kv.key().rfind(prefix, 0) != 0) continue;
    Value* v = g->value(kv.key().substr(prefix.size()));
    if (v == nullptr || !decode_native(kv.value(), v)) {
      *error = "bad native value description '" + kv.key() + "'";
      return false;
    }
    if (rt::is_image_type(v->rt_type)) v->shape = {v->byte_size};
  }
  return g->topo_sort(error);
}

bool load_model(const std::string& path, Graph* graph, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = "cannot open ONNX model '" + path + "'";
    return false;
  }
  onnx::ModelProto m;
  if (!m.ParseFromIstream(&f)) {
    *error = "'" + path + "' is not a valid ONNX model (protobuf parse failed)";
    return false;
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return import_model(m, dir, graph, error);
}

bool load_model_bytes(const std::string& bytes, const std::string& base_dir, Graph* graph, std::string* error) {
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) {
    *error = "not a valid ONNX model (protobuf parse failed)";
    return false;
  }
  return import_model(m, base_dir, graph, error);
}

void export_model(const Graph& g, onnx::ModelProto* m) {
  m->set_ir_version(std::max<int64_t>(g.ir_version, 7));
  m->set_producer_name("openbpu hb_mapper");
  auto* op = m->add_opset_import();
  op->set_domain("");
  op->set_version(g.opset);
  std::set<std::string> domains;
  for (const auto& n : g.nodes)
    if (!n.domain.empty()) domains.insert(n.domain);
  for (const auto& d : domains) {
    auto* o = m->add_opset_import();
    o->set_domain(d);
    o->set_version(1);
  }
  auto* graph = m->mutable_graph();
  graph->set_name(g.name.empty() ? "openbpu" : g.name);
  std::set<std::string> written;
  for (const auto& in : g.inputs) {
    const Value* v = g.value(in);
    if (v) set_shape(graph->add_input(), *v);
    written.insert(in);
  }
  for (const auto& n : g.nodes) {
    auto* np = graph->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    for (const auto& i : n.inputs) np->add_input(i);
    for (const auto& o : n.outputs) np->add_output(o);
    attrs_to_node(n.attrs, np);
    for (const auto& i : n.inputs) {
      const Value* v = g.value(i);
      if (v && v->is_constant() && written.insert(i).second) value_to_tensor(*v, graph->add_initializer());
    }
  }
  for (const auto& out : g.outputs) {
    const Value* v = g.value(out);
    if (v) set_shape(graph->add_output(), *v);
    written.insert(out);
  }
  for (const auto& [name, v] : g.values)
    if (!written.count(name) && !v.is_constant() && v.has_shape) set_shape(graph->add_value_info(), v);
  // Runtime descriptions of native (quantized) values, so the quantized
  // model can be read back and executed.
  for (const auto& [name, v] : g.values) {
    if (!v.native) continue;
    auto* kv = m->add_metadata_props();
    kv->set_key("openbpu.native." + name);
    kv->set_value(encode_native(v));
  }
}

bool save_model(const Graph& g, const std::string& path, std::string* error) {
  onnx::ModelProto m;
  export_model(g, &m);
  std::string bytes;
  if (!m.SerializeToString(&bytes)) {
    *error = "cannot serialize ONNX model for " + path;
    return false;
  }
  return model::write_file_atomic(path, std::vector<uint8_t>(bytes.begin(), bytes.end()), error);
}

bool save_calibrated(const Graph& g, const std::map<std::string, double>& thresholds,
                     const std::vector<std::string>& values,
                     const std::map<std::string, std::vector<float>>& weight_scales, const std::string& path,
                     std::string* error) {
  onnx::ModelProto m;
  export_model(g, &m);
  int64_t opset = g.opset;
  if (opset < 13) {
    try {
      m = onnx::version_conversion::ConvertVersion(m, 13);
    } catch (const std::exception& e) {
      *error = std::string("cannot convert the calibrated model to opset 13: ") + e.what();
      return false;
    }
    opset = 13;
  }
  auto* graph = m.mutable_graph();
  std::set<std::string> inputs;
  for (const auto& in : graph->input()) inputs.insert(in.name());
  int counter = 0;
  for (const auto& v : values) {
    auto it = thresholds.find(v);
    if (it == thresholds.end()) continue;
    const std::string base = v + "_qdq" + std::to_string(counter++);
    const std::string scale_name = base + "_scale", zp_name = base + "_zero_point";
    auto* sc = graph->add_initializer();
    sc->set_name(scale_name);
    sc->set_data_type(onnx::TensorProto::FLOAT);
    sc->add_float_data(static_cast<float>(std::max(it->second, 1e-8) / 127.0));
    auto* zp = graph->add_initializer();
    zp->set_name(zp_name);
    zp->set_data_type(onnx::TensorProto::INT8);
    zp->add_int32_data(0);
    std::string src = v;
    std::string dst = base + "_dequantized";
    const bool is_input = inputs.count(v) != 0;
    if (!is_input) {
      // The producer writes v_float; DequantizeLinear writes v (names kept).
      src = base + "_float";
      for (auto& n : *graph->mutable_node())
        for (auto& o : *n.mutable_output())
          if (o == v) o = src;
      dst = v;
    } else {
      for (auto& n : *graph->mutable_node())
        for (auto& i : *n.mutable_input())
          if (i == v) i = dst;
    }
    auto* q = graph->add_node();
    q->set_name(base + "_QuantizeLinear");
    q->set_op_type("QuantizeLinear");
    q->add_input(src);
    q->add_input(scale_name);
    q->add_input(zp_name);
    q->add_output(base + "_int8");
    auto* d = graph->add_node();
    d->set_name(base + "_DequantizeLinear");
    d->set_op_type("DequantizeLinear");
    d->add_input(base + "_int8");
    d->add_input(scale_name);
    d->add_input(zp_name);
    d->add_output(dst);
  }
  // Weights: QuantizeLinear/DequantizeLinear per output channel (axis 0);
  // the readers of the weight read the dequantized copy.
  for (const auto& [w, scales] : weight_scales) {
    const std::string base = w + "_qdq" + std::to_string(counter++);
    auto* sc = graph->add_initializer();
    sc->set_name(base + "_scale");
    sc->set_data_type(onnx::TensorProto::FLOAT);
    sc->add_dims(static_cast<int64_t>(scales.size()));
    for (float s : scales) sc->add_float_data(s);
    auto* zp = graph->add_initializer();
    zp->set_name(base + "_zero_point");
    zp->set_data_type(onnx::TensorProto::INT8);
    zp->add_dims(static_cast<int64_t>(scales.size()));
    for (size_t k = 0; k < scales.size(); ++k) zp->add_int32_data(0);
    for (auto& n : *graph->mutable_node())
      for (auto& i : *n.mutable_input())
        if (i == w) i = base + "_dequantized";
    for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
      const bool q = op[0] == 'Q';
      auto* node = graph->add_node();
      node->set_name(base + "_" + op);
      node->set_op_type(op);
      node->add_input(q ? w : base + "_int8");
      node->add_input(base + "_scale");
      node->add_input(base + "_zero_point");
      node->add_output(q ? base + "_int8" : base + "_dequantized");
      auto* axis = node->add_attribute();
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto::INT);
      axis->set_i(0);
    }
  }
  // Restore a topological order (the pairs were appended at the end).
  Graph sorted;
  if (!import_model(m, "", &sorted, error)) return false;
  sorted.opset = opset;
  // Shapes of the new values, so that readers need no shape inference.
  if (!infer_shapes(&sorted, error)) return false;
  return save_model(sorted, path, error);
}

namespace {

void run_onnx_inference(onnx::ModelProto* m) {
  onnx::ShapeInferenceOptions options;
  options.check_type = false;
  options.error_mode = 0;  // skip nodes ONNX cannot infer (our own domain)
  options.enable_data_propagation = true;
  onnx::shape_inference::InferShapes(*m, onnx::OpSchemaRegistry::Instance(), options);
}

// The ranks of computed values are known only after inference, but ONNX's
// inference of a window operator indexes its data input with the weights'
// axes (a computed rank-4 input against rank-5 weights: SIGSEGV). A first
// inference with every window operator replaced by an Identity of its data
// input (same output rank) gives the ranks; the window operators are then
// checked with them before the real inference.
bool check_window_ranks_after_inference(const onnx::ModelProto& m, std::string* error) {
  onnx::ModelProto ranks_only = m;
  // Shapes recorded downstream of a window operator would contradict the
  // Identity's: only the graph inputs' shapes are kept.
  ranks_only.mutable_graph()->clear_value_info();
  for (auto& o : *ranks_only.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  for (auto& n : *ranks_only.mutable_graph()->mutable_node()) {
    if (!is_window_op(n) || n.input_size() < 1 || n.output_size() < 1) continue;
    const std::string in = n.input(0), out = n.output(0);
    n.Clear();
    n.set_op_type("Identity");
    n.add_input(in);
    n.add_output(out);
  }
  run_onnx_inference(&ranks_only);
  KnownShapes ranks;  // dimensions unknown, ranks known
  const auto& g = ranks_only.graph();
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list)
      if (vi.type().tensor_type().has_shape())
        ranks[vi.name()].assign(static_cast<size_t>(vi.type().tensor_type().shape().dim_size()), -1);
  for (const auto& t : g.initializer()) ranks[t.name()].assign(static_cast<size_t>(t.dims_size()), -1);
  for (const auto& n : m.graph().node())
    if (is_window_op(n) && !check_node_attributes(n, n.name(), ranks, m.opset_import(0).version(), error))
      return false;
  return true;
}

}  // namespace

bool infer_shapes(Graph* g, std::string* error) {
  onnx::ModelProto m;
  export_model(*g, &m);
  try {
    if (!check_window_ranks_after_inference(m, error)) return false;
    run_onnx_inference(&m);
  } catch (const std::exception& e) {
    *error = std::string("ONNX shape inference failed: ") + e.what();
    return false;
  }
  auto update = [&](const onnx::ValueInfoProto& vi) {
    Value* v = g->value(vi.name());
    if (v == nullptr || v->is_constant()) return;
    Value inferred;
    read_type(vi.type(), &inferred);
    if (!inferred.has_shape) {
      if (vi.type().tensor_type().elem_type() != 0) v->elem_type = inferred.elem_type;
      return;
    }
    if (!v->has_shape || v->shape.size() != inferred.shape.size()) {
      v->has_shape = true;
      v->shape = inferred.shape;
    } else {
      for (size_t i = 0; i < v->shape.size(); ++i)
        if (v->shape[i] < 0) v->shape[i] = inferred.shape[i];
    }
    v->elem_type = inferred.elem_type;
  };
  for (const auto& vi : m.graph().value_info()) update(vi);
  for (const auto& vi : m.graph().output()) update(vi);
  return true;
}

}  // namespace openbpu::cvt::onnxio
