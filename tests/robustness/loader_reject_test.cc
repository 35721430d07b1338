// SPDX-License-Identifier: Apache-2.0
// The loader's rejection paths, driven through the public API
// (hbDNNInitializeFromDDR / hbDNNInitializeFromFiles): every damaged, hostile
// or foreign model file gives the documented error code and an error log line
// naming the problem, and nothing crashes or leaks (run it under ASan/UBSan,
// docs/robustness.md). Damaged files are made from the writer-built test
// models three ways: byte-level edits of the file (header, truncation,
// flatbuffer words), object-API edits re-serialized with the writer
// (indices, shapes, blob references, quantization), and edits of the
// decoded BPU program (instruction fields, raw records, constants).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bpu_sim/isa/codec.h"
#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "schema/format.h"
#include "schema/verify.h"
#include "schema/writer.h"
#include "tests/common/dnn_calls.h"
#include "tests/common/test_models.h"
#include "tests/robustness/known_bug_models.h"
#include "tests/robustness/model_edit.h"

namespace {

namespace fb = openbpu::fb;
namespace isa = openbpu::isa;
namespace model = openbpu::model;
using openbpu::testing::Bytes;
namespace kb = openbpu::testing::known_bugs;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// Runs before any library call: errors must be logged (the tests read the
// log), and the simulated platform must follow the first model (bernoulli2).
const bool kEnvironment = [] {
  setenv("HB_DNN_LOG_LEVEL", "4", 1);
  unsetenv("HB_DNN_SIM_PLATFORM");
  return true;
}();

// ---------------------------------------------------------------------------
// Models.

const Bytes& tiny() {
  static const Bytes b = openbpu::testing::TinyCnn{}.build();
  return b;
}
const Bytes& nv12() {
  static const Bytes b = openbpu::testing::Nv12Classifier{}.build();
  return b;
}
const Bytes& packed() {
  static const Bytes b = [] {
    openbpu::testing::TinyCnn t2;
    t2.name = "tiny_cnn_b";
    t2.seed = 2;
    return openbpu::testing::pack_models({tiny(), t2.build(), nv12()});
  }();
  return b;
}

// ---------------------------------------------------------------------------
// Loading with the log captured.

struct Outcome {
  int32_t rc = 0;
  std::string log;
};

Outcome load_ddr(const Bytes& bytes) {
  const openbpu::testing::LoadOutcome l = openbpu::testing::load_from_ddr(bytes);
  if (l.rc == HB_DNN_SUCCESS) {
    EXPECT_EQ(hbDNNRelease(l.pack), HB_DNN_SUCCESS);
  }
  return Outcome{l.rc, l.log};
}

Outcome load_files(const std::vector<std::string>& paths) {
  std::vector<const char*> names;
  for (const auto& p : paths) names.push_back(p.c_str());
  ::testing::internal::CaptureStderr();
  hbPackedDNNHandle_t pack = nullptr;
  Outcome o;
  o.rc = hbDNNInitializeFromFiles(&pack, names.data(), static_cast<int32_t>(names.size()));
  o.log = ::testing::internal::GetCapturedStderr();
  if (o.rc == HB_DNN_SUCCESS) EXPECT_EQ(hbDNNRelease(pack), HB_DNN_SUCCESS);
  else EXPECT_EQ(pack, nullptr);
  return o;
}

std::string describe(int32_t rc) { return std::to_string(rc) + " (" + hbDNNGetErrorDesc(rc) + ")"; }

::testing::AssertionResult check(const Outcome& o, int32_t code, const std::string& needle) {
  if (o.rc != code)
    return ::testing::AssertionFailure() << "returned " << describe(o.rc) << ", expected "
                                         << describe(code) << "; log:\n" << o.log;
  if (code == HB_DNN_SUCCESS) return ::testing::AssertionSuccess();
  if (o.log.find("[E][DNN]") == std::string::npos)
    return ::testing::AssertionFailure() << "no error was logged";
  if (o.log.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "the log does not mention '" << needle << "':\n" << o.log;
  return ::testing::AssertionSuccess();
}

// Loading `bytes` from memory gives `code` and logs a line containing `needle`.
::testing::AssertionResult Rejected(const Bytes& bytes, int32_t code, const std::string& needle) {
  return check(load_ddr(bytes), code, needle);
}
::testing::AssertionResult Loads(const Bytes& bytes) {
  return check(load_ddr(bytes), HB_DNN_SUCCESS, "");
}

// ---------------------------------------------------------------------------
// Editing (tests/robustness/model_edit.h), failing the test when the base
// file does not unpack or its program does not decode.

using openbpu::testing::get_le;
using openbpu::testing::HeaderField;
using openbpu::testing::kDataOffset;
using openbpu::testing::kDataSize;
using openbpu::testing::kFileSize;
using openbpu::testing::kHeaderSize;
using openbpu::testing::kMajor;
using openbpu::testing::kMetaOffset;
using openbpu::testing::kMetaSize;
using openbpu::testing::kMinor;
using openbpu::testing::put_le;
using openbpu::testing::with_field;

class Edit : public openbpu::testing::ModelEdit {
 public:
  explicit Edit(const Bytes& bytes) : ModelEdit(bytes) { EXPECT_TRUE(ok()) << error(); }
  std::vector<isa::Instruction> program(size_t m = 0) {
    auto p = ModelEdit::program(m);
    EXPECT_FALSE(p.empty()) << error();
    return p;
  }
};

// Table-driven edits: each case must give `code` and log `needle`.
struct Case {
  std::string name;
  std::function<void(Edit&)> edit;
  int32_t code;
  std::string needle;
};

void run_cases(const Bytes& base, const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Edit e(base);
    c.edit(e);
    EXPECT_TRUE(Rejected(e.finish(), c.code, c.needle)) << "case: " << c.name;
  }
}

// Temporary directory for the file-based tests, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "obpu_robust_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char* d = mkdtemp(buf.data());
    EXPECT_NE(d, nullptr);
    path_ = d ? d : "/tmp";
  }
  ~TempDir() {
    for (const auto& f : files_) unlink(f.c_str());
    for (const auto& d : dirs_) rmdir(d.c_str());
    rmdir(path_.c_str());
  }
  std::string write(const std::string& name, const Bytes& bytes) {
    const std::string p = path_ + "/" + name;
    std::string err;
    EXPECT_TRUE(model::write_file_atomic(p, bytes, &err)) << err;
    files_.push_back(p);
    return p;
  }
  std::string mkdir(const std::string& name) {
    const std::string p = path_ + "/" + name;
    EXPECT_EQ(::mkdir(p.c_str(), 0755), 0);
    dirs_.push_back(p);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_, dirs_;
};

// ===========================================================================
// Baseline: the models the damaged files are made from load.

TEST(LoaderReject, BaselineModelsLoad) {
  EXPECT_TRUE(Loads(tiny()));
  EXPECT_TRUE(Loads(nv12()));
  EXPECT_TRUE(Loads(packed()));
  // Re-serializing without an edit keeps the file valid (the Edit helper).
  Edit e(tiny());
  EXPECT_TRUE(Loads(e.finish()));
  // The shape of TinyCnn the instruction edits below rely on.
  Edit t(tiny());
  const auto p = t.program();
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].opcode, isa::Opcode::kConv);
  EXPECT_EQ(p[1].opcode, isa::Opcode::kPool);
  EXPECT_EQ(p[2].opcode, isa::Opcode::kConv);
  ASSERT_EQ(t.model().segments.size(), 3u);
  ASSERT_EQ(t.model().tensors.size(), 4u);
}

// ===========================================================================
// File level: truncation, header, magic, version.

TEST(LoaderReject, EveryTruncationOfTheFile) {
  for (const Bytes* base : {&tiny(), &packed()}) {
    const size_t n = base->size();
    for (size_t len = 0; len < n; len += (len < 1024 ? 1 : 13)) {
      SCOPED_TRACE("length " + std::to_string(len) + " of " + std::to_string(n));
      const Bytes cut(base->begin(), base->begin() + static_cast<std::ptrdiff_t>(len));
      if (len == 0) {
        // A zero length is an argument error for the DDR entry point.
        EXPECT_TRUE(Rejected(cut, HB_DNN_INVALID_ARGUMENT, "length <= 0"));
      } else if (len < 8) {
        EXPECT_TRUE(Rejected(cut, HB_DNN_INVALID_MODEL, "bad magic"));
      } else if (len < 64) {
        EXPECT_TRUE(Rejected(cut, HB_DNN_INVALID_MODEL, "too small for a model header"));
      } else {
        EXPECT_TRUE(Rejected(cut, HB_DNN_INVALID_MODEL, "truncated or extended"));
      }
    }
    // One byte too many is as wrong as one too few.
    Bytes longer = *base;
    longer.push_back(0);
    EXPECT_TRUE(Rejected(longer, HB_DNN_INVALID_MODEL, "truncated or extended"));
  }
}

// Truncations whose header was rewritten to match (file_size and the section
// sizes clamped), so that the cut reaches the flatbuffers verifier and the
// blob range checks: a file loads exactly when every referenced byte is left.
TEST(LoaderReject, TruncationWithConsistentHeader) {
  for (const Bytes* base : {&tiny(), &packed()}) {
    Edit e(*base);
    uint64_t blob_end = 0;
    for (auto& m : e.file().models)
      for (auto& s : m->segments)
        if (auto* p = s->kind.AsBpuProgram()) {
          blob_end = std::max(blob_end, p->code->offset() + p->code->size());
          blob_end = std::max(blob_end, p->constants->offset() + p->constants->size());
        }
    const uint64_t meta_offset = get_le(*base, kMetaOffset, 8);
    const uint64_t meta_size = get_le(*base, kMetaSize, 8);
    const uint64_t data_offset = get_le(*base, kDataOffset, 8);
    const uint64_t data_size = get_le(*base, kDataSize, 8);
    const uint64_t needed = data_offset + blob_end;
    for (size_t len = 64; len <= base->size(); len += (len < needed - 256 ? 7 : 1)) {
      SCOPED_TRACE("length " + std::to_string(len));
      Bytes cut(base->begin(), base->begin() + static_cast<std::ptrdiff_t>(len));
      put_le(&cut, kFileSize, len, 8);
      if (len > meta_offset) put_le(&cut, kMetaSize, std::min(meta_size, len - meta_offset), 8);
      put_le(&cut, kDataSize, len > data_offset ? std::min(data_size, len - data_offset) : 0, 8);
      if (len >= needed) {
        EXPECT_TRUE(Loads(cut));
      } else {
        EXPECT_TRUE(Rejected(cut, HB_DNN_INVALID_MODEL, "is invalid"));
      }
    }
  }
}

// ===========================================================================
// Log lines name where the error arose (issue 15, finding 12: every line said
// status.cc:9, the logging helper's own line).

// "file:line" of the first error line of a log ("" if none).
std::string error_location(const std::string& log) {
  const std::string tag = "[E][DNN][";
  const size_t at = log.find(tag);
  if (at == std::string::npos) return "";
  const size_t from = at + tag.size();
  return log.substr(from, log.find(']', from) - from);
}

std::string captured_error_location(const std::function<void()>& call) {
  ::testing::internal::CaptureStderr();
  call();
  return error_location(::testing::internal::GetCapturedStderr());
}

TEST(LoaderReject, LogLinesCarryTheirSourceLocation) {
  TempDir dir;
  // Three checks of FileData::open: three lines of loader.cc.
  const std::string missing = error_location(load_files({dir.path() + "/does_not_exist.bin"}).log);
  const std::string folder = error_location(load_files({dir.mkdir("a_directory.bin")}).log);
  const std::string empty = error_location(load_files({dir.write("empty.bin", {})}).log);
  for (const std::string& l : {missing, folder, empty}) EXPECT_EQ(l.rfind("loader.cc:", 0), 0u) << l;
  EXPECT_NE(missing, folder);
  EXPECT_NE(folder, empty);
  EXPECT_NE(missing, empty);
  // C API argument checks: the line of each check, not the helper's.
  int32_t count = 0;
  const std::string inputs = captured_error_location([&] { hbDNNGetInputCount(&count, nullptr); });
  const std::string release = captured_error_location([] { hbDNNRelease(nullptr); });
  EXPECT_FALSE(inputs.empty());
  EXPECT_FALSE(release.empty());
  EXPECT_NE(inputs, release);
  for (const std::string& l : {missing, inputs, release}) EXPECT_EQ(l.find("status.cc"), std::string::npos) << l;
}

TEST(LoaderReject, BadMagic) {
  for (size_t i = 0; i < 8; ++i) {
    Bytes b = tiny();
    b[i] ^= 0x20;
    EXPECT_TRUE(Rejected(b, HB_DNN_INVALID_MODEL, "bad magic")) << "byte " << i;
  }
  Bytes zero = tiny();
  std::memset(zero.data(), 0, 8);
  EXPECT_TRUE(Rejected(zero, HB_DNN_INVALID_MODEL, "bad magic"));
  // Random bytes are not a model.
  std::mt19937 rng(1);
  Bytes noise(4096);
  for (auto& v : noise) v = static_cast<uint8_t>(rng());
  EXPECT_TRUE(Rejected(noise, HB_DNN_INVALID_MODEL, "bad magic"));
}

