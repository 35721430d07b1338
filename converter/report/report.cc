// SPDX-License-Identifier: Apache-2.0
#include "converter/report/report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <variant>

#include "bpu_sim/timing.h"

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
  log_cpu_reasons(log, g, pl);
}

void log_cpu_reasons(MapperLog& log, const Graph& g, const Placement& pl) {
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

namespace {

// The time of one op's instructions, and why it is above the peak.
struct OpTime {
  uint64_t cycles = 0, macs = 0, bytes = 0;
  isa::TensorRef out;
};

OpTime op_time(const CompiledSubgraph& sg, const LayerSpan& l, const isa::MarchInfo& march) {
  OpTime t;
  for (uint32_t i = l.first; i < l.first + l.count; ++i) {
    const sim::Cost c = sim::estimate_cost(sg.program[i], march);
    t.cycles += c.cycles, t.macs += c.macs, t.bytes += c.bytes;
    t.out = std::visit([](const auto& b) { return b.out; }, sg.program[i].body);
  }
  return t;
}

}  // namespace

void log_advice(MapperLog& log, const CompiledModel& cm, const isa::MarchInfo& march, double advice_us) {
  if (advice_us <= 0) return;
  for (const auto& sg : cm.subgraphs)
    for (const LayerSpan& l : sg.layers) {
      if (l.count == 0) continue;
      const OpTime t = op_time(sg, l, march);
      const double est = sim::cycles_to_us(t.cycles, march);
      const double peak = static_cast<double>(t.macs) / march.int8_macs_per_cycle / march.clock_mhz;
      if (est - peak <= advice_us) continue;
      const double ddr = static_cast<double>(t.bytes) / march.ddr_bytes_per_cycle;
      const double overhead = march.instr_overhead_cycles * l.count;
      const std::string why = ddr + overhead >= static_cast<double>(t.cycles) * 0.99
                                  ? std::to_string(t.bytes) + " bytes to and from DDR"
                                  : "compute below the peak rate (depthwise, int16 or vector work)";
      const int c = t.out.dims[3], cp = isa::align_up(c, march.channel_align);
      log.info("advice: " + l.node + " (" + sg.name + ", " + std::to_string(l.count) + " instruction(s)): estimated " +
               fixed(est, 2) + " us, " + fixed(peak, 2) + " us at the peak MAC rate (+" + fixed(est - peak, 2) +
               " us: " + why + "); output " + std::to_string(t.out.dims[0]) + "x" + std::to_string(t.out.dims[1]) + "x" +
               std::to_string(t.out.dims[2]) + "x" + std::to_string(c) + " stored with " + std::to_string(cp) +
               " channels (" + fixed(100.0 * (cp - c) / std::max(cp, 1), 1) + "% padding)");
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
