// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/isa/isa.h"

namespace openbpu::isa {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kUInt8: return "uint8";
  }
  return "?";
}

int64_t conv_macs(const Conv& c, bool transposed) {
  const int64_t cin_g = c.in.dims[3] / (c.groups > 0 ? c.groups : 1);
  const TensorRef& spatial = transposed ? c.in : c.out;
  return int64_t{spatial.dims[0]} * spatial.dims[1] * spatial.dims[2] * c.out.dims[3] * c.kernel_h *
         c.kernel_w * cin_g;
}

const char* opcode_name(Opcode op) {
  switch (op) {
    case Opcode::kConv: return "Conv";
    case Opcode::kDeconv: return "Deconv";
    case Opcode::kPool: return "Pool";
    case Opcode::kEltwise: return "Eltwise";
    case Opcode::kLut: return "Lut";
    case Opcode::kResize: return "Resize";
    case Opcode::kMove: return "Move";
    case Opcode::kFill: return "Fill";
    case Opcode::kArgMax: return "ArgMax";
    case Opcode::kPreprocess: return "Preprocess";
    case Opcode::kMatMul: return "MatMul";
    case Opcode::kSoftmax: return "Softmax";
    case Opcode::kLayerNorm: return "LayerNorm";
  }
  return "?";
}

}  // namespace openbpu::isa
