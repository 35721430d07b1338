// SPDX-License-Identifier: Apache-2.0
// Validation of decoded BPU programs against the regions they will run on.
// A program that passes can be executed by any kernel path without reading or
// writing outside its regions and without integer overflow; every failure
// names the instruction and the problem.
#ifndef OPENBPU_BPU_SIM_VALIDATE_H_
#define OPENBPU_BPU_SIM_VALIDATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/isa/march.h"

namespace openbpu::sim {

struct RegionLayout {
  std::vector<uint64_t> inputs;   // byte size of each kInput buffer
  std::vector<uint64_t> outputs;  // byte size of each kOutput buffer
  const uint8_t* constants = nullptr;  // the constant blob (values are checked too)
  uint64_t constants_size = 0;
  uint64_t scratch_size = 0;
  // The march the program runs on: its operator limits (kernel, stride,
  // dilation, channels) and data types are checked too. nullptr checks the
  // ISA's structural rules only (the converter's host execution).
  const isa::MarchInfo* march = nullptr;
};

bool validate_instruction(const isa::Instruction& ins, const RegionLayout& regions,
                          std::string* error);

bool validate_program(const std::vector<isa::Instruction>& program, const RegionLayout& regions,
                      std::string* error);

}  // namespace openbpu::sim

#endif  // OPENBPU_BPU_SIM_VALIDATE_H_
