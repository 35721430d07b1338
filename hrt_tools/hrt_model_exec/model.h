// SPDX-License-Identifier: Apache-2.0
// Model loading, tensor descriptions and buffer ownership for hrt_model_exec.
// Everything goes through the public API of the runtime the tool is built on
// (api.h); the RAII types make every exit path release tasks, buffers and the
// packed handle. The functions after ModelPack differ between the two builds
// and are defined in api_dnn.cc (libdnn 1.x) or api_ucp.cc (UCP).
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_MODEL_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api.h"

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
  PackedHandle pack_ = nullptr;
  std::vector<std::string> names_;
};

// Everything the tool needs to know about a model.
struct ModelDesc {
  std::string name;
  std::string march;
  hbDNNHandle_t handle = nullptr;
  std::vector<hbDNNTensorProperties> inputs, outputs;
  std::vector<std::string> input_names, output_names;
  std::vector<int32_t> input_sources;  // hbDNNInputSource (gen A; 0 in gen B)
  std::vector<bool> input_resizer;     // fed by a resizer (an image + ROI)
  std::vector<ImageKind> input_kinds;  // how an image file feeds each input
  // Gen B: the roi tensor (S32 left, top, right, bottom) of a resizer input,
  // whose Y/UV planes take a whole frame (dynamic H and W).
  std::vector<bool> input_roi;
  int cores = 1;                       // BPU cores of the platform it runs on
};

bool describe_model(hbDNNHandle_t h, const std::string& name, ModelDesc* desc);

// Checks --core_id against the BPU core count of the model's march.
bool check_core_id(const ModelDesc& desc, int core_id);

// The runtime's version banner lines, printed before the first model loads.
void print_version_banner();
// model_info's block of one tensor (TOOLS.md 1.4 for the generation).
void print_tensor_info(const char* kind, int index, const std::string& name, const hbDNNTensorProperties& p,
                       const int32_t* source);
// Number of per-channel dequantization parameters of an integer tensor (0:
// not quantized) and the scale / zero point of channel c (SCALE, or SHIFT
// as 2^-shift).
int quant_channels(const hbDNNTensorProperties& p);
void quant_params(const hbDNNTensorProperties& p, int c, double* scale, double* zero_point);
// Shape describing the raw bytes of an output buffer (txt line breaks).
hbDNNTensorShape raw_shape(const hbDNNTensorProperties& p);
// Frees every buffer of a tensor; cache maintenance of one buffer (clean:
// the CPU wrote it; else invalidate: the device wrote it).
void free_tensor(hbDNNTensor* t);
void flush_mem(SysMem* m, bool clean);

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
// The image an input of `kind` takes: H x W (a UV plane: twice its rows and
// columns), whether 3-channel data is packed HWC, and setting the image size
// of a resizer input's frame (its valid shape).
bool image_size(const hbDNNTensorProperties& p, ImageKind kind, int* h, int* w);
bool image_nhwc(const hbDNNTensorProperties& p);
void set_image_size(hbDNNTensorProperties* p, ImageKind kind, int h, int w);
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

  // Input tensor holding `data` in the tight layout of props.validShape:
  // gen A passes alignedShape = validShape (NV12_SEPARATE data is Y then
  // UV, split in two planes); gen B lays it out by props.stride, filling
  // dynamic (-1) strides with the minimal 32-byte aligned ones.
  bool add_input(const hbDNNTensorProperties& props, const std::vector<uint8_t>& data);
  // Output tensor of alignedByteSize bytes.
  bool add_output(const hbDNNTensorProperties& props);
  // Invalidates the CPU view of the outputs after a run.
  void invalidate_outputs();

  std::vector<hbDNNTensor> inputs, outputs;

 private:
  bool alloc(SysMem* mem, int64_t size);
};

// One inference: submit, wait, release. Returns 0 or the libdnn code (an
// error has been printed); *latency_ms = submit to WaitTaskDone return.
// priority: the task's priority (0..255, lowest 0; 255 preempts).
int32_t run_inference(const ModelDesc& desc, TensorSet* tensors, int core_id, const std::vector<Roi>* rois,
                      double* latency_ms, int32_t priority = 0);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_MODEL_H_
