// SPDX-License-Identifier: Apache-2.0
// Removing boundary nodes from a compiled model (hb_model_modifier and the
// yaml keys remove_node_type / remove_node_name; docs/hb_model_modifier.md):
// a CPU operator next to a model input (Quantize, Transpose / layout
// conversion, Cast, Reshape) or output (Dequantize, Transpose / layout
// conversion, Cast, Reshape, Softmax) is dropped, the model input or output
// moves to the tensor on its other side (keeping its name), and a
// RemovedNode record keeps what the node did (scales, zero points, axis,
// permutation, shapes) for hb_model_info and the user's own pre/post
// processing. The runtime then reports the new tensor types (e.g. an int8
// input, or an int32 output with quanti type SCALE).
#ifndef OPENBPU_CONVERTER_TOOLS_MODEL_MODIFIER_H_
#define OPENBPU_CONVERTER_TOOLS_MODEL_MODIFIER_H_

#include <string>
#include <vector>

#include "schema/model_generated.h"

namespace openbpu::cvt {

// The type names -a / remove_node_type accept.
const std::vector<std::string>& removable_types();

// The vendor type name of a CPU segment's operator ("Quantize",
// "Dequantize", "Transpose" for our layout conversions, ...).
std::string node_type(const fb::SegmentT& segment);

// Names of the segments that can be removed now, in model order.
std::vector<std::string> removable_nodes(const fb::ModelT& model);

enum class RemoveResult { kRemoved, kNotFound, kNotAtBoundary, kBothSidesConnected, kSharedInput, kNotRemovableType };

// Removes one node by name; `why` explains any result but kRemoved.
RemoveResult remove_node(fb::ModelT* model, const std::string& name, std::string* why);

// Removes every removable node of a type, repeatedly (a chain next to the
// boundary goes node by node); returns the removed names.
std::vector<std::string> remove_nodes_of_type(fb::ModelT* model, const std::string& type);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_TOOLS_MODEL_MODIFIER_H_
