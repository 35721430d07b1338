// SPDX-License-Identifier: Apache-2.0
// The CPU operator library: operators that run on the host CPU at segment
// boundaries (quantize, dequantize, layout conversion, softmax, reshape ...)
// and, for the converter, as its float reference executor.
//
// A kernel is created once per model segment (create: checks attributes and
// tensor descriptions, precomputes what it can) and run by many tasks at once
// (run is const and thread-safe). Operators are listed explicitly in
// registry.cc; there is no static self-registration.
#ifndef OPENBPU_RUNTIME_CPU_OPS_CPU_OP_H_
#define OPENBPU_RUNTIME_CPU_OPS_CPU_OP_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace openbpu::rt {

struct AttrValue {
  enum Type { kInt = 1, kFloat = 2, kString = 3, kInts = 4, kFloats = 5, kStrings = 6, kBlob = 7, kTensor = 8 };
  Type type = kInt;
  int64_t i = 0;
  float f = 0.0f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  const uint8_t* blob = nullptr;  // points into the model's data section
  uint64_t blob_size = 0;
  // kTensor (ONNX tensor-valued attributes, e.g. Constant, ConstantOfShape):
  // dense row-major data of `tensor_type` (a DataType) and `tensor_dims`.
  std::shared_ptr<const std::vector<uint8_t>> tensor;
  int32_t tensor_type = 0;
  std::vector<int64_t> tensor_dims;
};

class Attrs {
 public:
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  const AttrValue* find(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }
  int64_t get_int(const std::string& name, int64_t def) const;
  float get_float(const std::string& name, float def) const;
  std::string get_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> get_ints(const std::string& name) const;
  std::vector<float> get_floats(const std::string& name) const;
  const std::map<std::string, AttrValue>& all() const { return values_; }
  void erase(const std::string& name) { values_.erase(name); }

 private:
  std::map<std::string, AttrValue> values_;
};

struct CpuOpDef {
  std::string name;     // node name (for messages)
  std::string op_type;  // "Quantize", "Softmax", ...
  std::string domain;   // "" (ONNX semantics) or "openbpu"
  Attrs attrs;
};

struct CpuTensor {
  const TensorDesc* desc = nullptr;
  uint8_t* data = nullptr;
};

class CpuKernel {
 public:
  virtual ~CpuKernel() = default;
  virtual Status run(const std::vector<CpuTensor>& inputs,
                     const std::vector<CpuTensor>& outputs) const = 0;
};

using CpuKernelCreate = Status (*)(const CpuOpDef& def, const std::vector<const TensorDesc*>& inputs,
                                   const std::vector<const TensorDesc*>& outputs,
                                   std::unique_ptr<CpuKernel>* kernel);

struct CpuOpEntry {
  const char* domain;
  const char* op_type;
  CpuKernelCreate create;
};

// Looks an operator up in the explicit table; nullptr when unsupported.
const CpuOpEntry* find_cpu_op(const std::string& domain, const std::string& op_type);
// All operators (for docs and the converter's support checks).
const std::vector<CpuOpEntry>& all_cpu_ops();

// Creates a kernel, with a clear error naming the node for unknown operators.
Status create_cpu_kernel(const CpuOpDef& def, const std::vector<const TensorDesc*>& inputs,
                         const std::vector<const TensorDesc*>& outputs,
                         std::unique_ptr<CpuKernel>* kernel);

// CPU-side quantization of the numerics contract (docs/numerics.md):
// q = clamp(round_half_away_from_zero(x / s), qmin, qmax); x = q * s.
int32_t quantize_value(float x, float scale, int32_t qmin, int32_t qmax);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_CPU_OPS_CPU_OP_H_
