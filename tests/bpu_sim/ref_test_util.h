// SPDX-License-Identifier: Apache-2.0
// Test helpers for the reference kernels: a simulated memory whose regions are
// filled with random bytes, tensors placed in it with padded strides, dense
// copies of tensors for the independent computations, and the check that a
// kernel wrote nothing outside its output view.
//
// Element addressing is re-implemented here on purpose (not taken from the
// kernels' helpers) so that a mistake in one is caught by the other.
#ifndef OPENBPU_TESTS_BPU_SIM_REF_TEST_UTIL_H_
#define OPENBPU_TESTS_BPU_SIM_REF_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bpu_sim/isa/isa.h"
#include "bpu_sim/memory.h"
#include "bpu_sim/reference/kernels.h"

namespace openbpu::sim::test {

__extension__ typedef __int128 int128;  // exact products of int64 and int32 values

inline int64_t type_min(isa::DType t) {
  switch (t) {
    case isa::DType::kInt8:
      return INT8_MIN;
    case isa::DType::kInt16:
      return INT16_MIN;
    case isa::DType::kInt32:
      return INT32_MIN;
    case isa::DType::kUInt8:
      return 0;
  }
  return 0;
}
inline int64_t type_max(isa::DType t) {
  switch (t) {
    case isa::DType::kInt8:
      return INT8_MAX;
    case isa::DType::kInt16:
      return INT16_MAX;
    case isa::DType::kInt32:
      return INT32_MAX;
    case isa::DType::kUInt8:
      return UINT8_MAX;
  }
  return 0;
}

// floor(a / b) for b > 0, by division (the kernels use shifts).
inline int128 floor_div(int128 a, int128 b) {
  int128 q = a / b;
  if (q * b > a) --q;
  return q;
}
inline int128 pow2(int s) { return static_cast<int128>(1) << s; }
// The documented rounding: floor((v + 2^(S-1)) / 2^S), 2^-1 taken as 0.
inline int128 round_div_pow2(int128 v, int s) {
  return floor_div(v + (s > 0 ? pow2(s - 1) : 0), pow2(s));
}
inline int64_t clamp_to(int128 v, int64_t lo, int64_t hi) {
  return static_cast<int64_t>(v < lo ? lo : (v > hi ? hi : v));
}

// The converter's rule for a ratio r > 0 (docs/numerics.md, "Deriving M
// and S"): the largest S in [0, 63] with round(r * 2^S) < 2^24 (or 0),
// M = max(1, round(r * 2^S)) saturated to 2^31 - 1.
inline void derive_multiplier(double r, int32_t* m, int32_t* s) {
  for (int k = 63; k >= 0; --k) {
    const long double v = std::round(static_cast<long double>(r) * std::ldexp(1.0L, k));
    if (v < 16777216.0L || k == 0) {
      *s = k;
      *m = v < 1 ? 1 : (v >= 2147483648.0L ? INT32_MAX : static_cast<int32_t>(v));
      return;
    }
  }
}

// A dense row-major copy of a view (dims as in the view, up to 6).
struct Dense {
  int64_t dims[isa::kMaxRank] = {1, 1, 1, 1, 1, 1};
  std::vector<int64_t> v;

  int64_t index(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0, int64_t i4 = 0,
                int64_t i5 = 0) const {
    return ((((i0 * dims[1] + i1) * dims[2] + i2) * dims[3] + i3) * dims[4] + i4) * dims[5] + i5;
  }
  int64_t at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0, int64_t i4 = 0,
             int64_t i5 = 0) const {
    return v[index(i0, i1, i2, i3, i4, i5)];
  }
};

// Simulated region memory. Every allocation appends a random gap and the
// tensor's bytes (random garbage until written); bind() must be called after
// the last allocation (it takes the buffers' addresses).
class TestMemory {
 public:
  explicit TestMemory(uint32_t seed) : rng_(seed) {}

