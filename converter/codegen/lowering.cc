// SPDX-License-Identifier: Apache-2.0
#include "converter/codegen/lowering.h"

#include <algorithm>
#include <cmath>

#include "bpu_sim/isa/numerics.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

Dims4 logical4(const std::vector<int64_t>& s) {
  switch (s.size()) {
    case 0: return {1, 1, 1, 1};
    case 1: return {1, s[0], 1, 1};
    case 2: return {s[0], s[1], 1, 1};
    case 3: return {s[0], s[1], s[2], 1};
    default: return {s[0], s[1], s[2], s[3]};
  }
}

int logical_axis4(int rank, int64_t axis) {
  if (axis < 0) axis += rank;
  return rank == 1 ? 1 : static_cast<int>(axis);
}

std::array<int64_t, 4> native_strides(const Dims4& d, int align) {
  const int64_t cp = isa::align_up(static_cast<int>(d[1]), align);
  return {d[2] * d[3] * cp, 1, d[3] * cp, cp};
}

isa::TensorRef native_ref(isa::Region region, uint16_t index, uint64_t offset, const Dims4& d, isa::DType t,
                          int align) {
  return isa::nhwc_view(region, index, offset, static_cast<int>(d[0]), static_cast<int>(d[2]),
                        static_cast<int>(d[3]), static_cast<int>(d[1]), t, align);
}

uint64_t native_bytes(const Dims4& d, isa::DType t, int align) {
  return isa::nhwc_bytes(static_cast<int>(d[0]), static_cast<int>(d[2]), static_cast<int>(d[3]),
                         static_cast<int>(d[1]), t, align);
}

int32_t qmin(isa::DType t) { return static_cast<int32_t>(isa::dtype_range(t).lo); }
int32_t qmax(isa::DType t) { return static_cast<int32_t>(isa::dtype_range(t).hi); }

int32_t quantize(double v, float scale, isa::DType t) { return isa::quantize_value(v, scale, t); }

int32_t quantize(double v, const QParams& q) {
  const isa::IntRange r = isa::dtype_range(q.dtype);
  return isa::quantize_value(v, q.scale, isa::IntRange{r.lo - q.zero_point, r.hi - q.zero_point}) + q.zero_point;
}

std::vector<float> LoweringContext::floats(const std::string& n) const { return const_floats(graph, n); }

isa::TensorRef LoweringContext::const_tensor(const std::string& n, const Dims4& d, float* scale) {
  const std::vector<float> data = floats(n);
  float mx = 0.0f;
  for (float f : data) mx = std::max(mx, std::fabs(f));
  *scale = mx > 0 ? mx / 127.0f : 1.0f;
  const uint64_t bytes = native_bytes(d, isa::DType::kInt8, align());
  std::vector<int8_t> buf(bytes, 0);
  const auto st = native_strides(d, align());
  // Row-major logical order of the constant -> native positions.
  size_t i = 0;
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t c = 0; c < d[2]; ++c)
        for (int64_t e = 0; e < d[3]; ++e)
          buf[static_cast<size_t>(a * st[0] + b * st[1] + c * st[2] + e * st[3])] =
              static_cast<int8_t>(quantize(data[i++], *scale, isa::DType::kInt8));
  const isa::ConstRef c = pb.add_const(buf.data(), buf.size(), static_cast<uint32_t>(buf.size()));
  return native_ref(isa::Region::kConst, 0, c.offset, d, isa::DType::kInt8, align());
}

}  // namespace openbpu::cvt
