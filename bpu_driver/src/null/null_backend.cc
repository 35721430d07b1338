// SPDX-License-Identifier: Apache-2.0
// The `null` backend: timing only. Programs are decoded and validated like
// on the simulator, memory is host memory, but an fc executes nothing; the
// scheduler paces every fc to its estimated board time (DeviceInfo::computes
// is false), so task latencies are board estimates. BPU outputs are not
// computed.
#include "bpu_driver/src/host/host_backend.h"

namespace openbpu::drv {

namespace {

class NullBackend final : public HostBackend {
 public:
  explicit NullBackend(const isa::MarchInfo& march) : HostBackend("null", march, /*computes=*/false) {}

  Status load_program(const uint8_t* code, uint64_t code_size, const ProgramLayout& layout,
                      std::unique_ptr<BackendProgram>* out, std::string* error) override {
    std::unique_ptr<HostProgram> prog;
    const Status st = decode(code, code_size, layout, &prog, error);
    if (st == Status::kOk) *out = std::move(prog);
    return st;
  }

  // Nothing to execute: the fc's time is the scheduler's pacing.
  Status run_fc(const FcRun& run, std::string* error) override {
    (void)run, (void)error;
    return Status::kOk;
  }

  // No core state exists.
  void reset_core(int core) override { (void)core; }
};

}  // namespace

std::unique_ptr<Backend> create_null_backend(const isa::MarchInfo& march, const BackendOptions& options,
                                             std::string* error) {
  if (!options.kernels.empty()) {
    *error = "the null backend runs no kernels (a kernel table was requested: '" + options.kernels + "')";
    return nullptr;
  }
  return std::make_unique<NullBackend>(march);
}

}  // namespace openbpu::drv