  std::mt19937& rng() { return rng_; }
  int rand_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  int64_t rand_i64(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  std::vector<uint8_t>& region(isa::Region r) {
    switch (r) {
      case isa::Region::kInput:
        return input_;
      case isa::Region::kOutput:
        return output_;
      case isa::Region::kConst:
        return const_;
      case isa::Region::kScratch:
        return scratch_;
    }
    return scratch_;
  }

  // Reserves bytes (aligned to align) after a random gap of garbage.
  uint64_t reserve(isa::Region r, uint64_t bytes, int align) {
    std::vector<uint8_t>& b = region(r);
    uint64_t off = b.size() + static_cast<uint64_t>(rand_int(0, 9));
    off = (off + align - 1) / align * align;
    const uint64_t end = off + bytes + static_cast<uint64_t>(rand_int(0, 9));
    while (b.size() < end) b.push_back(static_cast<uint8_t>(rng_()));
    return off;
  }

  // A tensor of the given dims. padded = channel stride 1 or 2 at random and
  // random padding after every dimension; otherwise dense row-major.
  isa::TensorRef tensor(isa::Region r, isa::DType t, std::vector<int> dims, bool padded) {
    isa::TensorRef ref;
    ref.region = r;
    ref.dtype = t;
    ref.index = 0;
    const int rank = static_cast<int>(dims.size());
    for (int k = 0; k < rank; ++k) ref.dims[k] = dims[k];
    int64_t stride = padded ? rand_int(1, 2) : 1;
    for (int k = isa::kMaxRank - 1; k >= 0; --k) {
      ref.strides[k] = stride;
      stride = stride * ref.dims[k] + (padded ? rand_int(0, 3) : 0);
    }
    int64_t last = 0;
    for (int k = 0; k < isa::kMaxRank; ++k) last += (ref.dims[k] - 1) * ref.strides[k];
    const int es = isa::dtype_size(t);
    ref.offset = reserve(r, static_cast<uint64_t>(last + 1) * es, es);
    return ref;
  }

  // Appends a 1-D constant array; returns its ConstRef.
  isa::ConstRef constants(isa::DType t, const std::vector<int64_t>& values) {
    const int es = isa::dtype_size(t);
    isa::ConstRef c;
    c.offset = reserve(isa::Region::kConst, values.size() * es, 4);
    c.count = static_cast<uint32_t>(values.size());
    for (size_t i = 0; i < values.size(); ++i) write_raw(&const_[c.offset + i * es], t, values[i]);
    return c;
  }

  static void write_raw(uint8_t* p, isa::DType t, int64_t v) {
    switch (t) {
      case isa::DType::kInt8: {
        const int8_t x = static_cast<int8_t>(v);
        std::memcpy(p, &x, 1);
        break;
      }
      case isa::DType::kUInt8:
        *p = static_cast<uint8_t>(v);
        break;
      case isa::DType::kInt16: {
        const int16_t x = static_cast<int16_t>(v);
        std::memcpy(p, &x, 2);
        break;
      }
      case isa::DType::kInt32: {
        const int32_t x = static_cast<int32_t>(v);
        std::memcpy(p, &x, 4);
        break;
      }
    }
  }
  static int64_t read_raw(const uint8_t* p, isa::DType t) {
    switch (t) {
      case isa::DType::kInt8:
        return static_cast<int8_t>(*p);
      case isa::DType::kUInt8:
        return *p;
      case isa::DType::kInt16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        return x;
      }
      case isa::DType::kInt32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        return x;
      }
    }
    return 0;
  }

  // Byte offset of element idx of ref inside its region.
  static uint64_t byte_of(const isa::TensorRef& ref, const int64_t* idx) {
    int64_t e = 0;
    for (int k = 0; k < isa::kMaxRank; ++k) e += idx[k] * ref.strides[k];
    return ref.offset + static_cast<uint64_t>(e) * isa::dtype_size(ref.dtype);
  }

  // Calls f(idx) for every element index of ref (row-major).
  template <class F>
  static void each(const isa::TensorRef& ref, F&& f) {
    int64_t n = ref.elements();
    int64_t idx[isa::kMaxRank] = {0, 0, 0, 0, 0, 0};
    for (int64_t e = 0; e < n; ++e) {
      int64_t rem = e;
      for (int k = isa::kMaxRank - 1; k >= 0; --k) {
        idx[k] = rem % ref.dims[k];
        rem /= ref.dims[k];
      }
      f(idx);
    }
  }

  // Writes values (dense row-major over ref.dims) into the view.
  void write(const isa::TensorRef& ref, const std::vector<int64_t>& values) {
    std::vector<uint8_t>& b = region(ref.region);
    size_t i = 0;
    each(ref,
         [&](const int64_t* idx) { write_raw(&b[byte_of(ref, idx)], ref.dtype, values[i++]); });
  }
  // Fills the view with uniform random values in [lo, hi]; returns them densely.
  Dense fill_random(const isa::TensorRef& ref, int64_t lo, int64_t hi) {
    Dense d;
    for (int k = 0; k < isa::kMaxRank; ++k) d.dims[k] = ref.dims[k];
    d.v.resize(ref.elements());
    for (auto& x : d.v) x = rand_i64(lo, hi);
    write(ref, d.v);
    return d;
  }
  Dense fill_random(const isa::TensorRef& ref) {
    return fill_random(ref, type_min(ref.dtype), type_max(ref.dtype));
  }
  Dense read(const isa::TensorRef& ref) {
    Dense d;
    for (int k = 0; k < isa::kMaxRank; ++k) d.dims[k] = ref.dims[k];
    const std::vector<uint8_t>& b = region(ref.region);
    each(ref,
         [&](const int64_t* idx) { d.v.push_back(read_raw(&b[byte_of(ref, idx)], ref.dtype)); });
    return d;
  }

  // Binds the regions (input 0, output 0, constants, scratch).
  Memory bind() {
    Memory m;
    m.inputs.push_back({input_.data(), input_.size()});
    m.outputs.push_back({output_.data(), output_.size()});
    m.constants = {const_.data(), const_.size()};
    m.scratch = {scratch_.data(), scratch_.size()};
    return m;
  }

  // Snapshot of a region, for expect_only_view_written().
  std::vector<uint8_t> snapshot(isa::Region r) { return region(r); }

  // Expects every byte of region r outside the views to equal before.
  void expect_only_views_written(isa::Region r, const std::vector<uint8_t>& before,
                                 const std::vector<isa::TensorRef>& views) {
    std::vector<uint8_t>& now = region(r);
    ASSERT_EQ(now.size(), before.size());
    std::vector<bool> in_view(now.size(), false);
    for (const isa::TensorRef& ref : views) {
      each(ref, [&](const int64_t* idx) {
        const uint64_t b = byte_of(ref, idx);
        for (int k = 0; k < isa::dtype_size(ref.dtype); ++k) in_view[b + k] = true;
      });
    }
    int64_t bad = 0;
    for (size_t i = 0; i < now.size(); ++i) bad += !in_view[i] && now[i] != before[i];
    EXPECT_EQ(bad, 0) << "bytes written outside the output view";
  }

 private:
  std::mt19937 rng_;
  std::vector<uint8_t> input_, output_, const_, scratch_;
};

// Compares a kernel's output with the expected dense values; reports the
// first few mismatches with their index.
inline void expect_equal(const Dense& got, const Dense& want, const std::string& what) {
  ASSERT_EQ(got.v.size(), want.v.size()) << what;
  int reported = 0;
  int64_t mismatches = 0;
  for (size_t i = 0; i < got.v.size(); ++i) {
    if (got.v[i] != want.v[i]) {
      ++mismatches;
      if (reported++ < 5) {
        ADD_FAILURE() << what << ": element " << i << " got " << got.v[i] << " want " << want.v[i];
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << what;
}

}  // namespace openbpu::sim::test

#endif  // OPENBPU_TESTS_BPU_SIM_REF_TEST_UTIL_H_