// A file of another format major version was built by another (newer or
// older) toolchain: hb_dnn.h documents HB_DNN_INCOMPATIBLE_MODEL for that, and
// HBDNN_API.md section 4 describes the code as "model built for ... another
// builder version" (schema/format.cc parse_header reports the version as
// unsupported, runtime/loader/loader.cc load_pack maps it).
TEST(LoaderReject, FormatMajorVersionIsIncompatible) {
  for (uint64_t major : {0ull, 2ull, 0xFFFFull})
    EXPECT_TRUE(Rejected(with_field(tiny(), kMajor, major), HB_DNN_INCOMPATIBLE_MODEL,
                         "unsupported model format version"))
        << "major " << major;
  EXPECT_TRUE(Rejected(with_field(tiny(), kMajor, 2), HB_DNN_INCOMPATIBLE_MODEL, "upgrade the runtime"));
  EXPECT_TRUE(Rejected(with_field(tiny(), kMajor, 0), HB_DNN_INCOMPATIBLE_MODEL, "rebuild the model"));
}

// A .hbm of the UCP generation loaded through the 1.x API (docs/ucp.md).
TEST(LoaderReject, UcpGenerationFileIsIncompatible) {
  const Bytes hbm = openbpu::testing::as_hbm(tiny(), "{}");
  ASSERT_FALSE(hbm.empty());
  EXPECT_TRUE(Rejected(hbm, HB_DNN_INCOMPATIBLE_MODEL, "UCP generation"));
  // An unknown (future) generation value is another toolchain's file.
  fb::ModelFileT f;
  Bytes data;
  std::string err;
  ASSERT_TRUE(model::unpack_model_file(tiny().data(), tiny().size(), &f, &data, &err)) << err;
  model::ModelFileWriter w;
  for (auto& m : f.models) ASSERT_TRUE(model::relocate_blobs(m.get(), data, &w, &err)) << err;
  f.generation = static_cast<fb::Generation>(7);
  EXPECT_TRUE(Rejected(w.finish(&f), HB_DNN_INCOMPATIBLE_MODEL, "unknown model generation 7"));
}

TEST(LoaderReject, FormatMinorVersionIsCompatible) {
  // Minor versions only append fields: a newer minor loads.
  for (uint64_t minor : {1ull, 7ull, 0xFFFFull}) EXPECT_TRUE(Loads(with_field(tiny(), kMinor, minor)));
}

TEST(LoaderReject, HeaderRangesOutOfTheFile) {
  const Bytes& b = tiny();
  const uint64_t size = b.size();
  const uint64_t meta_offset = get_le(b, kMetaOffset, 8);
  const uint64_t data_offset = get_le(b, kDataOffset, 8);
  ASSERT_EQ(meta_offset, 64u);
  struct FieldCase {
    HeaderField field;
    std::vector<uint64_t> values;
    const char* needle;
  };
  const std::vector<FieldCase> cases = {
      {kHeaderSize, {0, 1, 63, 65, 128, 0xFFFFFFFFu}, "bad header size"},
      {kMetaOffset, {0, 8, 63, size, size + 1, 1ull << 32, 1ull << 63, kU64Max, kU64Max - 63},
       "metadata range out of the file"},
      // Metadata that starts inside the flatbuffer, not at its root.
      {kMetaOffset, {meta_offset + 8, meta_offset + 64}, "is invalid"},
      // flatbuffers' alignment rules are relative to the metadata start.
      {kMetaOffset, {meta_offset + 4, meta_offset + 12, meta_offset + 1}, "is not 8-byte aligned"},
      {kMetaSize, {0, 7, size, size - meta_offset + 1, 1ull << 63, kU64Max, kU64Max - 62},
       "metadata range out of the file"},
      {kMetaSize, {8, 16, 100}, "metadata failed flatbuffers verification"},
      {kDataOffset, {1, 32, 63, data_offset + 1}, "data section range out of the file or misaligned"},
      {kDataOffset, {size + 64, 1ull << 40, 1ull << 63, kU64Max - 63, kU64Max & ~63ull},
       "data section range out of the file or misaligned"},
      {kDataOffset, {0, 64}, "data section range"},  // overlaps the header / metadata
      {kDataSize, {size, size - data_offset + 1, 1ull << 63, kU64Max, kU64Max - data_offset + 65},
       "data section range out of the file or misaligned"},
      {kDataSize, {0, 1, 64}, "lies outside the data section"},
      {kFileSize, {0, 64, size - 1, size + 1, 1ull << 32, kU64Max}, "does not match the header"},
  };
  for (const auto& c : cases)
    for (uint64_t v : c.values) {
      EXPECT_TRUE(Rejected(with_field(b, c.field, v), HB_DNN_INVALID_MODEL, c.needle))
          << "header field at " << static_cast<size_t>(c.field) << " = " << v;
    }
}

// Every 32-bit word of the flatbuffer (root offset, vtable offsets, vector
// lengths, field offsets, scalars) replaced by hostile values: the verifier
// or the semantic checks catch what matters; the rest may load.
TEST(LoaderReject, CorruptFlatbufferWords) {
  const Bytes& b = tiny();
  const size_t meta = get_le(b, kMetaOffset, 8), meta_size = get_le(b, kMetaSize, 8);
  std::map<int32_t, int> seen;
  for (size_t at = meta; at + 4 <= meta + meta_size; at += 4) {
    for (uint32_t v : {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFF0u,
                       static_cast<uint32_t>(meta_size), static_cast<uint32_t>(meta_size - 4)}) {
      Bytes c = b;
      if (get_le(c, at, 4) == v) continue;
      put_le(&c, at, v, 4);
      const Outcome o = load_ddr(c);
      ++seen[o.rc];
      EXPECT_TRUE(o.rc == HB_DNN_SUCCESS || o.rc == HB_DNN_INVALID_MODEL ||
                  o.rc == HB_DNN_INCOMPATIBLE_MODEL)
          << "word at " << at << " = " << v << ": " << describe(o.rc) << "\n" << o.log;
    }
  }
  EXPECT_GT(seen[HB_DNN_INVALID_MODEL], 100);
  for (const auto& [rc, n] : seen) std::printf("  %s: %d files\n", describe(rc).c_str(), n);
}

// Seeded random byte flips in the metadata.
TEST(LoaderReject, RandomMetadataByteFlips) {
  for (const Bytes* base : {&tiny(), &nv12()}) {
    const size_t meta = get_le(*base, kMetaOffset, 8), meta_size = get_le(*base, kMetaSize, 8);
    std::mt19937 rng(20261121);
    int rejected = 0;
    for (int iter = 0; iter < 1500; ++iter) {
      Bytes c = *base;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) c[meta + rng() % meta_size] ^= static_cast<uint8_t>(1 + rng() % 255);
      const Outcome o = load_ddr(c);
      rejected += o.rc != HB_DNN_SUCCESS;
      EXPECT_TRUE(o.rc == HB_DNN_SUCCESS || o.rc == HB_DNN_INVALID_MODEL ||
                  o.rc == HB_DNN_INCOMPATIBLE_MODEL)
          << "iteration " << iter << ": " << describe(o.rc) << "\n" << o.log;
    }
    EXPECT_GT(rejected, 100);
  }
}

// ===========================================================================
// Foreign and missing files.

std::string vendor_like_model(bool both_strings) {
  // The start of a protobuf ModelProto (ir_version, producer_name, graph with
  // an initializer called PACKED_HBM_MODEL) as a vendor .bin file carries.
  std::string s("\x08\x07\x12\x06hbdk4\x3a", 10);
  s += std::string("\x8a\x01", 2) + "PACKED_HBM_MODEL";
  s += std::string(200, '\x5a');
  if (both_strings) s += "\x42\x0cHBDK_VERSION\x12\x06" "3.49.15";
  return s;
}

TEST(LoaderReject, VendorModelIsIncompatible) {
  for (bool both : {false, true}) {
    const std::string v = vendor_like_model(both);
    EXPECT_TRUE(Rejected(Bytes(v.begin(), v.end()), HB_DNN_INCOMPATIBLE_MODEL, "vendor's toolchain"));
  }
  const std::string only_version = std::string(100, '\0') + "HBDK_VERSION" + std::string(100, '\x11');
  EXPECT_TRUE(Rejected(Bytes(only_version.begin(), only_version.end()), HB_DNN_INCOMPATIBLE_MODEL,
                       "vendor's toolchain"));
  const std::string hbm = std::string("HBM\x01", 4) + std::string(128, '\x33');
  EXPECT_TRUE(Rejected(Bytes(hbm.begin(), hbm.end()), HB_DNN_INCOMPATIBLE_MODEL, "vendor's toolchain"));

  TempDir dir;
  const std::string v = vendor_like_model(true);
  const std::string path = dir.write("vendor_model.bin", Bytes(v.begin(), v.end()));
  EXPECT_TRUE(check(load_files({path}), HB_DNN_INCOMPATIBLE_MODEL, "vendor's toolchain"));
}

TEST(LoaderReject, FilesThatCannotBeOpenedOrAreEmpty) {
  TempDir dir;
  EXPECT_TRUE(check(load_files({dir.path() + "/does_not_exist.bin"}), HB_DNN_CAN_NOT_OPEN_FILE,
                    "cannot open model file"));
  EXPECT_TRUE(check(load_files({dir.mkdir("a_directory.bin")}), HB_DNN_CAN_NOT_OPEN_FILE,
                    "is not a regular file"));
  EXPECT_TRUE(check(load_files({"/dev/null"}), HB_DNN_CAN_NOT_OPEN_FILE, "is not a regular file"));
  EXPECT_TRUE(check(load_files({dir.write("empty.bin", {})}), HB_DNN_INVALID_MODEL, "is empty"));
  EXPECT_TRUE(check(load_files({""}), HB_DNN_CAN_NOT_OPEN_FILE, "cannot open model file"));
  // A damaged file among good ones fails the whole load (and leaks nothing).
  const std::string good = dir.write("tiny.bin", tiny());
  const Bytes cut(tiny().begin(), tiny().begin() + 1000);
  const std::string bad = dir.write("cut.bin", cut);
  EXPECT_TRUE(check(load_files({good, bad}), HB_DNN_INVALID_MODEL, "model file 1"));
  EXPECT_TRUE(check(load_files({good, dir.path() + "/missing.bin"}), HB_DNN_CAN_NOT_OPEN_FILE,
                    "missing.bin"));
  EXPECT_TRUE(check(load_files({good}), HB_DNN_SUCCESS, ""));
}

TEST(LoaderReject, ModelNamesAndCountsAcrossFiles) {
  TempDir dir;
  const std::string a = dir.write("a.bin", tiny());
  const std::string b = dir.write("b.bin", tiny());
  EXPECT_TRUE(check(load_files({a, b}), HB_DNN_INVALID_MODEL, "appears in more than one file"));

  // 33 + 32 distinct models in two files: more than 64 per pack.
  auto many = [](int first, int count) {
    Edit e(tiny());
    const fb::ModelT proto = e.model();
    e.file().models.clear();
    for (int i = 0; i < count; ++i) {
      auto m = std::make_unique<fb::ModelT>(proto);
      m->name = "tiny_" + std::to_string(first + i);
      e.file().models.push_back(std::move(m));
    }
    return e.finish();
  };
  const std::string f1 = dir.write("many1.bin", many(0, 33));
  const std::string f2 = dir.write("many2.bin", many(100, 32));
  EXPECT_TRUE(check(load_files({f1}), HB_DNN_SUCCESS, ""));
  EXPECT_TRUE(check(load_files({f1, f2}), HB_DNN_MODEL_NUMBER_EXCEED_LIMIT, "too many models"));
  // One file may not hold more than 64 models either.
  EXPECT_TRUE(Rejected(many(0, 65), HB_DNN_INVALID_MODEL, "limit 64"));
}

// ===========================================================================
// Object-API edits: the model graph.

std::unique_ptr<fb::TensorT> copy_tensor(const fb::TensorT& t, const std::string& name) {
  auto c = std::make_unique<fb::TensorT>(t);
  c->name = name;
  return c;
}

