// SPDX-License-Identifier: Apache-2.0
#include "converter/codegen/quantized_graph.h"

#include <set>

#include "runtime/core/tensor.h"

namespace openbpu::cvt {

namespace {

using isa::DType;

std::string native_name(const std::string& v) { return v + "_quantized"; }

// Fills the native description of a quantized value.
Value native_value(const std::string& name, const Dims4& d, const QParams& q, int align) {
  Value v;
  v.name = name;
  v.native = true;
  v.layout = rt::kNHWC;
  const int64_t cp = isa::align_up(static_cast<int>(d[1]), align);
  v.valid = {d[0], d[2], d[3], d[1]};
  v.aligned = {d[0], d[2], d[3], cp};
  switch (q.dtype) {
    case DType::kInt16: v.rt_type = rt::kS16, v.elem_type = kInt16; break;
    case DType::kInt32: v.rt_type = rt::kS32, v.elem_type = kInt32; break;
    default: v.rt_type = rt::kS8, v.elem_type = kInt8; break;
  }
  v.byte_size = static_cast<int64_t>(native_bytes(d, q.dtype, align));
  v.has_shape = true;
  v.shape = v.aligned;
  v.quant.type = rt::kQuantScale;
  v.quant.axis = 3;
  if (q.dtype == DType::kInt32 && !q.channel_scales.empty())
    v.quant.scales = q.channel_scales;
  else
    v.quant.scales = {q.scale};
  return v;
}

// Native description of a model image input (runtime input of a Preprocess).
Value image_value(const std::string& name, const std::string& rt, const std::string& rt_layout, int64_t h, int64_t w) {
  Value v;
  v.name = name;
  v.native = true;
  v.elem_type = kUint8;
  v.has_shape = true;
  if (rt == "nv12") {
    v.rt_type = rt::kImgNV12, v.layout = rt::kNCHW, v.valid = {1, 3, h, w}, v.byte_size = h * w * 3 / 2;
  } else if (rt == "gray") {
    v.rt_type = rt::kImgY, v.layout = rt::kNCHW, v.valid = {1, 1, h, w}, v.byte_size = h * w;
  } else {
    v.rt_type = rt == "rgb" ? rt::kImgRGB : rt == "bgr" ? rt::kImgBGR : rt::kImgYUV444;
    const bool nhwc = rt_layout != "NCHW";
    v.layout = nhwc ? rt::kNHWC : rt::kNCHW;
    v.valid = nhwc ? std::vector<int64_t>{1, h, w, 3} : std::vector<int64_t>{1, 3, h, w};
    v.byte_size = h * w * 3;
  }
  v.aligned = v.valid;
  v.shape = {v.byte_size};
  return v;
}

// Builds the quantized graph node by node.
class Exporter {
 public:
  Exporter(const Graph& g, const std::map<std::string, QParams>& q, int align, Graph* qg)
      : g_(g), q_(q), align_(align), qg_(*qg), images_(image_inputs(g)) {}

  void inputs() {
    std::map<std::string, const Node*> pre;
    for (const auto& n : g_.nodes)
      if (n.domain == "openbpu" && n.op_type == "Preprocess") pre[n.inputs[0]] = &n;
    for (const auto& in : g_.inputs) {
      if (images_.count(in)) {
        const Node& n = *pre.at(in);
        const Dims4 d = logical4(g_.value(n.outputs[0])->shape);
        qg_.values[in] = image_value(in, n.attrs.get_string("rt", "bgr"), n.attrs.get_string("rt_layout", "NHWC"),
                                     d[2], d[3]);
        have_native_.insert(in);
      } else {
        qg_.values[in] = *g_.value(in);
      }
      qg_.inputs.push_back(in);
      have_float_.insert(in);  // (image inputs too: no CPU node reads them)
    }
  }

