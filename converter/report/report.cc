// SPDX-License-Identifier: Apache-2.0
#include "converter/report/report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace openbpu::cvt {

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

void print_table(MapperLog& log, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(header.size());
  for (size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (size_t c = 0; c < r.size(); ++c) {
      s += r[c];
      if (c + 1 < r.size()) s += std::string(w[c] - r[c].size() + 2, ' ');
    }
    return s;
  };
  size_t total = 0;
  for (size_t c : w) total += c + 2;
  log.info(std::string(total, '='));
  log.info(line(header));
  log.info(std::string(total, '-'));
  for (const auto& r : rows) log.info(line(r));
}

namespace {

std::string device_name(const NodePlacement& p) { return p.device == Device::kBpu ? "BPU" : "CPU"; }
std::string subgraph_id(const NodePlacement& p) {
  return p.subgraph >= 0 ? "id(" + std::to_string(p.subgraph) + ")" : "--";
}

}  // namespace

void log_placement(MapperLog& log, const Graph& g, const Placement& pl) {
  log.info("The converted model node information:");
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    rows.push_back({g.nodes[i].name, device_name(pl.nodes[i]), subgraph_id(pl.nodes[i]), pl.nodes[i].type});
  print_table(log, {"Node", "ON", "Subgraph", "Type"}, rows);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (pl.nodes[i].device == Device::kCpu)
      log.info("Node '" + g.nodes[i].name + "' runs on the CPU: " + pl.nodes[i].reason);
}

void log_subgraphs(MapperLog& log, const CompiledModel& cm, const isa::MarchInfo& march) {
  for (const auto& sg : cm.subgraphs) {
    const double us = static_cast<double>(sg.est_cycles) / march.clock_mhz;
    log.info(sg.name + ": FPS=" + fixed(1e6 / std::max(us, 1e-3), 2) + ", latency = " + fixed(us, 1) +
             " us, MACs = " + std::to_string(sg.macs) + ", function calls = " + std::to_string(sg.fcs.size()));
  }
}

void log_quantized_nodes(MapperLog& log, const Graph& g, const Placement& pl, const CompiledModel& cm,
                         const std::map<std::string, double>& thresholds, const Similarity& sim) {
  std::map<std::string, double> cos(sim.nodes.begin(), sim.nodes.end());
  std::map<std::string, const LayerTrace*> trace;
  for (const auto& t : cm.traces) trace[t.value] = &t;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const auto& p = pl.nodes[i];
    const std::string v = n.outputs.empty() ? "" : n.outputs[0];
    const std::string c = cos.count(v) ? fixed(cos[v]) : "--";
    std::string thr = "--", dtype = "float/float";
    if (p.device == Device::kBpu) {
      auto it = thresholds.find(v);
      if (it != thresholds.end() && trace.count(v)) thr = fixed(it->second);
      if (trace.count(v)) {
        const auto dt = trace[v]->q.dtype;
        dtype = std::string("int8/") + (dt == isa::DType::kInt32 ? "int32" : dt == isa::DType::kInt16 ? "int16" : "int8");
      } else {
        dtype = "int8/int8";
      }
    }
    rows.push_back({n.name, device_name(p), subgraph_id(p), p.type, c, thr, dtype});
  }
  log.info("The main quantized node information:");
  print_table(log, {"Node", "ON", "Subgraph", "Type", "Cosine Similarity", "Threshold", "DataType"}, rows);
}

void log_outputs(MapperLog& log, const Similarity& sim) {
  log.info("The quantized model output:");
  std::vector<std::vector<std::string>> rows;
  for (const auto& o : sim.outputs)
    rows.push_back({o.name, fixed(o.cosine), fixed(o.l1), fixed(o.l2), fixed(o.chebyshev)});
  print_table(log, {"Output", "Cosine Similarity", "L1 Distance", "L2 Distance", "Chebyshev Distance"}, rows);
}

}  // namespace openbpu::cvt