TEST(LoaderReject, GraphIndicesAndOrder) {
  const uint32_t kBig = std::numeric_limits<uint32_t>::max();
  const int32_t bad = HB_DNN_INVALID_MODEL;
  run_cases(tiny(), {
      {"input tensor 4", [](Edit& e) { e.model().inputs[0]->tensor = 4; }, bad,
       "input 0 tensor index out of range"},
      {"input tensor 2^32-1", [&](Edit& e) { e.model().inputs[0]->tensor = kBig; }, bad,
       "input 0 tensor index out of range"},
      {"output tensor 4", [](Edit& e) { e.model().outputs[0]->tensor = 4; }, bad,
       "output 0 tensor index out of range"},
      {"output tensor 2^32-1", [&](Edit& e) { e.model().outputs[0]->tensor = kBig; }, bad,
       "output 0 tensor index out of range"},
      {"segment input 4", [](Edit& e) { e.segment(1).inputs[0] = 4; }, bad,
       "input tensor index out of range"},
      {"BPU segment input 2^32-1", [&](Edit& e) { e.segment(1).inputs[0] = kBig; }, bad,
       "input tensor index out of range"},
      // 2^32-1 marks an omitted optional input of a CPU operator
      // (model::kAbsentInput); Dequantize's input is not optional.
      {"required CPU input omitted", [&](Edit& e) { e.segment(2).inputs[0] = kBig; }, bad,
       "node 'conv2_out'"},
      {"segment output 4", [](Edit& e) { e.segment(1).outputs[0] = 4; }, bad,
       "output tensor index out of range"},
      {"BPU segment output 2^32-1", [&](Edit& e) { e.segment(1).outputs.push_back(kBig); }, bad,
       "output tensor index out of range"},
      // 2^32-1 also marks an omitted optional output of a CPU operator; one
      // output must be present.
      {"CPU segment with its only output omitted", [&](Edit& e) { e.segment(0).outputs[0] = kBig; },
       bad, "segment has no output"},
      {"tensor used before it is produced", [](Edit& e) { e.segment(0).inputs[0] = 2; }, bad,
       "is used before it is produced"},
      {"segments out of order",
       [](Edit& e) { std::swap(e.model().segments[0], e.model().segments[1]); }, bad,
       "is used before it is produced"},
      {"segment without output", [](Edit& e) { e.segment(2).outputs.clear(); }, bad,
       "segment has no output"},
      {"output never produced",
       [](Edit& e) {
         e.model().tensors.push_back(copy_tensor(e.tensor(3), "orphan"));
         e.model().outputs[0]->tensor = 4;
       },
       bad, "output 0 is never produced"},
      {"same tensor twice as input",
       [](Edit& e) {
         auto in = std::make_unique<fb::InputT>(*e.model().inputs[0]);
         e.model().inputs.push_back(std::move(in));
       },
       bad, "tensor used twice as model input"},
      {"unknown input source",
       [](Edit& e) { e.model().inputs[0]->source = static_cast<fb::InputSource>(3); }, bad,
       "unknown input source"},
      {"no input", [](Edit& e) { e.model().inputs.clear(); }, bad, "model has no input"},
      {"no output", [](Edit& e) { e.model().outputs.clear(); }, bad, "model has no output"},
      {"no segment", [](Edit& e) { e.model().segments.clear(); }, bad, "model has no segment"},
      {"no model", [](Edit& e) { e.file().models.clear(); }, bad, "file holds no model"},
      {"empty model name", [](Edit& e) { e.model().name.clear(); }, bad, "empty model name"},
      {"duplicate model name",
       [](Edit& e) { e.file().models.push_back(std::make_unique<fb::ModelT>(e.model())); }, bad,
       "duplicate model name 'tiny_cnn'"},
      {"segment without kind", [](Edit& e) { e.segment(1).kind.Reset(); }, bad,
       "flatbuffers verification"},
  });
}

TEST(LoaderReject, UnknownMarch) {
  run_cases(tiny(), {
      {"march bernoulli3", [](Edit& e) { e.model().march = "bernoulli3"; },
       HB_DNN_INCOMPATIBLE_MODEL, "unknown BPU march 'bernoulli3'"},
      {"empty march", [](Edit& e) { e.model().march.clear(); }, HB_DNN_INCOMPATIBLE_MODEL,
       "unknown BPU march"},
      {"march with a NUL", [](Edit& e) { e.model().march = std::string("bernoulli2\0x", 12); },
       HB_DNN_INCOMPATIBLE_MODEL, "unknown BPU march"},
  });
  // The platform is fixed by the first model loaded: then another march is
  // incompatible too.
  ASSERT_TRUE(Loads(tiny()));
  Edit e(tiny());
  e.model().march = "bayes";
  EXPECT_TRUE(Rejected(e.finish(), HB_DNN_INCOMPATIBLE_MODEL, "cannot run on the simulated BPU platform"));
}

TEST(LoaderReject, BlobReferencesOutsideTheDataSection) {
  const int32_t bad = HB_DNN_INVALID_MODEL;
  // The data section of the re-serialized file is the original one plus the
  // blobs an edit adds; offsets past 1 MiB are outside in every case.
  const uint64_t far = 1ull << 20;
  auto attr_blob = [](uint64_t offset, uint64_t size) {
    return [=](Edit& e) {
      auto a = std::make_unique<fb::AttrT>();
      a->name = "table";
      a->type = fb::AttrType::BLOB;
      a->blob = std::make_unique<fb::BlobRef>(offset, size);
      e.segment(0).kind.AsCpuOp()->attrs.push_back(std::move(a));
    };
  };
  run_cases(tiny(), {
      {"code offset far", [&](Edit& e) { e.bpu().code = std::make_unique<fb::BlobRef>(far, 16); }, bad,
       "code lies outside the data section"},
      {"code offset wraps", [](Edit& e) { e.bpu().code = std::make_unique<fb::BlobRef>(kU64Max, 2); }, bad,
       "code lies outside the data section"},
      {"code size huge", [](Edit& e) { e.bpu().code = std::make_unique<fb::BlobRef>(0, kU64Max); }, bad,
       "code lies outside the data section"},
      {"code offset+size wraps",
       [](Edit& e) { e.bpu().code = std::make_unique<fb::BlobRef>(64, kU64Max - 32); }, bad,
       "code lies outside the data section"},
      {"code missing", [](Edit& e) { e.bpu().code.reset(); }, bad, "code is missing"},
      {"constants far", [&](Edit& e) { e.bpu().constants = std::make_unique<fb::BlobRef>(far, 1); }, bad,
       "constants lies outside the data section"},
      {"constants size huge",
       [](Edit& e) { e.bpu().constants = std::make_unique<fb::BlobRef>(0, 1ull << 62); }, bad,
       "constants lies outside the data section"},
      {"constants missing", [](Edit& e) { e.bpu().constants.reset(); }, bad, "constants is missing"},
      {"CPU attribute blob far", attr_blob(far, 4), bad, "attribute blob lies outside the data section"},
      {"CPU attribute blob wraps", attr_blob(kU64Max - 1, 4), bad,
       "attribute blob lies outside the data section"},
      {"CPU attribute without its blob",
       [](Edit& e) {
         auto a = std::make_unique<fb::AttrT>();
         a->name = "table";
         a->type = fb::AttrType::BLOB;
         e.segment(0).kind.AsCpuOp()->attrs.push_back(std::move(a));
       },
       bad, "attribute blob is missing"},
      {"CPU attribute blob in range (loads)", attr_blob(0, 4), HB_DNN_SUCCESS, ""},
      {"constant tensor data far",
       [&](Edit& e) { e.tensor(1).constant = std::make_unique<fb::BlobRef>(far, 512); }, bad,
       "constant data lies outside the data section"},
      {"constant tensor data wraps",
       [](Edit& e) { e.tensor(1).constant = std::make_unique<fb::BlobRef>(kU64Max - 8, 512); }, bad,
       "constant data lies outside the data section"},
      {"constant tensor data too small",
       [](Edit& e) { e.tensor(1).constant = std::make_unique<fb::BlobRef>(0, 511); }, bad,
       "constant data smaller than the tensor"},
      // A constant may not be overwritten: its bytes are the (mmap'ed,
      // read-only) file.
      {"segment writes a constant tensor",
       [](Edit& e) { e.tensor(1).constant = std::make_unique<fb::BlobRef>(0, 512); }, bad,
       "writes to a constant tensor"},
      {"model input is a constant",
       [](Edit& e) { e.tensor(0).constant = std::make_unique<fb::BlobRef>(0, 768); }, bad,
       "a model input cannot be a constant"},
  });
}

TEST(LoaderReject, AbsurdTensorShapes) {
  const int32_t bad = HB_DNN_INVALID_MODEL;
  const int32_t i32max = std::numeric_limits<int32_t>::max();
  auto shape = [](std::vector<int32_t> valid, std::vector<int32_t> aligned) {
    return [=](Edit& e) {
      e.tensor(3).valid_shape = valid;
      e.tensor(3).aligned_shape = aligned;
      e.tensor(3).strides.clear();
    };
  };
  run_cases(tiny(), {
      {"dim 0", shape({1, 4, 0, 4}, {1, 4, 0, 4}), bad, "dimension 2 out of range"},
      {"dim -1", shape({1, -1, 4, 4}, {1, -1, 4, 4}), bad, "dimension 1 out of range"},
      {"dim INT32_MIN", shape({std::numeric_limits<int32_t>::min(), 4, 4, 4}, {1, 4, 4, 4}), bad,
       "dimension 0 out of range"},
      {"dim 2^31-1", shape({1, 4, 4, i32max}, {1, 4, 4, i32max}), bad, "dimension 3 out of range"},
      {"dim 2^24+1", shape({1, 4, 4, (1 << 24) + 1}, {1, 4, 4, (1 << 24) + 1}), bad,
       "dimension 3 out of range"},
      {"aligned smaller than valid", shape({1, 4, 4, 4}, {1, 4, 3, 4}), bad, "dimension 2 out of range"},
      {"aligned 2^31-1", shape({1, 4, 4, 4}, {1, 4, 4, i32max}), bad, "dimension 3 out of range"},
      // Rank 0 (a scalar) is a legal tensor; Dequantize rejects it here.
      {"rank 0", shape({}, {}), bad, "input and output shapes differ"},
      {"rank 9", shape({1, 1, 1, 1, 1, 1, 1, 4, 4}, {1, 1, 1, 1, 1, 1, 1, 4, 4}), bad,
       "rank 9 out of range"},
      {"ranks differ", shape({1, 4, 4, 4}, {1, 4, 4, 4, 1}), bad, "aligned shape rank differs"},
      // Products that overflow int64 if multiplied naively (2^24^8 = 2^192).
      {"product overflows int64",
       shape(std::vector<int32_t>(8, 1 << 24), std::vector<int32_t>(8, 1 << 24)), bad,
       "tensor too large"},
      {"product above 2^34 bytes", shape({1, 1 << 24, 1 << 12, 1}, {1, 1 << 24, 1 << 12, 1}), bad,
       "tensor too large"},
      {"aligned byte size -1", [](Edit& e) { e.tensor(3).aligned_byte_size = -1; }, bad,
       "aligned byte size out of range"},
      {"aligned byte size 2^62", [](Edit& e) { e.tensor(3).aligned_byte_size = int64_t{1} << 62; }, bad,
       "aligned byte size out of range"},
      {"aligned byte size too small", [](Edit& e) { e.tensor(3).aligned_byte_size = 255; }, bad,
       "aligned byte size smaller than the aligned shape"},
      {"negative stride", [](Edit& e) { e.tensor(3).strides[1] = -64; }, bad, "stride out of range"},
      {"stride count", [](Edit& e) { e.tensor(3).strides.pop_back(); }, bad,
       "stride count differs from the rank"},
      {"stride past the end", [](Edit& e) { e.tensor(3).strides[2] = 1000; }, bad,
       "strides run past the aligned byte size"},
      {"unknown data type 20", [](Edit& e) { e.tensor(3).data_type = static_cast<fb::DataType>(20); }, bad,
       "unknown data type"},
      {"unknown data type 255", [](Edit& e) { e.tensor(0).data_type = static_cast<fb::DataType>(255); },
       bad, "unknown data type"},
      // Consistent in itself, but not with the operator that reads it.
      {"input shape differs from the Quantize output",
       [](Edit& e) {
         e.tensor(0).valid_shape[3] = 9;
         e.tensor(0).aligned_shape[3] = 9;
         e.tensor(0).strides = {3 * 8 * 9 * 4, 8 * 9 * 4, 9 * 4, 4};
         e.tensor(0).aligned_byte_size = 3 * 8 * 9 * 4;
       },
       bad, "input and output shapes differ"},
      // The BPU program reads its input with the 8x8 shape it was built for;
      // a smaller binding is out of its region.
      {"BPU input smaller than the program reads",
       [](Edit& e) {
         for (auto* t : {&e.tensor(0), &e.tensor(1)}) {
           t->valid_shape[t == &e.tensor(0) ? 3 : 2] = 4;
           t->aligned_shape[t == &e.tensor(0) ? 3 : 2] = 4;
         }
         e.tensor(0).strides = {3 * 8 * 4 * 4, 8 * 4 * 4, 4 * 4, 4};
         e.tensor(0).aligned_byte_size = 3 * 8 * 4 * 4;
         e.tensor(1).strides = {8 * 4 * 8, 4 * 8, 8, 1};
         e.tensor(1).aligned_byte_size = 8 * 4 * 8;
       },
       bad, "runs past the end of its region"},
  });
}

