// SPDX-License-Identifier: Apache-2.0
// Float kernels of the converter's own operators (domain "openbpu"), which
// only exist between import and compilation: Swish, Gelu, Preprocess.
// ONNX export rewrites them into standard operators (export.h).
#ifndef OPENBPU_CONVERTER_IR_LOCAL_OPS_H_
#define OPENBPU_CONVERTER_IR_LOCAL_OPS_H_

#include <map>
#include <string>
#include <vector>

#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::cvt {

// When set on a thread, BpuSubgraph kernels leave their scratch arena here
// (keyed by node name) after running: used by the similarity report.
struct ScratchCapture {
  std::map<std::string, std::vector<uint8_t>> scratch;
};
ScratchCapture*& scratch_capture();

// Like rt::find_cpu_op for the converter's operators; nullptr if not one.
const rt::CpuOpEntry* find_local_op(const std::string& domain, const std::string& op_type);

// BT.601 colour conversion used by Preprocess (float, before clamping):
// yuv (full or video range) -> rgb.
void yuv_to_rgb(double y, double u, double v, bool video_range, double* r, double* g, double* b);
void rgb_to_yuv(double r, double g, double b, double* y, double* u, double* v);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_IR_LOCAL_OPS_H_
