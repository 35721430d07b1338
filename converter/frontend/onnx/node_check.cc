// SPDX-License-Identifier: Apache-2.0
#include "converter/frontend/onnx/node_check.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace openbpu::cvt::onnxio {

namespace {

// An integer attribute (or each element of an integer list) and its range.
// The maxima keep ONNX's size arithmetic (dilation * (kernel - 1), blocksize
// squared) far from int64 overflow; the runtime's dimensions stop at 2^24.
struct IntRule {
  const char* attr;
  bool list;
  int64_t min, max;
};

constexpr int64_t kMaxDim = int64_t{1} << 24;
// Operators with a sliding window: ONNX computes output sizes with these.
const std::vector<IntRule> kWindowRules = {
    {"kernel_shape", true, 1, kMaxDim},   {"strides", true, 1, kMaxDim},      {"dilations", true, 1, kMaxDim},
    {"pads", true, 0, kMaxDim},           {"output_padding", true, 0, kMaxDim}, {"output_shape", true, 1, kMaxDim},
    {"group", false, 1, kMaxDim},
};
const std::vector<IntRule> kBlockRules = {{"blocksize", false, 1, 4096}};

const std::vector<IntRule>* rules_for(const std::string& op) {
  static const char* const windowed[] = {"Conv",    "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",
                                         "AveragePool", "LpPool",    "MaxUnpool",   "DeformConv",  "MaxRoiPool"};
  if (std::find(std::begin(windowed), std::end(windowed), op) != std::end(windowed)) return &kWindowRules;
  if (op == "DepthToSpace" || op == "SpaceToDepth") return &kBlockRules;
  return nullptr;
}

// Subgraph attributes each control-flow operator needs.
std::vector<const char*> required_graphs(const std::string& op) {
  if (op == "Scan" || op == "Loop") return {"body"};
  if (op == "If") return {"then_branch", "else_branch"};
  return {};
}

const onnx::AttributeProto* find(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool check_int_rules(const onnx::NodeProto& n, const std::vector<IntRule>& rules, std::string* why) {
  for (const IntRule& r : rules) {
    const onnx::AttributeProto* a = find(n, r.attr);
    if (a == nullptr) continue;
    const auto want = r.list ? onnx::AttributeProto::INTS : onnx::AttributeProto::INT;
    if (a->type() != want) {
      *why = std::string("attribute '") + r.attr + "' must be " + (r.list ? "a list of integers" : "an integer");
      return false;
    }
    const std::vector<int64_t> v = r.list ? std::vector<int64_t>(a->ints().begin(), a->ints().end())
                                          : std::vector<int64_t>{a->i()};
    for (int64_t x : v)
      if (x < r.min || x > r.max) {
        *why = std::string("attribute '") + r.attr + "' has the value " + std::to_string(x) + " (" +
               std::to_string(r.min) + ".." + std::to_string(r.max) + " expected)";
        return false;
      }
  }
  return true;
}

// Index of the weight input of the convolutions (-1: none).
int weight_input(const std::string& op) {
  if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "DeformConv") return 1;
  if (op == "QLinearConv") return 3;
  return -1;
}

const std::vector<int64_t>* shape_of(const onnx::NodeProto& n, int input, const KnownShapes& shapes) {
  if (input < 0 || input >= n.input_size()) return nullptr;
  const auto it = shapes.find(n.input(input));
  return it == shapes.end() ? nullptr : &it->second;
}

int rank_of(const onnx::NodeProto& n, int input, const KnownShapes& shapes) {
  const std::vector<int64_t>* s = shape_of(n, input, shapes);
  return s == nullptr ? -1 : static_cast<int>(s->size());
}

// Operators whose output has as many axes as a 1-D input has values (the
// shape they build): ONNX's inference builds a shape of that many axes (a
// ConstantOfShape of a [1048576] input took 24 s under ASan).
int shape_input(const std::string& op) {
  if (op == "ConstantOfShape") return 0;
  if (op == "Expand" || op == "Reshape") return 1;
  return -1;
}
constexpr int64_t kMaxShapeLength = 64;

bool check_shape_input(const onnx::NodeProto& n, const KnownShapes& shapes, std::string* why) {
  const int i = shape_input(n.op_type());
  const std::vector<int64_t>* s = shape_of(n, i, shapes);
  if (s == nullptr || s->size() != 1 || (*s)[0] <= kMaxShapeLength) return true;
  *why = "input '" + n.input(i) + "' (the output shape) has " + std::to_string((*s)[0]) + " values; at most " +
         std::to_string(kMaxShapeLength) + " axes";
  return false;
}

// The data input and the weights of known rank agree with each other and
// have at least one spatial axis; k is then their number of spatial axes.
bool check_window_ranks(const onnx::NodeProto& n, const KnownShapes& shapes, int64_t* k, std::string* why) {
  const int data = rank_of(n, 0, shapes), weight = rank_of(n, weight_input(n.op_type()), shapes);
  for (const auto& [r, what] : {std::pair<int, const char*>{data, "data input"}, {weight, "weight"}})
    if (r >= 0 && (r < 3 || r > 10)) {
      *why = std::string("the ") + what + " has rank " + std::to_string(r) + " (3..10 expected)";
      return false;
    }
  if (data >= 0 && weight >= 0 && data != weight) {
    *why = "the data input has rank " + std::to_string(data) + ", the weight rank " + std::to_string(weight);
    return false;
  }
  *k = data >= 0 ? data - 2 : weight >= 0 ? weight - 2 : -1;
  return true;
}

// kernel_shape, strides and dilations of one length k (8 at most; the
// spatial axes when the ranks are known), pads 2k.
bool check_window_counts(const onnx::NodeProto& n, const KnownShapes& shapes, std::string* why) {
  const onnx::AttributeProto* pads = find(n, "pads");
  if (pads && pads->ints_size() % 2 != 0) {
    *why = "attribute 'pads' has " + std::to_string(pads->ints_size()) + " values (begin and end per axis expected)";
    return false;
  }
  int64_t k = -1;
  if (!check_window_ranks(n, shapes, &k, why)) return false;
  for (const char* name : {"kernel_shape", "strides", "dilations", "output_padding"}) {
    const onnx::AttributeProto* a = find(n, name);
    if (a == nullptr) continue;
    if (a->ints_size() > 8 || (k >= 0 && a->ints_size() != k)) {
      *why = std::string("attribute '") + name + "' has " + std::to_string(a->ints_size()) +
             " values, not one per spatial axis like the other window attributes";
      return false;
    }
    k = a->ints_size();
  }
  if (pads && k >= 0 && pads->ints_size() != 2 * k) {
    *why = "attribute 'pads' has " + std::to_string(pads->ints_size()) + " values, " + std::to_string(2 * k) +
           " expected for " + std::to_string(k) + " spatial axes";
    return false;
  }
  return true;
}

std::string count_range(int lo, int hi) {
  if (hi == std::numeric_limits<int>::max()) return "at least " + std::to_string(lo);
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
}

// Input and output counts within the operator's schema at the model's opset
// (ONNX's inference functions index inputs and divide by the output count
// unchecked: a Split without outputs was a SIGFPE). Operators ONNX does not
// know at that opset are left to the importer.
bool check_arity(const onnx::NodeProto& n, int64_t opset, std::string* why) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "");
  if (s == nullptr) return true;
  for (const auto& [what, count, lo, hi] : {std::tuple{"input", n.input_size(), s->min_input(), s->max_input()},
                                            std::tuple{"output", n.output_size(), s->min_output(), s->max_output()}})
    if (count < lo || count > hi) {
      *why = std::to_string(count) + " " + what + "(s); the operator takes " + count_range(lo, hi) + " at opset " +
             std::to_string(opset);
      return false;
    }
  return true;
}

}  // namespace

bool check_node_attributes(const onnx::NodeProto& n, const std::string& name, const KnownShapes& shapes,
                           int64_t opset, std::string* error) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return true;
  std::string why;
  if (check_arity(n, opset, &why)) check_shape_input(n, shapes, &why);
  for (const char* g : required_graphs(n.op_type())) {
    if (!why.empty()) break;
    const onnx::AttributeProto* a = find(n, g);
    if (a == nullptr || a->type() != onnx::AttributeProto::GRAPH) {
      why = std::string("attribute '") + g + "' (a graph) is missing";
      break;
    }
  }
  const std::vector<IntRule>* rules = rules_for(n.op_type());
  if (why.empty() && rules != nullptr && check_int_rules(n, *rules, &why) && rules == &kWindowRules)
    check_window_counts(n, shapes, &why);
  if (why.empty()) return true;
  *error = "node '" + name + "' (" + n.op_type() + "): " + why;
  return false;
}

bool is_window_op(const onnx::NodeProto& n) {
  return (n.domain().empty() || n.domain() == "ai.onnx") && rules_for(n.op_type()) == &kWindowRules;
}

}  // namespace openbpu::cvt::onnxio
