// SPDX-License-Identifier: Apache-2.0
// The stages of hb_mapper in order. Each stage lives in its own module; this
// file only sequences them, logs and writes the outputs.
#include "converter/pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include "bpu_sim/isa/march.h"
#include "converter/frontend/onnx/legalize.h"
#include "converter/frontend/onnx/onnx_io.h"
#include "converter/ir/executor.h"
#include "converter/ir/local_ops.h"
#include "converter/passes/passes.h"
#include "converter/passes/preprocess.h"
#include "converter/quant/cal_data.h"
#include "converter/quant/calibration.h"
#include "converter/tools/infer_input.h"
#include "converter/writer/bin_writer.h"
#include "runtime/core/tensor.h"

namespace openbpu::cvt {

namespace {

namespace fs = std::filesystem;

std::string fixed(double v, int digits = 6) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// Prints a table with aligned columns, '=' above the header, '-' below.
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


std::vector<PreprocessSpec> preprocess_specs(const Config& c) {
  std::vector<PreprocessSpec> out;
  for (const auto& in : c.input_parameters) {
    PreprocessSpec p;
    p.input = in.name;
    p.type_rt = in.type_rt;
    p.layout_rt = in.layout_rt;
    p.type_train = in.type_train;
    p.layout_train = in.layout_train;
    p.space_and_range = in.space_and_range;
    if (in.norm_type.find("mean") != std::string::npos) p.mean = in.mean;
    if (in.norm_type.find("scale") != std::string::npos) p.scale = in.scale;
    out.push_back(p);
  }
  return out;
}

std::vector<CalInputSpec> cal_specs(const Config& c) {
  std::vector<CalInputSpec> out;
  for (const auto& in : c.input_parameters) {
    CalInputSpec s;
    s.input = in.name;
    s.dir = in.cal_data_dir;
    s.dtype = in.cal_data_type.empty() ? "uint8" : in.cal_data_type;
    s.shape = in.shape;
    if (in.batch > 1 && !s.shape.empty()) s.shape[0] = in.batch;
    s.type_train = in.type_train;
    s.type_rt = in.type_rt;
    s.layout_train = in.layout_train;
    s.space_and_range = in.space_and_range;
    out.push_back(s);
  }
  return out;
}

double threshold_for(const CalibrationStats& stats, const std::string& v, CalMethod m, double pct) {
  return stats.threshold(v, m, pct);
}

std::map<std::string, double> thresholds_for(const Graph& g, const CalibrationStats& stats, CalMethod m, double pct) {
  std::map<std::string, double> t;
  for (const auto& [name, v] : g.values)
    if (!v.is_constant()) t[name] = threshold_for(stats, name, m, pct);
  return t;
}

struct OutputsGuard {
  std::vector<std::string> files;
  bool keep = false;
  ~OutputsGuard() {
    if (keep) return;
    for (const auto& f : files) {
      std::error_code ec;
      fs::remove(f, ec);
    }
  }
};

}  // namespace

double cosine_similarity(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  if (aa == 0 && bb == 0) return 1.0;
  if (aa == 0 || bb == 0) return 0.0;
  return ab / std::sqrt(aa * bb);
}

std::vector<double> dequantize_trace(const LayerTrace& t, const std::vector<uint8_t>& data) {
  std::vector<double> out;
  const isa::TensorRef& r = t.ref;
  const int es = isa::dtype_size(r.dtype);
  // Logical N, C, H, W order (the float graph's row-major order).
  for (int n = 0; n < r.dims[0]; ++n)
    for (int c = 0; c < r.dims[3]; ++c)
      for (int h = 0; h < r.dims[1]; ++h)
        for (int w = 0; w < r.dims[2]; ++w) {
          const uint64_t off = r.offset + static_cast<uint64_t>((n * r.strides[0] + h * r.strides[1] +
                                                                 w * r.strides[2] + c * r.strides[3]) * es);
          if (off + static_cast<uint64_t>(es) > data.size()) return {};
          double q = 0;
          switch (r.dtype) {
            case isa::DType::kInt8: q = static_cast<int8_t>(data[off]); break;
            case isa::DType::kInt16: { int16_t v; std::memcpy(&v, &data[off], 2); q = v; break; }
            case isa::DType::kInt32: { int32_t v; std::memcpy(&v, &data[off], 4); q = v; break; }
            default: q = data[off]; break;
          }
          const double s = t.q.dtype == isa::DType::kInt32 && !t.q.channel_scales.empty()
                               ? t.q.channel_scales[static_cast<size_t>(c)]
                               : t.q.scale;
          out.push_back(q * s);
        }
  return out;
}

namespace {

// The inputs of the quantized graph for a calibration sample: image inputs
// the BPU reads natively get the runtime image bytes (NV12 from 2x2-averaged
// chroma), other inputs the sample's data.
bool quantized_inputs(const CompiledModel& cm, const std::map<std::string, Value>& sample,
                      std::map<std::string, Value>* qin, std::string* error) {
  for (const auto& in : cm.graph.inputs) {
    const Value* qv = cm.graph.value(in);
    auto it = sample.find(in);
    if (it == sample.end()) {
      *error = "calibration sample has no input '" + in + "'";
      return false;
    }
    Value v = *qv;
    if (qv->native && rt::is_image_type(qv->rt_type)) {
      // The sample holds the int8 intermediate (value - 128) in the train
      // layout; the quantized model reads the runtime image bytes.
      v.data = nullptr;
      std::vector<uint8_t> bytes(static_cast<size_t>(qv->byte_size));
      const auto* x = reinterpret_cast<const int8_t*>(it->second.data->data());
      const auto& s = it->second.shape;  // train layout, NCHW or NHWC
      const bool nhwc_train = s.size() == 4 && s[3] <= 4 && s[1] > 4;
      const int64_t c = nhwc_train ? s[3] : s[1], h = nhwc_train ? s[1] : s[2], w = nhwc_train ? s[2] : s[3];
      auto px = [&](int64_t ch, int64_t y, int64_t xx) -> int {
        return x[nhwc_train ? (y * w + xx) * c + ch : (ch * h + y) * w + xx] + 128;
      };
      if (qv->rt_type == rt::kImgNV12) {
        for (int64_t y = 0; y < h; ++y)
          for (int64_t xx = 0; xx < w; ++xx) bytes[static_cast<size_t>(y * w + xx)] = static_cast<uint8_t>(px(0, y, xx));
        for (int64_t y = 0; y < h / 2; ++y)
          for (int64_t xx = 0; xx < w / 2; ++xx)
            for (int k = 1; k <= 2; ++k) {
              const int sum = px(k, 2 * y, 2 * xx) + px(k, 2 * y, 2 * xx + 1) + px(k, 2 * y + 1, 2 * xx) +
                              px(k, 2 * y + 1, 2 * xx + 1);
              bytes[static_cast<size_t>(h * w + y * w + 2 * xx + (k - 1))] = static_cast<uint8_t>((sum + 2) / 4);
            }
      } else {
        const bool nhwc_rt = qv->layout == rt::kNHWC;
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t y = 0; y < h; ++y)
            for (int64_t xx = 0; xx < w; ++xx)
              bytes[static_cast<size_t>(nhwc_rt ? (y * w + xx) * c + ch : (ch * h + y) * w + xx)] =
                  static_cast<uint8_t>(px(ch, y, xx));
      }
      v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    } else {
      v.data = it->second.data;
    }
    (*qin)[in] = v;
  }
  return true;
}

// Mean cosine similarity of the model outputs, float graph vs a compiled
// model, over the first calibration samples: what default and mix
// calibration maximize. The float outputs are computed once.
class OutputScorer {
 public:
  bool init(const Graph& g, const std::vector<std::map<std::string, Value>>& samples, size_t n,
            std::string* error) {
    samples_ = &samples;
    outputs_ = g.outputs;
    n_ = std::min(samples.size(), n);
    FloatExecutor fexec;
    if (!fexec.prepare(g, error)) return false;
    for (size_t k = 0; k < n_; ++k) {
      std::map<std::string, Value> vals;
      if (!fexec.run(samples[k], &vals, error)) return false;
      std::vector<std::vector<double>> outs;
      for (const auto& o : outputs_) {
        auto it = vals.find(o);
        outs.push_back(it == vals.end() ? std::vector<double>{} : it->second.to_doubles());
      }
      ref_.push_back(std::move(outs));
    }
    return true;
  }

