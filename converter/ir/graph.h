// SPDX-License-Identifier: Apache-2.0
// The converter's float IR: an ONNX-like graph of named values and nodes.
// Values carry an element type (ONNX TensorProto::DataType numbering), a
// static shape once shape inference ran, and constant data when they are
// initializers or folded. Node attributes reuse the runtime CPU operator
// library's Attrs, so the float reference executor runs nodes directly.
#ifndef OPENBPU_CONVERTER_IR_GRAPH_H_
#define OPENBPU_CONVERTER_IR_GRAPH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::cvt {

// ONNX TensorProto::DataType values.
enum ElemType : int32_t {
  kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6,
  kInt64 = 7, kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13,
};

int elem_size(int32_t elem_type);           // bytes; 0 for unsupported types
const char* elem_name(int32_t elem_type);   // "float32", "int64", ...
// Runtime data type (rt::DataType, hbDNNDataType numbering) of an element type; -1 if none.
int32_t to_rt_type(int32_t elem_type);
int32_t from_rt_type(int32_t rt_type);

// What one conversion may cost (docs/robustness.md): bigger graphs and
// tensors are refused up front with a message instead of running for minutes
// and exhausting memory.
constexpr size_t kMaxGraphNodes = 10000;
constexpr int64_t kMaxTensorElements = int64_t{1} << 28;  // 1 GiB of float32

// "1x3x224x224".
std::string format_shape(const std::vector<int64_t>& shape);
// Product of non-negative dimensions, or -1 when it exceeds
// kMaxTensorElements (computed without overflow).
int64_t capped_elements(const std::vector<int64_t>& shape);

struct Value {
  std::string name;
  int32_t elem_type = kFloat;
  bool has_shape = false;
  std::vector<int64_t> shape;  // -1 = unknown dimension
  std::shared_ptr<const std::vector<uint8_t>> data;  // constant, dense row-major

  // Runtime representation, set on values of the quantized graph: when
  // `native` is set, the value is stored like a model tensor of the .bin:
  // `rt_type` (hbDNNDataType, e.g. S8 or IMG_NV12), `layout`, `valid` and
  // `aligned` shapes in layout order, `byte_size`, and its quantization.
  bool native = false;
  int32_t rt_type = 0;
  int32_t layout = 255;
  std::vector<int64_t> valid, aligned;
  int64_t byte_size = 0;
  rt::QuantInfo quant;

  bool is_constant() const { return data != nullptr; }
  bool shape_known() const;  // has_shape and no unknown dimension
  int64_t elements() const;  // product of the shape (-1 if unknown)
  // Typed view of constant data (caller checks elem_type).
  template <class T> const T* as() const { return reinterpret_cast<const T*>(data->data()); }
  // Constant data converted to double / int64 (any numeric type).
  std::vector<double> to_doubles() const;
  std::vector<int64_t> to_ints() const;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" = ONNX; "openbpu" for our fused/quantized operators
  std::vector<std::string> inputs;  // "" = absent optional input
  std::vector<std::string> outputs;
  rt::Attrs attrs;
};

// A node of the source model that the float passes removed: the node of the
// graph that computes it now (`into`, e.g. the LayerNormalization that
// replaced a ReduceMean/Sub/Pow/Sqrt/Div chain, the Conv a BatchNormalization
// was folded into), or "" when no node took it over (identities, data
// movement). What it was, so settings naming it (node_info, run_on_cpu) can
// be applied to `into` or reported.
struct MergedNode {
  std::string into;
  std::string op_type;
  std::vector<std::string> inputs, outputs;
};

class Graph {
 public:
  std::string name;
  int64_t opset = 11;
  int64_t ir_version = 7;
  std::vector<Node> nodes;  // topologically sorted
  std::map<std::string, Value> values;
  std::vector<std::string> inputs, outputs;
  // Source node name -> where it went (passes/optimize.cc records them).
  std::map<std::string, MergedNode> merged;

  Value* value(const std::string& name);
  const Value* value(const std::string& name) const;
  // Node producing a value (nullptr for graph inputs and initializers).
  const Node* producer(const std::string& value) const;
  // Indices of nodes reading a value.
  std::vector<size_t> consumers(const std::string& value) const;
  bool is_graph_output(const std::string& value) const;
  // A value name not used yet, derived from `base`.
  std::string unique_name(const std::string& base) const;
  // Adds a constant value and returns its name.
  std::string add_constant(const std::string& base, int32_t elem_type, const std::vector<int64_t>& shape,
                           std::vector<uint8_t> bytes);
  // Re-sorts nodes topologically; false when the graph has a cycle.
  bool topo_sort(std::string* error);
  // Removes nodes whose outputs nobody uses, and values nothing refers to.
  void remove_dead();
  // Replaces every use of `from` by `to` (graph outputs included).
  void replace_uses(const std::string& from, const std::string& to);
  // Renames value `from` to `to`: its producer writes `to`, every use reads
  // it (graph outputs included) and its Value entry moves to the new name.
  void rename_value(const std::string& from, const std::string& to);
  // Every value of known shape within kMaxTensorElements; else an error
  // naming the value, its shape and its producer.
  bool check_tensor_sizes(std::string* error) const;
};

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_IR_GRAPH_H_
