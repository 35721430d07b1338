// SPDX-License-Identifier: Apache-2.0
// Runs ONNX backend test cases (a folder with model.onnx and
// test_data_set_*/input_N.pb, output_N.pb) on the CPU operator library.
//
// The model is executed node by node in file order: each node becomes a
// CpuOpDef (name, op_type, attributes, plus `__opset` = the model's default
// opset) with dense TensorDescs; the shapes of the graph outputs come from
// output_N.pb, those of intermediate values from ONNX shape inference run on
// the single node with its actual inputs as initializers. This executor is
// independent of the converter's IR (it only reuses onnx_io's tensor and
// attribute conversion).
#ifndef OPENBPU_TESTS_ONNX_BACKEND_BACKEND_RUNNER_H_
#define OPENBPU_TESTS_ONNX_BACKEND_BACKEND_RUNNER_H_

#include <string>
#include <vector>

namespace openbpu::backend_test {

enum class Outcome { kPass, kFail, kUnsupported };

struct CaseResult {
  std::string name;  // "<folder>/<case>", e.g. "node/test_abs"
  Outcome outcome = Outcome::kUnsupported;
  std::string message;  // why it failed / is unsupported
};

// Tolerance for floating-point outputs: |actual - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-4;
};

// Runs one case folder; `name` is used in the result.
CaseResult run_case(const std::string& dir, const std::string& name, const Tolerance& tol = {});

// Sorted sub-folders of `root` (empty when it does not exist).
std::vector<std::string> list_cases(const std::string& root);

const char* outcome_name(Outcome o);

}  // namespace openbpu::backend_test

#endif  // OPENBPU_TESTS_ONNX_BACKEND_BACKEND_RUNNER_H_