  bool score(const CompiledModel& cm, double* out, std::string* error) const {
    FloatExecutor qexec;
    if (!qexec.prepare(cm.graph, error)) return false;
    double total = 0;
    for (size_t k = 0; k < n_; ++k) {
      std::map<std::string, Value> qin, qvals;
      if (!quantized_inputs(cm, (*samples_)[k], &qin, error) || !qexec.run(qin, &qvals, error)) return false;
      double sc = 0;
      for (size_t i = 0; i < outputs_.size(); ++i) {
        auto it = qvals.find(outputs_[i]);
        if (it != qvals.end()) sc += cosine_similarity(ref_[k][i], it->second.to_doubles());
      }
      total += sc / static_cast<double>(std::max<size_t>(1, outputs_.size()));
    }
    *out = n_ ? total / static_cast<double>(n_) : 1.0;
    return true;
  }

 private:
  const std::vector<std::map<std::string, Value>>* samples_ = nullptr;
  std::vector<std::string> outputs_;
  size_t n_ = 0;
  std::vector<std::vector<std::vector<double>>> ref_;  // sample -> output -> values
};

}  // namespace

bool compute_similarity(const Graph& fg, const CompiledModel& cm, const std::map<std::string, Value>& sample,
                        Similarity* sim, std::string* error) {
  FloatExecutor fexec;
  if (!fexec.prepare(fg, error)) return false;
  std::map<std::string, Value> fvals;
  if (!fexec.run(sample, &fvals, error, nullptr, true)) return false;
  std::map<std::string, Value> qin;
  if (!quantized_inputs(cm, sample, &qin, error)) return false;
  FloatExecutor qexec;
  if (!qexec.prepare(cm.graph, error)) return false;
  std::map<std::string, Value> qvals;
  ScratchCapture capture;
  scratch_capture() = &capture;
  const bool ok = qexec.run(qin, &qvals, error, nullptr, true);
  scratch_capture() = nullptr;
  if (!ok) return false;
  for (const auto& [name, v] : qin) qvals[name] = v;
  // Node-level similarity: BPU values from the traces, CPU values directly.
  std::map<std::string, const LayerTrace*> trace;
  for (const auto& t : cm.traces) trace[t.value] = &t;
  for (const Node& n : fg.nodes) {
    if (n.outputs.empty() || n.outputs[0].empty()) continue;
    const std::string& v = n.outputs[0];
    auto fit = fvals.find(v);
    if (fit == fvals.end() || fit->second.elem_type != kFloat) continue;
    std::vector<double> f = fit->second.to_doubles(), q;
    auto tit = trace.find(v);
    if (tit != trace.end()) {
      const LayerTrace& t = *tit->second;
      const std::string sg = cm.subgraphs[static_cast<size_t>(t.subgraph)].name;
      if (t.ref.region == isa::Region::kScratch) {
        auto s = capture.scratch.find(sg);
        if (s != capture.scratch.end()) q = dequantize_trace(t, s->second);
      } else {
        // Region kInput/kOutput: the subgraph node's input/output value.
        for (const Node& qn : cm.graph.nodes)
          if (qn.name == sg) {
            const auto& names = t.ref.region == isa::Region::kInput ? qn.inputs : qn.outputs;
            if (t.ref.index < names.size()) {
              auto qv = qvals.find(names[t.ref.index]);
              if (qv != qvals.end() && qv->second.data) q = dequantize_trace(t, *qv->second.data);
            }
          }
      }
    } else {
      auto qv = qvals.find(v);
      if (qv != qvals.end() && !qv->second.native && qv->second.elem_type == kFloat) q = qv->second.to_doubles();
    }
    if (!q.empty() && q.size() == f.size()) sim->nodes.push_back({v, cosine_similarity(f, q)});
  }
  for (const auto& o : fg.outputs) {
    auto fo = fvals.find(o);
    auto qo = qvals.find(o);
    if (fo == fvals.end() || qo == qvals.end()) continue;
    std::vector<double> a = fo->second.to_doubles(), b = qo->second.to_doubles();
    Similarity::Output out{o, cosine_similarity(a, b), 0, 0, 0};
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      const double d = std::fabs(a[i] - b[i]);
      out.l1 += d;
      out.l2 += d * d;
      out.chebyshev = std::max(out.chebyshev, d);
    }
    if (!a.empty()) out.l1 /= static_cast<double>(a.size());
    out.l2 = std::sqrt(out.l2);
    sim->outputs.push_back(out);
  }
  return true;
}

