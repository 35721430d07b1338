// SPDX-License-Identifier: Apache-2.0
// What the in-process backends (sim, null) share: device memory is host
// memory, and programs are decoded and validated on the host by bpu_sim's
// decoder and validator (so both accept exactly the same programs).
#ifndef OPENBPU_BPU_DRIVER_SRC_HOST_HOST_BACKEND_H_
#define OPENBPU_BPU_DRIVER_SRC_HOST_HOST_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "bpu_driver/backend.h"
#include "bpu_sim/isa/isa.h"

namespace openbpu::drv {

// A program decoded on the host.
class HostProgram final : public BackendProgram {
 public:
  ~HostProgram() override;
  size_t instruction_count() const override { return instructions.size(); }
  std::vector<isa::Instruction> instructions;
  // The constant blob, pinned for bpu_sim's packed-weight cache while the
  // program lives (the loader keeps it mapped and unchanged); nullptr if not.
  const uint8_t* pinned = nullptr;
};

class HostBackend : public Backend {
 public:
  HostBackend(const char* name, const isa::MarchInfo& march, bool computes);
  const DeviceInfo& info() const override { return info_; }
  // Page-aligned, zero-filled host memory; phy is the (unique) address.
  Status alloc(uint64_t size, bool cached, DmaBuffer* out) override;
  void free(const DmaBuffer& buffer) override;
  // Host memory is coherent: a fence orders the CPU's writes before the
  // (in-process) device reads them.
  Status flush(const DmaBuffer& buffer, bool clean) override;

 protected:
  // Decodes `code` and validates it against `layout` (bpu_sim/validate.h).
  Status decode(const uint8_t* code, uint64_t code_size, const ProgramLayout& layout,
                std::unique_ptr<HostProgram>* out, std::string* error) const;

 private:
  DeviceInfo info_;
};

// The factories of backends(): one per backend source file.
std::unique_ptr<Backend> create_sim_backend(const isa::MarchInfo& march, const BackendOptions& options,
                                            std::string* error);
std::unique_ptr<Backend> create_null_backend(const isa::MarchInfo& march, const BackendOptions& options,
                                             std::string* error);

}  // namespace openbpu::drv

#endif  // OPENBPU_BPU_DRIVER_SRC_HOST_HOST_BACKEND_H_
