// SPDX-License-Identifier: Apache-2.0
// libdnn for Python: load models, read tensor properties, run inferences on
// numpy arrays. A libdnn client like hrt_model_exec: the public C API and
// hrt_model_exec's helpers (tensor buffers, strides, dequantization), so a
// Python result is what the board tool dumps, byte for byte. Built twice,
// as hrt_model_exec is (hrt_model_exec/api.h): on libdnn 1.x (.bin, module
// _openbpu) and on the UCP generation (.hbm, module _openbpu_ucp,
// OPENBPU_HRT_UCP); the openbpu package picks the module by the file.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings.h"
#include "bpu_sim/isa/numerics.h"
#include "hrt_model_exec/api.h"
#include "hrt_model_exec/dump.h"
#include "hrt_model_exec/model.h"

namespace py = pybind11;

namespace openbpu::python {

namespace {

std::string dnn_error(int32_t rc) {
  const char* d = hbDNNGetErrorDesc(rc);
  return std::string(d != nullptr ? d : "unknown error") + " (" + std::to_string(rc) + ")";
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

std::string dtype_name(const py::dtype& d) { return d.attr("name").cast<std::string>(); }

py::tuple shape_tuple(const hbDNNTensorShape& s) {
  py::tuple t(s.numDimensions > 0 ? s.numDimensions : 0);
  for (int i = 0; i < s.numDimensions; ++i) t[i] = s.dimensionSize[i];
  return t;
}

// numpy dtype of a tensor type (image types are bytes).
py::dtype dtype_of(int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: return py::dtype::of<int8_t>();
    case HB_DNN_TENSOR_TYPE_F16: return py::dtype("float16");
    case HB_DNN_TENSOR_TYPE_S16: return py::dtype::of<int16_t>();
    case HB_DNN_TENSOR_TYPE_U16: return py::dtype::of<uint16_t>();
    case HB_DNN_TENSOR_TYPE_F32: return py::dtype::of<float>();
    case HB_DNN_TENSOR_TYPE_S32: return py::dtype::of<int32_t>();
    case HB_DNN_TENSOR_TYPE_U32: return py::dtype::of<uint32_t>();
    case HB_DNN_TENSOR_TYPE_F64: return py::dtype::of<double>();
    case HB_DNN_TENSOR_TYPE_S64: return py::dtype::of<int64_t>();
    case HB_DNN_TENSOR_TYPE_U64: return py::dtype::of<uint64_t>();
    default: return py::dtype::of<uint8_t>();
  }
}

// Tensor properties with the library's arrays copied (valid after release).
struct Properties {
  std::string name;
  hbDNNTensorProperties p{};
  std::vector<float> scale;
  std::vector<std::remove_pointer_t<decltype(hbDNNQuantiScale::zeroPointData)>> zero_point;
  std::vector<uint8_t> shift;  // gen A's SHIFT quantization (gen B has none)
  int32_t input_source = -1;   // gen A's hbDNNInputSource of an input, else -1

