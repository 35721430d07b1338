// SPDX-License-Identifier: Apache-2.0
#include "tests/onnx_backend/backend_runner.h"

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "converter/frontend/onnx/onnx_io.h"
#include "converter/ir/graph.h"
#include "runtime/cpu_ops/cpu_op.h"
#include "runtime/cpu_ops/kernel_util.h"

namespace openbpu::backend_test {

namespace {

using rt::CpuTensor;
using rt::TensorDesc;

// A dense tensor value of the executor.
struct Tensor {
  TensorDesc desc;
  std::vector<uint8_t> data;
};

struct Unsupported {
  std::string why;
};

std::vector<int64_t> dims_of(const Tensor& t) {
  return std::vector<int64_t>(t.desc.valid.begin(), t.desc.valid.end());
}

std::string dims_str(const std::vector<int64_t>& d) { return rt::dims_str(d); }

bool make_tensor(const std::string& name, int32_t onnx_type, const std::vector<int64_t>& dims,
                 Tensor* t, std::string* why) {
  const int32_t rt_type = cvt::to_rt_type(onnx_type);
  if (rt_type < 0) {
    *why = "value '" + name + "' has unsupported element type " + cvt::elem_name(onnx_type) + " (" +
           std::to_string(onnx_type) + ")";
    return false;
  }
  t->desc = TensorDesc();
  t->desc.name = name;
  t->desc.data_type = rt_type;
  t->desc.layout = rt::kLayoutNone;
  int64_t n = 1;
  for (int64_t d : dims) {
    t->desc.valid.push_back(static_cast<int32_t>(d));
    n *= d;
  }
  t->desc.aligned = t->desc.valid;
  t->desc.aligned_byte_size = n * rt::element_size(rt_type);
  // Odd sizes and empty tensors still get a valid, aligned pointer.
  t->data.assign(static_cast<size_t>(t->desc.aligned_byte_size) + 16, 0);
  return true;
}

bool tensor_from_proto(const onnx::TensorProto& p, const std::string& dir, Tensor* t,
                       std::string* why) {
  if (cvt::to_rt_type(p.data_type()) < 0) {
    *why =
        "tensor '" + p.name() + "' has unsupported element type " + std::to_string(p.data_type());
    return false;
  }
  cvt::Value v;
  if (!cvt::onnxio::value_from_tensor(p, dir, &v, why)) return false;
  if (!make_tensor(p.name(), v.elem_type, v.shape, t, why)) return false;
  if (!v.data->empty()) std::memcpy(t->data.data(), v.data->data(), v.data->size());
  return true;
}

bool read_proto(const std::string& path, onnx::TensorProto* p) {
  std::ifstream f(path, std::ios::binary);
  return f && p->ParseFromIstream(&f);
}

void tensor_to_proto(const std::string& name, const Tensor& t, onnx::TensorProto* p) {
  p->set_name(name);
  p->set_data_type(cvt::from_rt_type(t.desc.data_type));
  for (int32_t d : t.desc.valid) p->add_dims(d);
  p->set_raw_data(t.data.data(), static_cast<size_t>(t.desc.aligned_byte_size));
}

// Output types and shapes of one node from ONNX shape inference over a
// one-node model whose inputs are initializers holding the actual values.
bool infer_node(const onnx::ModelProto& model, const onnx::NodeProto& node,
                const std::map<std::string, Tensor>& values,
                std::map<std::string, std::pair<int32_t, std::vector<int64_t>>>* out,
                std::string* why) {
  onnx::ModelProto m;
  m.set_ir_version(model.ir_version());
  *m.mutable_opset_import() = model.opset_import();
  auto* g = m.mutable_graph();
  g->set_name("node");
  *g->add_node() = node;
  std::set<std::string> done;
  for (const auto& in : node.input()) {
    if (in.empty() || !done.insert(in).second) continue;
    const Tensor& t = values.at(in);
    // (ONNX 1.12 mis-ranks zero-element initializers; their data is not needed.)
    if (t.desc.aligned_byte_size > 0) tensor_to_proto(in, t, g->add_initializer());
    auto* vi = g->add_input();
    vi->set_name(in);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(cvt::from_rt_type(t.desc.data_type));
    auto* shape = tt->mutable_shape();
    for (int32_t d : t.desc.valid) shape->add_dim()->set_dim_value(d);
  }
  try {
    onnx::ShapeInferenceOptions options;
    options.check_type = false;
    options.error_mode = 1;
    options.enable_data_propagation = true;
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    *why = std::string("shape inference failed: ") + e.what();
    return false;
  }
  for (const auto& vi : m.graph().value_info()) {
    if (!vi.type().has_tensor_type()) continue;
    const auto& tt = vi.type().tensor_type();
    if (!tt.has_shape()) continue;
    std::vector<int64_t> dims;
    bool known = true;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) known = false;
      dims.push_back(d.dim_value());
    }
    if (known) (*out)[vi.name()] = {tt.elem_type(), dims};
  }
  return true;
}

