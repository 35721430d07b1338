// SPDX-License-Identifier: Apache-2.0
// Differential-test helpers for the optimized kernels: a random arena of
// regions, random strided NHWC views placed in it, and a runner that executes
// one instruction with the reference kernels and with another path on copies
// of the same arena and compares every byte of the writable regions (so a
// kernel that writes outside its output view is caught as well).
#ifndef OPENBPU_TESTS_BPU_SIM_OPT_TEST_UTIL_H_
#define OPENBPU_TESTS_BPU_SIM_OPT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bpu_sim/executor.h"
#include "bpu_sim/isa/isa.h"
#include "bpu_sim/memory.h"
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/validate.h"

namespace openbpu::sim::test {

struct Arena {
  std::vector<uint8_t> input, output, consts, scratch;
  Memory bind() {
    Memory m;
    m.inputs.push_back({input.data(), input.size()});
    m.outputs.push_back({output.data(), output.size()});
    m.constants = {consts.data(), consts.size()};
    m.scratch = {scratch.data(), scratch.size()};
    return m;
  }
  RegionLayout layout() const {
    RegionLayout r;
    r.inputs = {input.size()};
    r.outputs = {output.size()};
    r.constants = consts.data();
    r.constants_size = consts.size();
    r.scratch_size = scratch.size();
    return r;
  }
};

class Rng {
 public:
  explicit Rng(uint32_t seed) : g_(seed) {}
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  template <class T>
  T pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int>(v.size()) - 1))];
  }
  // Random bytes; `extreme` biases values to the type's ends.
  void fill(uint8_t* p, size_t n, bool extreme) {
    for (size_t i = 0; i < n; ++i) {
      int v = uniform(0, 255);
      if (extreme && chance(0.3)) v = chance(0.5) ? 0x80 : 0x7f;
      p[i] = static_cast<uint8_t>(v);
    }
  }
  std::mt19937& gen() { return g_; }

 private:
  std::mt19937 g_;
};

// Places an NHWC (rank-4) or rank-6 view of `dims` in `region` (appending to
// the region's bytes): channel stride cs elements (1 usually), padded pixel,
// row and batch strides, random start offset.
inline isa::TensorRef place(Rng& r, std::vector<uint8_t>* region, isa::Region reg, isa::DType t,
                            const std::vector<int>& dims, bool allow_cstride) {
  isa::TensorRef v;
  v.region = reg;
  v.dtype = t;
  v.index = 0;
  const int es = isa::dtype_size(t);
  int64_t stride = (allow_cstride && r.chance(0.15)) ? 2 : 1;
  for (int k = 0; k < isa::kMaxRank; ++k) v.dims[k] = 1;
  const int rank = static_cast<int>(dims.size());
  for (int k = 0; k < rank; ++k) v.dims[k] = dims[k];
  for (int k = rank - 1; k >= 0; --k) {
    v.strides[k] = stride;
    stride *= dims[k];
    if (k == rank - 1 && r.chance(0.5))
      stride += r.pick<int>({0, 1, 3, 8, 16});
    else if (r.chance(0.3))
      stride += r.uniform(0, 5);
  }
  const size_t start = region->size() + static_cast<size_t>(r.uniform(0, 8) * es);
  v.offset = start;
  int64_t last = 0;
  for (int k = 0; k < isa::kMaxRank; ++k) last += (v.dims[k] - 1) * v.strides[k];
  const size_t end =
      start + static_cast<size_t>((last + 1) * es) + static_cast<size_t>(r.uniform(0, 16));
  const size_t old = region->size();
  region->resize(end);
  r.fill(region->data() + old, end - old, r.chance(0.3));
  return v;
}

inline isa::ConstRef add_const(std::vector<uint8_t>* consts, const void* data, size_t bytes,
                               uint32_t count) {
  isa::ConstRef c;
  c.offset = consts->size();
  c.count = count;
  consts->insert(consts->end(), static_cast<const uint8_t*>(data),
                 static_cast<const uint8_t*>(data) + bytes);
  return c;
}

// Runs `ins` with the reference kernels and with `table` on copies of `arena`
// and expects identical output and scratch regions.
inline ::testing::AssertionResult same_as_reference(const isa::Instruction& ins, const Arena& arena,
                                                    const KernelTable& table) {
  Arena a = arena, b = arena;
  const Memory ma = a.bind(), mb = b.bind();
  ref::execute(ins, ma);
  execute(ins, mb, table);
  for (int region = 0; region < 2; ++region) {
    const std::vector<uint8_t>& x = region == 0 ? a.output : a.scratch;
    const std::vector<uint8_t>& y = region == 0 ? b.output : b.scratch;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] != y[i]) {
        return ::testing::AssertionFailure()
               << table.name << ": " << (region == 0 ? "output" : "scratch") << " byte " << i
               << " differs: reference " << int(x[i]) << ", got " << int(y[i]);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// Every optimized table usable here (the reference itself excluded).
// Within its scope every convolution splits over sim_threads host threads,
// however small (the tests' layers are).
struct SplitEveryConvolution {
  int64_t saved = sim_split_min_macs();
  SplitEveryConvolution() { set_sim_split_min_macs(0); }
  ~SplitEveryConvolution() { set_sim_split_min_macs(saved); }
  SplitEveryConvolution(const SplitEveryConvolution&) = delete;
  SplitEveryConvolution& operator=(const SplitEveryConvolution&) = delete;
};

inline std::vector<const KernelTable*> optimized_tables() {
  std::vector<const KernelTable*> v;
  for (const KernelTable* t : available_kernels())
    if (std::string(t->name) != "reference") v.push_back(t);
  return v;
}

}  // namespace openbpu::sim::test

#endif  // OPENBPU_TESTS_BPU_SIM_OPT_TEST_UTIL_H_