TEST(LoaderReject, QuantizationParameters) {
  const int32_t bad = HB_DNN_INVALID_MODEL;
  // Tensor 2 (conv2_out) has 4 per-channel scales along axis 3 (C = 4).
  run_cases(tiny(), {
      {"3 scales for 4 channels", [](Edit& e) { e.tensor(2).quant->scales.pop_back(); }, bad,
       "scale/shift count must be 1 or the size of the quantize axis"},
      {"5 scales for 4 channels", [](Edit& e) { e.tensor(2).quant->scales.push_back(1.0f); }, bad,
       "scale/shift count must be 1 or the size of the quantize axis"},
      {"scales along another axis", [](Edit& e) { e.tensor(2).quant->axis = 0; }, bad,
       "scale/shift count must be 1 or the size of the quantize axis"},
      {"axis 4", [](Edit& e) { e.tensor(2).quant->axis = 4; }, bad, "quantize axis out of range"},
      {"axis -1", [](Edit& e) { e.tensor(2).quant->axis = -1; }, bad, "quantize axis out of range"},
      {"zero points differ", [](Edit& e) { e.tensor(2).quant->zero_points = {0, 0}; }, bad,
       "zero point count differs from scale count"},
      {"SCALE without scales", [](Edit& e) { e.tensor(2).quant->scales.clear(); }, bad,
       "SCALE without scales"},
      {"SHIFT without shifts",
       [](Edit& e) {
         e.tensor(2).quant->type = fb::QuantType::SHIFT;
         e.tensor(2).quant->scales.clear();
       },
       bad, "SHIFT without shifts"},
      {"shift 32",
       [](Edit& e) {
         e.tensor(2).quant->type = fb::QuantType::SHIFT;
         e.tensor(2).quant->shifts = {1, 2, 32, 4};
       },
       bad, "shift value out of range"},
      {"shift count 3",
       [](Edit& e) {
         e.tensor(2).quant->type = fb::QuantType::SHIFT;
         e.tensor(2).quant->shifts = {1, 2, 3};
       },
       bad, "scale/shift count must be 1 or the size"},
      {"quantization type 3", [](Edit& e) { e.tensor(2).quant->type = static_cast<fb::QuantType>(3); },
       bad, "unknown quantization type"},
      {"zero scale", [](Edit& e) { e.tensor(2).quant->scales[1] = 0.0f; }, bad,
       "scale must be positive and finite"},
      {"negative scale", [](Edit& e) { e.tensor(1).quant->scales[0] = -0.5f; }, bad,
       "scale must be positive and finite"},
      {"NaN scale",
       [](Edit& e) { e.tensor(2).quant->scales[3] = std::numeric_limits<float>::quiet_NaN(); }, bad,
       "scale must be positive and finite"},
      {"infinite scale",
       [](Edit& e) { e.tensor(2).quant->scales[0] = std::numeric_limits<float>::infinity(); }, bad,
       "scale must be positive and finite"},
      {"no quantization on a Dequantize input", [](Edit& e) { e.tensor(2).quant.reset(); }, bad,
       "has no scale"},
  });
}

TEST(LoaderReject, CpuOperators) {
  const int32_t bad = HB_DNN_INVALID_MODEL;
  auto perm = [](std::vector<int64_t> p) {
    return [=](Edit& e) {
      auto* op = e.segment(0).kind.AsCpuOp();
      op->op_type = "Transpose";
      op->domain = "";
      auto a = std::make_unique<fb::AttrT>();
      a->name = "perm";
      a->type = fb::AttrType::INTS;
      a->ints = p;
      op->attrs.push_back(std::move(a));
    };
  };
  run_cases(tiny(), {
      {"unknown operator", [](Edit& e) { e.segment(0).kind.AsCpuOp()->op_type = "Frobnicate"; }, bad,
       "CPU operator openbpu::Frobnicate is not supported"},
      {"operator in another domain", [](Edit& e) { e.segment(0).kind.AsCpuOp()->domain = "ai.onnx.ml"; },
       bad, "is not supported"},
      {"Quantize with two outputs", [](Edit& e) { e.segment(0).outputs.push_back(2); }, bad,
       "needs 1 input and 1 output"},
      {"Dequantize without input", [](Edit& e) { e.segment(2).inputs.clear(); }, bad,
       "needs 1 input and 1 output"},
      {"Quantize to a 4-bit type", [](Edit& e) { e.tensor(1).data_type = fb::DataType::U4; }, bad,
       "Quantize output must be an integer type"},
      {"Transpose perm repeats", perm({0, 0, 1, 2}), bad, "perm is not a permutation"},
      {"Transpose perm out of range", perm({0, 1, 2, 4}), bad, "perm is not a permutation"},
      {"Transpose perm negative", perm({0, 1, -1, 2}), bad, "perm is not a permutation"},
      {"Transpose perm rank", perm({0, 1, 2}), bad, "perm does not match the rank"},
      {"Transpose output shape", perm({0, 2, 3, 1}), bad, "output shape does not match perm"},
  });
  // Softmax of the nv12 classifier (segment 2) over an axis it does not have.
  Edit e(nv12());
  auto* op = e.segment(2).kind.AsCpuOp();
  ASSERT_NE(op, nullptr);
  ASSERT_EQ(op->op_type, "Softmax");
  op->attrs.at(0)->i = 4;
  EXPECT_TRUE(Rejected(e.finish(), HB_DNN_INVALID_MODEL, "Softmax): axis out of range"));
}

// ===========================================================================
// BPU programs: program-level fields, function calls.

TEST(LoaderReject, BpuProgramFields) {
  const int32_t bad = HB_DNN_INVALID_MODEL;
  auto fcs = [](std::vector<fb::FunctionCall> v) { return [=](Edit& e) { e.bpu().fcs = v; }; };
  using FC = fb::FunctionCall;
  run_cases(tiny(), {
      {"ISA version 0", [](Edit& e) { e.bpu().isa_version = 0; }, bad, "ISA version 0 is not supported"},
      {"scratch size 2^40", [](Edit& e) { e.bpu().scratch_size = 1ull << 40; }, bad,
       "scratch size out of range"},
      {"scratch size 2^64-1", [](Edit& e) { e.bpu().scratch_size = kU64Max; }, bad,
       "scratch size out of range"},
      {"scratch size 0", [](Edit& e) { e.bpu().scratch_size = 0; }, bad, "runs past the end of its region"},
      {"no function call", fcs({}), bad, "program has no function call"},
      {"fcs leave a gap", fcs({FC(0, 1, 1), FC(2, 1, 1)}), bad, "does not continue the program in order"},
      {"fcs overlap", fcs({FC(0, 2, 1), FC(1, 2, 1)}), bad, "does not continue the program in order"},
      {"fc of 0 instructions", fcs({FC(0, 0, 1), FC(0, 3, 1)}), bad, "does not continue the program"},
      {"fcs stop early", fcs({FC(0, 2, 1)}), bad, "function calls cover 2 of 3 instructions"},
      {"fc past the end", fcs({FC(0, 4, 1)}), bad, "does not continue the program in order"},
      {"fc count 2^32-1", fcs({FC(0, 0xFFFFFFFFu, 1)}), bad, "does not continue the program in order"},
      {"fc first 2^32-1", fcs({FC(0xFFFFFFFFu, 3, 1)}), bad, "does not continue the program in order"},
      {"fcs wrap", fcs({FC(0, 2, 1), FC(2, 0xFFFFFFFFu, 1)}), bad, "does not continue the program"},
      {"empty program", [](Edit& e) { e.set_code({}); }, bad, "program has no instruction"},
  });
}

// Debug records (Model.layers, compiler_parameters.debug): a record names a
// BPU segment, instructions of its program and outputs inside the segment's
// scratch area or output tensors (schema/verify.cc); otherwise libdnn's
// per-layer reports (obpuInferWithLayerOutputs) would read outside them.
TEST(LoaderReject, LayerRecordFields) {
  const int32_t bad = HB_DNN_INVALID_MODEL;
  const auto record = [](Edit& e) -> fb::LayerOutputT& {
    auto l = std::make_unique<fb::LayerDebugT>();
    l->name = "conv1";
    l->segment = 1;
    l->instruction_count = 1;
    auto o = std::make_unique<fb::LayerOutputT>();
    o->name = "conv1";
    o->region = 4;
    o->data_type = fb::DataType::S8;
    o->dims = {1, 2, 2, 3};
    o->strides = {12, 6, 3, 1};
    o->quant = std::make_unique<fb::QuantT>();
    o->quant->type = fb::QuantType::SCALE;
    o->quant->scales = {0.5f};
    l->outputs.push_back(std::move(o));
    e.model().layers.push_back(std::move(l));
    return *e.model().layers.back()->outputs.back();
  };
  {
    Edit e(tiny());
    record(e);
    EXPECT_TRUE(Loads(e.finish()));
  }
  const auto layer = [](Edit& e) -> fb::LayerDebugT& { return *e.model().layers.back(); };
  run_cases(tiny(), {
      {"CPU segment", [&](Edit& e) { record(e), layer(e).segment = 0; }, bad, "segment 0 is not a BPU program"},
      {"segment 99", [&](Edit& e) { record(e), layer(e).segment = 99; }, bad, "segment index out of range"},
      {"instructions past the end",
       [&](Edit& e) { record(e), layer(e).first_instruction = 2, layer(e).instruction_count = 2; }, bad,
       "instructions beyond the program's 3"},
      {"instruction count 2^32-1",
       [&](Edit& e) { record(e), layer(e).first_instruction = 2, layer(e).instruction_count = 0xFFFFFFFFu; }, bad,
       "instructions beyond the program's 3"},
      {"past the scratch area", [&](Edit& e) { record(e).offset = e.bpu().scratch_size; }, bad, "-byte region"},
      {"offset 2^63", [&](Edit& e) { record(e).offset = 1ull << 63; }, bad, "offset out of range"},
      {"stride 2^40", [&](Edit& e) { record(e).strides = {1ll << 40, 6, 3, 1}; }, bad, "dims or strides out of range"},
      {"stride times dim overflows",
       [&](Edit& e) {
         auto& o = record(e);
         o.dims = {0x7FFFFFFF, 1, 1, 1}, o.strides = {1ll << 33, 0, 0, 0};
       },
       bad, "dims or strides out of range"},
      {"dim 0", [&](Edit& e) { record(e).dims = {0, 2, 2, 3}; }, bad, "dims or strides out of range"},
      {"output index 5", [&](Edit& e) { auto& o = record(e); o.region = 2, o.index = 5; }, bad,
       "not in the segment's scratch area or outputs"},
      {"constant region", [&](Edit& e) { record(e).region = 3; }, bad, "not in the segment's scratch area or outputs"},
      {"float data", [&](Edit& e) { record(e).data_type = fb::DataType::F32; }, bad, "data type is not S8, S16 or S32"},
      {"3 dims", [&](Edit& e) { record(e).dims = {1, 2, 2}; }, bad, "needs 4 dims and 4 strides"},
      {"no scale", [&](Edit& e) { record(e).quant->scales.clear(); }, bad, "needs SCALE quantization"},
      {"2 scales for 3 channels", [&](Edit& e) { record(e).quant->scales = {1, 2}; }, bad, "needs SCALE quantization"},
      {"no quantization", [&](Edit& e) { record(e).quant.reset(); }, bad, "needs SCALE quantization"},
      {"2 zero points for 1 scale", [&](Edit& e) { record(e).quant->zero_points = {3, 4}; }, bad,
       "zero point count differs from scale count"},
  });
  Edit e(tiny());
  record(e).quant->zero_points = {-128};  // an asymmetric value's record
  EXPECT_TRUE(Loads(e.finish()));
}

// ISA version 2 is a program for a newer BPU instruction set: a newer
// toolchain's model, i.e. HB_DNN_INCOMPATIBLE_MODEL by hb_dnn.h
// (schema/verify.cc; ISA version 0 is a damaged file, BpuProgramFields).
TEST(LoaderReject, IsaVersion2IsIncompatible) {
  for (uint32_t version : {2u, 0xFFFFFFFFu}) {
    Edit e(tiny());
    e.bpu().isa_version = version;
    EXPECT_TRUE(Rejected(e.finish(), HB_DNN_INCOMPATIBLE_MODEL,
                         "ISA version " + std::to_string(version) + " is not supported"));
  }
}

// A program compiled for more BPU cores than the platform has (bernoulli2: 2)
// is another build's model: rejected at load, not at every hbDNNInfer
// (runtime/loader/loader.cc build_model reads Model.core_num, or the build
// metadata of files written before that field).
TEST(LoaderReject, CoreNumAboveThePlatformIsIncompatible) {
  EXPECT_TRUE(Rejected(kb::core_num_above_the_platform(), HB_DNN_INCOMPATIBLE_MODEL,
                       "was compiled for 3 BPU cores (core_num); the BERNOULLI2 BPU has 2"));
  // Files written before Model.core_num: the count only in the echoed
  // compiler options, or in CORE_NUM.
  Edit legacy(nv12());
  openbpu::model::set_metadata(&legacy.model(), "hbdk_pass_through_params", "--O3 --core-num 3");
  EXPECT_TRUE(Rejected(legacy.finish(), HB_DNN_INCOMPATIBLE_MODEL, "compiled for 3 BPU cores"));
  Edit e(nv12());
  openbpu::model::set_metadata(&e.model(), "CORE_NUM", "4");
  EXPECT_TRUE(Rejected(e.finish(), HB_DNN_INCOMPATIBLE_MODEL, "compiled for 4 BPU cores"));
  // The typed field.
  Edit typed(nv12());
  typed.model().core_num = 3;
  EXPECT_TRUE(Rejected(typed.finish(), HB_DNN_INCOMPATIBLE_MODEL, "compiled for 3 BPU cores"));
  Edit zero(nv12());
  zero.model().core_num = 0;
  EXPECT_TRUE(Rejected(zero.finish(), HB_DNN_INVALID_MODEL, "core_num 0"));
  // core_num 2 fits bernoulli2.
  openbpu::testing::Nv12Classifier two;
  two.core_num = 2;
  EXPECT_TRUE(Loads(two.build()));
}

