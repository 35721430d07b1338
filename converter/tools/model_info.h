// SPDX-License-Identifier: Apache-2.0
// hb_model_info's report of one model (TOOLS.md 3.2): the dependency
// versions, the build configuration echoed from the model's metadata (model,
// per-input, calibration and compiler parameters), input/output types and
// the nodes removed after compilation.
#ifndef OPENBPU_CONVERTER_TOOLS_MODEL_INFO_H_
#define OPENBPU_CONVERTER_TOOLS_MODEL_INFO_H_

#include <string>
#include <vector>

#include "converter/config/config.h"
#include "schema/model_generated.h"

namespace openbpu::cvt {

// The report's lines, from the "****** <name> ******" banner on.
std::vector<std::string> model_info_lines(const fb::ModelT& model);

// Everything else the file holds about the model (tensors, segments,
// metadata, the yaml echo): hb_model_info's debug log.
std::vector<std::string> model_detail_lines(const fb::ModelT& model);

// One line per removed node for deleted_nodes_info.txt.
std::vector<std::string> deleted_node_lines(const fb::ModelT& model);

// The per-input yaml parameters recorded in a model's metadata (names,
// train/runtime types and layouts, shapes, colour range), enough to convert
// an image into the model's input as hb_mapper infer does.
bool input_parameters_from_metadata(const fb::ModelT& model, std::vector<InputParameter>* out,
                                    std::string* error);

// "<InputDataType.NV12: 7>" for a tensor data type (hbDNNDataType value),
// numbered as the vendor tool prints its runtime data types.
std::string vendor_type_name(int data_type);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_TOOLS_MODEL_INFO_H_
