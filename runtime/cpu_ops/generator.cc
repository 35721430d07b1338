// SPDX-License-Identifier: Apache-2.0
// Tensors made from shapes and attributes: Shape (start/end, opset 15),
// Size, ConstantOfShape (value attribute, default float 0), Constant (value
// tensor or value_float(s)/value_int(s); sparse and string values are not
// supported), Range (start + i * delta, computed in double or exactly for
// integers) and EyeLike (k).
#include <cmath>
#include <cstring>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

// Writes a fixed byte image (precomputed at create) into the output.
class BytesKernel final : public CpuKernel {
 public:
  std::vector<uint8_t> bytes;
  int32_t type = kF32;
  Status run(const std::vector<CpuTensor>&, const std::vector<CpuTensor>& out) const override {
    OutBuf y(out[0], type);
    if (!bytes.empty()) std::memcpy(y.data(), bytes.data(), bytes.size());
    y.commit();
    return Status::Ok();
  }
};

class RangeKernel final : public CpuKernel {
 public:
  int32_t type = kF32;
  CpuOpDef id;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const int64_t n = count_of(dims_of(*out[0].desc));
    OutBuf y(out[0], type);
    const int es = element_size(type);
    if (is_int_type(type)) {
      const int64_t start = read_ints(in[0])[0], limit = read_ints(in[1])[0],
                    delta = read_ints(in[2])[0];
      if (delta == 0) return op_error(id, "delta must not be 0");
      const int64_t expect =
          std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
      if (expect != n)
        return op_error(id, "output has " + std::to_string(n) + " elements, the range " +
                                std::to_string(expect));
      for (int64_t i = 0; i < n; ++i) store_int(type, start + i * delta, y.data() + i * es);
    } else {
      const double start = read_doubles(in[0])[0], limit = read_doubles(in[1])[0],
                   delta = read_doubles(in[2])[0];
      if (delta == 0.0) return op_error(id, "delta must not be 0");
      const int64_t expect =
          std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
      if (expect != n)
        return op_error(id, "output has " + std::to_string(n) + " elements, the range " +
                                std::to_string(expect));
      if (type == kF32) {
        // numpy.arange in float32 accumulates the float32 values
        const float s = static_cast<float>(start), d = static_cast<float>(delta);
        for (int64_t i = 0; i < n; ++i)
          store_from_double(type, s + static_cast<float>(i) * d, y.data() + i * es);
      } else {
        for (int64_t i = 0; i < n; ++i)
          store_from_double(type, start + static_cast<double>(i) * delta, y.data() + i * es);
      }
    }
    y.commit();
    return Status::Ok();
  }
};

class ShapeKernel final : public CpuKernel {
 public:
  std::vector<int64_t> values;
  Status run(const std::vector<CpuTensor>&, const std::vector<CpuTensor>& out) const override {
    OutBuf y(out[0], kS64);
    if (!values.empty()) std::memcpy(y.data(), values.data(), values.size() * sizeof(int64_t));
    y.commit();
    return Status::Ok();
  }
};

Status one_output(const CpuOpDef& def, const std::vector<const TensorDesc*>& out) {
  if (out.size() != 1 || !out[0]) return op_error(def, "needs 1 output");
  if (element_size(out[0]->data_type) == 0) return op_error(def, "unsupported output type");
  return Status::Ok();
}

}  // namespace