// Declared tensor sizes beyond what the host can allocate (1 TiB of staging
// copies): HB_DNN_OUT_OF_MEMORY at load, instead of the OOM killer when the
// simulator zero-fills the task memory at the first hbDNNInfer.
TEST(LoaderReject, TaskMemoryAboveTheHostIsOutOfMemory) {
  EXPECT_TRUE(Rejected(kb::task_memory_above_the_host(), HB_DNN_OUT_OF_MEMORY, "bytes of task memory"));
}

// ===========================================================================
// BPU programs: raw instruction records (codec.h: u16 opcode, u16 reserved,
// u32 payload size, payload).

TEST(LoaderReject, RawInstructionRecords) {
  const Bytes code = Edit(tiny()).code();
  ASSERT_GT(code.size(), 16u);
  const uint32_t len0 = static_cast<uint32_t>(get_le(code, 4, 4));
  const size_t second = 8 + len0;  // start of record 1
  auto patched = [&](size_t at, uint64_t v, int n) {
    return [=](Edit& e) {
      Bytes c = code;
      put_le(&c, at, v, n);
      e.set_code(c);
    };
  };
  auto resized = [&](size_t size) {
    return [=](Edit& e) {
      Bytes c = code;
      c.resize(size, 0);
      e.set_code(c);
    };
  };
  const int32_t bad = HB_DNN_INVALID_MODEL;
  run_cases(tiny(), {
      {"unknown opcode", patched(0, 0xBEEF, 2), bad, "instruction 0: unknown opcode 48879"},
      {"opcode 0", patched(second, 0, 2), bad, "instruction 1: unknown opcode 0"},
      {"reserved field", patched(2, 1, 2), bad, "instruction 0: reserved field is not zero"},
      {"payload one byte short", patched(4, len0 - 1, 4), bad, "instruction 0: truncated instruction"},
      {"payload one byte long", patched(4, len0 + 1, 4), bad,
       "instruction 0: payload size does not match the opcode's layout"},
      {"payload size 2^32-1", patched(4, 0xFFFFFFFFu, 4), bad,
       "instruction 0: payload runs past the end of the program"},
      {"payload size 0", patched(4, 0, 4), bad, "instruction 0: truncated instruction"},
      {"region 0", patched(8, 0, 1), bad, "bad enum value 0"},
      {"region 5", patched(8, 5, 1), bad, "bad enum value 5"},
      {"region 255", patched(8, 255, 1), bad, "bad enum value 255"},
      {"dtype 0", patched(9, 0, 1), bad, "bad enum value 0"},
      {"dtype 5", patched(9, 5, 1), bad, "bad enum value 5"},
      {"trailing 1 byte", resized(code.size() + 1), bad, "truncated record header"},
      {"trailing 7 bytes", resized(code.size() + 7), bad, "truncated record header"},
      {"a zero record header", resized(code.size() + 8), bad, "unknown opcode 0"},
  });
  // Every truncation of the program: a record cut anywhere is an error (a cut
  // at a record boundary leaves fewer instructions than the fcs cover).
  for (size_t len = 1; len < code.size(); ++len) {
    Edit e(tiny());
    e.set_code(Bytes(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(len)));
    EXPECT_TRUE(Rejected(e.finish(), bad, "BPU segment 'TINY_subgraph_0'")) << "code length " << len;
  }
}

// ===========================================================================
// BPU programs: decoded instructions of TinyCnn
//   [0] Conv  kInput0 (1,8,8,3) int8 -> scratch (1,8,8,8) int8, 3x3 pad 1
//   [1] Pool  scratch -> scratch (1,4,4,8), max 2x2/2
//   [2] Conv  scratch -> kOutput0 (1,4,4,4) int32, 1x1

using Program = std::vector<isa::Instruction>;

std::function<void(Edit&)> instr(std::function<void(Program&)> f) {
  return [=](Edit& e) {
    Program p = e.program();
    f(p);
    e.set_program(p);
  };
}
isa::Conv& conv(Program& p, size_t i) { return std::get<isa::Conv>(p[i].body); }
isa::Pool& pool(Program& p) { return std::get<isa::Pool>(p[1].body); }

TEST(LoaderReject, ConvInstructionFields) {
  const int32_t bad = HB_DNN_INVALID_MODEL;
  using isa::Region;
  run_cases(tiny(), {
      {"input buffer 3", instr([](Program& p) { conv(p, 0).in.index = 3; }), bad,
       "input refers to buffer index 3 that is not bound"},
      {"input buffer 65535", instr([](Program& p) { conv(p, 0).in.index = 65535; }), bad,
       "refers to buffer index 65535 that is not bound"},
      {"output buffer 1", instr([](Program& p) { conv(p, 2).out.index = 1; }), bad,
       "output refers to buffer index 1 that is not bound"},
      {"input from output region 2",
       instr([](Program& p) {
         conv(p, 0).in.region = Region::kOutput;
         conv(p, 0).in.index = 2;
       }),
       bad, "not bound"},
      {"output offset 2^40", instr([](Program& p) { conv(p, 0).out.offset = 1ull << 40; }), bad,
       "output runs past the end of its region"},
      {"output offset 2^64-1", instr([](Program& p) { conv(p, 2).out.offset = kU64Max; }), bad,
       "output runs past the end of its region"},
      {"input offset one element too far", instr([](Program& p) { conv(p, 0).in.offset += 8; }), bad,
       "input runs past the end of its region"},
      {"dimension 0", instr([](Program& p) { conv(p, 0).in.dims[1] = 0; }), bad,
       "input dimension 1 out of range (0)"},
      {"dimension -5", instr([](Program& p) { conv(p, 0).out.dims[2] = -5; }), bad,
       "output dimension 2 out of range (-5)"},
      {"dimension 2^25", instr([](Program& p) { conv(p, 0).in.dims[0] = 1 << 25; }), bad,
       "input dimension 0 out of range"},
      {"dimension 2^31-1", instr([](Program& p) { conv(p, 0).in.dims[4] = 0x7FFFFFFF; }), bad,
       "input dimension 4 out of range"},
      {"stride -1", instr([](Program& p) { conv(p, 0).in.strides[1] = -1; }), bad,
       "input stride 1 out of range"},
      {"stride 2^41", instr([](Program& p) { conv(p, 0).in.strides[2] = int64_t{1} << 41; }), bad,
       "input stride 2 out of range"},
      {"strides reach past the region", instr([](Program& p) { conv(p, 0).in.strides[1] = 4096; }), bad,
       "input runs past the end of its region"},
      {"writes the input region", instr([](Program& p) { conv(p, 0).out = conv(p, 0).in; }), bad,
       "output writes to a read-only region"},
      {"writes the constants",
       instr([](Program& p) {
         conv(p, 0).out.region = Region::kConst;
         conv(p, 0).out.offset = 0;
       }),
       bad, "output writes to a read-only region"},
      {"5-D input", instr([](Program& p) { conv(p, 0).in.dims[4] = 2; }), bad, "input must be 4-D (NHWC)"},
      {"uint8 input", instr([](Program& p) { conv(p, 0).in.dtype = isa::DType::kUInt8; }), bad,
       "input has unsupported data type uint8"},
      {"uint8 output", instr([](Program& p) { conv(p, 0).out.dtype = isa::DType::kUInt8; }), bad,
       "output has unsupported data type uint8"},
      {"output height off by one", instr([](Program& p) { conv(p, 0).out.dims[1] = 7; }), bad,
       "does not match the window arithmetic"},
      {"stride inconsistent with the output", instr([](Program& p) { conv(p, 0).stride_w = 2; }), bad,
       "does not match the window arithmetic"},
      {"kernel larger than the input", instr([](Program& p) { conv(p, 2).kernel_h = 9; }), bad,
       "kernel larger than the padded input"},
      {"batch differs", instr([](Program& p) { conv(p, 0).out.dims[0] = 2; }), bad,
       "runs past the end of its region"},
      {"kernel 0", instr([](Program& p) { conv(p, 0).kernel_h = 0; }), bad, "kernel h out of range 1..255"},
      {"kernel 256", instr([](Program& p) { conv(p, 0).kernel_w = 256; }), bad,
       "kernel w out of range 1..255"},
      {"stride 0", instr([](Program& p) { conv(p, 0).stride_h = 0; }), bad, "stride h out of range 1..255"},
      {"dilation 0", instr([](Program& p) { conv(p, 0).dilation_w = 0; }), bad,
       "dilation w out of range 1..255"},
      {"dilation -1", instr([](Program& p) { conv(p, 0).dilation_h = -1; }), bad,
       "dilation h out of range"},
      {"padding -1", instr([](Program& p) { conv(p, 0).pad_top = -1; }), bad, "padding h out of range"},
      {"padding 2^31-1", instr([](Program& p) { conv(p, 0).pad_right = 0x7FFFFFFF; }), bad,
       "padding w out of range"},
      {"groups 0", instr([](Program& p) { conv(p, 0).groups = 0; }), bad,
       "groups 0 do not divide the channel counts"},
      {"groups -3", instr([](Program& p) { conv(p, 0).groups = -3; }), bad,
       "groups -3 do not divide the channel counts"},
      {"groups 2 of 3 channels", instr([](Program& p) { conv(p, 0).groups = 2; }), bad,
       "groups 2 do not divide the channel counts"},
      {"weights one short", instr([](Program& p) { conv(p, 0).weight.count -= 1; }), bad,
       "weight has 215 entries, expected 216"},
      {"weights past the constants", instr([](Program& p) { conv(p, 0).weight.offset = 1ull << 20; }),
       bad, "weight runs past the end of the constant region"},
      {"weights at 2^64-1", instr([](Program& p) { conv(p, 0).weight.offset = kU64Max; }), bad,
       "weight runs past the end of the constant region"},
      {"bias count", instr([](Program& p) { conv(p, 0).bias.count = 7; }), bad,
       "bias has 7 entries, expected 8"},
      {"bias past the constants", instr([](Program& p) { conv(p, 0).bias.offset = kU64Max - 3; }), bad,
       "bias runs past the end of the constant region"},
      {"no multipliers", instr([](Program& p) { conv(p, 0).multiplier.count = 0; }), bad,
       "multiplier has 0 entries, expected 8"},
      {"shift count", instr([](Program& p) { conv(p, 0).shift.count = 9; }), bad,
       "shift has 9 entries, expected 8"},
      {"activation bounds reversed",
       instr([](Program& p) {
         conv(p, 0).act_min = 100;
         conv(p, 0).act_max = 50;
       }),
       bad, "activation bounds [100, 50] invalid"},
      {"activation bound beyond int8", instr([](Program& p) { conv(p, 0).act_max = 128; }), bad,
       "invalid for the output type"},
      {"residual on an int32 output", instr([](Program& p) { conv(p, 2).has_residual = 1; }), bad,
       "int32 output cannot take a residual input"},
      {"residual from an unbound buffer",
       instr([](Program& p) {
         auto& c = conv(p, 0);
         c.has_residual = 1;
         c.residual = c.out;
         c.residual.region = isa::Region::kInput;
         c.residual.index = 7;
         c.residual_multiplier = c.multiplier;
       }),
       bad, "residual refers to buffer index 7 that is not bound"},
      {"residual of other dimensions",
       instr([](Program& p) {
         auto& c = conv(p, 0);
         c.has_residual = 1;
         c.residual = conv(p, 2).in;  // the pooled tensor: other dims
       }),
       bad, "residual and output: dimensions differ"},
  });
}

