// SPDX-License-Identifier: Apache-2.0
// Model loading, tensor descriptions and buffer ownership for hrt_model_exec.
// Everything goes through the public libdnn API; the RAII types make every
// exit path release tasks, buffers and the packed handle.
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_MODEL_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"

namespace openbpu::tools {

struct Options;

// Owns the packed handle of all --model_file files.
class ModelPack {
 public:
  ModelPack() = default;
  ModelPack(const ModelPack&) = delete;
  ModelPack& operator=(const ModelPack&) = delete;
  ~ModelPack();

  // Loads the files and prints "Load model to DDR cost <x>ms.".
  bool load(const std::vector<std::string>& files);
  const std::vector<std::string>& names() const { return names_; }
  // Handle of a model by name (error message when absent).
  bool handle(const std::string& name, hbDNNHandle_t* h) const;
  // The model infer/perf run: --model_name, or the only model loaded.
  bool select(const std::string& model_name, std::string* name, hbDNNHandle_t* h) const;
  std::string name_list() const;  // "[a] [b]"

 private:
  hbPackedDNNHandle_t pack_ = nullptr;
  std::vector<std::string> names_;
};

// Everything the tool needs to know about a model.
struct ModelDesc {
  std::string name;
  std::string march;
  hbDNNHandle_t handle = nullptr;
  std::vector<hbDNNTensorProperties> inputs, outputs;
  std::vector<std::string> input_names, output_names;
  std::vector<int32_t> input_sources;  // hbDNNInputSource
};

bool describe_model(hbDNNHandle_t h, const std::string& name, ModelDesc* desc);

// Checks --core_id against the BPU core count of the model's march.
bool check_core_id(const ModelDesc& desc, int core_id);
// hbDNNInferCtrlParam::bpuCoreId for a --core_id value (0 any, k -> core k-1).
int32_t core_mask(int core_id);

// Names as the vendor prints them.
const char* data_type_name(int32_t type);
const char* layout_name(int32_t layout);
const char* quanti_type_name(int32_t type);
const char* input_source_name(int32_t source);
std::string shape_str(const hbDNNTensorShape& s);  // "(1,3,224,224,)"

bool is_image_type(int32_t type);
// Element size in bytes, 0 for types the tool cannot handle (S4/U4).
int element_size(int32_t type);
int64_t element_count(const hbDNNTensorShape& s);
// H and W of an image tensor by its layout (NCHW or NHWC); false when not 4-D.
bool image_hw(const hbDNNTensorProperties& p, int* h, int* w);
// Bytes of tightly packed data for a tensor whose alignedShape equals its
// validShape (the library pads): NV12 H*W*3/2, Y H*W, else valid elements.
int64_t tight_byte_size(const hbDNNTensorProperties& p);
// Byte distance per dimension in an output's memory (its stride, or dense
// over alignedShape when the library reports no stride).
std::vector<int64_t> byte_strides(const hbDNNTensorProperties& p);

// Input and output buffers of one inference, freed on destruction.
class TensorSet {
 public:
  TensorSet() = default;
  TensorSet(const TensorSet&) = delete;
  TensorSet& operator=(const TensorSet&) = delete;
  ~TensorSet();

  // Input tensor with alignedShape = validShape, holding `data` (tight
  // layout; NV12_SEPARATE data is Y followed by UV and split in two planes).
  bool add_input(const hbDNNTensorProperties& props, const std::vector<uint8_t>& data);
  // Output tensor of alignedByteSize bytes.
  bool add_output(const hbDNNTensorProperties& props);
  // Invalidates the CPU view of the outputs after a run.
  void invalidate_outputs();

  std::vector<hbDNNTensor> inputs, outputs;

 private:
  bool alloc(hbSysMem* mem, int64_t size);
};

// One inference: submit, wait, release. Returns 0 or the libdnn code (an
// error has been printed); *latency_ms = submit to WaitTaskDone return.
int32_t run_inference(const ModelDesc& desc, TensorSet* tensors, int core_id,
                      std::vector<hbDNNRoi>* rois, double* latency_ms);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_MODEL_H_
