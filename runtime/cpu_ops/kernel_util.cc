// SPDX-License-Identifier: Apache-2.0
#include "runtime/cpu_ops/kernel_util.h"

#include <cmath>
#include <limits>

namespace openbpu::rt {

Status op_error(const CpuOpDef& def, const std::string& msg) {
  return error(kInvalidModel, "node '" + def.name + "' (" + def.op_type + "): " + msg);
}

size_t present_count(const std::vector<const TensorDesc*>& v) {
  size_t n = v.size();
  while (n > 0 && is_absent(v[n - 1])) --n;
  return n;
}

bool all_present(const std::vector<const TensorDesc*>& v) {
  for (const TensorDesc* d : v)
    if (is_absent(d)) return false;
  return true;
}

Dims dims_of(const TensorDesc& t) {
  if (t.layout == kNHWC && t.rank() == 4) return {t.valid[0], t.valid[3], t.valid[1], t.valid[2]};
  return Dims(t.valid.begin(), t.valid.end());
}

int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

Dims elem_strides(const Dims& d) {
  Dims s(d.size());
  int64_t acc = 1;
  for (size_t i = d.size(); i-- > 0;) {
    s[i] = acc;
    acc *= d[i];
  }
  return s;
}

std::string dims_str(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

bool is_float_type(int32_t t) { return t == kF16 || t == kF32 || t == kF64; }
bool is_int_type(int32_t t) {
  switch (t) {
    case kS8:
    case kU8:
    case kS16:
    case kU16:
    case kS32:
    case kU32:
    case kS64:
    case kU64:
      return true;
    default:
      return false;
  }
}
bool is_numeric_type(int32_t t) { return is_float_type(t) || is_int_type(t); }

bool norm_axis(int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

bool is_dense(const TensorDesc& t) {
  const LogicalView v = logical_view(t);
  int64_t acc = element_size(t.data_type);
  for (size_t i = v.dims.size(); i-- > 0;) {
    if (v.dims[i] != 1 && v.strides[i] != acc) return false;
    acc *= v.dims[i];
  }
  return true;
}

namespace {

LogicalView dense_view(const TensorDesc& t, int32_t type) {
  LogicalView v;
  v.data_type = type;
  v.dims = dims_of(t);
  v.strides = elem_strides(v.dims);
  for (int64_t& s : v.strides) s *= element_size(type);
  return v;
}

}  // namespace

InBuf::InBuf(const CpuTensor& t, int32_t type) {
  if (t.desc->data_type == type && is_dense(*t.desc)) {
    ptr_ = t.data;
    return;
  }
  const LogicalView dst = dense_view(*t.desc, type);
  copy_.resize(static_cast<size_t>(dst.elements() * element_size(type)) + 1);
  copy_elements(logical_view(*t.desc), t.data, dst, copy_.data());
  ptr_ = copy_.data();
}

OutBuf::OutBuf(const CpuTensor& t, int32_t type) : t_(&t), type_(type) {
  if (t.desc->data_type == type && is_dense(*t.desc)) {
    ptr_ = t.data;
    return;
  }
  copy_.resize(static_cast<size_t>(count_of(dims_of(*t.desc)) * element_size(type)) + 1);
  ptr_ = copy_.data();
}

void OutBuf::commit() {
  if (copy_.empty()) return;
  copy_elements(dense_view(*t_->desc, type_), copy_.data(), logical_view(*t_->desc), t_->data);
}

int64_t load_int(int32_t type, const uint8_t* p) {
  switch (type) {
    case kS32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case kU32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case kS64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case kU64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
    default: {
      const double d = load_as_double(type, p);
      if (std::isnan(d)) return 0;
      if (d >= 9.2e18) return INT64_MAX;
      if (d <= -9.2e18) return INT64_MIN;
      return static_cast<int64_t>(d);
    }
  }
}

void store_int(int32_t type, int64_t v, uint8_t* p) {
  switch (type) {
    case kS64:
      std::memcpy(p, &v, 8);
      return;
    case kU64: {
      const uint64_t u = static_cast<uint64_t>(v);
      std::memcpy(p, &u, 8);
      return;
    }
    default:
      store_from_double(type, static_cast<double>(v), p);
  }
}

namespace {

template <class T, class F>
std::vector<T> read_all(const CpuTensor& t, F load) {
  const LogicalView v = logical_view(*t.desc);
  std::vector<T> out;
  out.reserve(static_cast<size_t>(v.elements()));
  const size_t rank = v.dims.size();
  const int64_t n = v.elements();
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t e = 0; e < n; ++e) {
    out.push_back(load(v.data_type, t.data + off));
    for (size_t k = rank; k-- > 0;) {
      off += v.strides[k];
      if (++idx[k] < v.dims[k]) break;
      off -= v.strides[k] * v.dims[k];
      idx[k] = 0;
    }
  }
  return out;
}

}  // namespace

std::vector<int64_t> read_ints(const CpuTensor& t) { return read_all<int64_t>(t, load_int); }
std::vector<double> read_doubles(const CpuTensor& t) { return read_all<double>(t, load_as_double); }

bool broadcast_shape(const std::vector<Dims>& shapes, Dims* out) {
  size_t rank = 0;
  for (const Dims& s : shapes) rank = std::max(rank, s.size());
  Dims r(rank, 1);
  for (const Dims& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = r[off + i];
      if (s[i] == d || s[i] == 1) continue;
      if (d == 1) {
        d = s[i];
        continue;
      }
      return false;
    }
  }
  *out = std::move(r);
  return true;
}

bool broadcast_strides(const Dims& in, const Dims& out, Dims* strides) {
  if (in.size() > out.size()) return false;
  strides->assign(out.size(), 0);
  const Dims s = elem_strides(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == out[off + i]) {
      (*strides)[off + i] = in[i] == 1 ? 0 : s[i];
    } else if (in[i] != 1) {
      return false;
    }
  }
  return true;
}