TEST(LoaderReject, PoolInstructionFields) {
  const int32_t bad = HB_DNN_INVALID_MODEL;
  run_cases(tiny(), {
      {"shift 64", instr([](Program& p) { pool(p).shift = 64; }), bad, "pool shift 64 out of range 0..63"},
      {"shift -1", instr([](Program& p) { pool(p).shift = -1; }), bad, "pool shift -1 out of range"},
      {"multiplier 0", instr([](Program& p) { pool(p).multiplier = 0; }), bad,
       "pool multiplier must be positive"},
      {"multiplier -1", instr([](Program& p) { pool(p).multiplier = -1; }), bad,
       "pool multiplier must be positive"},
      {"avg shift 41",
       instr([](Program& p) {
         pool(p).kind = isa::PoolKind::kAvg;
         pool(p).shift = 41;
       }),
       bad, "pool shift 41 out of range 0..40"},
      {"kernel 0", instr([](Program& p) { pool(p).kernel_w = 0; }), bad, "pool kernel out of range"},
      {"kernel area 2^22", instr([](Program& p) { pool(p).kernel_h = pool(p).kernel_w = 2048; }), bad,
       "pool kernel out of range"},
      {"stride 0", instr([](Program& p) { pool(p).stride_h = 0; }), bad, "pool stride/dilation out of range"},
      {"dilation 256", instr([](Program& p) { pool(p).dilation_w = 256; }), bad,
       "pool stride/dilation out of range"},
      {"padding -1", instr([](Program& p) { pool(p).pad_left = -1; }), bad, "pool padding out of range"},
      {"padding 4097", instr([](Program& p) { pool(p).pad_bottom = 4097; }), bad, "pool padding out of range"},
      {"channels differ", instr([](Program& p) { pool(p).out.dims[3] = 4; }), bad,
       "differ in batch or channels"},
      {"window arithmetic", instr([](Program& p) { pool(p).out.dims[2] = 3; }), bad,
       "pool output size does not match the window arithmetic"},
      {"kernel larger than the input", instr([](Program& p) { pool(p).kernel_h = 9; }), bad,
       "pool kernel larger than the padded input"},
      {"in place", instr([](Program& p) { pool(p).out = pool(p).in; }), bad, "output overlaps input"},
      {"activation bounds", instr([](Program& p) { pool(p).act_min = -129; }), bad,
       "invalid for the output type"},
      {"uint8 output", instr([](Program& p) { pool(p).out.dtype = isa::DType::kUInt8; }), bad,
       "output has unsupported data type uint8"},
      {"kind 3 (bad enum)", instr([](Program& p) { pool(p).kind = static_cast<isa::PoolKind>(3); }), bad,
       "bad enum value 3"},
      {"opcode and payload disagree", instr([](Program& p) { p[1].opcode = isa::Opcode::kEltwise; }), bad,
       "instruction 1"},
  });
}

// Multipliers and shifts of a conv live in the constant blob; their values
// are checked, not only their ranges.
TEST(LoaderReject, RequantizationConstants) {
  Edit probe(tiny());
  const isa::Conv c0 = std::get<isa::Conv>(probe.program()[0].body);
  const Bytes consts = probe.constants();
  auto patched = [&](uint64_t at, int64_t v, int n) {
    return [=](Edit& e) {
      Bytes c = consts;
      put_le(&c, at, static_cast<uint64_t>(v), n);
      e.set_constants(c);
    };
  };
  const int32_t bad = HB_DNN_INVALID_MODEL;
  run_cases(tiny(), {
      {"shift 64", patched(c0.shift.offset + 3, 64, 1), bad, "conv shift 64 out of range 0..63"},
      {"shift 127", patched(c0.shift.offset, 127, 1), bad, "conv shift 127 out of range"},
      {"shift -1", patched(c0.shift.offset + 7, -1, 1), bad, "conv shift -1 out of range"},
      {"multiplier 0", patched(c0.multiplier.offset, 0, 4), bad, "conv multiplier must be positive"},
      {"multiplier -1", patched(c0.multiplier.offset + 4, -1, 4), bad, "conv multiplier must be positive"},
      {"multiplier INT32_MIN", patched(c0.multiplier.offset + 28, std::numeric_limits<int32_t>::min(), 4),
       bad, "conv multiplier must be positive"},
      {"bias overflowing the accumulator",
       patched(c0.bias.offset + 8, std::numeric_limits<int32_t>::max(), 4), bad,
       "can overflow the int32 accumulator"},
      {"constant blob cut before the shifts",
       [&](Edit& e) { e.set_constants(Bytes(consts.begin(), consts.begin() + c0.shift.offset)); }, bad,
       "runs past the end of the constant region"},
  });
}

// ===========================================================================
// The other instruction kinds, appended to TinyCnn's program in 4 KiB of
// extra scratch. Each op first loads as built (the baseline), then one field
// at a time is broken.

class AppendedOp {
 public:
  AppendedOp() {
    Edit e(tiny());
    base_ = (e.bpu().scratch_size + 63) / 64 * 64;
    const_size_ = e.bpu().constants->size();
    c0_ = std::get<isa::Conv>(e.program()[0].body);
  }
  // A dense int8 view [1, h, w, c] at `at` bytes into the extra scratch.
  isa::TensorRef view(uint64_t at, int h, int w, int c, isa::DType t = isa::DType::kInt8) const {
    isa::TensorRef r;
    r.region = isa::Region::kScratch;
    r.dtype = t;
    r.offset = base_ + at;
    r.dims[0] = 1, r.dims[1] = h, r.dims[2] = w, r.dims[3] = c;
    r.strides[3] = 1, r.strides[2] = c, r.strides[1] = int64_t{w} * c, r.strides[0] = int64_t{h} * w * c;
    return r;
  }
  const isa::Conv& conv0() const { return c0_; }
  uint64_t const_size() const { return const_size_; }

  // Edit appending `ins` (after `mutate`) as a 4th instruction.
  template <class Body>
  std::function<void(Edit&)> append(isa::Opcode op, Body body, std::function<void(Body&)> mutate) const {
    return [=](Edit& e) {
      Body b = body;
      if (mutate) mutate(b);
      Program p = e.program();
      p.push_back(isa::Instruction{op, b});
      e.bpu().scratch_size = base_ + 4096;
      e.set_program(p, /*refit=*/true);
    };
  }

  // Runs the baseline (must load) and each mutation (must be rejected).
  template <class Body>
  void check(const char* what, isa::Opcode op, const Body& body,
             const std::vector<std::pair<std::string, std::pair<std::function<void(Body&)>, std::string>>>&
                 mutations) const {
    {
      Edit e(tiny());
      append<Body>(op, body, nullptr)(e);
      EXPECT_TRUE(Loads(e.finish())) << what << " baseline";
    }
    std::vector<Case> cases;
    for (const auto& [name, m] : mutations)
      cases.push_back({std::string(what) + ": " + name, append<Body>(op, body, m.first),
                       HB_DNN_INVALID_MODEL, m.second});
    run_cases(tiny(), cases);
  }

 private:
  uint64_t base_ = 0, const_size_ = 0;
  isa::Conv c0_;
};

template <class Body>
using Mutations = std::vector<std::pair<std::string, std::pair<std::function<void(Body&)>, std::string>>>;

TEST(LoaderReject, FillInstruction) {
  AppendedOp a;
  isa::Fill f;
  f.out = a.view(0, 4, 4, 8);
  f.value = 7;
  a.check<isa::Fill>("Fill", isa::Opcode::kFill, f, Mutations<isa::Fill>{
      {"uint8", {[](isa::Fill& b) { b.out.dtype = isa::DType::kUInt8; }, "output has unsupported data type"}},
      {"into the constants", {[](isa::Fill& b) { b.out.region = isa::Region::kConst; }, "read-only region"}},
      {"past the scratch", {[](isa::Fill& b) { b.out.offset += 4096; }, "runs past the end of its region"}},
      {"6-D past the scratch", {[](isa::Fill& b) { b.out.dims[5] = 2, b.out.strides[5] = 4096; },
                                "runs past the end of its region"}},
      {"2^36 elements", {[](isa::Fill& b) { b.out.dims[0] = b.out.dims[1] = b.out.dims[2] = 1 << 12,
                                            b.out.strides[0] = b.out.strides[1] = b.out.strides[2] = 0; },
                         "has too many elements"}},
  });
}

TEST(LoaderReject, MoveInstruction) {
  AppendedOp a;
  isa::Move m;
  m.in = a.view(0, 4, 4, 8);
  m.out = a.view(1024, 4, 4, 8, isa::DType::kInt32);
  a.check<isa::Move>("Move", isa::Opcode::kMove, m, Mutations<isa::Move>{
      {"dims differ", {[](isa::Move& b) { b.out.dims[1] = 2; }, "input and output: dimensions differ"}},
      {"requantize 2", {[](isa::Move& b) { b.requantize = 2; }, "bad requantize flag"}},
      {"shift 64", {[](isa::Move& b) { b.requantize = 1, b.shift = 64; }, "move shift 64 out of range"}},
      {"multiplier 0", {[](isa::Move& b) { b.requantize = 1, b.multiplier = 0; },
                        "move multiplier must be positive"}},
      {"partial overlap", {[](isa::Move& b) { b.out = b.in, b.out.offset += 1; },
                           "output partially overlaps input"}},
      {"uint8 output", {[](isa::Move& b) { b.out.dtype = isa::DType::kUInt8; }, "unsupported data type"}},
  });
}

TEST(LoaderReject, EltwiseInstruction) {
  AppendedOp a;
  isa::Eltwise e;
  e.a = a.view(0, 4, 4, 8);
  e.b = a.view(256, 4, 4, 8);
  e.out = a.view(512, 4, 4, 8);
  a.check<isa::Eltwise>("Eltwise", isa::Opcode::kEltwise, e, Mutations<isa::Eltwise>{
      {"kind 6", {[](isa::Eltwise& b) { b.kind = static_cast<isa::EltwiseKind>(6); }, "bad enum value 6"}},
      {"shift 64", {[](isa::Eltwise& b) { b.shift = 64; }, "eltwise shift 64 out of range"}},
      {"multiplier b 0", {[](isa::Eltwise& b) { b.multiplier_b = 0; }, "eltwise multiplier must be positive"}},
      {"multiplier a -7", {[](isa::Eltwise& b) { b.multiplier_a = -7; }, "eltwise multiplier must be positive"}},
      {"partial overlap", {[](isa::Eltwise& b) { b.out = b.a, b.out.offset += 8; },
                           "output partially overlaps an input"}},
      {"int32 input", {[](isa::Eltwise& b) { b.a.dtype = isa::DType::kInt32; }, "input a has unsupported"}},
      {"dims differ", {[](isa::Eltwise& b) { b.b.dims[3] = 4; }, "input b and output: dimensions differ"}},
      {"activation", {[](isa::Eltwise& b) { b.act_min = 1, b.act_max = 0; }, "activation bounds"}},
  });
}

TEST(LoaderReject, LutInstruction) {
  AppendedOp a;
  ASSERT_GE(a.const_size(), 256u);
  isa::Lut l;
  l.in = a.view(0, 4, 4, 8);
  l.out = a.view(256, 4, 4, 8);
  l.table = isa::ConstRef{0, 256};
  a.check<isa::Lut>("Lut", isa::Opcode::kLut, l, Mutations<isa::Lut>{
      {"255 entries", {[](isa::Lut& b) { b.table.count = 255; }, "table has 255 entries, expected 256"}},
      {"int16 input needs 513", {[](isa::Lut& b) { b.in.dtype = isa::DType::kInt16; },
                                 "table has 256 entries, expected 513"}},
      {"table past the constants", {[=](isa::Lut& b) { b.table.offset = a.const_size() - 255; },
                                    "table runs past the end of the constant region"}},
      {"partial overlap", {[](isa::Lut& b) { b.out = b.in, b.out.offset += 1; },
                           "output partially overlaps input"}},
  });
}

TEST(LoaderReject, ResizeInstruction) {
  AppendedOp a;
  isa::Resize r;
  r.in = a.view(0, 2, 2, 8);
  r.out = a.view(64, 4, 4, 8);
  r.y_step = r.x_step = 1 << 15;
  a.check<isa::Resize>("Resize", isa::Opcode::kResize, r, Mutations<isa::Resize>{
      {"mode 3", {[](isa::Resize& b) { b.mode = static_cast<isa::ResizeMode>(3); }, "bad enum value 3"}},
      {"negative step", {[](isa::Resize& b) { b.y_step = -1; }, "resize coordinates out of range"}},
      {"start 2^41", {[](isa::Resize& b) { b.x_start = int64_t{1} << 41; }, "resize coordinates out of range"}},
      {"round bias 65536", {[](isa::Resize& b) { b.round_bias = 65536; }, "resize coordinates out of range"}},
      {"nearest shift 64", {[](isa::Resize& b) { b.shift = 64; }, "resize shift 64 out of range 0..63"}},
      {"bilinear shift 56", {[](isa::Resize& b) { b.mode = isa::ResizeMode::kBilinear, b.shift = 56; },
                             "resize shift 56 out of range 0..55"}},
      {"multiplier 0", {[](isa::Resize& b) { b.multiplier = 0; }, "resize multiplier must be positive"}},
      {"channels differ", {[](isa::Resize& b) { b.out.dims[3] = 4; }, "differ in batch or channels"}},
  });
}

TEST(LoaderReject, ArgMaxInstruction) {
  AppendedOp a;
  isa::ArgMax m;
  m.in = a.view(0, 4, 4, 8);
  m.out = a.view(1024, 4, 4, 1, isa::DType::kInt32);
  a.check<isa::ArgMax>("ArgMax", isa::Opcode::kArgMax, m, Mutations<isa::ArgMax>{
      {"int8 output", {[](isa::ArgMax& b) { b.out.dtype = isa::DType::kInt8; }, "output has unsupported"}},
      {"65 channels", {[](isa::ArgMax& b) { b.in.dims[3] = 65, b.in.strides[2] = 65; },
                       "argmax over more than 64 channels"}},
      {"2 output channels", {[](isa::ArgMax& b) { b.out.dims[3] = 2; }, "must be [N, H, W, 1]"}},
      {"height differs", {[](isa::ArgMax& b) { b.out.dims[1] = 2; }, "must be [N, H, W, 1]"}},
  });
}