  Properties(const std::string& n, const hbDNNTensorProperties& props) : name(n), p(props) {
    if (p.scale.scaleData != nullptr) scale.assign(p.scale.scaleData, p.scale.scaleData + p.scale.scaleLen);
    if (p.scale.zeroPointData != nullptr)
      zero_point.assign(p.scale.zeroPointData, p.scale.zeroPointData + p.scale.zeroPointLen);
    // The copy points at our arrays, never at the library's.
    p.scale.scaleData = scale.empty() ? nullptr : scale.data();
    p.scale.zeroPointData = zero_point.empty() ? nullptr : zero_point.data();
#ifndef OPENBPU_HRT_UCP
    if (p.shift.shiftData != nullptr) shift.assign(p.shift.shiftData, p.shift.shiftData + p.shift.shiftLen);
    p.shift.shiftData = shift.empty() ? nullptr : shift.data();
#endif
  }
  Properties(const Properties& o) : Properties(o.name, o.p) { input_source = o.input_source; }
  Properties& operator=(const Properties&) = delete;
};

// Tight input bytes from an array: dtype and size must be the tensor's.
std::vector<uint8_t> input_bytes(const Properties& prop, const py::array& a) {
  const hbDNNTensorProperties& p = prop.p;
  const bool image = tools::is_image_type(p.tensorType);
  const py::dtype want = dtype_of(p.tensorType);
  if (!a.dtype().is(want) && !(image && a.dtype().itemsize() == 1 && a.dtype().kind() == 'u'))
    fail("input '" + prop.name + "': dtype " + dtype_name(a.dtype()) + " given, the tensor is " +
         tools::data_type_name(p.tensorType) + " (numpy " + dtype_name(want) + ")");
  const int64_t need = tools::tight_byte_size(p);
  const auto c = py::array::ensure(a, py::array::c_style | py::array::forcecast);
  const int64_t have = static_cast<int64_t>(c.nbytes());
  if (have != need)
    fail("input '" + prop.name + "': " + std::to_string(have) + " bytes given, valid shape " +
         tools::shape_str(p.validShape) + " of " + tools::data_type_name(p.tensorType) + " takes " +
         std::to_string(need));
  const auto* b = static_cast<const uint8_t*>(c.data());
  return std::vector<uint8_t>(b, b + have);
}

// Valid elements of an output in its own type (padding removed).
py::array valid_array(const hbDNNTensor& t) {
  const hbDNNTensorProperties& p = t.properties;
  const int n = p.validShape.numDimensions;
  std::vector<py::ssize_t> shape, strides;
  const std::vector<int64_t> st = tools::byte_strides(p);
  int64_t last = tools::element_size(p.tensorType);
  for (int k = 0; k < n; ++k) {
    shape.push_back(p.validShape.dimensionSize[k]);
    strides.push_back(st[static_cast<size_t>(k)]);
    if (p.validShape.dimensionSize[k] <= 0) return py::array(dtype_of(p.tensorType), shape);
    last += (p.validShape.dimensionSize[k] - 1) * st[static_cast<size_t>(k)];
  }
  if (last > static_cast<int64_t>(tools::tensor_mem(t).memSize))
    fail("output: valid shape " + tools::shape_str(p.validShape) + " with its stride does not fit its buffer");
  py::array view(dtype_of(p.tensorType), shape, strides, tools::tensor_mem(t).virAddr);
  return py::array::ensure(view.attr("copy")());
}

py::array float_array(const hbDNNTensor& t) {
  std::vector<float> v;
  if (!tools::output_to_float(t, &v)) fail("cannot dequantize output (see the message above)");
  std::vector<py::ssize_t> shape;
  for (int k = 0; k < t.properties.validShape.numDimensions; ++k)
    shape.push_back(t.properties.validShape.dimensionSize[k]);
  py::array_t<float> out(shape);
  std::memcpy(out.mutable_data(), v.data(), v.size() * sizeof(float));
  return std::move(out);
}

py::array aligned_array(const hbDNNTensor& t) {
  const hbDNNTensorProperties& p = t.properties;
  const size_t size = std::min<size_t>(tools::tensor_mem(t).memSize, static_cast<size_t>(p.alignedByteSize));
  const py::ssize_t es = std::max(tools::element_size(p.tensorType), 1);
  py::array out(dtype_of(p.tensorType), std::vector<py::ssize_t>{static_cast<py::ssize_t>(size) / es});
  std::memcpy(out.mutable_data(), tools::tensor_mem(t).virAddr, static_cast<size_t>(out.nbytes()));
  return out;
}

class Pack;

class Model {
 public:
  Model(std::shared_ptr<Pack> pack, const tools::ModelDesc& d);
  const std::string& name() const { return desc_.name; }
  const std::string& march() const { return desc_.march; }
  int32_t bpu_core_num() const { return desc_.cores; }
  const std::vector<Properties>& inputs() const { return inputs_; }
  const std::vector<Properties>& outputs() const { return outputs_; }
  py::list infer(const py::object& feed, int32_t priority, int core_id, bool dequantize, bool aligned);

 private:
  std::vector<uint8_t> input(size_t k, const py::handle& a) const {
    return input_bytes(inputs_[k], py::array::ensure(a));
  }
  std::vector<std::vector<uint8_t>> feed_bytes(const py::object& feed) const;
  std::shared_ptr<Pack> pack_;  // keeps the handles alive
  tools::ModelDesc desc_;
  std::vector<Properties> inputs_, outputs_;
};

class Pack : public std::enable_shared_from_this<Pack> {
 public:
  explicit Pack(const std::vector<std::string>& files) {
    if (files.empty()) fail("no model file given");
    std::vector<const char*> paths;
    for (const std::string& f : files) paths.push_back(f.c_str());
    const int32_t rc = hbDNNInitializeFromFiles(&pack_, paths.data(), static_cast<int32_t>(paths.size()));
    if (rc != 0) {
      pack_ = nullptr;
      std::string list;
      for (const std::string& f : files) list += (list.empty() ? "" : ",") + f;
      fail("cannot load '" + list + "': " + dnn_error(rc));
    }
    const char** names = nullptr;
    int32_t count = 0;
    const int32_t rc2 = hbDNNGetModelNameList(&names, &count, pack_);
    if (rc2 != 0) fail("hbDNNGetModelNameList: " + dnn_error(rc2));
    for (int32_t i = 0; i < count; ++i) names_.emplace_back(names[i]);
  }
  ~Pack() {
    if (pack_ != nullptr) hbDNNRelease(pack_);
  }
  const std::vector<std::string>& names() const { return names_; }
  std::shared_ptr<Model> model(const std::string& name) {
    hbDNNHandle_t h = nullptr;
    const int32_t rc = hbDNNGetModelHandle(&h, pack_, name.c_str());
    if (rc != 0) fail("no model '" + name + "' in the loaded file(s): " + dnn_error(rc));
    tools::ModelDesc d;
    if (!tools::describe_model(h, name, &d)) fail("cannot describe model '" + name + "' (see the message above)");
    return std::make_shared<Model>(shared_from_this(), d);
  }

