// SPDX-License-Identifier: Apache-2.0
// Standard-ONNX form of the converter's own float operators (legalize.cc).
#ifndef OPENBPU_CONVERTER_FRONTEND_ONNX_LEGALIZE_H_
#define OPENBPU_CONVERTER_FRONTEND_ONNX_LEGALIZE_H_

#include <string>

#include "converter/ir/graph.h"

namespace openbpu::cvt {

bool legalize_for_onnx(Graph* g, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_FRONTEND_ONNX_LEGALIZE_H_
