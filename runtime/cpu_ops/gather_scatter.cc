// SPDX-License-Identifier: Apache-2.0
// Indexing: Gather, GatherElements, GatherND (batch_dims), ScatterElements
// (and the deprecated Scatter; reduction none/add/mul/max/min) and ScatterND
// (reduction). Any data type; indices int32 or int64, negative values count
// from the end. Out-of-range indices fail the run with an error naming the
// node (they are data, so they cannot be checked at create time).
#include <cstring>
#include <type_traits>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

enum class Red { kNone, kAdd, kMul, kMax, kMin };

bool index_type(int32_t t) { return t == kS32 || t == kS64; }

bool fix_index(int64_t* i, int64_t d) {
  if (*i < 0) *i += d;
  return *i >= 0 && *i < d;
}

Status parse_reduction(const CpuOpDef& def, Red* r) {
  const std::string s = def.attrs.get_string("reduction", "none");
  if (s == "none")
    *r = Red::kNone;
  else if (s == "add")
    *r = Red::kAdd;
  else if (s == "mul")
    *r = Red::kMul;
  else if (s == "max")
    *r = Red::kMax;
  else if (s == "min")
    *r = Red::kMin;
  else
    return op_error(def, "unknown reduction '" + s + "'");
  return Status::Ok();
}

// dst = dst (red) src for one element of type `type`.
void combine(Red r, int32_t type, uint8_t* dst, const uint8_t* src) {
  if (r == Red::kNone) {
    std::memcpy(dst, src, static_cast<size_t>(element_size(type)));
    return;
  }
  visit_numeric(type, [&](auto tag) {
    using T = decltype(tag);
    T a, b;
    std::memcpy(&a, dst, sizeof(T));
    std::memcpy(&b, src, sizeof(T));
    T v = a;
    switch (r) {
      case Red::kAdd:
        v = static_cast<T>(a + b);
        break;
      case Red::kMul:
        v = static_cast<T>(a * b);
        break;
      case Red::kMax:
        v = a < b ? b : a;
        break;
      case Red::kMin:
        v = b < a ? b : a;
        break;
      default:
        break;
    }
    std::memcpy(dst, &v, sizeof(T));
  });
}

class GatherKernel final : public CpuKernel {
 public:
  int64_t outer = 1, axis_len = 1, inner_bytes = 0;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const std::vector<int64_t> idx = read_ints(in[1]);
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    const int64_t n = static_cast<int64_t>(idx.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j) {
        int64_t i = idx[j];
        if (!fix_index(&i, axis_len))
          return op_error(id, "index " + std::to_string(idx[j]) + " out of range");
        std::memcpy(y.data() + (o * n + j) * inner_bytes,
                    x.data() + (o * axis_len + i) * inner_bytes, static_cast<size_t>(inner_bytes));
      }
    y.commit();
    return Status::Ok();
  }
};

// GatherElements (scatter = false) and ScatterElements (scatter = true):
// iterate over the indices tensor; the element's coordinate with the axis
// replaced by the index addresses data (gather) / output (scatter).
class ElementsKernel final : public CpuKernel {
 public:
  bool scatter = false;
  Red red = Red::kNone;
  int64_t axis = 0;
  Dims data_dims, idx_dims;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const std::vector<int64_t> idx = read_ints(in[1]);
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    const int es = element_size(type);
    std::unique_ptr<InBuf> upd;
    if (scatter) {
      upd = std::make_unique<InBuf>(in[2], type);
      std::memcpy(y.data(), x.data(), static_cast<size_t>(count_of(data_dims) * es));
    }
    const Dims ds = elem_strides(data_dims);
    const size_t r = idx_dims.size();
    std::vector<int64_t> c(r, 0);
    const int64_t n = count_of(idx_dims);
    for (int64_t e = 0; e < n; ++e) {
      int64_t i = idx[e];
      if (!fix_index(&i, data_dims[axis]))
        return op_error(id, "index " + std::to_string(idx[e]) + " out of range");
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) off += (static_cast<int64_t>(d) == axis ? i : c[d]) * ds[d];
      if (scatter)
        combine(red, type, y.data() + off * es, upd->data() + e * es);
      else
        std::memcpy(y.data() + e * es, x.data() + off * es, static_cast<size_t>(es));
      for (size_t d = r; d-- > 0;) {
        if (++c[d] < idx_dims[d]) break;
        c[d] = 0;
      }
    }
    y.commit();
    return Status::Ok();
  }
};

// GatherND / ScatterND: indices [..., m] address slices of data of
// count_of(data[b+m:]) elements (b = batch_dims, GatherND only).
class NDKernel final : public CpuKernel {
 public:
  bool scatter = false;
  Red red = Red::kNone;
  int64_t batch = 0, m = 0;
  Dims data_dims, idx_dims;
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const std::vector<int64_t> idx = read_ints(in[1]);
    InBuf x(in[0], type);
    OutBuf y(out[0], type);
    const int es = element_size(type);
    std::unique_ptr<InBuf> upd;
    if (scatter) {
      upd = std::make_unique<InBuf>(in[2], type);
      std::memcpy(y.data(), x.data(), static_cast<size_t>(count_of(data_dims) * es));
    }
    const Dims ds = elem_strides(data_dims);
    const int64_t slice = count_of(Dims(data_dims.begin() + batch + m, data_dims.end()));
    const int64_t batches = count_of(Dims(idx_dims.begin(), idx_dims.begin() + batch));
    const int64_t per_batch = count_of(Dims(idx_dims.begin() + batch, idx_dims.end() - 1));
    const int64_t data_batch = count_of(Dims(data_dims.begin() + batch, data_dims.end()));
    int64_t out_i = 0;
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t t = 0; t < per_batch; ++t, ++out_i) {
        const int64_t* tup = idx.data() + (b * per_batch + t) * m;
        int64_t off = b * data_batch;
        for (int64_t j = 0; j < m; ++j) {
          int64_t v = tup[j];
          if (!fix_index(&v, data_dims[batch + j]))
            return op_error(id, "index " + std::to_string(tup[j]) + " out of range");
          off += v * ds[batch + j];
        }
        if (scatter) {
          for (int64_t s = 0; s < slice; ++s)
            combine(red, type, y.data() + (off + s) * es, upd->data() + (out_i * slice + s) * es);
        } else {
          std::memcpy(y.data() + out_i * slice * es, x.data() + off * es,
                      static_cast<size_t>(slice * es));
        }
      }
    y.commit();
    return Status::Ok();
  }
};

