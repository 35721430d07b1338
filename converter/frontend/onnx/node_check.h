// SPDX-License-Identifier: Apache-2.0
// Attribute checks of imported ONNX nodes, run before any shape inference:
// ONNX's inference functions divide by strides and block sizes and follow
// subgraphs without checking them first (a stride of 0 was a SIGFPE, a Scan
// without body a SIGSEGV inside the library).
#ifndef OPENBPU_CONVERTER_FRONTEND_ONNX_NODE_CHECK_H_
#define OPENBPU_CONVERTER_FRONTEND_ONNX_NODE_CHECK_H_

#include <string>

namespace onnx {
class NodeProto;
}  // namespace onnx

namespace openbpu::cvt::onnxio {

// False with a message naming the node (`name`, as imported), its operator
// and the attribute when an attribute is out of range, of the wrong type or
// inconsistent with the others, or a required subgraph is missing.
bool check_node_attributes(const onnx::NodeProto& n, const std::string& name, std::string* error);

}  // namespace openbpu::cvt::onnxio

#endif  // OPENBPU_CONVERTER_FRONTEND_ONNX_NODE_CHECK_H_