bool load_and_prepare(const Config& config, Graph* g, MapperLog& log, std::string* error) {
  const auto& mp = config.model_parameters;
  if (mp.model_type == "caffe") {
    *error = "model_parameters.caffe_model: Caffe models are not supported yet; convert the model to ONNX";
    return false;
  }
  log.info("Start to parse the onnx model.");
  if (!onnxio::load_model(mp.onnx_model, g, error)) return false;
  log.info("Input ONNX model infomation:");
  log.info("ONNX IR version:          " + std::to_string(g->ir_version));
  log.info("Opset version:            ['ai.onnx v" + std::to_string(g->opset) + "']");
  // Input shapes: the config's (validated against the model) with input_batch.
  for (const auto& in : config.input_parameters) {
    Value* v = g->value(in.name);
    if (v == nullptr) {
      *error = "input_parameters.input_name: '" + in.name + "' is not an input of the model";
      return false;
    }
    v->has_shape = true;
    v->shape = in.shape;
    if (in.batch > 1 && !v->shape.empty()) v->shape[0] = in.batch;
  }
  for (const auto& in : g->inputs) {
    const Value* v = g->value(in);
    if (!v->shape_known()) {
      *error = "input '" + in + "' has dimensions of 0 or unknown. Please specify input-shape parameter.";
      return false;
    }
  }
  for (const auto& o : g->outputs)
    if (g->producer(o) == nullptr && !g->value(o)->is_constant() &&
        std::find(g->inputs.begin(), g->inputs.end(), o) == g->inputs.end()) {
      *error = "model output '" + o + "' is not produced by any node";
      return false;
    }
  if (g->outputs.size() > 32) {
    *error = "tool limits for max output num is 32";
    return false;
  }
  log.info("End to parse the onnx model.");
  if (!config.model_parameters.output_nodes.empty()) {
    std::vector<std::string> outs;
    for (const auto& name : config.model_parameters.output_nodes) {
      std::string value = name;
      for (const auto& n : g->nodes)
        if (n.name == name && !n.outputs.empty()) value = n.outputs[0];
      if (g->value(value) == nullptr) {
        *error = "model_parameters.output_nodes: '" + name + "' is neither a node nor a value of the model";
        return false;
      }
      outs.push_back(value);
    }
    g->outputs = outs;
    g->remove_dead();
  }
  if (!insert_preprocess(g, preprocess_specs(config), error)) return false;
  if (fold_constants(g, error) < 0) return false;
  return true;
}

