// SPDX-License-Identifier: Apache-2.0
// Small float graphs for converter tests: a builder, attributes, random
// inputs and a float run of the graph.
#ifndef OPENBPU_TESTS_CONVERTER_GRAPH_BUILDER_H_
#define OPENBPU_TESTS_CONVERTER_GRAPH_BUILDER_H_

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "converter/ir/executor.h"
#include "converter/ir/graph.h"

namespace openbpu::cvt::graph_test {

class Builder {
 public:
  explicit Builder(int64_t opset = 13) { g.opset = opset; }
  Graph g;
  std::mt19937 rng{42};

  std::string input(const std::string& name, std::vector<int64_t> shape) {
    Value v;
    v.name = name;
    v.elem_type = kFloat;
    v.has_shape = true;
    v.shape = std::move(shape);
    g.values[name] = v;
    g.inputs.push_back(name);
    return name;
  }
  std::string constant(const std::string& base, std::vector<int64_t> shape, float lo = -1.0f, float hi = 1.0f) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = d(rng);
    return constant_values(base, shape, v);
  }
  std::string constant_values(const std::string& base, std::vector<int64_t> shape, const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return g.add_constant(base, kFloat, shape, std::move(b));
  }
  std::string ints(const std::string& base, const std::vector<int64_t>& v) {
    std::vector<uint8_t> b(v.size() * 8);
    std::memcpy(b.data(), v.data(), b.size());
    return g.add_constant(base, kInt64, {static_cast<int64_t>(v.size())}, std::move(b));
  }
  std::string scalar(float v) { return constant_values("s", {}, {v}); }
  std::string node(const std::string& op, std::vector<std::string> in, rt::Attrs attrs = {},
                   const std::string& domain = "") {
    Node n;
    n.name = op + "_" + std::to_string(g.nodes.size());
    n.op_type = op;
    n.domain = domain;
    n.inputs = std::move(in);
    n.outputs = {n.name + "_out"};
    n.attrs = std::move(attrs);
    Value v;
    v.name = n.outputs[0];
    g.values[v.name] = v;
    g.nodes.push_back(n);
    return n.outputs[0];
  }
  void output(const std::string& v) { g.outputs.push_back(v); }
};

inline rt::Attrs ints_attr(const char* name, std::vector<int64_t> v) {
  rt::Attrs a;
  rt::AttrValue x;
  x.type = rt::AttrValue::kInts;
  x.ints = std::move(v);
  a.set(name, x);
  return a;
}

inline rt::Attrs int_attr(const char* name, int64_t v, rt::Attrs a = {}) {
  rt::AttrValue x;
  x.type = rt::AttrValue::kInt;
  x.i = v;
  a.set(name, x);
  return a;
}

inline std::map<std::string, Value> random_inputs(const Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::map<std::string, Value> in;
  for (const auto& name : g.inputs) {
    const Value& v = *g.value(name);
    std::vector<float> x(static_cast<size_t>(v.elements()));
    for (auto& f : x) f = d(rng);
    Value val = v;
    std::vector<uint8_t> b(x.size() * 4);
    std::memcpy(b.data(), x.data(), b.size());
    val.data = std::make_shared<const std::vector<uint8_t>>(std::move(b));
    in[name] = val;
  }
  return in;
}

inline std::map<std::string, std::vector<double>> run(const Graph& g, const std::map<std::string, Value>& in) {
  FloatExecutor e;
  std::string err;
  EXPECT_TRUE(e.prepare(g, &err)) << err;
  std::map<std::string, Value> out;
  EXPECT_TRUE(e.run(in, &out, &err)) << err;
  std::map<std::string, std::vector<double>> r;
  for (const auto& o : g.outputs) r[o] = out[o].to_doubles();
  return r;
}

}  // namespace openbpu::cvt::graph_test

#endif  // OPENBPU_TESTS_CONVERTER_GRAPH_BUILDER_H_