// Compares an output with the expected tensor; empty string when equal.
std::string compare(const Tensor& expect, const Tensor& got, const Tolerance& tol) {
  if (expect.desc.data_type != got.desc.data_type)
    return std::string("type ") + rt::data_type_name(got.desc.data_type) + " instead of " +
           rt::data_type_name(expect.desc.data_type);
  if (expect.desc.valid != got.desc.valid)
    return "shape " + dims_str(dims_of(got)) + " instead of " + dims_str(dims_of(expect));
  const int32_t t = expect.desc.data_type;
  const int es = rt::element_size(t);
  const int64_t n = rt::count_of(dims_of(expect));
  int64_t bad = 0, first = -1;
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* pe = expect.data.data() + i * es;
    const uint8_t* pg = got.data.data() + i * es;
    bool ok;
    if (rt::is_float_type(t)) {
      const double e = rt::load_as_double(t, pe), g = rt::load_as_double(t, pg);
      if (std::isnan(e) || std::isnan(g)) {
        ok = std::isnan(e) && std::isnan(g);
      } else if (std::isinf(e) || std::isinf(g)) {
        ok = e == g;
      } else {
        const double err = std::abs(e - g);
        ok = err <= tol.atol + tol.rtol * std::abs(e);
        if (!ok) worst = std::max(worst, err);
      }
    } else {
      ok = std::memcmp(pe, pg, static_cast<size_t>(es)) == 0;
    }
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (bad == 0) return "";
  std::ostringstream s;
  s << bad << " of " << n << " elements differ; first at " << first << ": got "
    << rt::load_as_double(t, got.data.data() + first * es) << ", expected "
    << rt::load_as_double(t, expect.data.data() + first * es);
  if (worst > 0) s << " (max abs error " << worst << ")";
  return s.str();
}

std::vector<std::string> list_dir(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != ".." && n.rfind(prefix, 0) == 0) out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool has_subgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS ||
        a.has_g() || a.graphs_size() > 0)
      return true;
  return false;
}

// Executes the graph on one data set; returns the outcome.
CaseResult run_data_set(const onnx::ModelProto& model, int64_t opset,
                        const std::map<std::string, Tensor>& consts, const std::string& ds_dir,
                        const std::string& case_name, const Tolerance& tol) {
  CaseResult r;
  r.name = case_name;
  const auto& graph = model.graph();
  std::map<std::string, Tensor> values = consts;
  // Inputs: graph inputs that are not initializers, in order.
  int idx = 0;
  for (const auto& in : graph.input()) {
    if (consts.count(in.name())) continue;
    onnx::TensorProto p;
    const std::string path = ds_dir + "/input_" + std::to_string(idx++) + ".pb";
    if (!read_proto(path, &p)) {
      r.outcome = Outcome::kUnsupported;
      r.message = "cannot read " + path + " (non-tensor input?)";
      return r;
    }
    Tensor t;
    std::string why;
    if (!tensor_from_proto(p, ds_dir, &t, &why)) {
      r.outcome = Outcome::kUnsupported;
      r.message = why;
      return r;
    }
    t.desc.name = in.name();
    values[in.name()] = std::move(t);
  }
  // Expected outputs (their shapes size the graph outputs).
  std::map<std::string, Tensor> expected;
  idx = 0;
  for (const auto& o : graph.output()) {
    onnx::TensorProto p;
    const std::string path = ds_dir + "/output_" + std::to_string(idx++) + ".pb";
    if (!read_proto(path, &p)) {
      r.outcome = Outcome::kUnsupported;
      r.message = "cannot read " + path + " (non-tensor output?)";
      return r;
    }
    Tensor t;
    std::string why;
    if (!tensor_from_proto(p, ds_dir, &t, &why)) {
      r.outcome = Outcome::kUnsupported;
      r.message = why;
      return r;
    }
    expected[o.name()] = std::move(t);
  }
  int node_i = 0;
  for (const auto& node : graph.node()) {
    const std::string node_name =
        node.name().empty() ? node.op_type() + "_" + std::to_string(node_i) : node.name();
    ++node_i;
    rt::CpuOpDef def;
    def.name = node_name;
    def.op_type = node.op_type();
    def.domain = node.domain() == "ai.onnx" ? "" : node.domain();
    std::string why;
    if (!cvt::onnxio::attrs_from_node(node, &def.attrs, &why)) {
      r.outcome = Outcome::kUnsupported;
      r.message = why;
      return r;
    }
    rt::AttrValue ov;
    ov.type = rt::AttrValue::kInt;
    ov.i = opset;
    def.attrs.set(rt::kOpsetAttr, ov);
    // Output types/shapes: expected outputs first, shape inference otherwise.
    std::map<std::string, std::pair<int32_t, std::vector<int64_t>>> inferred;
    bool need_infer = false;
    for (const auto& o : node.output())
      if (!o.empty() && !expected.count(o)) need_infer = true;
    if (need_infer && !infer_node(model, node, values, &inferred, &why)) {
      r.outcome = Outcome::kFail;
      r.message = "node '" + node_name + "': " + why;
      return r;
    }
    std::vector<Tensor> outs(static_cast<size_t>(node.output_size()));
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& o = node.output(i);
      if (o.empty()) continue;
      if (auto it = expected.find(o); it != expected.end()) {
        outs[i].desc = it->second.desc;
        outs[i].data.assign(it->second.data.size(), 0);
      } else if (auto jt = inferred.find(o); jt != inferred.end()) {
        if (!make_tensor(o, jt->second.first, jt->second.second, &outs[i], &why)) {
          r.outcome = Outcome::kUnsupported;
          r.message = why;
          return r;
        }
      } else {
        r.outcome = Outcome::kFail;
        r.message =
            "node '" + node_name + "': shape inference gave no static shape for '" + o + "'";
        return r;
      }
    }
    std::vector<const TensorDesc*> in_descs, out_descs;
    std::vector<CpuTensor> in_t, out_t;
    for (const auto& in : node.input()) {
      if (in.empty()) {
        in_descs.push_back(nullptr);
        in_t.push_back(CpuTensor{});
        continue;
      }
      Tensor& t = values.at(in);
      in_descs.push_back(&t.desc);
      in_t.push_back(CpuTensor{&t.desc, t.data.data()});
    }
    for (auto& t : outs) {
      if (t.desc.valid.empty() && t.data.empty()) {
        out_descs.push_back(nullptr);
        out_t.push_back(CpuTensor{});
        continue;
      }
      out_descs.push_back(&t.desc);
      out_t.push_back(CpuTensor{&t.desc, t.data.data()});
    }
    std::unique_ptr<rt::CpuKernel> kernel;
    rt::Status st = rt::create_cpu_kernel(def, in_descs, out_descs, &kernel);
    if (!st.ok()) {
      r.outcome = Outcome::kFail;
      r.message = "create: " + st.message();
      return r;
    }
    st = kernel->run(in_t, out_t);
    if (!st.ok()) {
      r.outcome = Outcome::kFail;
      r.message = "run: " + st.message();
      return r;
    }
    for (int i = 0; i < node.output_size(); ++i)
      if (!node.output(i).empty()) values[node.output(i)] = std::move(outs[i]);
  }
  for (const auto& o : graph.output()) {
    auto it = values.find(o.name());
    if (it == values.end()) {
      r.outcome = Outcome::kFail;
      r.message = "output '" + o.name() + "' was not produced";
      return r;
    }
    const std::string diff = compare(expected.at(o.name()), it->second, tol);
    if (!diff.empty()) {
      r.outcome = Outcome::kFail;
      r.message = "output '" + o.name() + "': " + diff;
      return r;
    }
  }
  r.outcome = Outcome::kPass;
  return r;
}

}  // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kFail:
      return "FAIL";
    default:
      return "unsupported";
  }
}