TEST(LoaderReject, DeconvInstruction) {
  AppendedOp a;
  // 2x2 stride 2 transposed conv 8 -> 8 channels, 2x2 -> 4x4, reusing the
  // first conv's 8 multipliers and shifts; weights from the constants' start.
  isa::Conv d;
  d.in = a.view(0, 2, 2, 8);
  d.out = a.view(64, 4, 4, 8);
  d.kernel_h = d.kernel_w = 2;
  d.stride_h = d.stride_w = 2;
  d.weight = isa::ConstRef{0, 8 * 2 * 2 * 8};
  d.multiplier = a.conv0().multiplier;
  d.shift = a.conv0().shift;
  a.check<isa::Conv>("Deconv", isa::Opcode::kDeconv, d, Mutations<isa::Conv>{
      {"padding below -(stride-1)", {[](isa::Conv& b) { b.pad_bottom = -2; }, "padding h out of range"}},
      {"window arithmetic", {[](isa::Conv& b) { b.out.dims[2] = 5; }, "does not match the window arithmetic"}},
      {"weight count", {[](isa::Conv& b) { b.weight.count = 128; }, "weight has 128 entries, expected 256"}},
  });
}

// The march's operator limits (bpu_sim/isa/march.h): the tiny model is a
// bernoulli2 model (dilation <= 16, no int16), so a structurally valid
// instruction beyond them is rejected.
TEST(LoaderReject, MarchLimits) {
  AppendedOp a;
  // 2x2 kernel with dilation 16 over 17x17: one output pixel, 8 -> 8 channels.
  isa::Conv c;
  c.in = a.view(0, 17, 17, 8);
  c.out = a.view(3072, 1, 1, 8);
  c.kernel_h = c.kernel_w = 2;
  c.dilation_h = c.dilation_w = 16;
  c.weight = isa::ConstRef{0, 8 * 2 * 2 * 8};
  c.multiplier = a.conv0().multiplier;
  c.shift = a.conv0().shift;
  a.check<isa::Conv>("Conv on bernoulli2", isa::Opcode::kConv, c, Mutations<isa::Conv>{
      {"dilation 17", {[](isa::Conv& b) {
                         b.dilation_h = b.dilation_w = 17;
                         b.in.dims[1] = b.in.dims[2] = 18;
                         b.in.strides[1] = 18 * 8, b.in.strides[0] = 18 * 18 * 8;
                       },
                       "dilation 17 exceeds 16 on bernoulli2"}},
      {"int16 output", {[](isa::Conv& b) { b.out.dtype = isa::DType::kInt16; },
                        "int16 tensors are not supported on bernoulli2"}},
  });
}

TEST(LoaderReject, PreprocessInstruction) {
  AppendedOp a;
  // RGB -> BGR of a 4x4 uint8 image read from the model's BPU input buffer
  // (tensor data_quantized, 512 bytes).
  isa::Preprocess p;
  p.in = a.view(0, 4, 4, 3, isa::DType::kUInt8);
  p.in.region = isa::Region::kInput;
  p.in.offset = 0;
  p.out = a.view(0, 4, 4, 3);
  p.src_format = isa::ImageFormat::kRGB;
  p.dst_format = isa::ImageFormat::kBGR;
  a.check<isa::Preprocess>("Preprocess", isa::Opcode::kPreprocess, p, Mutations<isa::Preprocess>{
      {"rgb to gray", {[](isa::Preprocess& b) { b.dst_format = isa::ImageFormat::kGray; },
                       "unsupported colour conversion"}},
      {"format 6", {[](isa::Preprocess& b) { b.src_format = static_cast<isa::ImageFormat>(6); },
                    "bad enum value 6"}},
      {"4 output channels", {[](isa::Preprocess& b) { b.out.dims[3] = 4; }, "channel count does not match"}},
      {"planar 2", {[](isa::Preprocess& b) { b.src_planar = 2; }, "planar layout only"}},
      {"range 3", {[](isa::Preprocess& b) { b.range = static_cast<isa::ColorRange>(3); }, "bad enum value 3"}},
      {"int8 input", {[](isa::Preprocess& b) { b.in.dtype = isa::DType::kInt8; }, "input has unsupported"}},
      {"input past the buffer", {[](isa::Preprocess& b) { b.in.offset = 512 - 47; },
                                 "input runs past the end of its region"}},
      {"nv12 odd width",
       {[](isa::Preprocess& b) {
          b.src_format = isa::ImageFormat::kNV12;
          b.in.dims[2] = 3, b.in.dims[3] = 1, b.in.strides[2] = 1, b.in.strides[1] = 3;
          b.out.dims[2] = 3;
          b.uv_row_stride = 4;
          b.uv_offset = 16;
        },
        "nv12 input has an odd size"}},
      {"nv12 uv stride below the width",
       {[](isa::Preprocess& b) {
          b.src_format = isa::ImageFormat::kNV12;
          b.in.dims[3] = 1, b.in.strides[2] = 1, b.in.strides[1] = 4;
          b.uv_row_stride = 3;
          b.uv_offset = 16;
        },
        "nv12 UV row stride out of range"}},
      {"nv12 uv plane past the buffer",
       {[](isa::Preprocess& b) {
          b.src_format = isa::ImageFormat::kNV12;
          b.in.dims[3] = 1, b.in.strides[2] = 1, b.in.strides[1] = 4;
          b.uv_row_stride = 4;
          b.uv_offset = 505;
        },
        "nv12 UV plane runs past the end of its region"}},
      {"nv12 uv offset 2^63",
       {[](isa::Preprocess& b) {
          b.src_format = isa::ImageFormat::kNV12;
          b.in.dims[3] = 1, b.in.strides[2] = 1, b.in.strides[1] = 4;
          b.uv_row_stride = 4;
          b.uv_offset = 1ull << 63;
        },
        "nv12 UV plane runs past the end of its region"}},
  });
}

// ===========================================================================
// Findings (docs/robustness.md, "Fixed findings"): models the loader used to
// accept although running them read or wrote outside a buffer, or had
// undefined behaviour. Each test states the expected rejection; should a model
// load again it also runs one inference with exact-size buffers, so that an
// ASan build shows the memory error.

// Runs model 0 of `bytes` once with zero-filled, malloc'ed buffers of the
// smallest size hbDNNInfer accepts (tight planes for NV12/Y inputs, with
// alignedShape = validShape; alignedByteSize otherwise), so that ASan sees
// every access past them. Returns the code of hbDNNInfer, else of
// hbDNNWaitTaskDone.
int32_t run_with_exact_buffers(const Bytes& bytes) {
  hbPackedDNNHandle_t pack = nullptr;
  const void* data = bytes.data();
  int32_t len = static_cast<int32_t>(bytes.size());
  int32_t rc = hbDNNInitializeFromDDR(&pack, &data, &len, 1);
  EXPECT_EQ(rc, HB_DNN_SUCCESS);
  if (rc != HB_DNN_SUCCESS) return rc;
  const char** names = nullptr;
  int32_t count = 0;
  hbDNNHandle_t h = nullptr;
  EXPECT_EQ(hbDNNGetModelNameList(&names, &count, pack), HB_DNN_SUCCESS);
  EXPECT_EQ(hbDNNGetModelHandle(&h, pack, names[0]), HB_DNN_SUCCESS);
  int32_t nin = 0, nout = 0;
  EXPECT_EQ(hbDNNGetInputCount(&nin, h), HB_DNN_SUCCESS);
  EXPECT_EQ(hbDNNGetOutputCount(&nout, h), HB_DNN_SUCCESS);
  std::vector<hbDNNTensor> in(static_cast<size_t>(nin)), out(static_cast<size_t>(nout));
  auto fill = [](hbDNNTensor* t, size_t size) {
    t->sysMem[0].virAddr = std::calloc(size, 1);
    t->sysMem[0].phyAddr = reinterpret_cast<uintptr_t>(t->sysMem[0].virAddr);
    t->sysMem[0].memSize = static_cast<uint32_t>(size);
  };
  for (int32_t i = 0; i < nin; ++i) {
    hbDNNTensor& t = in[static_cast<size_t>(i)];
    EXPECT_EQ(hbDNNGetInputTensorProperties(&t.properties, h, i), HB_DNN_SUCCESS);
    const int32_t type = t.properties.tensorType;
    if (type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_Y) {
      t.properties.alignedShape = t.properties.validShape;
      const int32_t* d = t.properties.validShape.dimensionSize;
      const bool nhwc = t.properties.tensorLayout == HB_DNN_LAYOUT_NHWC;
      const size_t hw = static_cast<size_t>(nhwc ? d[1] : d[2]) * static_cast<size_t>(nhwc ? d[2] : d[3]);
      fill(&t, type == HB_DNN_IMG_TYPE_NV12 ? hw * 3 / 2 : hw);
    } else {
      fill(&t, static_cast<size_t>(t.properties.alignedByteSize));
    }
  }
  for (int32_t i = 0; i < nout; ++i) {
    hbDNNTensor& t = out[static_cast<size_t>(i)];
    EXPECT_EQ(hbDNNGetOutputTensorProperties(&t.properties, h, i), HB_DNN_SUCCESS);
    fill(&t, static_cast<size_t>(t.properties.alignedByteSize));
  }
  hbDNNTaskHandle_t task = nullptr;
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  hbDNNTensor* outp = out.data();
  rc = hbDNNInfer(&task, &outp, in.data(), h, &param);
  if (rc == HB_DNN_SUCCESS) {
    rc = hbDNNWaitTaskDone(task, 0);
    EXPECT_EQ(hbDNNReleaseTask(task), HB_DNN_SUCCESS);
  }
  for (auto& t : in) std::free(t.sysMem[0].virAddr);
  for (auto& t : out) std::free(t.sysMem[0].virAddr);
  EXPECT_EQ(hbDNNRelease(pack), HB_DNN_SUCCESS);
  return rc;
}

void expect_rejected_else_run(const Bytes& bytes, int32_t code, const std::string& needle) {
  const Outcome o = load_ddr(bytes);
  EXPECT_TRUE(check(o, code, needle));
  if (o.rc == HB_DNN_SUCCESS) run_with_exact_buffers(bytes);
}

// Finding 1: a CPU operator read an NV12 (or Y) tensor as if it were dense:
// (1,3,32,32) NV12 holds 1536 bytes, Identity read 3072 from the caller's
// buffer. CPU segments over NV12/Y tensors are rejected (schema/verify.cc),
// and so are NV12/Y model outputs (copied out as dense tensors).
TEST(LoaderReject, CpuOperatorOnAnNv12InputIsRejected) {
  expect_rejected_else_run(kb::cpu_op_reads_nv12_input(), HB_DNN_INVALID_MODEL,
                           "segment 0 'image_copy' (Identity): input 0 is tensor 0 'data', an NV12/Y image");
  Edit out(nv12());
  out.model().outputs[0]->tensor = 0;
  EXPECT_TRUE(Rejected(out.finish(), HB_DNN_INVALID_MODEL, "output 0: tensor 0 'data' is an NV12/Y image"));
  Edit y(nv12());
  y.tensor(0).data_type = fb::DataType::IMG_Y;
  y.model().tensors.push_back(openbpu::testing::dense_tensor("image_u8", fb::DataType::U8, 1, {1, 3, 32, 32}));
  y.model().segments.push_back(openbpu::testing::cpu_segment("image_copy", "", "Identity", {0}, {4}));
  EXPECT_TRUE(Rejected(y.finish(), HB_DNN_INVALID_MODEL, "'image_copy' (Identity): input 0"));
}

// Finding 2: image types were exempt from "alignedByteSize covers the
// aligned shape" (schema/verify.cc), but RGB/BGR/YUV444 tensors are dense
// and CPU operators and staging copies read them so: a (1,3,8,8) RGB input
// with alignedByteSize 1 was accepted, and Quantize read 192 bytes from a
// 1-byte buffer. Only NV12/Y keep their own size rule.
TEST(LoaderReject, ImageTensorSmallerThanItsShapeIsRejected) {
  expect_rejected_else_run(kb::image_tensor_smaller_than_shape(), HB_DNN_INVALID_MODEL,
                           "aligned byte size smaller than the aligned shape");
  for (fb::DataType t : {fb::DataType::IMG_BGR, fb::DataType::IMG_YUV444}) {
    Edit e(tiny());
    e.tensor(0).data_type = t;
    e.tensor(0).strides.clear();
    e.tensor(0).aligned_byte_size = 191;
    EXPECT_TRUE(Rejected(e.finish(), HB_DNN_INVALID_MODEL, "aligned byte size smaller than the aligned shape"));
  }
}

