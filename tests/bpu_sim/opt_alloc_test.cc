// SPDX-License-Identifier: Apache-2.0
// The optimized kernels allocate nothing on the inference path after the
// first run: packed weights, workspaces and helper threads are made once.
// Counts operator new and posix_memalign (wrapped at link time) during a
// second and third run of a whole program, with one and two host threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "bpu_sim/executor.h"
#include "bpu_sim/isa/codec.h"
#include "schema/writer.h"
#include "tests/bpu_sim/opt_test_util.h"
#include "tests/common/test_models.h"

namespace {
std::atomic<long> g_allocs{0};
}  // namespace

// Sanitizers replace operator new themselves: there only posix_memalign (the
// kernels' own buffers) is counted.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  std::abort();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

extern "C" int __real_posix_memalign(void** p, size_t a, size_t n);
extern "C" int __wrap_posix_memalign(void** p, size_t a, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __real_posix_memalign(p, a, n);
}

namespace openbpu::sim {
namespace {

TEST(OptAlloc, NoAllocationAfterTheFirstRun) {
  openbpu::testing::MobileNetV1 net;
  net.h = net.w = 96;
  const std::vector<uint8_t> file = net.build();
  fb::ModelFileT f;
  std::vector<uint8_t> data;
  std::string err;
  ASSERT_TRUE(model::unpack_model_file(file.data(), file.size(), &f, &data, &err)) << err;
  const auto* bpu = f.models[0]->segments[0]->kind.AsBpuProgram();
  std::vector<isa::Instruction> prog;
  ASSERT_TRUE(
      isa::decode_program(data.data() + bpu->code->offset(), bpu->code->size(), &prog, &err));
  std::vector<uint8_t> input(96 * 96 * 3 / 2, 77), output(1 << 16), scratch(bpu->scratch_size);
  Memory m;
  m.inputs.push_back({input.data(), input.size()});
  m.outputs.push_back({output.data(), output.size()});
  m.constants = {data.data() + bpu->constants->offset(), bpu->constants->size()};
  m.scratch = {scratch.data(), scratch.size()};
  const test::SplitEveryConvolution split;
  for (const KernelTable* t : available_kernels()) {
    if (std::string(t->name) == "reference") continue;
    for (int threads : {1, 2}) {
      set_sim_threads(threads);
      execute_range(prog, 0, prog.size(), m, *t);  // first run: plans, workspaces, threads
      const long before = g_allocs.load();
      execute_range(prog, 0, prog.size(), m, *t);
      execute_range(prog, 0, prog.size(), m, *t);
      EXPECT_EQ(g_allocs.load() - before, 0) << t->name << " threads " << threads;
    }
  }
  set_sim_threads(1);
}

}  // namespace
}  // namespace openbpu::sim