Status common(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
              const std::vector<const TensorDesc*>& out, size_t n_in) {
  if (in.size() != n_in || !all_present(in) || out.size() != 1 || !out[0])
    return op_error(def, "needs " + std::to_string(n_in) + " inputs and 1 output");
  if (!index_type(in[1]->data_type)) return op_error(def, "indices must be int32 or int64");
  if (element_size(in[0]->data_type) == 0 || out[0]->data_type != in[0]->data_type ||
      (n_in == 3 && in[2]->data_type != in[0]->data_type))
    return op_error(def, "data, updates and output must have the same data type");
  return Status::Ok();
}

}  // namespace

Status create_gather(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  OBPU_RETURN_IF_ERROR(common(def, in, out, 2));
  const Dims x = dims_of(*in[0]), ind = dims_of(*in[1]);
  int64_t axis;
  if (!norm_axis(def.attrs.get_int("axis", 0), static_cast<int64_t>(x.size()), &axis))
    return op_error(def, "axis out of range");
  Dims expect(x.begin(), x.begin() + axis);
  expect.insert(expect.end(), ind.begin(), ind.end());
  expect.insert(expect.end(), x.begin() + axis + 1, x.end());
  if (dims_of(*out[0]) != expect) return op_error(def, "output shape must be " + dims_str(expect));
  auto k = std::make_unique<GatherKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  k->outer = count_of(Dims(x.begin(), x.begin() + axis));
  k->axis_len = x[axis];
  k->inner_bytes = count_of(Dims(x.begin() + axis + 1, x.end())) * element_size(k->type);
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_elements(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                       const std::vector<const TensorDesc*>& out,
                       std::unique_ptr<CpuKernel>* kernel) {
  auto k = std::make_unique<ElementsKernel>();
  k->scatter = def.op_type != "GatherElements";
  OBPU_RETURN_IF_ERROR(common(def, in, out, k->scatter ? 3 : 2));
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  k->data_dims = dims_of(*in[0]);
  k->idx_dims = dims_of(*in[1]);
  if (!norm_axis(def.attrs.get_int("axis", 0), static_cast<int64_t>(k->data_dims.size()), &k->axis))
    return op_error(def, "axis out of range");
  if (k->idx_dims.size() != k->data_dims.size())
    return op_error(def, "indices must have the data's rank");
  if (k->scatter) {
    OBPU_RETURN_IF_ERROR(parse_reduction(def, &k->red));
    if (k->red != Red::kNone && !is_numeric_type(k->type))
      return op_error(def, "reduction needs numeric data");
    if (dims_of(*in[2]) != k->idx_dims)
      return op_error(def, "updates must have the indices' shape");
    if (dims_of(*out[0]) != k->data_dims)
      return op_error(def, "output shape must equal the data's");
  } else if (dims_of(*out[0]) != k->idx_dims) {
    return op_error(def, "output shape must equal the indices'");
  }
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_nd(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                 const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  auto k = std::make_unique<NDKernel>();
  k->scatter = def.op_type == "ScatterND";
  OBPU_RETURN_IF_ERROR(common(def, in, out, k->scatter ? 3 : 2));
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = in[0]->data_type;
  k->data_dims = dims_of(*in[0]);
  k->idx_dims = dims_of(*in[1]);
  k->batch = k->scatter ? 0 : def.attrs.get_int("batch_dims", 0);
  if (k->idx_dims.empty()) return op_error(def, "indices must have rank >= 1");
  k->m = k->idx_dims.back();
  const int64_t r = static_cast<int64_t>(k->data_dims.size()),
                q = static_cast<int64_t>(k->idx_dims.size());
  if (k->batch < 0 || k->batch >= q || k->batch + k->m > r)
    return op_error(def, "indices do not fit the data");
  for (int64_t i = 0; i < k->batch; ++i)
    if (k->idx_dims[i] != k->data_dims[i]) return op_error(def, "batch dimensions differ");
  Dims slice_shape(k->idx_dims.begin(), k->idx_dims.end() - 1);
  slice_shape.insert(slice_shape.end(), k->data_dims.begin() + k->batch + k->m, k->data_dims.end());
  if (k->scatter) {
    OBPU_RETURN_IF_ERROR(parse_reduction(def, &k->red));
    if (k->red != Red::kNone && !is_numeric_type(k->type))
      return op_error(def, "reduction needs numeric data");
    if (dims_of(*in[2]) != slice_shape)
      return op_error(def, "updates must have shape " + dims_str(slice_shape));
    if (dims_of(*out[0]) != k->data_dims)
      return op_error(def, "output shape must equal the data's");
  } else if (dims_of(*out[0]) != slice_shape) {
    return op_error(def, "output shape must be " + dims_str(slice_shape));
  }
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