 private:
  tools::PackedHandle pack_ = nullptr;
  std::vector<std::string> names_;
};

Model::Model(std::shared_ptr<Pack> pack, const tools::ModelDesc& d) : pack_(std::move(pack)), desc_(d) {
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    inputs_.emplace_back(d.input_names[i], d.inputs[i]);
    inputs_.back().input_source = d.input_sources[i];
  }
  for (size_t i = 0; i < d.outputs.size(); ++i) outputs_.emplace_back(d.output_names[i], d.outputs[i]);
}


// One array per input: a sequence in input order or a dict by input name.
std::vector<std::vector<uint8_t>> Model::feed_bytes(const py::object& feed) const {
  std::vector<std::vector<uint8_t>> out;
  if (py::isinstance<py::dict>(feed)) {
    const py::dict d = feed.cast<py::dict>();
    for (size_t k = 0; k < inputs_.size(); ++k) {
      const std::string& name = inputs_[k].name;
      if (!d.contains(name)) fail("model '" + desc_.name + "': no data for input '" + name + "'");
      out.push_back(input(k, d[name.c_str()]));
    }
    if (d.size() != inputs_.size()) fail("model '" + desc_.name + "': the dict has inputs the model does not have");
    return out;
  }
  if (py::isinstance<py::array>(feed) && inputs_.size() == 1) {
    out.push_back(input(0, feed));
    return out;
  }
  const py::sequence s = feed.cast<py::sequence>();
  if (s.size() != inputs_.size())
    fail("model '" + desc_.name + "' has " + std::to_string(inputs_.size()) + " input(s), " +
         std::to_string(s.size()) + " given");
  for (size_t i = 0; i < inputs_.size(); ++i) out.push_back(input(i, s[i]));
  return out;
}

py::list Model::infer(const py::object& feed, int32_t priority, int core_id, bool dequantize, bool aligned) {
  if (priority < 0 || priority > 255)
    fail("priority " + std::to_string(priority) + " is outside [0, 255]");
  if (core_id < 0 || core_id > desc_.cores)
    fail("core_id " + std::to_string(core_id) + ": model '" + desc_.name + "' runs on a platform with " +
         std::to_string(desc_.cores) + " BPU core(s); use 0 (any core)" + (desc_.cores > 1 ? " or 1..cores" : " or 1"));
  if (dequantize && aligned) fail("dequantize and aligned exclude each other");
  const std::vector<std::vector<uint8_t>> bytes = feed_bytes(feed);
  tools::TensorSet set;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!set.add_input(inputs_[i].p, bytes[i])) fail("cannot allocate input buffers (see the message above)");
  for (const Properties& p : outputs_)
    if (!set.add_output(p.p)) fail("cannot allocate output buffers (see the message above)");
  int32_t rc = 0;
  {
    py::gil_scoped_release release;
    double ms = 0;
    rc = tools::run_inference(desc_, &set, core_id, nullptr, &ms, priority);
  }
  if (rc != 0) fail("inference of model '" + desc_.name + "' failed: " + dnn_error(rc));
  py::list out;
  for (const hbDNNTensor& t : set.outputs)
    out.append(dequantize ? float_array(t) : aligned ? aligned_array(t) : valid_array(t));
  return out;
}

// Wraps an array as a tight tensor of the given properties.
hbDNNTensor tight_tensor(const Properties& prop, const py::array& c) {
  hbDNNTensor t;
  std::memset(&t, 0, sizeof(t));
  t.properties = prop.p;
#ifdef OPENBPU_HRT_UCP
  // Dense strides over the valid shape.
  const hbDNNTensorShape& s = prop.p.validShape;
  int64_t step = tools::element_size(prop.p.tensorType);
  for (int k = s.numDimensions - 1; k >= 0; --k) {
    t.properties.stride[k] = step;
    step *= s.dimensionSize[k];
  }
#else
  t.properties.alignedShape = prop.p.validShape;
  std::memset(t.properties.stride, 0, sizeof(t.properties.stride));
#endif
  tools::tensor_mem(t).virAddr = const_cast<void*>(c.data());
  tools::tensor_mem(t).memSize = static_cast<decltype(tools::SysMem::memSize)>(c.nbytes());
  return t;
}

