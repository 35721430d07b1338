// SPDX-License-Identifier: Apache-2.0
// Fuzz entries of the converter's front end (docs/robustness.md), shared by
// the libFuzzer targets (fuzz_onnx_import, fuzz_yaml_config; clang only) and
// the corpus replay test (fuzz_converter_replay, every compiler).
#ifndef OPENBPU_TESTS_FUZZ_FUZZ_CONVERTER_H_
#define OPENBPU_TESTS_FUZZ_FUZZ_CONVERTER_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace openbpu::fuzz {

// Creates the folder the entries resolve relative paths against: a valid
// model.onnx (input 'input', 1x3x32x32), its external data w.dat, a symlink
// leaving the folder (passwd), a FIFO, a calibration folder (cal). Call once.
void converter_init();
const std::string& converter_dir();

// How far an input got.
enum class Stage { kUnparsed, kRefused, kImported, kInferred };

// The bytes as an ONNX model, as hb_mapper reads one before anything else:
// protobuf parse, import_model (names, size caps, node attribute checks,
// external data resolved in converter_dir()), ONNX shape inference and the
// tensor size check. A crash, a sanitizer report or an exception leaving the
// converter fails.
Stage onnx_import_one(const uint8_t* data, size_t size);

// The bytes as a yaml config (parse_config with converter_dir() as its
// folder), then validate_with_model against model.onnx's input and the
// config echo.
Stage yaml_config_one(const uint8_t* data, size_t size);

// The message of the last refusal (for the replay's failure lines).
const std::string& last_error();

// Structure-aware mutation of a serialized ONNX model: parses it and changes
// one attribute, dimension, data location, name or operator type to a hostile
// value, then serializes it into data (at most max_size bytes). Returns the
// new size, or 0 when the bytes do not parse (the caller mutates bytes then).
size_t onnx_mutate(uint8_t* data, size_t size, size_t max_size, unsigned seed);

}  // namespace openbpu::fuzz

#endif  // OPENBPU_TESTS_FUZZ_FUZZ_CONVERTER_H_