int run_checker(const CheckerOptions& opt, MapperLog& log) {
  log.info("Start hb_mapper....");
  log.info("hb_mapper version " + std::string(kMapperVersion));
  const isa::MarchInfo* march = isa::find_march(opt.march);
  if (march == nullptr) {
    log.error("--march: '" + opt.march + "' is not one of bernoulli2, bayes, bayes-e, nash-e, nash-m");
    return 1;
  }
  if (opt.model_type != "onnx") {
    log.error(opt.model_type == "caffe" ? "Caffe models are not supported yet; convert the model to ONNX"
                                        : "--model-type must be onnx or caffe");
    return 1;
  }
  Config c = make_fast_perf_config(opt.model, opt.march, opt.model_type, opt.input_shapes, opt.proto);
  std::string err;
  Graph g;
  {
    Graph probe;
    if (!onnxio::load_model(opt.model, &probe, &err)) {
      log.error(err);
      return 1;
    }
    std::vector<ModelInput> mins;
    for (const auto& in : probe.inputs) mins.push_back({in, probe.value(in)->shape});
    std::vector<std::string> warnings;
    if (!validate_with_model(c, mins, &warnings, &err)) {
      log.error(err);
      return 1;
    }
    for (const auto& w : warnings) log.warn(w);
  }
  if (!load_and_prepare(c, &g, log, &err) || !optimize(&g, &err)) {
    log.error(err);
    return 1;
  }
  PlacementOptions po;
  po.march = march;
  const Placement pl = place(&g, po);
  log.info("The converted model node information:");
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& p = pl.nodes[i];
    rows.push_back({g.nodes[i].name, p.device == Device::kBpu ? "BPU" : "CPU",
                    p.subgraph >= 0 ? "id(" + std::to_string(p.subgraph) + ")" : "--", p.type});
  }
  print_table(log, {"Node", "ON", "Subgraph", "Type"}, rows);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (pl.nodes[i].device == Device::kCpu) log.info("Node '" + g.nodes[i].name + "' runs on the CPU: " + pl.nodes[i].reason);
  log.info("End to check the model. The model has " + std::to_string(pl.subgraphs) + " BPU subgraph(s).");
  return 0;
}

