// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: yaml configs through parse_config and
// validate_with_model (fuzz_converter.cc), relative paths resolved in a
// folder with a model, external data and calibration data.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_converter.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  openbpu::fuzz::converter_init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  openbpu::fuzz::yaml_config_one(data, size);
  return 0;
}
