// SPDX-License-Identifier: Apache-2.0
// The `sim` backend: each fc runs on the host through bpu_sim's kernels
// (bit-exact to the reference kernels; the table is chosen at creation).
#include <vector>

#include "bpu_driver/src/host/host_backend.h"
#include "bpu_sim/executor.h"
#include "bpu_sim/memory.h"

namespace openbpu::drv {

namespace {

class SimBackend final : public HostBackend {
 public:
  SimBackend(const isa::MarchInfo& march, const sim::KernelTable& kernels)
      : HostBackend("sim", march, /*computes=*/true), kernels_(kernels), memory_(march.cores) {}

  Status load_program(const uint8_t* code, uint64_t code_size, const ProgramLayout& layout,
                      std::unique_ptr<BackendProgram>* out, std::string* error) override {
    std::unique_ptr<HostProgram> prog;
    const Status st = decode(code, code_size, layout, &prog, error);
    if (st != Status::kOk) return st;
    if (layout.constants != nullptr && layout.constants_size > 0) {
      sim::pin_constants(layout.constants, layout.constants_size);
      prog->pinned = layout.constants;
      // The convolutions' packed weights are built here, not in the first run.
      sim::Memory consts;
      consts.constants = {const_cast<uint8_t*>(layout.constants), layout.constants_size};
      sim::prepare(prog->instructions, consts, kernels_);
    }
    *out = std::move(prog);
    return Status::kOk;
  }

  Status run_fc(const FcRun& run, std::string* error) override {
    (void)error;  // validated programs cannot fail on the simulator
    // The core's region table; its vectors keep their capacity, so running
    // an fc allocates nothing after the core's first.
    sim::Memory& mem = memory_[static_cast<size_t>(run.core)];
    const Bindings& b = *run.bindings;
    mem.inputs.clear();
    for (const auto& v : b.inputs) mem.inputs.push_back({v.vir, v.size});
    mem.outputs.clear();
    for (const auto& v : b.outputs) mem.outputs.push_back({v.vir, v.size});
    mem.constants = {b.constants.vir, b.constants.size};
    mem.scratch = {b.scratch.vir, b.scratch.size};
    const auto& program = static_cast<const HostProgram*>(run.program)->instructions;
    sim::execute_range(program, run.call.first, run.call.count, mem, kernels_);
    return Status::kOk;
  }

  // A simulated core keeps nothing between fcs (a job's state is in its own
  // memory), so a reset has nothing to clear.
  void reset_core(int core) override { (void)core; }

 private:
  const sim::KernelTable& kernels_;
  std::vector<sim::Memory> memory_;  // per core
};

}  // namespace

std::unique_ptr<Backend> create_sim_backend(const isa::MarchInfo& march, const BackendOptions& options,
                                            std::string* error) {
  const sim::KernelTable* kernels = &sim::best_kernels();
  if (!options.kernels.empty()) {
    kernels = sim::find_kernels(options.kernels.c_str());
    if (kernels == nullptr) {
      std::string names;
      for (const sim::KernelTable* t : sim::available_kernels()) names += std::string(names.empty() ? "" : ", ") + t->name;
      *error = "kernel table '" + options.kernels + "' is not available on this CPU (available: " + names + ")";
      return nullptr;
    }
  }
  return std::make_unique<SimBackend>(march, *kernels);
}

}  // namespace openbpu::drv
