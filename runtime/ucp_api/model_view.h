// SPDX-License-Identifier: Apache-2.0
// How a loaded model looks through the UCP API (docs/ucp.md): its tensors in
// the gen-B terms (hbDNNTensorProperties with byte strides, gen-B data types,
// SCALE quantization with int32 zero points), an NV12 input as two inputs
// <name>_y and <name>_uv with dynamic strides, a gray input as one Y input;
// a resizer input (input_source resizer) as those planes with dynamic H and W
// too (the whole frame) plus <name>_roi, an S32 [1,4] tensor of left, top,
// right, bottom (HBUCP_API.md 3.6). Built once per model at load; the
// properties' scale arrays point into it.
#ifndef OPENBPU_RUNTIME_UCP_API_MODEL_VIEW_H_
#define OPENBPU_RUNTIME_UCP_API_MODEL_VIEW_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hobot/dnn/hb_dnn.h"
#include "runtime/engine/engine.h"
#include "runtime/loader/model.h"

namespace openbpu::ucp {

struct ViewTensor {
  enum class Kind { kTensor, kY, kUV, kRoi };
  std::string name;
  hbDNNTensorProperties props{};
  uint32_t io = 0;  // the model's input or output index
  Kind kind = Kind::kTensor;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
};

struct ModelView {
  rt::Model* model = nullptr;
  std::vector<ViewTensor> inputs, outputs;
};

// Builds the view of a model.
std::unique_ptr<ModelView> make_view(rt::Model* model);

// A value inside the model (obpuInferWithLayerOutputs): in the logical ONNX
// order of rt::logical_view (4-D NHWC data as N,C,H,W with the byte strides
// permuted alike, a per-channel quantizeAxis moved with them); the scale
// arrays point into *v.
void layer_view(const rt::TensorDesc& d, ViewTensor* v);

// gen-B hbDNNDataType of an internal data type (image types are U8).
int32_t ucp_data_type(int32_t internal_type);

// The engine's buffers for one run from the caller's tensors (input has
// view.inputs.size() entries, output view.outputs.size()); checks every
// property the caller may not change and every stride rule.
rt::Status to_io_buffers(const ModelView& view, const hbDNNTensor* input, const hbDNNTensor* output,
                         std::vector<rt::IoBuffer>* ins, std::vector<rt::IoBuffer>* outs);

}  // namespace openbpu::ucp

#endif  // OPENBPU_RUNTIME_UCP_API_MODEL_VIEW_H_