Status create_shape(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                    const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0]) return op_error(def, "needs 1 input");
  OBPU_RETURN_IF_ERROR(one_output(def, out));
  if (out[0]->data_type != kS64) return op_error(def, "output must be int64");
  const Dims x = dims_of(*in[0]);
  auto k = std::make_unique<ShapeKernel>();
  const int64_t r = static_cast<int64_t>(x.size());
  if (def.op_type == "Size") {
    k->values.push_back(count_of(x));
    if (count_of(dims_of(*out[0])) != 1) return op_error(def, "output must be a scalar");
  } else {
    int64_t start = def.attrs.get_int("start", 0), end = def.attrs.get_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::max<int64_t>(0, std::min(start, r));
    end = std::max<int64_t>(0, std::min(end, r));
    for (int64_t i = start; i < end; ++i) k->values.push_back(x[i]);
    if (dims_of(*out[0]) != Dims{static_cast<int64_t>(k->values.size())})
      return op_error(def, "output shape must be [" + std::to_string(k->values.size()) + "]");
  }
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_constant_of_shape(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                                const std::vector<const TensorDesc*>& out,
                                std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0]) return op_error(def, "needs 1 input");
  OBPU_RETURN_IF_ERROR(one_output(def, out));
  auto k = std::make_unique<BytesKernel>();
  k->type = out[0]->data_type;
  const int es = element_size(k->type);
  std::vector<uint8_t> one(static_cast<size_t>(es), 0);
  if (const AttrValue* v = def.attrs.find("value")) {
    if (v->type == AttrValue::kBlob && v->blob && v->blob_size == static_cast<uint64_t>(es)) {
      // From a model container: the raw element in the output's type.
      one.assign(v->blob, v->blob + es);
    } else if (v->type != AttrValue::kTensor || !v->tensor ||
               v->tensor->size() != static_cast<size_t>(es) || v->tensor_type != k->type) {
      return op_error(def, "value must be a one-element tensor of the output's type");
    } else {
      one.assign(v->tensor->begin(), v->tensor->end());
    }
  } else if (k->type != kF32) {
    return op_error(def, "without value the output is float32");
  }
  const int64_t n = count_of(dims_of(*out[0]));
  k->bytes.resize(static_cast<size_t>(n * es));
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(k->bytes.data() + i * es, one.data(), static_cast<size_t>(es));
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_constant(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                       const std::vector<const TensorDesc*>& out,
                       std::unique_ptr<CpuKernel>* kernel) {
  if (present_count(in) != 0) return op_error(def, "takes no inputs");
  OBPU_RETURN_IF_ERROR(one_output(def, out));
  auto k = std::make_unique<BytesKernel>();
  k->type = out[0]->data_type;
  const Dims y = dims_of(*out[0]);
  const int es = element_size(k->type);
  Dims dims;
  int32_t type = 0;
  std::vector<uint8_t> bytes;
  const Attrs& a = def.attrs;
  if (const AttrValue* v = a.find("value"); v && v->type == AttrValue::kTensor && v->tensor) {
    type = v->tensor_type;
    dims = v->tensor_dims;
    bytes = *v->tensor;
  } else if (v && v->type == AttrValue::kBlob && (v->blob || v->blob_size == 0)) {
    // From a model container: raw bytes in the output's type and shape.
    type = k->type;
    dims = y;
    bytes.assign(v->blob, v->blob + v->blob_size);
  } else if (const AttrValue* v = a.find("value_float"); v && v->type == AttrValue::kFloat) {
    type = kF32;
    bytes.resize(4);
    std::memcpy(bytes.data(), &v->f, 4);
  } else if (const AttrValue* v = a.find("value_floats"); v && v->type == AttrValue::kFloats) {
    type = kF32;
    dims = {static_cast<int64_t>(v->floats.size())};
    bytes.resize(v->floats.size() * 4);
    if (!bytes.empty()) std::memcpy(bytes.data(), v->floats.data(), bytes.size());
  } else if (const AttrValue* v = a.find("value_int"); v && v->type == AttrValue::kInt) {
    type = kS64;
    bytes.resize(8);
    std::memcpy(bytes.data(), &v->i, 8);
  } else if (const AttrValue* v = a.find("value_ints"); v && v->type == AttrValue::kInts) {
    type = kS64;
    dims = {static_cast<int64_t>(v->ints.size())};
    bytes.resize(v->ints.size() * 8);
    if (!bytes.empty()) std::memcpy(bytes.data(), v->ints.data(), bytes.size());
  } else {
    return op_error(def,
                    "needs a value, value_float(s) or value_int(s) attribute (sparse/string values "
                    "are not supported)");
  }
  if (type != k->type) return op_error(def, "the value's type differs from the output's");
  if (dims != y)
    return op_error(
        def, "the value's shape " + dims_str(dims) + " differs from the output's " + dims_str(y));
  if (static_cast<int64_t>(bytes.size()) != count_of(y) * es)
    return op_error(def, "the value's size is wrong");
  k->bytes = std::move(bytes);
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_range(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                    const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 3 || !all_present(in))
    return op_error(def, "needs start, limit and delta");
  OBPU_RETURN_IF_ERROR(one_output(def, out));
  auto k = std::make_unique<RangeKernel>();
  k->id.name = def.name;
  k->id.op_type = def.op_type;
  k->type = out[0]->data_type;
  if (!is_numeric_type(k->type)) return op_error(def, "numeric output expected");
  for (const TensorDesc* t : in)
    if (t->data_type != k->type || count_of(dims_of(*t)) != 1)
      return op_error(def, "inputs must be scalars of the output's type");
  if (dims_of(*out[0]).size() != 1) return op_error(def, "output must be 1-D");
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_eye_like(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                       const std::vector<const TensorDesc*>& out,
                       std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 1 || !in[0]) return op_error(def, "needs 1 input");
  OBPU_RETURN_IF_ERROR(one_output(def, out));
  const Dims y = dims_of(*out[0]);
  if (y.size() != 2 || dims_of(*in[0]) != y)
    return op_error(def, "input and output must be 2-D of the same shape");
  auto k = std::make_unique<BytesKernel>();
  k->type = out[0]->data_type;
  const int es = element_size(k->type);
  const int64_t kk = def.attrs.get_int("k", 0);
  k->bytes.assign(static_cast<size_t>(count_of(y) * es), 0);
  for (int64_t i = 0; i < y[0]; ++i) {
    const int64_t j = i + kk;
    if (j >= 0 && j < y[1]) store_from_double(k->type, 1.0, k->bytes.data() + (i * y[1] + j) * es);
  }
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
