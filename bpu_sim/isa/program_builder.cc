// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/isa/program_builder.h"

namespace openbpu::isa {

TensorRef nhwc_view(Region region, uint16_t index, uint64_t offset, int n, int h, int w, int c, DType t,
                    int align) {
  TensorRef r;
  r.region = region;
  r.index = index;
  r.dtype = t;
  r.offset = offset;
  const int64_t cp = align_up(c, align);
  r.dims[0] = n, r.dims[1] = h, r.dims[2] = w, r.dims[3] = c;
  r.strides[3] = 1;
  r.strides[2] = cp;
  r.strides[1] = cp * w;
  r.strides[0] = cp * w * h;
  return r;
}

uint64_t ProgramBuilder::alloc_scratch(uint64_t bytes) {
  const uint64_t off = (scratch_ + 63) / 64 * 64;
  scratch_ = off + bytes;
  return off;
}

TensorRef ProgramBuilder::scratch_nhwc(int n, int h, int w, int c, DType t) {
  const uint64_t off = alloc_scratch(nhwc_bytes(n, h, w, c, t, align()));
  return nhwc_view(Region::kScratch, 0, off, n, h, w, c, t, align());
}

ConstRef ProgramBuilder::add_const(const void* data, uint64_t bytes, uint32_t count) {
  const uint64_t off = (constants_.size() + 63) / 64 * 64;
  constants_.resize(off + bytes);
  if (bytes != 0) std::memcpy(constants_.data() + off, data, bytes);
  return ConstRef{off, count};
}

}  // namespace openbpu::isa
