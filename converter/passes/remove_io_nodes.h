// SPDX-License-Identifier: Apache-2.0
// remove_node_type / remove_node_name of model_parameters, applied to the
// quantized graph after compilation: nodes next to a model input or output.
#ifndef OPENBPU_CONVERTER_PASSES_REMOVE_IO_NODES_H_
#define OPENBPU_CONVERTER_PASSES_REMOVE_IO_NODES_H_

#include <map>
#include <string>

#include "converter/codegen/compiler.h"
#include "converter/config/config.h"
#include "converter/tools/mapper_log.h"

namespace openbpu::cvt {

// Removes the configured nodes in order. rt_override receives the inputs
// whose runtime type changes (a removed Quantize leaves a featuremap input).
void remove_io_nodes(CompiledModel* cm, const Config& config, std::map<std::string, std::string>* rt_override,
                     MapperLog& log);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_PASSES_REMOVE_IO_NODES_H_