  void bpu_subgraph(const CompiledSubgraph& sg, const SubgraphPlan& plan) {
    Node bn;
    bn.name = sg.name;
    bn.op_type = "BpuSubgraph";
    bn.domain = "openbpu";
    for (const auto& in : plan.inputs) {
      ensure_native(in);
      bn.inputs.push_back(images_.count(in) ? in : native_name(in));
    }
    std::vector<uint8_t> cbytes = sg.constants;
    if (cbytes.empty()) cbytes.assign(64, 0);
    const int64_t csize = static_cast<int64_t>(cbytes.size());
    bn.inputs.push_back(qg_.add_constant(sg.name + "_constants", kUint8, {csize}, std::move(cbytes)));
    for (const auto& o : plan.outputs) {
      qg_.values[native_name(o)] = native_value(native_name(o), logical4(g_.value(o)->shape), q_.at(o), align_);
      bn.outputs.push_back(native_name(o));
      have_native_.insert(o);
    }
    set_program_attrs(sg, &bn.attrs);
    qg_.nodes.push_back(bn);
  }

  void cpu_node(const Node& n) {
    for (const auto& in : n.inputs) {
      if (in.empty()) continue;
      const Value* v = g_.value(in);
      if (v && v->is_constant()) {
        qg_.values[in] = *v;
        continue;
      }
      ensure_float(in);
    }
    for (const auto& o : n.outputs) {
      if (o.empty()) continue;
      qg_.values[o] = *g_.value(o);
      have_float_.insert(o);
    }
    qg_.nodes.push_back(n);
  }

  bool outputs(std::string* error) {
    for (const auto& o : g_.outputs) {
      if (!have_float_.count(o)) {
        if (!have_native_.count(o)) {
          *error = "model output '" + o + "' is never computed";
          return false;
        }
        ensure_float(o);
      }
      qg_.outputs.push_back(o);
    }
    return true;
  }

 private:
  // Quantize on the CPU: float value -> native int8/int16.
  void ensure_native(const std::string& v) {
    if (have_native_.count(v)) return;
    Node qn;
    qn.name = v + "_HzQuantize";
    qn.op_type = "Quantize";
    qn.domain = "openbpu";
    qn.inputs = {v};
    qn.outputs = {native_name(v)};
    qg_.values[native_name(v)] = native_value(native_name(v), logical4(g_.value(v)->shape), q_.at(v), align_);
    qg_.nodes.push_back(qn);
    have_native_.insert(v);
  }

  // Dequantize (float values) or LayoutConvert (int outputs) on the CPU.
  void ensure_float(const std::string& v) {
    if (have_float_.count(v)) return;
    const Value* fv = g_.value(v);
    Node dn;
    const auto it = q_.find(v);
    const bool int32 = it != q_.end() && it->second.dtype == DType::kInt32;
    dn.name = v + (int32 && fv->elem_type != kFloat ? "_LayoutConvert" : "_HzDequantize");
    dn.op_type = fv->elem_type == kFloat ? "Dequantize" : "LayoutConvert";
    dn.domain = "openbpu";
    dn.inputs = {native_name(v)};
    dn.outputs = {v};
    qg_.values[v] = *fv;
    qg_.nodes.push_back(dn);
    have_float_.insert(v);
  }

  const Graph& g_;
  const std::map<std::string, QParams>& q_;
  int align_;
  Graph& qg_;
  const std::set<std::string> images_;
  std::set<std::string> have_native_, have_float_;
};

}  // namespace

std::set<std::string> image_inputs(const Graph& g) {
  std::set<std::string> s;
  for (const auto& n : g.nodes)
    if (n.domain == "openbpu" && n.op_type == "Preprocess") s.insert(n.inputs[0]);
  return s;
}

bool export_quantized_graph(const Graph& g, const Placement& pl, const std::vector<SubgraphPlan>& plans,
                            const std::vector<CompiledSubgraph>& subgraphs, const std::map<std::string, QParams>& q,
                            int align, Graph* qg, std::string* error) {
  *qg = Graph();
  qg->name = g.name;
  qg->opset = g.opset;
  qg->ir_version = g.ir_version;
  Exporter ex(g, q, align, qg);
  ex.inputs();
  std::vector<bool> sg_done(plans.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int k = pl.nodes[i].subgraph;
    if (k < 0) {
      ex.cpu_node(g.nodes[i]);
    } else if (!sg_done[static_cast<size_t>(k)]) {
      sg_done[static_cast<size_t>(k)] = true;
      ex.bpu_subgraph(subgraphs[static_cast<size_t>(k)], plans[static_cast<size_t>(k)]);
    }
  }
  return ex.outputs(error);
}

}  // namespace openbpu::cvt
