// SPDX-License-Identifier: Apache-2.0
// Element access by hbDNNDataType for input conversion and output dumps.
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_NUMERIC_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_NUMERIC_H_

#include <cstdint>

namespace openbpu::tools {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

// Reads one element of `type` at p as double (image types are uint8).
double load_element(const uint8_t* p, int32_t type);
// Writes v as `type` at p: integers are rounded to nearest and saturated.
void store_element(double v, int32_t type, uint8_t* p);
bool is_float_type(int32_t type);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_NUMERIC_H_
