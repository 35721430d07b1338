// SPDX-License-Identifier: Apache-2.0
// hb_pack's packing (schema/writer.h pack_model_files): every blob of every
// model (BPU code and constants, CPU operator attributes, constant tensors)
// reads back the same bytes from the packed file; packed files are marked
// and refused as inputs; duplicate names are refused.
#include <gtest/gtest.h>

#include <cstring>

#include "schema/writer.h"
#include "tests/common/test_models.h"

namespace {

using namespace openbpu;
using Bytes = std::vector<uint8_t>;

// A copy of `file` whose model carries an extra constant tensor with `fill`.
Bytes with_constant(const Bytes& file, uint8_t fill, const std::string& name) {
  fb::ModelFileT f;
  Bytes data;
  std::string err;
  EXPECT_TRUE(model::unpack_model_file(file.data(), file.size(), &f, &data, &err)) << err;
  model::ModelFileWriter w;
  for (auto& m : f.models) {
    EXPECT_TRUE(model::relocate_blobs(m.get(), data, &w, &err)) << err;
    m->name = name;
    auto t = std::make_unique<fb::TensorT>();
    t->name = "shape_const";
    t->data_type = fb::DataType::S64;
    t->valid_shape = {4};
    t->aligned_shape = {4};
    t->strides = {8};
    t->aligned_byte_size = 32;
    const Bytes blob(32, fill);
    t->constant = std::make_unique<fb::BlobRef>(w.add_blob(blob));
    m->tensors.push_back(std::move(t));
  }
  return w.finish(&f);
}

// Every blob of every model, in order, as bytes.
std::vector<Bytes> blobs(const Bytes& file, const std::string& model_name) {
  fb::ModelFileT f;
  Bytes data;
  std::string err;
  EXPECT_TRUE(model::unpack_model_file(file.data(), file.size(), &f, &data, &err)) << err;
  std::vector<Bytes> out;
  auto take = [&](const fb::BlobRef* r) {
    if (r) out.emplace_back(data.begin() + static_cast<long>(r->offset()),
                            data.begin() + static_cast<long>(r->offset() + r->size()));
  };
  for (const auto& m : f.models) {
    if (m->name != model_name) continue;
    for (const auto& t : m->tensors) take(t->constant.get());
    for (const auto& s : m->segments) {
      if (const auto* p = s->kind.AsBpuProgram()) {
        take(p->code.get());
        take(p->constants.get());
      } else if (const auto* op = s->kind.AsCpuOp()) {
        for (const auto& a : op->attrs) take(a->blob.get());
      }
    }
  }
  return out;
}

TEST(HbPack, EveryBlobSurvives) {
  const Bytes a = with_constant(openbpu::testing::TinyCnn{}.build(), 0x5a, "a");
  const Bytes b = with_constant(openbpu::testing::Nv12Classifier{}.build(), 0xa5, "b");
  Bytes packed;
  std::string err;
  ASSERT_TRUE(model::pack_model_files({a, b}, "test", &packed, &err)) << err;
  for (const auto& [file, name] : {std::pair<const Bytes&, const char*>{a, "a"}, {b, "b"}}) {
    const auto want = blobs(file, name);
    ASSERT_GE(want.size(), 3u);
    EXPECT_EQ(blobs(packed, name), want) << name;
  }
  fb::ModelFileT f;
  Bytes data;
  ASSERT_TRUE(model::unpack_model_file(packed.data(), packed.size(), &f, &data, &err)) << err;
  EXPECT_TRUE(model::is_packed(f));
  EXPECT_EQ(f.models.size(), 2u);
}

TEST(HbPack, RefusesPackedInputsAndDuplicateNames) {
  const Bytes a = with_constant(openbpu::testing::TinyCnn{}.build(), 1, "a");
  Bytes packed, again;
  std::string err;
  ASSERT_TRUE(model::pack_model_files({a}, "test", &packed, &err)) << err;
  fb::ModelFileT f;
  Bytes data;
  ASSERT_TRUE(model::unpack_model_file(packed.data(), packed.size(), &f, &data, &err));
  EXPECT_TRUE(model::is_packed(f));  // one model, but made by hb_pack
  EXPECT_FALSE(model::pack_model_files({packed}, "test", &again, &err));
  EXPECT_NE(err.find("is a packed model"), std::string::npos) << err;
  EXPECT_FALSE(model::pack_model_files({a, a}, "test", &again, &err));
  EXPECT_NE(err.find("two models are named 'a'"), std::string::npos) << err;
}

}  // namespace
