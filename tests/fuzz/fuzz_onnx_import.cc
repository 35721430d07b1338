// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: ONNX models through the converter's importer and ONNX
// shape inference (fuzz_converter.cc). Mutations are byte-level half of the
// time and structure-aware (onnx_mutate: hostile attributes, dimensions,
// external data, operator types, names) otherwise.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_converter.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  openbpu::fuzz::converter_init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  openbpu::fuzz::onnx_import_one(data, size);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 2 == 0) {
    const size_t n = openbpu::fuzz::onnx_mutate(data, size, max_size, seed);
    if (n != 0) return n;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
