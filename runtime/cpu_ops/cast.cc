// SPDX-License-Identifier: Apache-2.0
// Cast and CastLike between the numeric types and bool (strings, bfloat16
// and float8 are not supported). Conversions are by value: float -> integer
// truncates towards zero and saturates, anything -> bool is "!= 0", float ->
// float16 rounds to nearest even. Integer <-> integer conversions of 64-bit
// values are exact (two's complement wrap-around for narrowing, like numpy).
#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

class CastKernel final : public CpuKernel {
 public:
  int32_t from = kF32, to = kF32;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    if (is_int_type(from) && is_int_type(to)) {
      InBuf x(in[0], from);
      OutBuf y(out[0], to);
      const int64_t n = count_of(dims_of(*in[0].desc));
      const int fs = element_size(from), ts = element_size(to);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v = load_int(from, x.data() + i * fs);
        // Wrap to the target width (numpy astype semantics).
        uint8_t* p = y.data() + i * ts;
        switch (to) {
          case kS8:
          case kU8: {
            const uint8_t b = static_cast<uint8_t>(v);
            std::memcpy(p, &b, 1);
            break;
          }
          case kS16:
          case kU16: {
            const uint16_t b = static_cast<uint16_t>(v);
            std::memcpy(p, &b, 2);
            break;
          }
          case kS32:
          case kU32: {
            const uint32_t b = static_cast<uint32_t>(v);
            std::memcpy(p, &b, 4);
            break;
          }
          default: {
            uint64_t b;
            if (from == kU64)
              std::memcpy(&b, x.data() + i * fs, 8);
            else
              b = static_cast<uint64_t>(v);
            std::memcpy(p, &b, 8);
          }
        }
      }
      y.commit();
      return Status::Ok();
    }
    copy_elements(logical_view(*in[0].desc), in[0].data, logical_view(*out[0].desc), out[0].data);
    return Status::Ok();
  }
};

bool castable(int32_t t) { return is_numeric_type(t) || t == kBool8; }

}  // namespace

Status create_cast(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  const size_t n_in = def.op_type == "CastLike" ? 2 : 1;
  if (in.size() != n_in || !all_present(in) || out.size() != 1 || !out[0])
    return op_error(def, "needs " + std::to_string(n_in) + " input(s) and 1 output");
  auto k = std::make_unique<CastKernel>();
  k->from = in[0]->data_type;
  k->to = out[0]->data_type;
  if (!castable(k->from) || !castable(k->to))
    return op_error(def, std::string("unsupported cast ") + data_type_name(k->from) + " -> " +
                             data_type_name(k->to));
  if (n_in == 2 && in[1]->data_type != k->to)
    return op_error(def, "output type must be target_type's");
  if (def.attrs.has("to") && n_in == 1) {
    // `to` is an ONNX TensorProto type; the output description already has it
    // in runtime numbering, so only check the ones we can map.
    static const int32_t onnx_to_rt[] = {-1,   kF32, kU8,    kS8,  kU16, kS16, kS32,
                                         kS64, -1,   kBool8, kF16, kF64, kU32, kU64};
    const int64_t to = def.attrs.get_int("to", 0);
    if (to < 0 || to >= 14 || onnx_to_rt[to] < 0)
      return op_error(def, "unsupported target type " + std::to_string(to));
    if (onnx_to_rt[to] != k->to) return op_error(def, "output type differs from `to`");
  }
  if (dims_of(*in[0]) != dims_of(*out[0])) return op_error(def, "input and output shapes differ");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