std::vector<std::string> list_cases(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& n : list_dir(root, "test_")) {
    std::ifstream f(root + "/" + n + "/model.onnx");
    if (f) out.push_back(n);
  }
  return out;
}

CaseResult run_case(const std::string& dir, const std::string& name, const Tolerance& tol) {
  CaseResult r;
  r.name = name;
  onnx::ModelProto model;
  {
    std::ifstream f(dir + "/model.onnx", std::ios::binary);
    if (!f || !model.ParseFromIstream(&f)) {
      r.message = "cannot parse model.onnx";
      return r;
    }
  }
  int64_t opset = -1;
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
  const auto& graph = model.graph();
  // Support checks: operators in the table, tensor-typed values only.
  for (const auto& node : graph.node()) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    if (!domain.empty() || rt::find_cpu_op(domain, node.op_type()) == nullptr) {
      r.message = "operator " + (domain.empty() ? "" : domain + "::") + node.op_type() +
                  " is not in the CPU op table";
      return r;
    }
    if (has_subgraph(node)) {
      r.message = "node " + node.op_type() + " has a subgraph attribute";
      return r;
    }
  }
  for (const auto* list : {&graph.input(), &graph.output()})
    for (const auto& vi : *list) {
      if (!vi.type().has_tensor_type()) {
        r.message = "value '" + vi.name() + "' is not a tensor (sequence/optional/map)";
        return r;
      }
      if (cvt::to_rt_type(vi.type().tensor_type().elem_type()) < 0) {
        r.message = "value '" + vi.name() + "' has unsupported element type " +
                    cvt::elem_name(vi.type().tensor_type().elem_type()) + " (" +
                    std::to_string(vi.type().tensor_type().elem_type()) + ")";
        return r;
      }
    }
  std::map<std::string, Tensor> consts;
  for (const auto& init : graph.initializer()) {
    Tensor t;
    if (!tensor_from_proto(init, dir, &t, &r.message)) return r;
    consts[init.name()] = std::move(t);
  }
  const std::vector<std::string> sets = list_dir(dir, "test_data_set_");
  if (sets.empty()) {
    r.message = "no test data sets";
    return r;
  }
  for (const auto& ds : sets) {
    CaseResult d = run_data_set(model, opset, consts, dir + "/" + ds, name, tol);
    if (d.outcome != Outcome::kPass) {
      if (sets.size() > 1) d.message = ds + ": " + d.message;
      return d;
    }
  }
  r.outcome = Outcome::kPass;
  return r;
}

}  // namespace openbpu::backend_test
