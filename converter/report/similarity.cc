// SPDX-License-Identifier: Apache-2.0
#include "converter/report/similarity.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "converter/ir/executor.h"
#include "converter/ir/local_ops.h"
#include "converter/quant/method_search.h"

namespace openbpu::cvt {

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
          out.push_back((q - t.q.zero_point) * s);
        }
  return out;
}

namespace {

// The compiled model's value of a float value traced on the BPU.
std::vector<double> traced_value(const CompiledModel& cm, const LayerTrace& t, const ScratchCapture& capture,
                                 const std::map<std::string, Value>& qvals) {
  const std::string sg = cm.subgraphs[static_cast<size_t>(t.subgraph)].name;
  if (t.ref.region == isa::Region::kScratch) {
    auto s = capture.scratch.find(sg);
    return s != capture.scratch.end() ? dequantize_trace(t, s->second) : std::vector<double>{};
  }
  // Region kInput/kOutput: the subgraph node's input/output value.
  std::vector<double> q;
  for (const Node& qn : cm.graph.nodes)
    if (qn.name == sg) {
      const auto& names = t.ref.region == isa::Region::kInput ? qn.inputs : qn.outputs;
      if (t.ref.index < names.size()) {
        auto qv = qvals.find(names[t.ref.index]);
        if (qv != qvals.end() && qv->second.data) q = dequantize_trace(t, *qv->second.data);
      }
    }
  return q;
}

Similarity::Output output_similarity(const std::string& name, const std::vector<double>& a,
                                     const std::vector<double>& b) {
  Similarity::Output out{name, cosine_similarity(a, b), 0, 0, 0};
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    out.l1 += d;
    out.l2 += d * d;
    out.chebyshev = std::max(out.chebyshev, d);
  }
  if (!a.empty()) out.l1 /= static_cast<double>(a.size());
  out.l2 = std::sqrt(out.l2);
  return out;
}

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
      q = traced_value(cm, *tit->second, capture, qvals);
      // Compared as its readers see it: clamped to where their tables are
      // not flat (QParams::flat_below / flat_above).
      for (double& x : f) x = std::clamp(x, tit->second->q.flat_below, tit->second->q.flat_above);
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
    sim->outputs.push_back(output_similarity(o, fo->second.to_doubles(), qo->second.to_doubles()));
  }
  return true;
}

}  // namespace openbpu::cvt
