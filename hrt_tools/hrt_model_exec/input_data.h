// SPDX-License-Identifier: Apache-2.0
// Model input data for infer and perf: read from --input_file items (bin,
// txt, images) or generated at random, always in the tight layout (the
// tool sets alignedShape = validShape and lets libdnn pad).
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_INPUT_DATA_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_INPUT_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model.h"
#include "options.h"

namespace openbpu::tools {

struct InputData {
  // The model's properties, except for resizer inputs whose valid shape is
  // the frame size of the image given.
  hbDNNTensorProperties props;
  std::vector<uint8_t> bytes;
};

// One file per model input, in input order. With roi_infer, resizer inputs
// take whole frames (images), cropped and scaled by the ROI at run time.
bool load_inputs(const ModelDesc& desc, const std::vector<std::string>& files, bool roi_infer,
                 std::vector<InputData>* out);

// Random data of the right size: uniform [0, 1) for float tensors, random
// bytes for integer and image tensors (deterministic for a seed).
bool random_inputs(const ModelDesc& desc, uint32_t seed, std::vector<InputData>* out);

// UCP models: --input_img_properties (checked against the model's Y/UV
// plane inputs), --input_valid_shape and --input_stride (one ';' separated
// item per model input: dynamic -1 values filled, fixed ones must match).
bool apply_input_options(const Options& opt, ModelDesc* desc);

// Parses "l,t,r,b;l,t,r,b" into ROIs, one per resizer input.
bool parse_rois(const std::string& text, const ModelDesc& desc, std::vector<Roi>* rois);

// Decodes an image file into what the input takes (image_input.cc): an
// NV12/gray/RGB/BGR/YUV444 tensor, or one plane of NV12 (UCP Y/UV inputs).
// keep_size: the frame keeps the image size (resizer inputs), else it is
// resized to the input's valid H x W.
bool load_image(const std::string& file, int index, const std::string& name, ImageKind kind, bool keep_size,
                InputData* data);

bool is_image_file(const std::string& file);

// Every input file is opened with this: without blocking (FIFO), refused
// unless a regular file after symlinks (FIFO, directory, /dev/zero, ...);
// returns the descriptor (-1, logged, on error) and the size, which the
// caller checks against what the input can take before reading.
int open_input_file(const std::string& file, uint64_t* size);
// Reads `size` bytes of the file and closes fd; false (logged) when it
// changed size meanwhile.
bool read_input_file(int fd, const std::string& file, uint64_t size, std::vector<uint8_t>* bytes);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_INPUT_DATA_H_
