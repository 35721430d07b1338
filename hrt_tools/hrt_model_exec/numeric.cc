// SPDX-License-Identifier: Apache-2.0
#include "numeric.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "dnn/hb_dnn.h"

namespace openbpu::tools {

namespace {

template <class T>
T get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // outputs need not be aligned for T
  return v;
}

template <class T>
void put(double v, uint8_t* p) {
  T out;
  if constexpr (std::numeric_limits<T>::is_integer) {
    const double r = std::nearbyint(v);
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    out = std::isnan(r) ? T(0)
          : r <= lo     ? std::numeric_limits<T>::min()
          : r >= hi     ? std::numeric_limits<T>::max()
                        : static_cast<T>(r);
  } else {
    out = static_cast<T>(v);
  }
  std::memcpy(p, &out, sizeof(T));
}

}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3FFu) << 13;
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t biased = (x >> 23) & 0xFFu;
  uint32_t mant = x & 0x7FFFFFu;
  if (biased == 0xFFu) return static_cast<uint16_t>(sign | 0x7C00u | (mant != 0 ? 0x200u : 0u));
  const int exp = static_cast<int>(biased) - 127 + 15;
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00u);
  // Round to nearest even on the bits shifted out; a carry into the
  // exponent (or to infinity) is the correct result.
  auto round_shift = [](uint32_t m, int shift) {
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (h & 1u))) ++h;
    return h;
  };
  if (exp <= 0) {  // half subnormal (or zero)
    if (exp < -10) return static_cast<uint16_t>(sign);
    return static_cast<uint16_t>(sign | round_shift(mant | 0x800000u, 14 - exp));
  }
  return static_cast<uint16_t>(sign | round_shift(static_cast<uint32_t>(exp) << 23 | mant, 13));
}

bool is_float_type(int32_t type) {
  return type == HB_DNN_TENSOR_TYPE_F16 || type == HB_DNN_TENSOR_TYPE_F32 ||
         type == HB_DNN_TENSOR_TYPE_F64;
}

double load_element(const uint8_t* p, int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: return get<int8_t>(p);
    case HB_DNN_TENSOR_TYPE_F16: return half_to_float(get<uint16_t>(p));
    case HB_DNN_TENSOR_TYPE_S16: return get<int16_t>(p);
    case HB_DNN_TENSOR_TYPE_U16: return get<uint16_t>(p);
    case HB_DNN_TENSOR_TYPE_F32: return get<float>(p);
    case HB_DNN_TENSOR_TYPE_S32: return get<int32_t>(p);
    case HB_DNN_TENSOR_TYPE_U32: return get<uint32_t>(p);
    case HB_DNN_TENSOR_TYPE_F64: return get<double>(p);
    case HB_DNN_TENSOR_TYPE_S64: return static_cast<double>(get<int64_t>(p));
    case HB_DNN_TENSOR_TYPE_U64: return static_cast<double>(get<uint64_t>(p));
    default: return *p;  // U8 and the image types
  }
}

void store_element(double v, int32_t type, uint8_t* p) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: return put<int8_t>(v, p);
    case HB_DNN_TENSOR_TYPE_F16: {
      const uint16_t h = float_to_half(static_cast<float>(v));
      std::memcpy(p, &h, sizeof(h));
      return;
    }
    case HB_DNN_TENSOR_TYPE_S16: return put<int16_t>(v, p);
    case HB_DNN_TENSOR_TYPE_U16: return put<uint16_t>(v, p);
    case HB_DNN_TENSOR_TYPE_F32: return put<float>(v, p);
    case HB_DNN_TENSOR_TYPE_S32: return put<int32_t>(v, p);
    case HB_DNN_TENSOR_TYPE_U32: return put<uint32_t>(v, p);
    case HB_DNN_TENSOR_TYPE_F64: return put<double>(v, p);
    case HB_DNN_TENSOR_TYPE_S64: return put<int64_t>(v, p);
    case HB_DNN_TENSOR_TYPE_U64: return put<uint64_t>(v, p);
    default: return put<uint8_t>(v, p);
  }
}

}  // namespace openbpu::tools
