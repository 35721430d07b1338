// SPDX-License-Identifier: Apache-2.0
// The converter's executor for Python: runs the ONNX models hb_mapper writes
// (original / optimized / calibrated float models and the quantized model,
// whose BPU subgraphs run in the simulator's reference kernels, bit-exact
// with the .bin) on numpy arrays, optionally keeping intermediate values.
// HB_ONNXRuntime and the accuracy debugger are built on it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bindings.h"
#include "converter/frontend/onnx/onnx_io.h"
#include "converter/ir/executor.h"
#include "converter/ir/graph.h"

namespace py = pybind11;

namespace openbpu::python {

namespace {

using cvt::Graph;
using cvt::Value;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

std::string dtype_name(const py::dtype& d) { return d.attr("name").cast<std::string>(); }

py::dtype dtype_of(int32_t elem_type) {
  switch (elem_type) {
    case cvt::kFloat: return py::dtype::of<float>();
    case cvt::kUint8: return py::dtype::of<uint8_t>();
    case cvt::kInt8: return py::dtype::of<int8_t>();
    case cvt::kUint16: return py::dtype::of<uint16_t>();
    case cvt::kInt16: return py::dtype::of<int16_t>();
    case cvt::kInt32: return py::dtype::of<int32_t>();
    case cvt::kInt64: return py::dtype::of<int64_t>();
    case cvt::kBool: return py::dtype("bool");
    case cvt::kFloat16: return py::dtype("float16");
    case cvt::kDouble: return py::dtype::of<double>();
    case cvt::kUint32: return py::dtype::of<uint32_t>();
    case cvt::kUint64: return py::dtype::of<uint64_t>();
    default: fail(std::string("element type ") + cvt::elem_name(elem_type) + " has no numpy equivalent");
  }
}

// Bytes of a value's data as the executor stores it.
int64_t value_bytes(const Value& v) { return v.native ? v.byte_size : v.elements() * cvt::elem_size(v.elem_type); }

// The array shape of a value: its shape; for native values (stored like the
// .bin tensor) the valid shape when it spans the data (images in their
// layout), else the stored shape, else flat bytes (NV12).
std::vector<py::ssize_t> array_shape(const Value& v) {
  const auto product = [](const std::vector<int64_t>& s) {
    int64_t p = 1;
    for (int64_t d : s) p *= d;
    return p;
  };
  const int64_t es = cvt::elem_size(v.elem_type);
  if (v.native && !v.valid.empty() && product(v.valid) * es == v.byte_size)
    return std::vector<py::ssize_t>(v.valid.begin(), v.valid.end());
  if (v.native && product(v.shape) * es != v.byte_size) return {v.byte_size / std::max<int64_t>(es, 1)};
  return std::vector<py::ssize_t>(v.shape.begin(), v.shape.end());
}

py::dict value_info(const Value& v) {
  py::dict d;
  d["name"] = v.name;
  d["dtype"] = dtype_of(v.elem_type);
  d["shape"] = py::tuple(py::cast(array_shape(v)));
  d["native"] = v.native;
  if (v.native) {
    // Stored like the .bin tensor: type, layout, valid/aligned shapes.
    d["rt_type"] = v.rt_type;
    d["layout"] = v.layout;
    d["valid_shape"] = py::tuple(py::cast(v.valid));
    d["aligned_shape"] = py::tuple(py::cast(v.aligned));
    d["byte_size"] = v.byte_size;
    d["scales"] = v.quant.scales;
  }
  return d;
}

class OnnxSession {
 public:
  explicit OnnxSession(const py::object& model) {
    std::string err;
    bool ok = false;
    if (py::isinstance<py::bytes>(model)) {
      const std::string bytes = model.cast<std::string>();
      py::gil_scoped_release release;
      ok = cvt::onnxio::load_model_bytes(bytes, ".", &graph_, &err);
    } else {
      const std::string path = py::str(model).cast<std::string>();
      py::gil_scoped_release release;
      ok = cvt::onnxio::load_model(path, &graph_, &err);
    }
    // Shapes the file does not record come from ONNX's shape inference.
    if (!ok || !cvt::onnxio::infer_shapes(&graph_, &err) || !exec_.prepare(graph_, &err)) fail(err);
  }

