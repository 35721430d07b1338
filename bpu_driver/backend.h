// SPDX-License-Identifier: Apache-2.0
// The backend interface: what the fc scheduler (scheduler.h) needs from one
// kind of BPU. A backend executes single function calls and owns device
// memory; it knows nothing about jobs, priorities, queues, preemption,
// timeouts or pacing (all of that is the scheduler's, the same for every
// backend). docs/architecture.md "How to add a device backend" is the recipe.
//
// Built-in backends (the registry below is the one list of them):
//   sim   the in-process simulator: decodes and validates programs and runs
//         each fc on bpu_sim's bit-exact kernels;
//   null  timing only: validates programs like `sim` but executes nothing;
//         the scheduler gives each fc its estimated board time (paced), so
//         latencies and throughput are board estimates while outputs are
//         not computed.
#ifndef OPENBPU_BPU_DRIVER_BACKEND_H_
#define OPENBPU_BPU_DRIVER_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bpu_driver/device.h"

namespace openbpu::drv {

// A program as a backend holds it (decoded, uploaded ...). Immutable.
class BackendProgram {
 public:
  virtual ~BackendProgram() = default;
  virtual size_t instruction_count() const = 0;
};

// One function call to execute.
struct FcRun {
  const BackendProgram* program = nullptr;
  FunctionCall call;               // instructions [first, first + count)
  const Bindings* bindings = nullptr;
  int core = 0;                    // core executing it
  bool gang = false;               // the partner core is held too (core_num 2 program)
  // Steady-clock ns by which the fc must have ended (the job's fc timeout,
  // else the scheduler's watchdog). A backend whose hardware can hang waits
  // for completion until then, stops the core and returns kTimeout; the
  // in-process backends cannot hang and finish every fc.
  uint64_t deadline_ns = 0;
};

struct BackendOptions {
  // sim: kernel table ("" = the fastest for this CPU; sim::available_kernels
  // lists the others). Other backends reject a non-empty value.
  std::string kernels;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const DeviceInfo& info() const = 0;

  // Device memory (Device::alloc / free / flush).
  virtual Status alloc(uint64_t size, bool cached, DmaBuffer* out) = 0;
  virtual void free(const DmaBuffer& buffer) = 0;
  virtual Status flush(const DmaBuffer& buffer, bool clean) = 0;

  // Decodes and validates a program (ISA encoding) against its layout. The
  // scheduler checks the fc list against instruction_count() afterwards.
  virtual Status load_program(const uint8_t* code, uint64_t code_size, const ProgramLayout& layout,
                              std::unique_ptr<BackendProgram>* out, std::string* error) = 0;

  // Executes one fc on run.core, blocking the calling thread until it ends.
  // Called from the scheduler's core threads (or a stepping thread), never
  // twice at once for one core. kOk, or an error with *error saying why.
  virtual Status run_fc(const FcRun& run, std::string* error) = 0;

  // Returns a core to a clean state after a failed, hung or timed-out fc
  // (the scheduler calls it for both cores of a gang fc).
  virtual void reset_core(int core) = 0;
};

using BackendFactory = std::unique_ptr<Backend> (*)(const isa::MarchInfo& march, const BackendOptions& options,
                                                    std::string* error);

struct BackendEntry {
  const char* name;
  const char* summary;
  BackendFactory create;
};

// Every backend built into this library, `sim` (the default) first.
const std::vector<BackendEntry>& backends();
// The entry of that name, or nullptr.
const BackendEntry* find_backend(const std::string& name);
// "sim, null": for messages listing the accepted names.
std::string backend_names();

}  // namespace openbpu::drv

#endif  // OPENBPU_BPU_DRIVER_BACKEND_H_