namespace {

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

}  // namespace

int run_makertbin(const Config& config, MapperLog& log) {
  const auto& mp = config.model_parameters;
  log.info("Start hb_mapper....");
  log.info("hb_mapper version " + std::string(kMapperVersion));
  log.info("Dump config:\n" + config.echo_yaml());
  const isa::MarchInfo* march = isa::find_march(mp.march);
  std::string err;
  std::error_code ec;
  fs::create_directories(mp.working_dir, ec);
  if (ec) {
    log.error("model_parameters.working_dir: cannot create '" + mp.working_dir + "': " + ec.message());
    return 1;
  }
  const std::string prefix = mp.working_dir + "/" + mp.output_model_file_prefix;
  OutputsGuard guard;
  auto fail = [&](const std::string& m) {
    log.error(m);
    log.error("exception in command: makertbin");
    return 1;
  };

  Graph g;
  if (!load_and_prepare(config, &g, log, &err)) return fail(err);
  {
    Graph legal = g;
    if (!legalize_for_onnx(&legal, &err) || !onnxio::save_model(legal, prefix + "_original_float_model.onnx", &err))
      return fail(err);
    guard.files.push_back(prefix + "_original_float_model.onnx");
    log.info("Saving model to: " + prefix + "_original_float_model.onnx.");
  }
  log.info("Start to optimize the model.");
  if (!optimize(&g, &err)) return fail(err);
  if (fold_constants(&g, &err) < 0) return fail(err);
  {
    Graph legal = g;
    if (!legalize_for_onnx(&legal, &err) || !onnxio::save_model(legal, prefix + "_optimized_float_model.onnx", &err))
      return fail(err);
    guard.files.push_back(prefix + "_optimized_float_model.onnx");
    log.info("Saving model to: " + prefix + "_optimized_float_model.onnx.");
  }
  log.info("End to optimize the model.");

  PlacementOptions po;
  po.march = march;
  const auto& cp = config.calibration_parameters;
  po.run_on_cpu.insert(cp.run_on_cpu.begin(), cp.run_on_cpu.end());
  po.run_on_bpu.insert(cp.run_on_bpu.begin(), cp.run_on_bpu.end());
  for (const auto& [name, info] : mp.node_info) {
    if (info.on == "CPU") po.run_on_cpu.insert(name);
    if (info.on == "BPU") po.run_on_bpu.insert(name);
  }
  std::set<std::string> node_names;
  for (const auto& n : g.nodes) node_names.insert(n.name);
  for (const auto& name : po.run_on_cpu)
    if (!node_names.count(name)) log.warn("run_on_cpu: node '" + name + "' is not in the optimized model");
  for (const auto& name : po.run_on_bpu)
    if (!node_names.count(name)) log.warn("run_on_bpu: node '" + name + "' is not in the optimized model");
  const Placement pl = place(&g, po);
  for (const auto& w : pl.warnings) log.warn(w);
  if (pl.subgraphs == 0) return fail("no operator of the model can run on the BPU");

  // Calibration.
  log.info("Start to calibrate the model.");
  const std::vector<CalInputSpec> specs = cal_specs(config);
  std::vector<std::map<std::string, Value>> samples;
  std::vector<std::string> warnings;
  if (cp.calibration_type == "skip") {
    samples = random_calibration(specs, 4, 1234);
    log.info("calibration_type skip: calibrating with random data (for performance evaluation only)");
  } else if (cp.calibration_type == "load") {
    return fail("calibration_parameters.calibration_type: 'load' needs a QAT model, which is not supported");
  } else {
    if (!load_calibration(specs, &samples, &warnings, &err)) return fail(err);
  }
  for (const auto& w : warnings) log.warn(w);
  FloatExecutor fexec;
  if (!fexec.prepare(g, &err)) return fail(err);
  CalibrationStats stats;
  if (!collect_stats(fexec, samples, &stats, &err, [&](size_t d, size_t t) { log.progress(d, t); })) return fail(err);

  CompileOptions co;
  co.march = march;
  co.max_time_per_fc_us = static_cast<double>(config.compiler_parameters.max_time_per_fc);
  co.model_name = mp.output_model_file_prefix;
  for (const auto& o : cp.optimization)
    if (o == "set_model_output_int8") co.int32_tail = false;
  // int16 activations: node_info OutputType int16 (per node) or
  // optimization set_all_nodes_int16 (marches with int16 only).
  for (const auto& [name, info] : mp.node_info)
    if (info.output_type == "int16" && !march->int16)
      log.warn("node_info " + name + ": OutputType int16 needs a march with int16 (bayes, bayes-e, nash); " +
               march->name + " keeps int8");
    else if (info.output_type == "int16")
      for (const auto& n : g.nodes)
        if (n.name == name)
          for (const auto& o : n.outputs) co.int16_values.insert(o);
  for (const auto& o : cp.optimization)
    if (o == "set_all_nodes_int16") {
      if (march->int16)
        co.all_int16 = true;
      else
        log.warn(std::string("optimization set_all_nodes_int16: march ") + march->name +
                 " has no int16 support; activations stay int8");
    }
  for (const auto& o : cp.optimization)
    if (o == "bias_correction")
      for (const auto& [name, st] : stats.values)
        if (!st.channel_sum.empty()) co.channel_means[name] = st.channel_mean();
  struct Candidate {
    CalMethod method;
    double pct;
    std::string label;
  };
  std::vector<Candidate> cands;
  const double pct = cp.max_percentile.value_or(1.0f);
  if (cp.calibration_type == "max" || cp.calibration_type == "skip") {
    cands.push_back({pct < 1.0 ? CalMethod::kMaxPercentile : CalMethod::kMax, pct,
                     pct < 1.0 ? "max-percentile:percentile=" + fixed(pct, 5) : "max"});
  } else if (cp.calibration_type == "kl") {
    cands.push_back({CalMethod::kKl, 1.0, "kl"});
  } else if (cp.calibration_type == "mse") {
    cands.push_back({CalMethod::kMse, 1.0, "mse"});
  } else if (co.all_int16) {
    // 16-bit activations have resolution to spare: clipping only hurts.
    cands.push_back({CalMethod::kMax, 1.0, "max"});
  } else {  // default, mix: pick the best by the mean output cosine on a few samples
    cands = {{CalMethod::kMaxPercentile, 0.99995, "max-percentile:percentile=0.99995"},
             {CalMethod::kKl, 1.0, "kl"},
             {CalMethod::kMse, 1.0, "mse"},
             {CalMethod::kMax, 1.0, "max"}};
  }
  CompiledModel best;
  double best_score = -2;
  std::string best_label;
  std::map<std::string, double> best_thr;
  // default/mix: scored on a few samples (one is noisy).
  OutputScorer scorer;
  if (cands.size() > 1 && !scorer.init(g, samples, 8, &err)) return fail(err);
  for (const auto& c : cands) {
    const std::map<std::string, double> thr = thresholds_for(g, stats, c.method, c.pct);
    CompiledModel cm;
    if (!compile(g, pl, thr, co, &cm, &err)) return fail(err);
    double score = 1.0;
    if (cands.size() > 1) {
      if (!scorer.score(cm, &score, &err)) return fail(err);
      log.debug("calibration method " + c.label + ": mean output cosine " + fixed(score));
    }
    if (score > best_score) best_score = score, best = std::move(cm), best_label = c.label, best_thr = thr;
  }
  log.info("Select " + best_label + " method.");
  log.info("End to calibrate the model.");

  // Calibrated model (float + QDQ on every BPU value).
  {
    Graph legal = g;
    if (!legalize_for_onnx(&legal, &err)) return fail(err);
    std::vector<std::string> qvalues;
    for (const auto& t : best.traces) qvalues.push_back(t.value);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (pl.nodes[i].device == Device::kBpu)
        for (const auto& in : g.nodes[i].inputs)
          if (!in.empty() && g.value(in) && !g.value(in)->is_constant()) qvalues.push_back(in);
    std::sort(qvalues.begin(), qvalues.end());
    qvalues.erase(std::unique(qvalues.begin(), qvalues.end()), qvalues.end());
    std::vector<std::string> present;
    for (const auto& v : qvalues)
      if (legal.value(v) && legal.value(v)->elem_type == kFloat) present.push_back(v);
    if (!onnxio::save_calibrated(legal, best_thr, present, prefix + "_calibrated_model.onnx", &err)) return fail(err);
    guard.files.push_back(prefix + "_calibrated_model.onnx");
    log.info("Saving model to: " + prefix + "_calibrated_model.onnx.");
  }

  // Similarity report on the first sample (a debug build keeps every
  // intermediate value in the scratch arena; its arithmetic is identical).
  Similarity sim;
  {
    CompileOptions dbg = co;
    dbg.no_scratch_reuse = true;
    CompiledModel debug_model;
    if (!compile(g, pl, best_thr, dbg, &debug_model, &err) ||
        !compute_similarity(g, debug_model, samples.front(), &sim, &err))
      return fail(err);
  }

  std::map<std::string, std::string> rt_override;
  remove_io_nodes(&best, config, &rt_override, log);
  if (!onnxio::save_model(best.graph, prefix + "_quantized_model.onnx", &err)) return fail(err);
  guard.files.push_back(prefix + "_quantized_model.onnx");
  log.info("Saving model to: " + prefix + "_quantized_model.onnx.");

  // The runtime model.
  BinWriteOptions bo;
  bo.model_name = mp.output_model_file_prefix;
  bo.march = mp.march;
  bo.metadata = config.metadata();
  bo.metadata["BUILDER_VERSION"] = kMapperVersion;
  bo.metadata["HBDK_VERSION"] = "openbpu-0.1.0";
  bo.config_yaml = config.echo_yaml();
  bo.tool_versions = {{"hb_mapper", kMapperVersion}, {"openbpu", "0.1.0"}};
  for (const auto& in : config.input_parameters) {
    InputMeta meta;
    meta.type_rt = rt_override.count(in.name) ? rt_override[in.name] : in.type_rt;
    meta.type_train = in.type_train;
    meta.source = in.input_source.empty() ? (in.type_rt == "nv12" || in.type_rt == "gray" ? "pyramid" : "ddr")
                                          : in.input_source;
    bo.inputs[in.name] = meta;
  }
  if (!write_bin(best, bo, prefix + ".bin", &err)) return fail(err);
  guard.files.push_back(prefix + ".bin");

  for (size_t k = 0; k < best.subgraphs.size(); ++k) {
    const auto& sg = best.subgraphs[k];
    const double us = static_cast<double>(sg.est_cycles) / march->clock_mhz;
    log.info(sg.name + ": FPS=" + fixed(1e6 / std::max(us, 1e-3), 2) + ", latency = " + fixed(us, 1) +
             " us, MACs = " + std::to_string(sg.macs) + ", function calls = " + std::to_string(sg.fcs.size()));
  }
  // Node table with similarity and thresholds.
  std::map<std::string, double> cos(sim.nodes.begin(), sim.nodes.end());
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, const LayerTrace*> trace;
  for (const auto& t : best.traces) trace[t.value] = &t;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const auto& p = pl.nodes[i];
    const std::string v = n.outputs.empty() ? "" : n.outputs[0];
    std::string c = cos.count(v) ? fixed(cos[v]) : "--";
    std::string thr = "--", dtype = "float/float";
    if (p.device == Device::kBpu) {
      auto it = best_thr.find(v);
      if (it != best_thr.end() && trace.count(v)) thr = fixed(it->second);
      if (trace.count(v)) {
        const auto dt = trace[v]->q.dtype;
        dtype = std::string("int8/") + (dt == isa::DType::kInt32 ? "int32" : dt == isa::DType::kInt16 ? "int16" : "int8");
      } else {
        dtype = "int8/int8";
      }
    }
    rows.push_back({n.name, p.device == Device::kBpu ? "BPU" : "CPU",
                    p.subgraph >= 0 ? "id(" + std::to_string(p.subgraph) + ")" : "--", p.type, c, thr, dtype});
  }
  log.info("The main quantized node information:");
  print_table(log, {"Node", "ON", "Subgraph", "Type", "Cosine Similarity", "Threshold", "DataType"}, rows);
  log.info("The quantized model output:");
  std::vector<std::vector<std::string>> orows;
  for (const auto& o : sim.outputs)
    orows.push_back({o.name, fixed(o.cosine), fixed(o.l1), fixed(o.l2), fixed(o.chebyshev)});
  print_table(log, {"Output", "Cosine Similarity", "L1 Distance", "L2 Distance", "Chebyshev Distance"}, orows);
  guard.keep = true;
  log.info("Convert to runtime bin file successfully!");
  log.info("End Model Convert");
  return 0;
}

