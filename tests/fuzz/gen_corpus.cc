// SPDX-License-Identifier: Apache-2.0
// fuzz_gen_corpus <dir>: writes the committed fuzz corpora from the
// writer-built test models (tests/common/test_models.h):
//   <dir>/corpus/      seeds: valid files that load and run (all instruction
//                      kinds, CPU operators, a packed file, models of fixed
//                      findings that run safely), each < 20 KB
//   <dir>/reject/      files that must be rejected, named for what is wrong
//                      (with the models of fixed findings, tests/robustness/
//                      known_bug_models.h)
//   <dir>/known_bugs/  files that must be rejected once the open findings of
//                      docs/robustness.md are fixed; fuzzer crashers go here
//                      too (by hand) until fixed
// Run it after a format change and commit the result (docs/robustness.md).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "schema/writer.h"
#include "tests/common/test_models.h"
#include "tests/robustness/known_bug_models.h"
#include "tests/robustness/model_edit.h"

namespace {

using openbpu::testing::Bytes;
using openbpu::testing::ModelEdit;
namespace fb = openbpu::fb;
namespace isa = openbpu::isa;
namespace t = openbpu::testing;

Bytes tiny() { return t::TinyCnn{}.build(); }
Bytes nv12() { return t::Nv12Classifier{}.build(); }

// TinyCnn plus one instruction of every other kind, on 4 KiB of extra
// scratch (the same valid baselines as loader_reject_test's Appended ops).
Bytes tiny_all_ops() {
  ModelEdit e(tiny());
  const uint64_t base = (e.bpu().scratch_size + 63) / 64 * 64;
  const isa::Conv c0 = std::get<isa::Conv>(e.program().at(0).body);
  auto view = [&](uint64_t at, int h, int w, int c, isa::DType dt = isa::DType::kInt8) {
    isa::TensorRef r;
    r.region = isa::Region::kScratch;
    r.dtype = dt;
    r.offset = base + at;
    r.dims[0] = 1, r.dims[1] = h, r.dims[2] = w, r.dims[3] = c;
    r.strides[3] = 1, r.strides[2] = c, r.strides[1] = int64_t{w} * c, r.strides[0] = int64_t{h} * w * c;
    return r;
  };
  auto p = e.program();
  isa::Fill fill;
  fill.out = view(0, 4, 4, 8);
  fill.value = 3;
  p.push_back({isa::Opcode::kFill, fill});
  isa::Move move;
  move.in = view(0, 4, 4, 8);
  move.out = view(1024, 4, 4, 8, isa::DType::kInt32);
  move.requantize = 1;
  move.multiplier = 1 << 29;
  move.shift = 28;
  p.push_back({isa::Opcode::kMove, move});
  isa::Eltwise elt;
  elt.a = view(0, 4, 4, 8);
  elt.b = view(256, 4, 4, 8);
  elt.out = view(512, 4, 4, 8);
  elt.kind = isa::EltwiseKind::kMul;
  p.push_back({isa::Opcode::kEltwise, elt});
  isa::Lut lut;
  lut.in = view(512, 4, 4, 8);
  lut.out = view(768, 4, 4, 8);
  lut.table = isa::ConstRef{0, 256};
  p.push_back({isa::Opcode::kLut, lut});
  isa::Resize rs;
  rs.in = view(0, 2, 2, 8);
  rs.out = view(2048, 4, 4, 8);
  rs.mode = isa::ResizeMode::kBilinear;
  rs.y_step = rs.x_step = 1 << 15;
  p.push_back({isa::Opcode::kResize, rs});
  isa::ArgMax am;
  am.in = view(0, 4, 4, 8);
  am.out = view(3072, 4, 4, 1, isa::DType::kInt32);
  p.push_back({isa::Opcode::kArgMax, am});
  isa::Conv dc;
  dc.in = view(0, 2, 2, 8);
  dc.out = view(2048, 4, 4, 8);
  dc.kernel_h = dc.kernel_w = 2;
  dc.stride_h = dc.stride_w = 2;
  dc.weight = isa::ConstRef{0, 8 * 2 * 2 * 8};
  dc.multiplier = c0.multiplier;
  dc.shift = c0.shift;
  p.push_back({isa::Opcode::kDeconv, dc});
  isa::Pool avg;
  avg.in = view(0, 4, 4, 8);
  avg.out = view(3584, 2, 2, 8);
  avg.kind = isa::PoolKind::kAvg;
  avg.kernel_h = avg.kernel_w = 3;
  avg.stride_h = avg.stride_w = 2;
  avg.pad_top = avg.pad_left = avg.pad_bottom = avg.pad_right = 1;
  p.push_back({isa::Opcode::kPool, avg});
  isa::Preprocess pre;
  pre.in = view(0, 4, 4, 3, isa::DType::kUInt8);
  pre.in.region = isa::Region::kInput;
  pre.in.offset = 0;
  pre.out = view(0, 4, 4, 3);
  pre.src_format = isa::ImageFormat::kRGB;
  pre.dst_format = isa::ImageFormat::kBGR;
  p.push_back({isa::Opcode::kPreprocess, pre});
  e.bpu().scratch_size = base + 4096;
  e.set_program(p, /*refit=*/true);
  e.model().name = "tiny_all_ops";
  return e.finish();
}

// TinyCnn's float output through LogSoftmax, Transpose and Flatten.
Bytes tiny_cpu_ops() {
  ModelEdit e(tiny());
  auto& m = e.model();
  m.tensors.push_back(t::dense_tensor("logprob", fb::DataType::F32, 4, {1, 4, 4, 4}));
  m.tensors.push_back(t::dense_tensor("transposed", fb::DataType::F32, 4, {1, 4, 4, 4}));
  m.tensors.push_back(t::dense_tensor("flat", fb::DataType::F32, 4, {1, 64}, fb::Layout::NONE));
  std::vector<std::unique_ptr<fb::AttrT>> axis, perm;
  axis.push_back(t::ints_attr("axis", {1}));
  perm.push_back(t::ints_attr("perm", {0, 2, 3, 1}));
  m.segments.push_back(t::cpu_segment("logprob", "", "LogSoftmax", {3}, {4}, std::move(axis)));
  m.segments.push_back(t::cpu_segment("transposed", "", "Transpose", {4}, {5}, std::move(perm)));
  m.segments.push_back(t::cpu_segment("flat", "", "Flatten", {5}, {6}));
  m.outputs[0]->tensor = 6;
  m.name = "tiny_cpu_ops";
  return e.finish();
}

std::vector<std::pair<std::string, Bytes>> seeds() {
  t::TinyCnn b;
  b.name = "tiny_cnn_b";
  b.seed = 2;
  b.h = 12;
  b.w = 6;
  std::vector<std::pair<std::string, Bytes>> out = {
      {"tiny_cnn.bin", tiny()},
      {"nv12_classifier.bin", nv12()},
      {"packed_tiny_tinyb_nv12.bin", t::pack_models({tiny(), b.build(), nv12()})},
      {"tiny_all_ops.bin", tiny_all_ops()},
      {"tiny_cpu_ops.bin", tiny_cpu_ops()},
      {"tiny_onnx_ops.bin", t::known_bugs::onnx_ops_chain()},
      {"tiny_clip_omitted_min.bin", t::known_bugs::clip_with_omitted_min()},
  };
  for (auto& f : t::known_bugs::accepted()) out.push_back(std::move(f));
  return out;
}

std::vector<std::pair<std::string, Bytes>> rejects() {
  using t::with_field;
  const Bytes tb = tiny();
  std::vector<std::pair<std::string, Bytes>> out;
  auto add = [&](const std::string& name, Bytes b) { out.emplace_back(name + ".bin", std::move(b)); };
  auto edit = [&](const std::string& name, auto&& f) {
    ModelEdit e(tb);
    f(e);
    add(name, e.finish());
  };
  auto instr = [&](const std::string& name, auto&& f) {
    edit(name, [&](ModelEdit& e) {
      auto p = e.program();
      f(p);
      e.set_program(p);
    });
  };
  add("empty", {});
  add("truncated_in_header", Bytes(tb.begin(), tb.begin() + 40));
  add("truncated_in_metadata", Bytes(tb.begin(), tb.begin() + 1000));
  add("truncated_last_byte", Bytes(tb.begin(), tb.end() - 1));
  {
    Bytes b = tb;
    b[0] = 'X';
    add("bad_magic", b);
  }
  add("format_major_2", with_field(tb, t::kMajor, 2));
  add("header_size_63", with_field(tb, t::kHeaderSize, 63));
  add("meta_offset_2pow64_minus_64", with_field(tb, t::kMetaOffset, ~uint64_t{63}));
  add("meta_size_wraps_around", with_field(tb, t::kMetaSize, ~uint64_t{0} - 62));
  add("data_offset_misaligned", with_field(tb, t::kDataOffset, t::get_le(tb, t::kDataOffset, 8) + 8));
  add("data_size_wraps_around",
      with_field(tb, t::kDataSize, ~uint64_t{0} - t::get_le(tb, t::kDataOffset, 8) + 65));
  {
    Bytes b = tb;
    t::put_le(&b, t::get_le(tb, t::kMetaOffset, 8), 0xFFFFFFFFu, 4);
    add("flatbuffer_root_offset_ffffffff", b);
  }
  edit("input_tensor_index_out_of_range", [](ModelEdit& e) { e.model().inputs[0]->tensor = 99; });
  edit("segment_reads_tensor_before_it_is_produced", [](ModelEdit& e) { e.segment(0).inputs[0] = 2; });
  edit("code_blob_outside_data_section",
       [](ModelEdit& e) { e.bpu().code = std::make_unique<fb::BlobRef>(1u << 20, 64); });
  edit("tensor_dim_2pow31_minus_1", [](ModelEdit& e) { e.tensor(3).valid_shape[2] = 0x7FFFFFFF; });
  edit("unknown_march", [](ModelEdit& e) { e.model().march = "bernoulli9"; });
  edit("fcs_do_not_tile_program",
       [](ModelEdit& e) { e.bpu().fcs = {fb::FunctionCall(0, 1, 1), fb::FunctionCall(2, 1, 1)}; });
  {
    ModelEdit e(tb);
    Bytes code = e.code();
    code[8] = 9;  // region of the first TensorRef of instruction 0
    e.set_code(code);
    add("instruction_region_enum_9", e.finish());
  }
  {
    ModelEdit e(tb);
    Bytes code = e.code();
    code.resize(code.size() - 5);
    e.set_code(code);
    add("instruction_record_truncated", e.finish());
  }
  {
    ModelEdit e(tb);
    Bytes code = e.code();
    code[0] = 0xEF, code[1] = 0xBE;
    e.set_code(code);
    add("instruction_unknown_opcode", e.finish());
  }
  instr("instruction_input_buffer_3_not_bound",
        [](std::vector<isa::Instruction>& p) { std::get<isa::Conv>(p[0].body).in.index = 3; });
  instr("conv_output_not_window_arithmetic",
        [](std::vector<isa::Instruction>& p) { std::get<isa::Conv>(p[0].body).out.dims[1] = 7; });
  instr("pool_shift_64", [](std::vector<isa::Instruction>& p) { std::get<isa::Pool>(p[1].body).shift = 64; });
  instr("pool_multiplier_0",
        [](std::vector<isa::Instruction>& p) { std::get<isa::Pool>(p[1].body).multiplier = 0; });
  {
    ModelEdit e(tb);
    const auto c0 = std::get<isa::Conv>(e.program().at(0).body);
    Bytes consts = e.constants();
    consts[c0.shift.offset] = 64;
    e.set_constants(consts);
    add("conv_shift_constant_64", e.finish());
  }
  {
    std::string v("\x08\x07\x12\x06hbdk4\x3a\x8a\x01", 12);
    v += "PACKED_HBM_MODEL" + std::string(64, '\x5a') + "\x42\x0cHBDK_VERSION\x12\x06" + "3.49.15";
    add("vendor_hbdk_model", Bytes(v.begin(), v.end()));
  }
  for (auto& f : t::known_bugs::rejected()) out.push_back(std::move(f));
  return out;
}

bool write_all(const std::string& dir, const std::vector<std::pair<std::string, Bytes>>& files) {
  for (const auto& [name, bytes] : files) {
    if (bytes.size() >= 20 * 1024 && dir.find("corpus") != std::string::npos) {
      std::fprintf(stderr, "%s/%s is %zu bytes (corpus files stay below 20 KB)\n", dir.c_str(), name.c_str(),
                   bytes.size());
      return false;
    }
    std::string err;
    if (!openbpu::model::write_file_atomic(dir + "/" + name, bytes, &err)) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return false;
    }
  }
  std::printf("%s: %zu files\n", dir.c_str(), files.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_gen_corpus <tests/fuzz dir>\n");
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok = write_all(dir + "/corpus", seeds()) && write_all(dir + "/reject", rejects()) &&
                  write_all(dir + "/known_bugs", openbpu::testing::known_bugs::open());
  return ok ? 0 : 1;
}
