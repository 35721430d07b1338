// SPDX-License-Identifier: Apache-2.0
// Attribute checks of imported ONNX nodes, run before any shape inference:
// ONNX's inference functions divide by strides and block sizes and follow
// subgraphs without checking them first (a stride of 0 was a SIGFPE, a Scan
// without body a SIGSEGV inside the library).
#ifndef OPENBPU_CONVERTER_FRONTEND_ONNX_NODE_CHECK_H_
#define OPENBPU_CONVERTER_FRONTEND_ONNX_NODE_CHECK_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
}  // namespace onnx

namespace openbpu::cvt::onnxio {

// Shapes of the values known before shape inference (initializers, graph
// inputs with a shape; -1 for a dimension without a value), by name.
using KnownShapes = std::map<std::string, std::vector<int64_t>>;

// False with a message naming the node (`name`, as imported), its operator
// and the problem when its input or output count is outside the operator's
// schema at `opset`, or when an attribute is out of range, of the wrong type or
// inconsistent with the others or with the known ranks of the node's data
// input and weights (ONNX's convolution inference reads attributes per
// spatial axis of one and kernel sizes from the other), a required subgraph
// is missing, or a known shape input would give more than 64 axes.
bool check_node_attributes(const onnx::NodeProto& n, const std::string& name, const KnownShapes& shapes,
                           int64_t opset, std::string* error);

// Operators with a sliding window (Conv, pools, ...): their output has the
// rank of their data input, which ONNX's inference indexes with the weights'
// axes.
bool is_window_op(const onnx::NodeProto& n);

}  // namespace openbpu::cvt::onnxio

#endif  // OPENBPU_CONVERTER_FRONTEND_ONNX_NODE_CHECK_H_