Dims reduced_strides(const Dims& dims, const std::vector<bool>& reduce) {
  Dims s(dims.size(), 0);
  int64_t acc = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (reduce[i]) continue;
    s[i] = acc;
    acc *= dims[i];
  }
  return s;
}

namespace {

template <class T>
void strided_copy_t(const BroadcastLoop<2>& loop, const T* in, T* out) {
  loop.run([&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
    T* o = out + off[0];
    const T* i = in + off[1];
    if (st[1] == 1) {
      std::memcpy(o, i, sizeof(T) * static_cast<size_t>(n));
    } else if (st[1] == 0) {
      const T v = *i;
      for (int64_t k = 0; k < n; ++k) o[k] = v;
    } else {
      const int64_t s = st[1];
      for (int64_t k = 0; k < n; ++k) o[k] = i[k * s];
    }
  });
}

template <class T>
void map_copy_t(const Dims& in_dims, const Dims& out_dims,
                const std::vector<std::vector<int64_t>>& maps, const T* in, T* out, const T* fill) {
  const size_t r = out_dims.size();
  if (r == 0) {
    *out = *in;
    return;
  }
  if (count_of(out_dims) == 0) return;
  const Dims is = elem_strides(in_dims);
  const int64_t n = out_dims[r - 1];
  const std::vector<int64_t>& last = maps[r - 1];
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < r; ++i) rows *= out_dims[i];
  std::vector<int64_t> idx(r, 0);
  for (int64_t row = 0; row < rows; ++row, out += n) {
    int64_t base = 0;
    bool outside = false;
    for (size_t d = 0; d + 1 < r; ++d) {
      const int64_t m = maps[d][static_cast<size_t>(idx[d])];
      if (m < 0) outside = true;
      base += m * is[d];
    }
    if (outside) {
      for (int64_t k = 0; k < n; ++k) out[k] = *fill;
    } else {
      const T* src = in + base;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t m = last[static_cast<size_t>(k)];
        out[k] = m < 0 ? *fill : src[m];
      }
    }
    for (size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < out_dims[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

void strided_copy(const BroadcastLoop<2>& loop, int esize, const uint8_t* in, uint8_t* out) {
  switch (esize) {
    case 1:
      strided_copy_t(loop, in, out);
      break;
    case 2:
      strided_copy_t(loop, reinterpret_cast<const uint16_t*>(in), reinterpret_cast<uint16_t*>(out));
      break;
    case 4:
      strided_copy_t(loop, reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(out));
      break;
    case 8:
      strided_copy_t(loop, reinterpret_cast<const uint64_t*>(in), reinterpret_cast<uint64_t*>(out));
      break;
    default:
      break;
  }
}

void map_copy(const Dims& in_dims, const Dims& out_dims,
              const std::vector<std::vector<int64_t>>& maps, int esize, const uint8_t* in,
              uint8_t* out, const uint8_t* fill) {
  switch (esize) {
    case 1:
      map_copy_t(in_dims, out_dims, maps, in, out, fill);
      break;
    case 2:
      map_copy_t(in_dims, out_dims, maps, reinterpret_cast<const uint16_t*>(in),
                 reinterpret_cast<uint16_t*>(out), reinterpret_cast<const uint16_t*>(fill));
      break;
    case 4:
      map_copy_t(in_dims, out_dims, maps, reinterpret_cast<const uint32_t*>(in),
                 reinterpret_cast<uint32_t*>(out), reinterpret_cast<const uint32_t*>(fill));
      break;
    case 8:
      map_copy_t(in_dims, out_dims, maps, reinterpret_cast<const uint64_t*>(in),
                 reinterpret_cast<uint64_t*>(out), reinterpret_cast<const uint64_t*>(fill));
      break;
    default:
      break;
  }
}

}  // namespace openbpu::rt
