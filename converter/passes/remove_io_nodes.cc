// SPDX-License-Identifier: Apache-2.0
#include "converter/passes/remove_io_nodes.h"

#include <algorithm>
#include <functional>

namespace openbpu::cvt {


// remove_node_type / remove_node_name on the quantized graph: nodes adjacent
// to a model input or output, applied in order.
void remove_io_nodes(CompiledModel* cm, const Config& config, std::map<std::string, std::string>* rt_override,
                     MapperLog& log) {
  Graph& g = cm->graph;
  auto try_remove = [&](const std::function<bool(const Node&)>& match) {
    bool removed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node n = g.nodes[i];
      if (!match(n) || n.inputs.empty() || n.outputs.size() != 1) continue;
      const std::string& in = n.inputs[0];
      const std::string& out = n.outputs[0];
      const bool from_input = std::find(g.inputs.begin(), g.inputs.end(), in) != g.inputs.end() &&
                              g.consumers(in).size() == 1;
      const bool to_output = g.is_graph_output(out) && g.consumers(out).empty();
      if (!from_input && !to_output) continue;
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      if (from_input) {
        // The node's output becomes the model input (keeping the input's name).
        Value v = g.values[out];
        v.name = in;
        g.values[in] = v;
        for (auto& m : g.nodes)
          for (auto& x : m.inputs)
            if (x == out) x = in;
        g.values.erase(out);
        if (n.op_type == "Quantize") (*rt_override)[in] = "featuremap";
      } else {
        Value v = g.values[in];
        v.name = out;
        g.values[out] = v;
        for (auto& m : g.nodes)
          for (auto& x : m.outputs)
            if (x == in) x = out;
        for (auto& m : g.nodes)
          for (auto& x : m.inputs)
            if (x == in) x = out;
        g.values.erase(in);
      }
      log.info("Node '" + n.name + "' is removed");
      removed = true;
      break;
    }
    return removed;
  };
  for (const auto& type : config.model_parameters.remove_node_type)
    while (try_remove([&](const Node& n) { return n.op_type == type; })) {
    }
  for (const auto& name : config.model_parameters.remove_node_name)
    if (!try_remove([&](const Node& n) { return n.name == name; }))
      log.warn("remove_node_name: node '" + name + "' is not next to a model input or output; kept");
}

}  // namespace openbpu::cvt
