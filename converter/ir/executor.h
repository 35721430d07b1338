// SPDX-License-Identifier: Apache-2.0
// The float reference executor: runs an IR graph with the runtime's CPU
// operator library (the same kernels libdnn runs on the host). Used for
// constant folding, calibration and the similarity report.
#ifndef OPENBPU_CONVERTER_IR_EXECUTOR_H_
#define OPENBPU_CONVERTER_IR_EXECUTOR_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "converter/ir/graph.h"

namespace openbpu::cvt {

// Dense tensor description of a value with a known shape.
rt::TensorDesc desc_of(const Value& v);
// Creates the CPU kernel of one node (attributes plus "__opset").
bool create_kernel(const Graph& g, const Node& n, std::unique_ptr<rt::CpuKernel>* kernel, std::string* error);

class FloatExecutor {
 public:
  // Prepares a kernel per node; every value must have a known shape.
  bool prepare(const Graph& graph, std::string* error);
  // Runs the graph. `inputs` maps graph input names to values with data;
  // `outputs` receives the graph outputs, plus every intermediate value when
  // `keep` is non-null and lists it (or keep_all).
  // `hook`, when set, may rewrite each computed value in place (name, type,
  // bytes) before later nodes read it (fake quantization, sensitivity).
  using ValueHook = std::function<void(const std::string&, int32_t, std::vector<uint8_t>&)>;
  bool run(const std::map<std::string, Value>& inputs, std::map<std::string, Value>* outputs,
           std::string* error, const std::set<std::string>* keep = nullptr, bool keep_all = false,
           const ValueHook& hook = nullptr) const;
  const Graph* graph() const { return graph_; }

 private:
  const Graph* graph_ = nullptr;
  std::vector<std::unique_ptr<rt::CpuKernel>> kernels_;
  std::vector<std::vector<rt::TensorDesc>> in_desc_, out_desc_;
  std::map<std::string, int> last_use_;  // node index of the last reader
};

// Makes a value with the given type/shape and zeroed data.
Value make_value(const std::string& name, int32_t elem_type, const std::vector<int64_t>& shape);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_IR_EXECUTOR_H_