int run_infer(const Config& config, const std::string& model_file,
              const std::vector<std::pair<std::string, std::string>>& inputs, const std::string& output_dir,
              MapperLog& log) {
  std::string err;
  Graph g;
  if (!onnxio::load_model(model_file, &g, &err)) {
    log.error(err);
    return 1;
  }
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  std::map<std::string, Value> feed;
  const std::vector<CalInputSpec> specs = cal_specs(config);
  for (const auto& in : g.inputs) {
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == in; });
    if (it == inputs.end()) {
      log.error("--image-file: no data given for model input '" + in + "'");
      return 1;
    }
    const Value& gv = *g.value(in);
    const InputParameter* ip = nullptr;
    for (const auto& p : config.input_parameters)
      if (p.name == in) ip = &p;
    const CalInputSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.input == in) spec = &s;
    // A sample in the train type (an image, or a raw file of the train
    // size): the quantized model takes the runtime bytes, the float models
    // their "_128" input, made like calibration samples.
    const auto feed_train_sample = [&](const std::vector<float>& values) {
      Value v = gv;
      if (gv.native) {
        std::vector<uint8_t> bytes;
        if (!train_values_to_rt_bytes(*ip, values, &bytes, &err)) return false;
        v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
      } else {
        v = to_graph_input(*spec, values);
      }
      feed[in] = v;
      return true;
    };
    if (is_image_file(it->second)) {
      std::vector<float> values;
      if (ip == nullptr || spec == nullptr) {
        log.error("--image-file '" + it->second + "': input '" + in + "' is not in the config's input_parameters");
        return 1;
      }
      if (!image_to_train_values(it->second, *ip, &values, &err) || !feed_train_sample(values)) {
        log.error(err);
        return 1;
      }
      continue;
    }
    std::ifstream f(it->second, std::ios::binary);
    if (!f) {
      log.error("--image-file: cannot open '" + it->second + "'");
      return 1;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const int64_t need = gv.native ? gv.byte_size : gv.elements() * elem_size(gv.elem_type);
    if (static_cast<int64_t>(bytes.size()) == need) {
      Value v = gv;
      v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
      feed[in] = v;
      continue;
    }
    // A raw sample in the train type (uint8 or float32, like calibration data).
    int64_t train_elems = 1;
    if (spec != nullptr)
      for (int64_t d : spec->shape) train_elems *= d;
    std::vector<float> values;
    if (spec != nullptr && ip != nullptr && static_cast<int64_t>(bytes.size()) == train_elems) {
      values.assign(bytes.begin(), bytes.end());
    } else if (spec != nullptr && ip != nullptr && static_cast<int64_t>(bytes.size()) == train_elems * 4) {
      values.resize(static_cast<size_t>(train_elems));
      std::memcpy(values.data(), bytes.data(), bytes.size());
    } else {
      log.error("input file '" + it->second + "' has " + std::to_string(bytes.size()) + " bytes; model input '" + in +
                "' takes " + std::to_string(need) +
                (spec != nullptr ? " (or a train-type sample of " + std::to_string(train_elems) + " uint8 or float32 values)"
                                 : std::string()));
      return 1;
    }
    if (!feed_train_sample(values)) {
      log.error(err);
      return 1;
    }
  }
  FloatExecutor exec;
  std::map<std::string, Value> values;
  if (!exec.prepare(g, &err) || !exec.run(feed, &values, &err, nullptr, true)) {
    log.error(err);
    return 1;
  }
  for (const auto& [name, v] : values) {
    if (v.native || v.elem_type != kFloat || !v.data) continue;
    std::string file = name;
    for (char& ch : file)
      if (ch == '/' || ch == '\\' || ch == ':') ch = '_';
    std::ofstream o(output_dir + "/" + file + "_float.bin", std::ios::binary);
    o.write(reinterpret_cast<const char*>(v.data->data()), static_cast<std::streamsize>(v.data->size()));
  }
  log.info("infer done: " + std::to_string(values.size()) + " values written to " + output_dir);
  return 0;
}

}  // namespace openbpu::cvt
