// SPDX-License-Identifier: Apache-2.0
// Calibration data: files written with numpy.tofile (raw, dtype from
// cal_data_type) or .npy, one sample per file, in input_type_train and
// input_layout_train, converted to the float graph's input representation
// (float32 featuremaps; for image inputs the int8 "_128" intermediate type of
// the runtime format, see passes/preprocess.h).
#ifndef OPENBPU_CONVERTER_QUANT_CAL_DATA_H_
#define OPENBPU_CONVERTER_QUANT_CAL_DATA_H_

#include <map>
#include <string>
#include <vector>

#include "converter/ir/graph.h"

namespace openbpu::cvt {

struct CalInputSpec {
  std::string input;       // graph input name
  std::string dir;         // cal_data_dir ("" for random data)
  std::string dtype;       // uint8, float32, int32, int16, int8
  std::vector<int64_t> shape;  // input_shape (train layout)
  std::string type_train, type_rt, layout_train, space_and_range = "regular";
};

// Reads up to max_samples samples (0 = all files). Files of several inputs
// are paired by sorted order. Errors name the file and the size mismatch.
bool load_calibration(const std::vector<CalInputSpec>& inputs, std::vector<std::map<std::string, Value>>* samples,
                      std::vector<std::string>* warnings, std::string* error, size_t max_samples = 0);

// Random samples (calibration_type skip): images uniform 0..255, featuremaps
// normal(0, 1); deterministic for a seed.
std::vector<std::map<std::string, Value>> random_calibration(const std::vector<CalInputSpec>& inputs, int count,
                                                             uint32_t seed);

// Converts one sample in the train type (values as floats) to the graph
// input representation.
Value to_graph_input(const CalInputSpec& spec, const std::vector<float>& train_values);

// Writes a value (float32, int8 or uint8 data, the value's shape) as a .npy
// file numpy.load reads (format 1.0, C order).
bool write_npy(const std::string& path, const Value& value, std::string* error);

// debug_mode dump_calibration_data: every sample in the graph input
// representation, as <dir>/<input>/<k>.npy ('/' in input names becomes '_');
// `written` receives the files.
bool dump_calibration_data(const std::string& dir, const std::vector<std::map<std::string, Value>>& samples,
                           std::vector<std::string>* written, std::string* error);

// Parses a .npy file into floats (dtype f4, f8, u1, i1, i2, i4, i8; C order).
bool read_npy(const std::string& path, std::vector<float>* values, std::vector<int64_t>* shape, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_QUANT_CAL_DATA_H_
