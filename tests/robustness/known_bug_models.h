// SPDX-License-Identifier: Apache-2.0
// Models reproducing the findings of the robustness suite (docs/robustness.md):
// the loader used to accept them although running them read or wrote outside
// a buffer or had undefined behaviour. Used by the findings' tests in
// loader_reject_test.cc and written by fuzz_gen_corpus to tests/fuzz/reject/
// (rejected()) or tests/fuzz/corpus/ (accepted(): they load and run safely).
// Each builder documents the defect it reproduces. A new finding adds its
// builder to open() (written to known_bugs/) until it is fixed.
#ifndef OPENBPU_TESTS_ROBUSTNESS_KNOWN_BUG_MODELS_H_
#define OPENBPU_TESTS_ROBUSTNESS_KNOWN_BUG_MODELS_H_

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/common/test_models.h"
#include "tests/robustness/model_edit.h"

namespace openbpu::testing::known_bugs {

// A CPU operator reading an NV12 tensor as if it were dense: the (1,3,32,32)
// NV12 input holds 1536 bytes, Identity read 3072 from the caller's buffer.
// Rejected: CPU operators take no NV12/Y tensors (schema/verify.cc).
inline Bytes cpu_op_reads_nv12_input() {
  ModelEdit e(Nv12Classifier{}.build());
  e.model().tensors.push_back(dense_tensor("image_u8", fb::DataType::U8, 1, {1, 3, 32, 32}));
  e.model().segments.insert(e.model().segments.begin(), cpu_segment("image_copy", "", "Identity", {0}, {4}));
  auto o = std::make_unique<fb::OutputT>();
  o->tensor = 4;
  e.model().outputs.push_back(std::move(o));
  return e.finish();
}

// An RGB tensor whose alignedByteSize (1) is smaller than its shape (192
// elements): image types skipped that check, Quantize read 192 bytes.
// Rejected: only NV12/Y are exempt now.
inline Bytes image_tensor_smaller_than_shape() {
  ModelEdit e(TinyCnn{}.build());
  e.tensor(0).data_type = fb::DataType::IMG_RGB;
  e.tensor(0).strides.clear();
  e.tensor(0).aligned_byte_size = 1;
  return e.finish();
}

// Strides checked per dimension but not summed: (1,4,4,4) F32 output with
// strides (256,84,84,84) passed, its last element is at byte 756 of 256.
// Rejected: the verifier sums the strides.
inline Bytes strides_sum_past_tensor() {
  ModelEdit e(TinyCnn{}.build());
  e.tensor(3).strides = {256, 84, 84, 84};
  return e.finish();
}

// An NV12 input whose alignedByteSize (8192) exceeds the tight image (1536):
// the BPU region is 8192 bytes, the program reads the UV plane at 7680, and
// hbDNNInfer used to bind a caller's buffer of 1536 bytes directly. Loads and
// runs: hbDNNInfer stages a buffer smaller than alignedByteSize
// (runtime/engine/engine.cc bind_input).
inline Bytes nv12_aligned_byte_size_above_image() {
  ModelEdit e(Nv12Classifier{}.build());
  e.tensor(0).aligned_byte_size = 8192;
  auto p = e.program();
  std::get<isa::Preprocess>(p.at(0).body).uv_offset = 8192 - 512;
  e.set_program(p);
  return e.finish();
}

// A CPU operator attribute of type 200 (AttrType has 1..7): cast to the
// runtime's AttrValue::Type enum, undefined behaviour (UBSan "load of value
// 200, which is not a valid value for type 'Type'"). Rejected by the verifier.
inline Bytes attribute_type_200() {
  ModelEdit e(TinyCnn{}.build());
  auto a = std::make_unique<fb::AttrT>();
  a->name = "scale";
  a->type = static_cast<fb::AttrType>(200);
  a->floats = {0.03125f};
  e.segment(0).kind.AsCpuOp()->attrs.push_back(std::move(a));
  return e.finish();
}

// Function-call cycle estimates of 2^62: the latency estimates overflowed
// their int32/uint32 conversions (undefined behaviour, negative estimates).
// Loads and runs: the estimates saturate at INT32_MAX microseconds.
inline Bytes cycle_estimates_2pow62() {
  ModelEdit e(TinyCnn{}.build());
  for (auto& fc : e.bpu().fcs) fc = fb::FunctionCall(fc.first(), fc.count(), uint64_t{1} << 62);
  return e.finish();
}

// A model name with a NUL byte: hbDNNGetModelNameList returned it cut at the
// NUL, and hbDNNGetModelHandle could not find the model under that name (two
// such models may even list the same name). Found by the fuzzer. Rejected by
// the verifier (tensor names alike).
inline Bytes model_name_with_nul() {
  ModelEdit e(TinyCnn{}.build());
  e.model().name = std::string("tiny\0cnn", 8);
  return e.finish();
}

// ONNX Clip with its optional `min` input omitted (model::kAbsentInput): a
// valid file that must load and run (loader_reject_test's baseline for the
// omitted-input finding below).
inline Bytes clip_with_omitted_min() {
  ModelEdit e(TinyCnn{}.build());
  e.model().tensors.push_back(dense_tensor("clipped", fb::DataType::F32, 4, {1, 4, 4, 4}));
  e.model().segments.push_back(cpu_segment("clip", "", "Clip", {3, 0xFFFFFFFFu}, {4}));
  e.model().outputs[0]->tensor = 4;
  return e.finish();
}

// Identity whose only (required) input is omitted, into a one-element
// output: the loader passed the kernel an empty TensorDesc (not the nullptr
// the CPU operator library uses for absent inputs), the kernel was created
// for a float scalar and copied from a NULL buffer at run time. Rejected: the
// kernels get nullptr for absent tensors and refuse missing required ones.
inline Bytes identity_with_omitted_input() {
  ModelEdit e(TinyCnn{}.build());
  e.model().tensors.push_back(dense_tensor("one", fb::DataType::F32, 4, {1}, fb::Layout::NONE));
  e.model().segments.push_back(cpu_segment("copy", "", "Identity", {0xFFFFFFFFu}, {4}));
  auto o = std::make_unique<fb::OutputT>();
  o->tensor = 4;
  e.model().outputs.push_back(std::move(o));
  return e.finish();
}

// A valid chain of ONNX CPU operators with constant inputs after TinyCnn's
// float output (a fuzz seed for the CPU operator library): Relu, Add of a
// broadcast constant, Concat, Slice with constant starts/ends/axes, Reshape
// with a constant shape, MatMul with a constant matrix. `misalign` places
// the Add constant at an odd offset of the data section (see
// misaligned_constant_tensor).
inline Bytes onnx_ops_chain(bool misalign = false) {
  ModelEdit e(TinyCnn{}.build());
  auto& m = e.model();
  auto constant = [&](const std::string& name, fb::DataType type, int esize, std::vector<int32_t> shape,
                      const Bytes& bytes, bool odd) {
    auto t = dense_tensor(name, type, esize, shape, fb::Layout::NONE);
    Bytes b = bytes;
    if (odd) b.insert(b.begin(), 0);
    const fb::BlobRef ref = e.add_blob(b);
    t->constant = std::make_unique<fb::BlobRef>(ref.offset() + (odd ? 1 : 0), bytes.size());
    m.tensors.push_back(std::move(t));
    return static_cast<uint32_t>(m.tensors.size() - 1);
  };
  auto f32 = [](std::vector<float> v) {
    Bytes b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  auto i64 = [](std::vector<int64_t> v) {
    Bytes b(v.size() * 8);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  auto tensor = [&](const std::string& name, std::vector<int32_t> shape) {
    m.tensors.push_back(dense_tensor(name, fb::DataType::F32, 4, shape, fb::Layout::NONE));
    return static_cast<uint32_t>(m.tensors.size() - 1);
  };
  const uint32_t relu = tensor("relu", {1, 4, 4, 4});
  m.segments.push_back(cpu_segment("relu", "", "Relu", {3}, {relu}));
  const uint32_t bias = constant("bias", fb::DataType::F32, 4, {4, 1, 1}, f32({0.5f, -1, 2, 0}), misalign);
  const uint32_t add = tensor("add", {1, 4, 4, 4});
  m.segments.push_back(cpu_segment("add", "", "Add", {relu, bias}, {add}));
  const uint32_t cat = tensor("cat", {1, 8, 4, 4});
  std::vector<std::unique_ptr<fb::AttrT>> axis;
  axis.push_back(ints_attr("axis", {1}));
  m.segments.push_back(cpu_segment("cat", "", "Concat", {add, relu}, {cat}, std::move(axis)));
  const uint32_t starts = constant("starts", fb::DataType::S64, 8, {1}, i64({2}), false);
  const uint32_t ends = constant("ends", fb::DataType::S64, 8, {1}, i64({6}), false);
  const uint32_t axes = constant("axes", fb::DataType::S64, 8, {1}, i64({1}), false);
  const uint32_t slice = tensor("slice", {1, 4, 4, 4});
  m.segments.push_back(cpu_segment("slice", "", "Slice", {cat, starts, ends, axes}, {slice}));
  const uint32_t shape = constant("shape", fb::DataType::S64, 8, {2}, i64({1, 64}), false);
  const uint32_t flat = tensor("flat", {1, 64});
  m.segments.push_back(cpu_segment("reshape", "", "Reshape", {slice, shape}, {flat}));
  std::vector<float> w(64 * 10);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 8;
  const uint32_t weight = constant("weight", fb::DataType::F32, 4, {64, 10}, f32(w), false);
  const uint32_t logits = tensor("logits", {1, 10});
  m.segments.push_back(cpu_segment("matmul", "", "MatMul", {flat, weight}, {logits}));
  m.outputs[0]->tensor = logits;
  m.name = "tiny_onnx_ops";
  return e.finish();
}

// Constant tensor data at any offset of the data section (schema/verify.cc
// checked only that it lies inside), but the CPU operators read it in place
// as typed arrays ("Data pointers must be aligned to the element size",
// docs/cpu_ops.md): the float constant of Add at an odd offset was a
// misaligned load (UBSan alignment). Rejected: constant data must be aligned
// to its element size (the writer aligns blobs to 64).
inline Bytes misaligned_constant_tensor() { return onnx_ops_chain(/*misalign=*/true); }

// ReduceSum of the int64 constant {2^62, 2^62}: the sum, computed in double,
// is 2^63, which runtime/cpu_ops/reduce.cc clamped to
// min(double(INT64_MAX), r) = 2^63 (INT64_MAX is not a double) and converted
// to int64: undefined behaviour (float-cast-overflow), INT64_MIN on x86. Now
// saturates to INT64_MAX. Output: model output 1, int64 [1].
inline Bytes reduce_sum_int64_overflow() {
  ModelEdit e(TinyCnn{}.build());
  auto& m = e.model();
  auto c = dense_tensor("big", fb::DataType::S64, 8, {2}, fb::Layout::NONE);
  const int64_t v[2] = {int64_t{1} << 62, int64_t{1} << 62};
  Bytes b(sizeof(v));
  std::memcpy(b.data(), v, sizeof(v));
  c->constant = std::make_unique<fb::BlobRef>(e.add_blob(b));
  m.tensors.push_back(std::move(c));
  m.tensors.push_back(dense_tensor("sum", fb::DataType::S64, 8, {1}, fb::Layout::NONE));
  m.segments.push_back(cpu_segment("sum", "", "ReduceSum", {4}, {5}));
  auto o = std::make_unique<fb::OutputT>();
  o->tensor = 5;
  m.outputs.push_back(std::move(o));
  return e.finish();
}

// The nv12 classifier compiled for 3 BPU cores (metadata "--core-num 3"):
// more than bernoulli2's 2. Rejected at load (HB_DNN_INCOMPATIBLE_MODEL), not
// at every hbDNNInfer.
inline Bytes core_num_above_the_platform() {
  Nv12Classifier n;
  n.core_num = 3;
  return n.build();
}

// TinyCnn with 64 more outputs (Identity copies of its output) that each
// declare 2^34 bytes (the format's limit per tensor): 1 TiB of staging in the
// task arena. The simulator zero-fills allocations, so running it would be
// killed by the OOM killer; the load fails with HB_DNN_OUT_OF_MEMORY.
inline Bytes task_memory_above_the_host() {
  ModelEdit e(TinyCnn{}.build());
  auto& m = e.model();
  for (int i = 0; i < 64; ++i) {
    auto t = dense_tensor("huge_" + std::to_string(i), fb::DataType::F32, 4, {1, 4, 4, 4});
    t->aligned_byte_size = int64_t{1} << 34;
    m.tensors.push_back(std::move(t));
    const uint32_t idx = static_cast<uint32_t>(m.tensors.size() - 1);
    m.segments.push_back(cpu_segment("copy_" + std::to_string(i), "", "Identity", {3}, {idx}));
    auto o = std::make_unique<fb::OutputT>();
    o->tensor = idx;
    m.outputs.push_back(std::move(o));
  }
  return e.finish();
}

// Fixed findings the loader now rejects, with their file names in reject/.
inline std::vector<std::pair<std::string, Bytes>> rejected() {
  return {
      {"cpu_op_reads_nv12_input.bin", cpu_op_reads_nv12_input()},
      {"rgb_tensor_smaller_than_its_shape.bin", image_tensor_smaller_than_shape()},
      {"strides_sum_past_the_tensor.bin", strides_sum_past_tensor()},
      {"cpu_attribute_type_200.bin", attribute_type_200()},
      {"model_name_with_nul.bin", model_name_with_nul()},
      {"identity_with_omitted_input.bin", identity_with_omitted_input()},
      {"misaligned_constant_tensor.bin", misaligned_constant_tensor()},
      {"core_num_3_on_bernoulli2.bin", core_num_above_the_platform()},
      {"task_memory_1tib.bin", task_memory_above_the_host()},
  };
}

// Fixed findings whose models now load and run safely, with their file names
// in corpus/.
inline std::vector<std::pair<std::string, Bytes>> accepted() {
  return {
      {"nv12_aligned_byte_size_above_the_image.bin", nv12_aligned_byte_size_above_image()},
      {"fc_cycle_estimates_2pow62.bin", cycle_estimates_2pow62()},
  };
}

// Open findings (known_bugs/): none.
inline std::vector<std::pair<std::string, Bytes>> open() { return {}; }

}  // namespace openbpu::testing::known_bugs

#endif  // OPENBPU_TESTS_ROBUSTNESS_KNOWN_BUG_MODELS_H_
