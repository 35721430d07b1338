// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/perf_report.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <nlohmann/json.hpp>

#include "bpu_sim/isa/codec.h"
#include "bpu_sim/isa/march.h"
#include "bpu_sim/timing.h"
#include "converter/writer/bin_writer.h"

namespace openbpu::cvt {

namespace {

void add(WorkPerf* w, const sim::Cost& c) {
  w->macs += c.macs;
  w->loaded += c.loaded;
  w->stored += c.stored;
  w->cycles += c.cycles;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

double mb(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

nlohmann::json work_json(const WorkPerf& w) {
  return {{"MACs", w.macs}, {"OPs", 2 * w.macs}, {"loaded bytes", w.loaded}, {"stored bytes", w.stored},
          {"cycles", w.cycles}, {"latency (us)", w.us}};
}

bool write_text(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

// The model structure: inputs, segments in order (BPU dark cyan, CPU grey),
// outputs; an edge per tensor from its producer to each consumer.
bool write_graph(const fb::ModelT& m, const ModelPerf& perf, const std::string& dir, std::string* error) {
  std::map<size_t, const SubgraphPerf*> bpu;
  for (const auto& s : perf.subgraphs) bpu[s.segment] = &s;
  Agraph_t* g = agopen(const_cast<char*>("model"), Agdirected, nullptr);
  agattr(g, AGRAPH, const_cast<char*>("rankdir"), const_cast<char*>("TB"));
  agattr(g, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
  agattr(g, AGNODE, const_cast<char*>("style"), const_cast<char*>("filled"));
  agattr(g, AGNODE, const_cast<char*>("fillcolor"), const_cast<char*>("white"));
  agattr(g, AGNODE, const_cast<char*>("fontcolor"), const_cast<char*>("black"));
  agattr(g, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
  std::map<uint32_t, Agnode_t*> producer;
  auto node = [&](const std::string& id, const std::string& label, const char* shape, const char* fill,
                  const char* font) {
    Agnode_t* n = agnode(g, const_cast<char*>(id.c_str()), 1);
    agset(n, const_cast<char*>("label"), const_cast<char*>(label.c_str()));
    agset(n, const_cast<char*>("shape"), const_cast<char*>(shape));
    agset(n, const_cast<char*>("fillcolor"), const_cast<char*>(fill));
    agset(n, const_cast<char*>("fontcolor"), const_cast<char*>(font));
    return n;
  };
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const uint32_t t = m.inputs[i]->tensor;
    producer[t] = node("input_" + std::to_string(i), m.tensors[t]->name, "ellipse", "white", "black");
  }
  for (size_t s = 0; s < m.segments.size(); ++s) {
    const auto& seg = *m.segments[s];
    Agnode_t* n;
    if (bpu.count(s)) {
      n = node("segment_" + std::to_string(s), seg.name + "\\n" + fixed(bpu[s]->work.us / 1000.0, 3) + " ms", "box",
               "darkcyan", "white");
    } else {
      const auto* op = seg.kind.AsCpuOp();
      n = node("segment_" + std::to_string(s), seg.name + "\\n" + (op ? op->op_type : std::string()), "box",
               "grey", "black");
    }
    for (uint32_t t : seg.inputs)
      if (producer.count(t)) agedge(g, producer[t], n, nullptr, 1);
    for (uint32_t t : seg.outputs) producer[t] = n;
  }
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const uint32_t t = m.outputs[i]->tensor;
    Agnode_t* n = node("output_" + std::to_string(i), m.tensors[t]->name, "ellipse", "white", "black");
    if (producer.count(t)) agedge(g, producer[t], n, nullptr, 1);
  }
  GVC_t* gvc = gvContext();
  const std::string base = dir + "/" + perf.name;
  bool ok = gvLayout(gvc, g, "dot") == 0;
  if (ok) {
    ok = gvRenderFilename(gvc, g, "dot", base.c_str()) == 0 &&
         gvRenderFilename(gvc, g, "png", (base + ".png").c_str()) == 0 &&
         gvRenderFilename(gvc, g, "svg", (base + ".svg").c_str()) == 0;
    gvFreeLayout(gvc, g);
  }
  agclose(g);
  gvFreeContext(gvc);
  if (!ok) *error = "Graphviz could not lay out or render the model structure into " + dir;
  return ok;
}

std::string work_cells(const WorkPerf& w) {
  return "<td>" + std::to_string(2 * w.macs) + "</td><td>" + fixed(mb(w.loaded + w.stored), 3) + "</td><td>" +
         fixed(w.us / 1000.0, 3) + "</td>";
}

std::string subgraph_html(const SubgraphPerf& s) {
  std::string h = "<html><head><meta charset=\"utf-8\"><title>" + html_escape(s.name) +
                  "</title></head><body>\n<h1>" + html_escape(s.name) + "</h1>\n<table border=\"1\">\n" +
                  "<tr><th>BPU OPs per frame</th><th>DDR MB per frame</th><th>Latency (ms)</th>"
                  "<th>Loaded bytes per frame</th><th>Stored bytes per frame</th><th>Function calls</th></tr>\n<tr>" +
                  work_cells(s.work) + "<td>" + std::to_string(s.work.loaded) + "</td><td>" +
                  std::to_string(s.work.stored) + "</td><td>" + std::to_string(s.fcs) + "</td></tr>\n</table>\n";
  if (s.layers.empty()) return h + "<p>No per-layer details: compile with compiler_parameters.debug: True.</p></body></html>\n";
  h += "<h2>Layer Details</h2>\n<table border=\"1\">\n<tr><th>Layer</th><th>Type</th><th>ONNX nodes</th>"
       "<th>Instructions</th><th>OPs</th><th>DDR MB</th><th>Latency (ms)</th><th>Share of the subgraph</th></tr>\n";
  for (const LayerPerf& l : s.layers)
    h += "<tr><td>" + html_escape(l.name) + "</td><td>" + html_escape(l.op_type) + "</td><td>" +
         html_escape(l.nodes) + "</td><td>" + std::to_string(l.first) + ".." + std::to_string(l.first + l.count - 1) +
         "</td>" + work_cells(l.work) + "<td>" +
         fixed(s.work.cycles ? 100.0 * static_cast<double>(l.work.cycles) / static_cast<double>(s.work.cycles) : 0.0, 1) +
         " %</td></tr>\n";
  return h + "</table></body></html>\n";
}

nlohmann::json subgraph_json(const SubgraphPerf& s) {
  nlohmann::json summary = {{"model name", s.name},
                            {"BPU OPs per frame (effective)", 2 * s.work.macs},
                            {"DDR megabytes per frame", mb(s.work.loaded + s.work.stored)},
                            {"latency (ms)", s.work.us / 1000.0},
                            {"loaded bytes per frame", s.work.loaded},
                            {"stored bytes per frame", s.work.stored},
                            {"function calls", s.fcs},
                            {"MACs per frame", s.work.macs}};
  if (!s.layers.empty()) {
    nlohmann::json layers = nlohmann::json::array();
    for (const LayerPerf& l : s.layers) {
      nlohmann::json j = work_json(l.work);
      j["layer"] = l.name;
      j["op type"] = l.op_type;
      j["ONNX nodes"] = l.nodes;
      j["first instruction"] = l.first;
      j["instruction count"] = l.count;
      layers.push_back(j);
    }
    summary["layer details"] = layers;
  }
  return {{"summary", summary}};
}

std::string main_html(const ModelPerf& p) {
  std::string h = "<html><head><meta charset=\"utf-8\"><title>" + html_escape(p.name) +
                  "</title></head><body>\n<h1>Model Performance Summary</h1>\n<table border=\"1\">\n";
  auto row = [&](const std::string& k, const std::string& v) { h += "<tr><th>" + k + "</th><td>" + v + "</td></tr>\n"; };
  row("Model Name", html_escape(p.name));
  row("BPU march", html_escape(p.march));
  row("Model Latency(ms)", fixed(p.bpu.us / 1000.0, 3));
  row("Total DDR (loaded+stored) bytes per frame(MB per frame)", fixed(mb(p.bpu.loaded + p.bpu.stored), 3));
  row("Loaded Bytes per Frame", std::to_string(p.bpu.loaded));
  row("Stored Bytes per Frame", std::to_string(p.bpu.stored));
  row("Estimated board latency with the CPU operators (ms)", fixed(p.whole_us / 1000.0, 3));
  h += "</table>\n<p>Figures are estimates of the timing model (docs/timing.md). Model Latency covers the BPU "
       "subgraphs only, as on the vendor's page; the last row adds the CPU operators and the runtime.</p>\n"
       "<h1>Details</h1>\n<table border=\"1\">\n<tr><th>Model Subgraph Name</th><th>Model Subgraph Calculation "
       "Load (OPpf)</th><th>Model Subgraph DDR Occupation(Mbpf)</th><th>Model Subgraph Latency(ms)</th></tr>\n";
  for (const SubgraphPerf& s : p.subgraphs)
    h += "<tr><td><a href=\"" + html_escape(s.name) + ".html\">" + html_escape(s.name) + "</a></td>" +
         work_cells(s.work) + "</tr>\n";
  return h + "</table>\n<h1>BIN Model Structure</h1>\n<p>BPU subgraphs dark cyan, CPU operators grey.</p>\n<img src=\"" +
         html_escape(p.name) + ".png\">\n</body></html>\n";
}

}  // namespace

bool model_perf(const fb::ModelT& m, const std::vector<uint8_t>& data, ModelPerf* out, std::string* error) {
  const isa::MarchInfo* march = isa::find_march(m.march);
  if (march == nullptr) {
    *error = "model '" + m.name + "' targets the unknown march '" + m.march + "'";
    return false;
  }
  out->name = m.name;
  out->march = m.march;
  for (size_t s = 0; s < m.segments.size(); ++s) {
    const auto* p = m.segments[s]->kind.AsBpuProgram();
    if (p == nullptr) continue;
    SubgraphPerf sp;
    sp.name = m.segments[s]->name;
    sp.segment = s;
    sp.fcs = p->fcs.size();
    std::vector<isa::Instruction> prog;
    if (!isa::decode_program(data.data() + p->code->offset(), p->code->size(), &prog, error)) return false;
    std::vector<sim::Cost> costs;
    for (const auto& ins : prog) costs.push_back(sim::estimate_cost(ins, *march));
    for (const auto& c : costs) add(&sp.work, c);
    sp.work.cycles = 0;  // the function calls' estimates, fc overheads included
    for (const auto& fc : p->fcs) sp.work.cycles += fc.est_cycles();
    sp.work.us = sim::cycles_to_us(sp.work.cycles, *march);
    for (const auto& l : m.layers) {
      if (l->segment != s || l->first_instruction + static_cast<uint64_t>(l->instruction_count) > costs.size()) continue;
      std::string nodes;
      for (const auto& n : l->nodes) nodes += (nodes.empty() ? "" : ";") + n;
      LayerPerf lp{l->name, l->op_type, nodes.empty() ? l->name : nodes, l->first_instruction, l->instruction_count, {}};
      for (uint32_t i = lp.first; i < lp.first + lp.count; ++i) add(&lp.work, costs[i]);
      lp.work.us = sim::cycles_to_us(lp.work.cycles, *march);
      sp.layers.push_back(lp);
    }
    out->has_layers = out->has_layers || !sp.layers.empty();
    add(&out->bpu, sim::Cost{sp.work.macs, 0, sp.work.loaded, sp.work.stored, sp.work.cycles});
    out->subgraphs.push_back(std::move(sp));
  }
  out->bpu.us = sim::cycles_to_us(out->bpu.cycles, *march);
  out->whole_us = estimate_model_latency_us(m);
  return true;
}

bool write_perf_report(const fb::ModelT& m, const ModelPerf& perf, const std::string& dir, std::string* error) {
  for (const SubgraphPerf& s : perf.subgraphs) {
    if (!write_text(dir + "/" + s.name + ".json", subgraph_json(s).dump(2) + "\n", error) ||
        !write_text(dir + "/" + s.name + ".html", subgraph_html(s), error))
      return false;
  }
  return write_graph(m, perf, dir, error) && write_text(dir + "/" + perf.name + ".html", main_html(perf), error);
}

}  // namespace openbpu::cvt
