// SPDX-License-Identifier: Apache-2.0
// ONNX <-> IR conversion: tensors, attributes, whole models (import, export)
// and ONNX's own shape inference on the IR. Only this folder includes the
// protobuf-generated ONNX headers.
#ifndef OPENBPU_CONVERTER_FRONTEND_ONNX_ONNX_IO_H_
#define OPENBPU_CONVERTER_FRONTEND_ONNX_ONNX_IO_H_

#include <map>
#include <string>
#include <vector>

#include "converter/ir/graph.h"

namespace onnx {
class TensorProto;
class NodeProto;
class ModelProto;
}  // namespace onnx

namespace openbpu::cvt::onnxio {

// TensorProto -> constant Value (raw_data or typed fields; external data is
// read from a regular file inside base_dir after resolving symlinks; none
// when base_dir is empty). False with a message for unsupported data and for
// tensors above kMaxTensorElements.
bool value_from_tensor(const onnx::TensorProto& t, const std::string& base_dir, Value* out, std::string* error);
void value_to_tensor(const Value& v, onnx::TensorProto* t);

// NodeProto attributes -> Attrs (tensor attributes become AttrValue::kTensor).
bool attrs_from_node(const onnx::NodeProto& n, rt::Attrs* attrs, std::string* error);
void attrs_to_node(const rt::Attrs& attrs, onnx::NodeProto* n);

// Reads an .onnx file into the IR: initializers become constants, graph
// inputs that are initializers are dropped, default domain opset recorded.
// Errors name the problem (unreadable file, IR version, opset, subgraphs).
bool load_model(const std::string& path, Graph* graph, std::string* error);
// The same from a serialized ModelProto (external data relative to base_dir).
bool load_model_bytes(const std::string& bytes, const std::string& base_dir, Graph* graph, std::string* error);
// Converts a parsed ModelProto (the backend test runner uses this too).
bool import_model(const onnx::ModelProto& model, const std::string& base_dir, Graph* graph, std::string* error);

// Writes the IR as an ONNX model (atomically); custom-domain nodes get their
// domain's opset import. Returns false with a message on failure.
bool save_model(const Graph& graph, const std::string& path, std::string* error);
void export_model(const Graph& graph, onnx::ModelProto* model);

// Writes the float graph with fake quantization on `values`: each gets a
// QuantizeLinear/DequantizeLinear pair (int8, zero point 0, scale =
// threshold / 127), named <value>_qdq<k>_QuantizeLinear/_DequantizeLinear.
// Each constant of `weight_scales` (convolution weights) gets a per-channel
// pair on axis 0 with the given scales. Models below opset 13 are converted
// with ONNX's version converter first, so the result is standard ONNX any
// runtime executes.
bool save_calibrated(const Graph& graph, const std::map<std::string, double>& thresholds,
                     const std::vector<std::string>& values,
                     const std::map<std::string, std::vector<float>>& weight_scales, const std::string& path,
                     std::string* error);

// Runs ONNX shape inference over the graph and records the inferred types
// and shapes of every value (known shapes are kept, unknown filled in).
bool infer_shapes(Graph* graph, std::string* error);

}  // namespace openbpu::cvt::onnxio

#endif  // OPENBPU_CONVERTER_FRONTEND_ONNX_ONNX_IO_H_