  py::list values(const std::vector<std::string>& names) const {
    py::list l;
    for (const std::string& n : names) l.append(value_info(*graph_.value(n)));
    return l;
  }
  py::list inputs() const { return values(graph_.inputs); }
  py::list outputs() const { return values(graph_.outputs); }
  py::dict info(const std::string& name) const {
    const Value* v = graph_.value(name);
    if (v == nullptr) fail("the model has no value '" + name + "'");
    return value_info(*v);
  }
  py::list nodes() const {
    py::list l;
    for (const cvt::Node& n : graph_.nodes) {
      py::dict d;
      d["name"] = n.name;
      d["op_type"] = n.op_type;
      d["domain"] = n.domain;
      d["inputs"] = n.inputs;
      d["outputs"] = n.outputs;
      l.append(d);
    }
    return l;
  }

  // feed: input name -> array of the input's dtype and shape (native inputs:
  // the .bin input's bytes). keep: intermediate values to return as well.
  py::dict run(const py::dict& feed, const std::vector<std::string>& keep, bool keep_all) const {
    std::map<std::string, Value> in;
    for (const std::string& name : graph_.inputs) {
      if (!feed.contains(name)) fail("no data for model input '" + name + "'");
      in[name] = to_value(*graph_.value(name), py::array::ensure(feed[name.c_str()]));
    }
    for (const auto& item : feed) {
      const std::string k = py::str(item.first).cast<std::string>();
      if (in.count(k) == 0) fail("'" + k + "' is not an input of the model");
    }
    for (const std::string& k : keep)
      if (graph_.value(k) == nullptr) fail("the model has no value '" + k + "'");
    const std::set<std::string> keep_set(keep.begin(), keep.end());
    std::map<std::string, Value> out;
    std::string err;
    bool ok = false;
    {
      py::gil_scoped_release release;
      ok = exec_.run(in, &out, &err, &keep_set, keep_all);
    }
    if (!ok) fail(err);
    py::dict d;
    for (const auto& [name, v] : out) {
      if (!v.data) continue;
      py::array a(dtype_of(v.elem_type), array_shape(v));
      if (static_cast<size_t>(a.nbytes()) != v.data->size()) fail("value '" + name + "': unexpected data size");
      std::memcpy(a.mutable_data(), v.data->data(), v.data->size());
      d[py::str(name)] = a;
    }
    return d;
  }

 private:
  static Value to_value(const Value& gv, const py::array& a) {
    const std::string name = gv.name;
    if (!a.dtype().is(dtype_of(gv.elem_type)))
      fail("input '" + name + "': dtype " + dtype_name(a.dtype()) + " given, the model takes " +
           dtype_name(dtype_of(gv.elem_type)));
    const auto c = py::array::ensure(a, py::array::c_style);
    const std::vector<py::ssize_t> want = array_shape(gv);
    const std::vector<py::ssize_t> shape(c.shape(), c.shape() + c.ndim());
    // Native inputs (the .bin input's bytes) take any array of their size.
    if (gv.native ? static_cast<int64_t>(c.nbytes()) != gv.byte_size : shape != want) {
      std::string w, g;
      for (auto s : want) w += (w.empty() ? "" : ",") + std::to_string(s);
      for (auto s : shape) g += (g.empty() ? "" : ",") + std::to_string(s);
      fail("input '" + name + "': shape (" + g + ") given, the model takes (" + w + ")" +
           (gv.native ? " (" + std::to_string(gv.byte_size) + " bytes)" : ""));
    }
    Value v = gv;
    const auto* b = static_cast<const uint8_t*>(c.data());
    v.data = std::make_shared<const std::vector<uint8_t>>(b, b + value_bytes(gv));
    return v;
  }

  Graph graph_;
  cvt::FloatExecutor exec_;
};

}  // namespace

void bind_onnx(py::module_& m) {
  py::class_<OnnxSession>(m, "OnnxSession",
                          "An ONNX model hb_mapper wrote, run by the converter's executor (the runtime's CPU\n"
                          "operators; BPU subgraphs of the quantized model in the simulator's kernels).")
      .def(py::init<const py::object&>(), py::arg("model"), "model: a file path or the serialized ModelProto (bytes)")
      .def("inputs", &OnnxSession::inputs)
      .def("outputs", &OnnxSession::outputs)
      .def("info", &OnnxSession::info, py::arg("name"))
      .def("nodes", &OnnxSession::nodes)
      .def("run", &OnnxSession::run, py::arg("feed"), py::arg("keep") = std::vector<std::string>{},
           py::arg("keep_all") = false,
           "Runs the model; returns {name: array} for the outputs and the `keep` values (every value with keep_all).");
}

}  // namespace openbpu::python
