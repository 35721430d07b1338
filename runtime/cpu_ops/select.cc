// SPDX-License-Identifier: Apache-2.0
// Selection operators whose output size depends on data: Compress, NonZero
// (the output description must hold the actual size - the run fails with an
// error naming the node otherwise), and ReverseSequence.
#include <cstring>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class CompressKernel final : public CpuKernel {
 public:
  bool flat = false;
  int64_t axis = 0;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    Dims x = dims_of(*in[0].desc);
    if (flat) x = {count_of(x)};
    const std::vector<int64_t> cond = read_ints(in[1]);
    const int64_t len = x[axis];
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < len && i < static_cast<int64_t>(cond.size()); ++i)
      if (cond[i]) keep.push_back(i);
    Dims expect = x;
    expect[axis] = static_cast<int64_t>(keep.size());
    if (expect != dims_of(*out[0].desc))
      return op_error(id, "output shape must be " + dims_str(expect));
    InBuf xb(in[0], type);
    OutBuf y(out[0], type);
    const int64_t outer = count_of(Dims(x.begin(), x.begin() + axis));
    const int64_t inner = count_of(Dims(x.begin() + axis + 1, x.end())) * element_size(type);
    const int64_t kept = static_cast<int64_t>(keep.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < kept; ++j)
        std::memcpy(y.data() + (o * kept + j) * inner, xb.data() + (o * len + keep[j]) * inner,
                    static_cast<size_t>(inner));
    y.commit();
    return Status::Ok();
  }
};

class NonZeroKernel final : public CpuKernel {
 public:
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const Dims x = dims_of(*in[0].desc);
    const std::vector<double> v = read_doubles(in[0]);
    int64_t nnz = 0;
    for (double e : v) nnz += e != 0.0;
    const Dims expect = {static_cast<int64_t>(x.size()), nnz};
    if (dims_of(*out[0].desc) != expect)
      return op_error(id, "output shape must be " + dims_str(expect));
    OutBuf y(out[0], kS64);
    int64_t* yp = y.as<int64_t>();
    const Dims s = elem_strides(x);
    int64_t j = 0;
    for (size_t e = 0; e < v.size(); ++e) {
      if (v[e] == 0.0) continue;
      for (size_t a = 0; a < x.size(); ++a) yp[a * nnz + j] = static_cast<int64_t>(e) / s[a] % x[a];
      ++j;
    }
    y.commit();
    return Status::Ok();
  }
};

class ReverseSequenceKernel final : public CpuKernel {
 public:
  int64_t batch_axis = 1, time_axis = 0;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const Dims x = dims_of(*in[0].desc);
    const std::vector<int64_t> lens = read_ints(in[1]);
    InBuf xb(in[0], type);
    OutBuf y(out[0], type);
    const int es = element_size(type);
    const Dims s = elem_strides(x);
    const int64_t n = count_of(x);
    for (int64_t e = 0; e < n; ++e) {
      const int64_t b = e / s[batch_axis] % x[batch_axis], t = e / s[time_axis] % x[time_axis];
      const int64_t len = lens[b];
      if (len < 0 || len > x[time_axis]) return op_error(id, "sequence_lens out of range");
      const int64_t src = t < len ? e + (len - 1 - 2 * t) * s[time_axis] : e;
      std::memcpy(y.data() + e * es, xb.data() + src * es, static_cast<size_t>(es));
    }
    y.commit();
    return Status::Ok();
  }
};

}  // namespace

Status create_select(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  if (out.size() != 1 || !out[0]) return op_error(def, "needs 1 output");
  if (def.op_type == "NonZero") {
    if (in.size() != 1 || !in[0]) return op_error(def, "needs 1 input");
    if (out[0]->data_type != kS64 || dims_of(*out[0]).size() != 2)
      return op_error(def, "output must be 2-D int64");
    auto k = std::make_unique<NonZeroKernel>();
    k->id.name = def.name;
    k->id.op_type = def.op_type;
    *kernel = std::move(k);
    return Status::Ok();
  }
  if (in.size() != 2 || !in[0] || !in[1]) return op_error(def, "needs 2 inputs");
  if (in[0]->data_type != out[0]->data_type || element_size(in[0]->data_type) == 0)
    return op_error(def, "output must have the input's data type");
  const Dims x = dims_of(*in[0]);
  if (def.op_type == "Compress") {
    auto k = std::make_unique<CompressKernel>();
    k->id.name = def.name;
    k->id.op_type = def.op_type;
    k->type = in[0]->data_type;
    if (in[1]->data_type != kBool8 || dims_of(*in[1]).size() != 1)
      return op_error(def, "condition must be 1-D bool");
    k->flat = !def.attrs.has("axis");
    if (!k->flat &&
        !norm_axis(def.attrs.get_int("axis", 0), static_cast<int64_t>(x.size()), &k->axis))
      return op_error(def, "axis out of range");
    *kernel = std::move(k);
    return Status::Ok();
  }
  auto k = std::make_unique<ReverseSequenceKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  k->batch_axis = def.attrs.get_int("batch_axis", 1);
  k->time_axis = def.attrs.get_int("time_axis", 0);
  if (x.size() < 2 || k->batch_axis < 0 || k->batch_axis > 1 || k->time_axis < 0 ||
      k->time_axis > 1 || k->batch_axis == k->time_axis)
    return op_error(def, "batch_axis/time_axis must be 0 and 1 in some order");
  if (dims_of(*in[1]) != Dims{x[k->batch_axis]} || in[1]->data_type != kS64)
    return op_error(def, "sequence_lens must be int64 [batch]");
  if (dims_of(*out[0]) != x) return op_error(def, "output shape must equal the input's");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