// Float data of a tensor's quantized type (q = clamp(round_half_away(x / s))
// per element along quantizeAxis, as libdnn's Quantize operator).
py::array quantize(const py::array& x, const Properties& prop) {
  const hbDNNTensorProperties& p = prop.p;
  const auto c = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(x);
  if (!c) fail("quantize: the data must be convertible to float32");
  int32_t lo = 0, hi = 0;
  switch (p.tensorType) {
    case HB_DNN_TENSOR_TYPE_S8: lo = -128, hi = 127; break;
    case HB_DNN_TENSOR_TYPE_S16: lo = -32768, hi = 32767; break;
    case HB_DNN_TENSOR_TYPE_S32: lo = INT32_MIN, hi = INT32_MAX; break;
    default: fail("quantize '" + prop.name + "': tensor type " + tools::data_type_name(p.tensorType) + " is not quantized");
  }
  std::vector<float> s = prop.scale;
#ifndef OPENBPU_HRT_UCP
  if (p.quantiType == SHIFT) {
    s.clear();
    for (uint8_t sh : prop.shift) s.push_back(std::ldexp(1.0f, -static_cast<int>(sh)));
  }
#endif
  if (p.quantiType == NONE || s.empty()) fail("quantize '" + prop.name + "': the tensor has no quantization scale");
  if (static_cast<int64_t>(c.size()) != tools::element_count(p.validShape))
    fail("quantize '" + prop.name + "': " + std::to_string(c.size()) + " values given, valid shape " +
         tools::shape_str(p.validShape));
  const int n = p.validShape.numDimensions;
  const int axis = p.quantizeAxis;
  int64_t inner = 1;
  for (int k = axis + 1; k < n; ++k) inner *= p.validShape.dimensionSize[k];
  const int64_t ch = axis >= 0 && axis < n ? p.validShape.dimensionSize[axis] : 1;
  py::array out(dtype_of(p.tensorType), std::vector<py::ssize_t>(c.shape(), c.shape() + c.ndim()));
  auto* o = static_cast<uint8_t*>(out.mutable_data());
  const float* in = c.data();
  const int es = tools::element_size(p.tensorType);
  for (py::ssize_t i = 0; i < c.size(); ++i) {
    const size_t k = s.size() == 1 ? 0 : static_cast<size_t>((i / inner) % ch);
    const int32_t zp = p.quantiType == SCALE && k < prop.zero_point.size() ? prop.zero_point[k] : 0;
    const int32_t q = isa::quantize_value(in[i], s[std::min(k, s.size() - 1)], isa::IntRange{int64_t{lo} - zp, int64_t{hi} - zp}) + zp;
    std::memcpy(o + i * es, &q, static_cast<size_t>(es));  // little-endian: the low bytes
  }
  return out;
}

py::array dequantize(const py::array& q, const Properties& prop) {
  const py::dtype want = dtype_of(prop.p.tensorType);
  if (!q.dtype().is(want))
    fail("dequantize '" + prop.name + "': dtype " + dtype_name(q.dtype()) + " given, the tensor is " +
         tools::data_type_name(prop.p.tensorType));
  const auto c = py::array::ensure(q, py::array::c_style);
  if (static_cast<int64_t>(c.size()) != tools::element_count(prop.p.validShape))
    fail("dequantize '" + prop.name + "': " + std::to_string(c.size()) + " values given, valid shape " +
         tools::shape_str(prop.p.validShape));
  return float_array(tight_tensor(prop, c));
}

