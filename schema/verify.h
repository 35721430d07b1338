// SPDX-License-Identifier: Apache-2.0
// Container-level verification of a model file: header, flatbuffers verifier
// and semantic checks (every index, blob range and shape in range, no
// arithmetic overflow, tensors produced before they are used). BPU programs
// are decoded and validated by the runtime loader (bpu_sim/validate.h).
#ifndef OPENBPU_SCHEMA_VERIFY_H_
#define OPENBPU_SCHEMA_VERIFY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "schema/format.h"

namespace openbpu::model {

// Limits of the format (checked by the verifier).
inline constexpr int kMaxModelsPerFile = 64;
inline constexpr int kMaxRank = 8;
inline constexpr int64_t kMaxDim = 1 << 24;
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 34;
// Segment input or output index of an omitted optional input or output
// (CPU operators only).
inline constexpr uint32_t kAbsentInput = 0xFFFFFFFFu;
// BPU instruction-set version this runtime executes (BpuProgram.isa_version).
inline constexpr uint32_t kIsaVersion = 1;

// Element size in bytes of a DataType value (hbDNNDataType); image types are
// 1; 4-bit types count as 1 (one element per byte). 0 when unknown.
int data_type_size(int data_type);

// Returns true when the file is a well-formed OpenBPU model file; otherwise
// false with a message naming the first problem found and, when `why` is not
// null, whether the file is damaged or of a format/ISA version this runtime
// does not read. `data` must be 8-byte aligned (the flatbuffer is read in
// place).
bool verify_model_file(const uint8_t* data, size_t size, FileHeader* header, std::string* error,
                       Rejection* why = nullptr);

}  // namespace openbpu::model

#endif  // OPENBPU_SCHEMA_VERIFY_H_