// Finding 3: strides were checked one dimension at a time
// ((aligned[d]-1)*stride[d] + esize <= alignedByteSize), not their sum: the
// (1,4,4,4) F32 output with strides (256,84,84,84) passed, and its last
// element lies at byte 756 of a 256-byte buffer, where Dequantize wrote.
TEST(LoaderReject, StridesWhoseSumRunsPastTheTensorAreRejected) {
  expect_rejected_else_run(kb::strides_sum_past_tensor(), HB_DNN_INVALID_MODEL,
                           "strides run past the aligned byte size (last element at byte 756 of 256)");
  // Dense strides end exactly at the last byte; one more byte is too many.
  Edit ok(tiny());
  ok.tensor(3).strides = {256, 64, 16, 4};
  EXPECT_TRUE(Loads(ok.finish()));
  Edit e(tiny());
  e.tensor(3).strides = {256, 64, 16, 5};
  EXPECT_TRUE(Rejected(e.finish(), HB_DNN_INVALID_MODEL, "last element at byte 255 of 256"));
}

// Finding 4: an NV12 input's BPU region is alignedByteSize bytes
// (runtime/engine/engine.cc submit_bpu), but hbDNNInfer bound the caller's
// buffer directly when it held only the tight image (h*w*3/2, bind_input),
// as HBDNN_API.md 6.4 requires it to accept. A model whose alignedByteSize
// exceeds the image and whose program reads there (UV plane at 7680 of 8192)
// read past the caller's 1536 bytes. bind_input now stages such a buffer
// (the region past the image reads as zeros): the model loads and runs.
TEST(LoaderReject, Nv12InputLargerThanTheImageIsStaged) {
  const Bytes bytes = kb::nv12_aligned_byte_size_above_image();
  ASSERT_TRUE(Loads(bytes));
  EXPECT_EQ(run_with_exact_buffers(bytes), HB_DNN_SUCCESS);
}

// Finding 5: CpuOp attribute types were not range-checked, and
// runtime/loader/loader.cc make_cpu_op casts the byte to AttrValue::Type, an
// enum of 1..7: type 200 was undefined behaviour (UBSan: "load of value 200,
// which is not a valid value for type 'Type'"). The verifier rejects unknown
// attribute types.
TEST(LoaderReject, UnknownAttributeTypeIsRejected) {
  EXPECT_TRUE(Rejected(kb::attribute_type_200(), HB_DNN_INVALID_MODEL,
                       "'scale': unknown attribute type 200"));
  Edit z(tiny());
  auto b = std::make_unique<fb::AttrT>();
  b->name = "unused";
  b->type = static_cast<fb::AttrType>(0);
  z.segment(0).kind.AsCpuOp()->attrs.push_back(std::move(b));
  EXPECT_TRUE(Rejected(z.finish(), HB_DNN_INVALID_MODEL, "'unused': unknown attribute type 0"));
}

// Finding 6: absurd function-call cycle estimates overflowed the conversions
// to int32/uint32 (undefined behaviour: runtime/loader/loader.cc
// estimated_latency_us, c_api/hb_dnn_ext.cc hbDNNGetTaskEstimateTime), and
// the estimates came out negative. They saturate at INT32_MAX microseconds.
TEST(LoaderReject, AbsurdCycleEstimatesSaturate) {
  const Bytes bytes = kb::cycle_estimates_2pow62();
  hbPackedDNNHandle_t pack = nullptr;
  const void* data = bytes.data();
  int32_t len = static_cast<int32_t>(bytes.size());
  ASSERT_EQ(hbDNNInitializeFromDDR(&pack, &data, &len, 1), HB_DNN_SUCCESS);
  hbDNNHandle_t h = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&h, pack, "tiny_cnn"), HB_DNN_SUCCESS);
  int32_t latency = -1;
  EXPECT_EQ(hbDNNGetEstimateLatency(&latency, h), HB_DNN_SUCCESS);
  EXPECT_EQ(latency, std::numeric_limits<int32_t>::max());
  // An open (not started) task: its estimate covers the whole run.
  hbDNNTensor in{}, out{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&in.properties, h, 0), HB_DNN_SUCCESS);
  ASSERT_EQ(hbDNNGetOutputTensorProperties(&out.properties, h, 0), HB_DNN_SUCCESS);
  std::vector<uint8_t> ib(static_cast<size_t>(in.properties.alignedByteSize));
  std::vector<uint8_t> ob(static_cast<size_t>(out.properties.alignedByteSize));
  in.sysMem[0].virAddr = ib.data();
  in.sysMem[0].memSize = static_cast<uint32_t>(ib.size());
  out.sysMem[0].virAddr = ob.data();
  out.sysMem[0].memSize = static_cast<uint32_t>(ob.size());
  hbDNNTaskHandle_t task = nullptr;
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  param.more = 1;
  hbDNNTensor* outp = &out;
  ASSERT_EQ(hbDNNInfer(&task, &outp, &in, h, &param), HB_DNN_SUCCESS);
  int32_t estimate = -1;
  EXPECT_EQ(hbDNNGetTaskEstimateTime(&estimate, task), HB_DNN_SUCCESS);
  EXPECT_EQ(estimate, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(hbDNNReleaseTask(task), HB_DNN_SUCCESS);
  EXPECT_EQ(hbDNNRelease(pack), HB_DNN_SUCCESS);
  // A uint32 estimate in the file above INT32_MAX saturates too.
  Edit e(tiny());
  e.model().estimated_latency_us = 0xFFFFFFFFu;
  const Bytes big = e.finish();
  data = big.data();
  len = static_cast<int32_t>(big.size());
  ASSERT_EQ(hbDNNInitializeFromDDR(&pack, &data, &len, 1), HB_DNN_SUCCESS);
  ASSERT_EQ(hbDNNGetModelHandle(&h, pack, "tiny_cnn"), HB_DNN_SUCCESS);
  EXPECT_EQ(hbDNNGetEstimateLatency(&latency, h), HB_DNN_SUCCESS);
  EXPECT_EQ(latency, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(hbDNNRelease(pack), HB_DNN_SUCCESS);
}

// Finding 7 (found by the fuzzer): model names could contain NUL bytes
// (flatbuffers strings are counted), but the C API hands out C strings: the
// name list showed "tiny" and hbDNNGetModelHandle(&h, pack, "tiny") failed,
// so the loaded model could not be used. The verifier rejects NULs in model
// and tensor names (hbDNNGet{Input,Output}Name hand those out).
TEST(LoaderReject, ModelNameWithNulIsRejected) {
  const Bytes bytes = kb::model_name_with_nul();
  const Outcome o = load_ddr(bytes);
  EXPECT_TRUE(check(o, HB_DNN_INVALID_MODEL, "model 0: model name contains a NUL byte"));
  if (o.rc == HB_DNN_SUCCESS) {
    hbPackedDNNHandle_t pack = nullptr;
    const void* data = bytes.data();
    int32_t len = static_cast<int32_t>(bytes.size());
    ASSERT_EQ(hbDNNInitializeFromDDR(&pack, &data, &len, 1), HB_DNN_SUCCESS);
    const char** names = nullptr;
    int32_t count = 0;
    ASSERT_EQ(hbDNNGetModelNameList(&names, &count, pack), HB_DNN_SUCCESS);
    hbDNNHandle_t h = nullptr;
    EXPECT_EQ(hbDNNGetModelHandle(&h, pack, names[0]), HB_DNN_SUCCESS) << "listed as '" << names[0] << "'";
    EXPECT_EQ(hbDNNRelease(pack), HB_DNN_SUCCESS);
  }
  Edit e(tiny());
  e.tensor(3).name = std::string("out\0put", 7);
  EXPECT_TRUE(Rejected(e.finish(), HB_DNN_INVALID_MODEL, "tensor 3: name contains a NUL byte"));
}

// An omitted optional CPU input (segment input index model::kAbsentInput)
// is legal: Clip without `min` loads and runs.
TEST(LoaderReject, OmittedOptionalInputRuns) {
  const Bytes bytes = kb::clip_with_omitted_min();
  ASSERT_TRUE(Loads(bytes));
  EXPECT_EQ(run_with_exact_buffers(bytes), HB_DNN_SUCCESS);
}

// Finding 8: an omitted *required* input was accepted: the loader handed the
// kernel a pointer to an empty TensorDesc where the CPU operator library
// expects a nullptr desc for an absent input (runtime/cpu_ops/
// kernel_util.h), so Identity was created for a float scalar and copied from
// address 0 at run time. The loader (and create_cpu_kernel, for every
// caller) pass nullptr, and the kernels reject missing required inputs and
// outputs at creation, naming the node.
TEST(LoaderReject, OmittedRequiredInputIsRejected) {
  expect_rejected_else_run(kb::identity_with_omitted_input(), HB_DNN_INVALID_MODEL, "node 'copy'");
  // Dropout without its (required) output, only the optional mask.
  Edit e(tiny());
  e.model().tensors.push_back(openbpu::testing::dense_tensor("mask", fb::DataType::BOOL8, 1, {1, 4, 4, 4}));
  e.model().segments.push_back(openbpu::testing::cpu_segment("drop", "", "Dropout", {3}, {model::kAbsentInput, 4}));
  auto o = std::make_unique<fb::OutputT>();
  o->tensor = 4;
  e.model().outputs.push_back(std::move(o));
  expect_rejected_else_run(e.finish(), HB_DNN_INVALID_MODEL, "node 'drop'");
  // CastLike without its input, before a present target_type: an absent
  // input before the last present one.
  Edit c(tiny());
  c.model().tensors.push_back(openbpu::testing::dense_tensor("cast", fb::DataType::F32, 4, {1, 4, 4, 4}));
  c.model().segments.push_back(openbpu::testing::cpu_segment("castlike", "", "CastLike", {model::kAbsentInput, 3}, {4}));
  c.model().outputs[0]->tensor = 4;
  expect_rejected_else_run(c.finish(), HB_DNN_INVALID_MODEL, "node 'castlike'");
}

// Finding 9: constant tensor data was not checked for alignment, but CPU
// operators read constants in place as typed arrays: Add read its float
// constant from an odd address (UBSan: runtime/cpu_ops/
// elementwise_binary.cc "load of misaligned address ... for type 'const
// float'"). The verifier requires constant data aligned to the element size
// (the writer aligns every blob to 64 bytes).
TEST(LoaderReject, MisalignedConstantTensorIsRejected) {
  ASSERT_TRUE(Loads(kb::onnx_ops_chain()));  // the same model, aligned
  expect_rejected_else_run(kb::misaligned_constant_tensor(), HB_DNN_INVALID_MODEL,
                           "tensor 5 'bias': constant data at offset");
}

// Finding 11: integer reductions saturated with
// std::min<double>(numeric_limits<T>::max(), r): for int64, max() is not a
// double and rounds up to 2^63, so a sum of 2^63 (or NaN) converted out of
// range (undefined behaviour; INT64_MIN on x86). runtime/cpu_ops/reduce.cc
// compares against 2^63 (and maps NaN to 0) before converting.
TEST(LoaderReject, ReduceSumOfInt64SaturatesWithoutOverflow) {
  const Bytes bytes = kb::reduce_sum_int64_overflow();
  hbPackedDNNHandle_t pack = nullptr;
  const void* data = bytes.data();
  int32_t len = static_cast<int32_t>(bytes.size());
  ASSERT_EQ(hbDNNInitializeFromDDR(&pack, &data, &len, 1), HB_DNN_SUCCESS);
  hbDNNHandle_t h = nullptr;
  ASSERT_EQ(hbDNNGetModelHandle(&h, pack, "tiny_cnn"), HB_DNN_SUCCESS);
  hbDNNTensor in{}, out[2]{};
  ASSERT_EQ(hbDNNGetInputTensorProperties(&in.properties, h, 0), HB_DNN_SUCCESS);
  std::vector<uint8_t> ib(static_cast<size_t>(in.properties.alignedByteSize)), ob[2];
  in.sysMem[0].virAddr = ib.data();
  in.sysMem[0].memSize = static_cast<uint32_t>(ib.size());
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(hbDNNGetOutputTensorProperties(&out[i].properties, h, i), HB_DNN_SUCCESS);
    ob[i].resize(static_cast<size_t>(out[i].properties.alignedByteSize));
    out[i].sysMem[0].virAddr = ob[i].data();
    out[i].sysMem[0].memSize = static_cast<uint32_t>(ob[i].size());
  }
  hbDNNTaskHandle_t task = nullptr;
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  hbDNNTensor* outp = out;
  ASSERT_EQ(hbDNNInfer(&task, &outp, &in, h, &param), HB_DNN_SUCCESS);
  EXPECT_EQ(hbDNNWaitTaskDone(task, 0), HB_DNN_SUCCESS);
  EXPECT_EQ(hbDNNReleaseTask(task), HB_DNN_SUCCESS);
  int64_t sum = 0;
  ASSERT_EQ(ob[1].size(), sizeof(sum));
  std::memcpy(&sum, ob[1].data(), sizeof(sum));
  EXPECT_EQ(sum, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(hbDNNRelease(pack), HB_DNN_SUCCESS);
}

}  // namespace
