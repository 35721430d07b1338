// SPDX-License-Identifier: Apache-2.0
// Input files of `hb_mapper infer` that are images (jpg, png, bmp, ...):
// decoded, resized to the input, in the input's train type, then either fed
// to a float model like a calibration sample or converted to the runtime
// bytes the quantized model (and the .bin) takes.
#ifndef OPENBPU_CONVERTER_TOOLS_INFER_INPUT_H_
#define OPENBPU_CONVERTER_TOOLS_INFER_INPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "converter/config/config.h"

namespace openbpu::cvt {

// True for file names OpenCV decodes as images (by extension).
bool is_image_file(const std::string& path);

// Decodes an image into the uint8 values of `ip`'s train type (rgb, bgr,
// gray, yuv444; BT.601 full range) and train layout at its input_shape,
// resized with bilinear interpolation. Errors name the file; builds without
// OpenCV report that images are not supported.
bool image_to_train_values(const std::string& path, const InputParameter& ip, std::vector<float>* values,
                           std::string* error);

// The runtime input bytes of a sample given in the train type and layout:
// bgr/rgb/gray/yuv444 in layout_rt, nv12 (2x2 averaged chroma, rounded
// half up; bt601_video scales to video range), featuremap as float32.
bool train_values_to_rt_bytes(const InputParameter& ip, const std::vector<float>& values,
                              std::vector<uint8_t>* bytes, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_TOOLS_INFER_INPUT_H_
