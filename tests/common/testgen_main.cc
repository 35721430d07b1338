// SPDX-License-Identifier: Apache-2.0
// openbpu_testgen <dir>: writes the writer-built test models with inputs and
// independently computed expected outputs (CTest fixture for the C API tests,
// the tool tests and the fuzz seed corpus).
#include <cstdio>
#include <string>
#include <vector>

#include "schema/writer.h"
#include "tests/common/test_models.h"

namespace {

bool write(const std::string& path, const void* data, size_t size) {
  std::string err;
  const auto* p = static_cast<const uint8_t*>(data);
  if (!openbpu::model::write_file_atomic(path, std::vector<uint8_t>(p, p + size), &err)) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return false;
  }
  return true;
}

template <class T> bool write_vec(const std::string& path, const std::vector<T>& v) {
  return write(path, v.data(), v.size() * sizeof(T));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: openbpu_testgen <output dir>\n");
    return 2;
  }
  const std::string dir = argv[1];
  using namespace openbpu::testing;
  TinyCnn tiny;
  const auto tiny_bin = tiny.build();
  const auto x = tiny.random_input(5);
  TinyCnn tiny2;
  tiny2.name = "tiny_cnn_b";
  tiny2.seed = 2;
  tiny2.h = 12;
  tiny2.w = 6;
  const auto tiny2_bin = tiny2.build();
  const auto x2 = tiny2.random_input(6);
  Nv12Classifier cls;
  const auto cls_bin = cls.build();
  // Its resizer twin (same weights, input_source resizer: hbDNNRoiInfer).
  Nv12Classifier cls_resizer_x3 = cls;
  cls_resizer_x3.resizer = true;
  MobileNetV1 mbv1;
  bool ok = write_vec(dir + "/tiny_cnn.bin", tiny_bin) && write_vec(dir + "/tiny_cnn_input.bin", x) &&
            write_vec(dir + "/tiny_cnn_expected.bin", tiny.expected(x)) &&
            write_vec(dir + "/tiny_cnn_b.bin", tiny2_bin) && write_vec(dir + "/tiny_cnn_b_input.bin", x2) &&
            write_vec(dir + "/tiny_cnn_b_expected.bin", tiny2.expected(x2)) &&
            write_vec(dir + "/nv12_classifier.bin", cls_bin) &&
            write_vec(dir + "/nv12_classifier_resizer.bin", cls_resizer_x3.build()) &&
            write_vec(dir + "/packed.bin", pack_models({tiny_bin, tiny2_bin, cls_bin})) &&
            write_vec(dir + "/mobilenetv1_224x224_nv12.bin", mbv1.build());
  // The same models as .hbm files of the UCP generation (nash-e).
  TinyCnn tiny_nash = tiny;
  tiny_nash.march = "nash-e";
  TinyCnn tiny2_nash = tiny2;
  tiny2_nash.march = "nash-e";
  Nv12Classifier cls_nash;
  cls_nash.march = "nash-e";
  // The same weights with input_source resizer (Y + UV + roi inputs).
  Nv12Classifier cls_resizer = cls_nash;
  cls_resizer.resizer = true;
  cls_resizer.name = "nv12_classifier_resizer";
  // Many function calls (one per layer): the UCP scheduling tests' long task.
  MobileNetV1 long_nash;
  long_nash.h = long_nash.w = 32;
  long_nash.classes = 10;
  long_nash.max_fc_us = 0.5;
  long_nash.name = "long_mobilenet";
  long_nash.march = "nash-e";
  ok = ok && write_vec(dir + "/tiny_cnn.hbm", as_hbm(tiny_nash.build(), R"({"models":{"tiny_cnn":{}}})")) &&
       write_vec(dir + "/tiny_cnn_b.hbm", as_hbm(tiny2_nash.build())) &&
       write_vec(dir + "/nv12_classifier.hbm", as_hbm(cls_nash.build())) &&
       write_vec(dir + "/nv12_classifier_resizer.hbm", as_hbm(cls_resizer.build())) &&
       write_vec(dir + "/long_mobilenet.hbm", as_hbm(long_nash.build())) &&
       write_vec(dir + "/tiny_cnn_nash.bin", tiny_nash.build());
  return ok ? 0 : 1;
}