// What gen B's properties do not have (aligned shape, layout) is None.
#ifdef OPENBPU_HRT_UCP
constexpr const char* kModelDoc = "One model of a loaded .hbm (hbDNNHandle_t).";
constexpr const char* kPackDoc = "Models loaded from .hbm files (hbDNNPackedHandle_t).";
py::object aligned_shape(const Properties&) { return py::none(); }
py::object layout(const Properties&) { return py::none(); }
py::object input_source(const Properties&) { return py::none(); }
std::string props_repr(const Properties& p) {
  return "<TensorProperties '" + p.name + "' " + tools::data_type_name(p.p.tensorType) + " valid " +
         tools::shape_str(p.p.validShape) + " " + tools::quanti_type_name(p.p.quantiType) + ">";
}
#else
constexpr const char* kModelDoc = "One model of a loaded .bin (hbDNNHandle_t).";
constexpr const char* kPackDoc = "Models loaded from .bin files (hbPackedDNNHandle_t).";
py::object aligned_shape(const Properties& p) { return shape_tuple(p.p.alignedShape); }
py::object layout(const Properties& p) { return py::str(tools::layout_name(p.p.tensorLayout)); }
py::object input_source(const Properties& p) {
  return p.input_source < 0 ? py::object(py::none()) : py::object(py::str(tools::input_source_name(p.input_source)));
}
std::string props_repr(const Properties& p) {
  return "<TensorProperties '" + p.name + "' " + tools::data_type_name(p.p.tensorType) + " " +
         tools::layout_name(p.p.tensorLayout) + " valid " + tools::shape_str(p.p.validShape) + " aligned " +
         tools::shape_str(p.p.alignedShape) + " " + tools::quanti_type_name(p.p.quantiType) + ">";
}
#endif

}  // namespace

void bind_dnn(py::module_& m) {
  py::class_<Properties>(m, "TensorProperties", "Properties of a model input or output (hbDNNTensorProperties).",
                         py::module_local())
      .def_readonly("name", &Properties::name)
      .def_property_readonly("valid_shape", [](const Properties& p) { return shape_tuple(p.p.validShape); })
      .def_property_readonly("aligned_shape", &aligned_shape)
      .def_property_readonly("layout", &layout)
      .def_property_readonly("tensor_type", [](const Properties& p) { return std::string(tools::data_type_name(p.p.tensorType)); })
      .def_property_readonly("dtype", [](const Properties& p) { return dtype_of(p.p.tensorType); })
      .def_property_readonly("quanti_type", [](const Properties& p) { return std::string(tools::quanti_type_name(p.p.quantiType)); })
      .def_readonly("scale", &Properties::scale)
      .def_readonly("zero_point", &Properties::zero_point)
      .def_readonly("shift", &Properties::shift)
      .def_property_readonly("quantize_axis", [](const Properties& p) { return p.p.quantizeAxis; })
      .def_property_readonly("aligned_byte_size", [](const Properties& p) { return p.p.alignedByteSize; })
      .def_property_readonly("stride", [](const Properties& p) {
        return std::vector<int64_t>(p.p.stride, p.p.stride + std::max(p.p.validShape.numDimensions, 0));
      })
      .def_property_readonly("tight_byte_size", [](const Properties& p) { return tools::tight_byte_size(p.p); })
      .def_property_readonly("input_source", &input_source)
      .def("__repr__", &props_repr);

  py::class_<Model, std::shared_ptr<Model>>(m, "Model", kModelDoc, py::module_local())
      .def_property_readonly("name", &Model::name)
      .def_property_readonly("march", &Model::march)
      .def_property_readonly("bpu_core_num", &Model::bpu_core_num)
      .def_property_readonly("inputs", &Model::inputs)
      .def_property_readonly("outputs", &Model::outputs)
      .def("infer", &Model::infer, py::arg("inputs"), py::kw_only(), py::arg("priority") = 0, py::arg("core_id") = 0,
           py::arg("dequantize") = false, py::arg("aligned") = false,
           "Runs one inference (the GIL is released while the task runs).\n"
           "inputs: one array per input (list in input order, dict by name, or an array for a one-input model),\n"
           "  tight data of the input's valid shape and type (NV12: H*W*3/2 bytes).\n"
           "priority: 0..255 (255 preempts); core_id: 0 any core, k = core k-1.\n"
           "Returns one array per output: valid data of the output's own type, float32 with dequantize=True\n"
           "(integer outputs scaled by their quantization), or the raw aligned buffer with aligned=True.");

  py::class_<Pack, std::shared_ptr<Pack>>(m, "PackedModel", kPackDoc, py::module_local())
      .def(py::init<const std::vector<std::string>&>(), py::arg("files"))
      .def_property_readonly("model_names", &Pack::names)
      .def("model", &Pack::model, py::arg("name"));

  m.def("quantize", &quantize, py::arg("data"), py::arg("properties"),
        "Float data to a tensor's integer type with its scales (round half away from zero, saturate).");
  m.def("dequantize", &dequantize, py::arg("data"), py::arg("properties"),
        "Integer data of a tensor's valid shape to float32 with its scale/shift (as hrt_model_exec dumps it).");
  m.def("dnn_version", []() { return std::string(hbDNNGetVersion()); });
}

}  // namespace openbpu::python
