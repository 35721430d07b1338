// SPDX-License-Identifier: Apache-2.0
#include "converter/writer/bin_writer.h"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "bpu_sim/isa/codec.h"
#include "bpu_sim/timing.h"
#include "converter/passes/pass_util.h"
#include "runtime/core/tensor.h"
#include "schema/verify.h"
#include "schema/writer.h"

namespace openbpu::cvt {

namespace {

std::unique_ptr<fb::TensorT> tensor_of(const Value& v) {
  auto t = std::make_unique<fb::TensorT>();
  t->name = v.name;
  if (v.native) {
    t->data_type = static_cast<fb::DataType>(v.rt_type);
    t->layout = static_cast<fb::Layout>(v.layout);
    t->valid_shape.assign(v.valid.begin(), v.valid.end());
    t->aligned_shape.assign(v.aligned.begin(), v.aligned.end());
    t->aligned_byte_size = v.byte_size;
    if (rt::is_image_type(v.rt_type)) {
      t->strides.assign(v.valid.size(), 0);
    } else {
      std::vector<int32_t> al(v.aligned.begin(), v.aligned.end());
      t->strides = rt::dense_strides(al, rt::element_size(v.rt_type));
    }
    if (v.quant.type != rt::kQuantNone) {
      auto q = std::make_unique<fb::QuantT>();
      q->type = static_cast<fb::QuantType>(v.quant.type);
      q->axis = v.quant.axis;
      q->scales = v.quant.scales;
      q->shifts = v.quant.shifts;
      q->zero_points = v.quant.zero_points;
      t->quant = std::move(q);
    }
    return t;
  }
  const int32_t rt_type = to_rt_type(v.elem_type);
  t->data_type = static_cast<fb::DataType>(rt_type < 0 ? rt::kF32 : rt_type);
  t->layout = v.shape.size() == 4 ? fb::Layout::NCHW : fb::Layout::NONE;
  t->valid_shape.assign(v.shape.begin(), v.shape.end());
  t->aligned_shape = t->valid_shape;
  std::vector<int32_t> sh(v.shape.begin(), v.shape.end());
  t->strides = rt::dense_strides(sh, rt::element_size(rt_type));
  t->aligned_byte_size = std::max<int64_t>(v.elements(), 0) * elem_size(v.elem_type);
  return t;
}

// The openbpu Dequantize computing `x` when one node alone reads `x` (not a
// model output); -1 otherwise.
int sole_dequantize_of(const Graph& g, const std::string& x) {
  if (!single_use(g, x)) return -1;
  const int di = producer_index(g, x);
  if (di < 0) return -1;
  const Node& d = g.nodes[static_cast<size_t>(di)];
  return d.domain == "openbpu" && d.op_type == "Dequantize" ? di : -1;
}

// Lets the Dequantize of `x` write model output `o` (described by `v`) in
// place of the CPU node at `reader`, which is dropped (same bytes).
void write_output_from_dequantize(Graph* g, int dequantize, int reader, const std::string& o, Value v) {
  v.name = o;
  g->nodes[static_cast<size_t>(dequantize)].outputs[0] = o;
  g->values[o] = std::move(v);
  g->nodes.erase(g->nodes.begin() + reader);
}

// A fully connected layer's [N, C] output is the BPU's (N, C, 1, 1)
// dequantized and then reshaped on the CPU: described 4-D NCHW (N, C, 1, 1)
// with dense strides ((4C, 4, 4, 4) for float32), as the vendor's
// hrt_model_exec model_info shows for classifiers.
bool fold_fc_reshape(Graph* g, const std::string& o) {
  const int ri = producer_index(*g, o);
  if (ri < 0) return false;
  const Node& r = g->nodes[static_cast<size_t>(ri)];
  if (r.op_type != "Reshape" || !r.domain.empty() || r.inputs.empty()) return false;
  const Value* xv = g->value(r.inputs[0]);
  const Value* ov = g->value(o);
  if (!xv || !ov || xv->shape.size() != 4 || xv->shape[2] != 1 || xv->shape[3] != 1 ||
      ov->shape != std::vector<int64_t>{xv->shape[0], xv->shape[1]})
    return false;
  const int di = sole_dequantize_of(*g, r.inputs[0]);
  if (di < 0) return false;
  write_output_from_dequantize(g, di, ri, o, *xv);
  return true;
}

// An output the model permutes to NHWC (a Transpose with perm (0,2,3,1) of
// a 4-D value, e.g. detection heads exported as [1,H,W,C]): boards write the
// NCHW value in the BPU's NHWC order and describe it HB_DNN_LAYOUT_NHWC,
// valid and aligned shape (N,H,W,C), dense strides. The Dequantize writes
// the value as that NHWC tensor (the runtime's CPU operators address NHWC
// tensors in their logical NCHW order) and the Transpose is dropped.
bool fold_nhwc_transpose(Graph* g, const std::string& o) {
  const int ti = producer_index(*g, o);
  if (ti < 0) return false;
  const Node& t = g->nodes[static_cast<size_t>(ti)];
  if (t.op_type != "Transpose" || !t.domain.empty() || t.inputs.size() != 1 ||
      t.attrs.get_ints("perm") != std::vector<int64_t>{0, 2, 3, 1})
    return false;
  const Value* xv = g->value(t.inputs[0]);
  const Value* ov = g->value(o);
  const int32_t rt_type = ov ? to_rt_type(ov->elem_type) : -1;
  if (!xv || !ov || !xv->shape_known() || xv->shape.size() != 4 || xv->native || rt_type < 0) return false;
  const int di = sole_dequantize_of(*g, t.inputs[0]);
  if (di < 0) return false;
  Value v = *ov;
  v.native = true;
  v.rt_type = rt_type;
  v.layout = rt::kNHWC;
  v.valid = v.aligned = {xv->shape[0], xv->shape[2], xv->shape[3], xv->shape[1]};
  v.byte_size = xv->elements() * elem_size(ov->elem_type);
  v.quant = rt::QuantInfo{};
  write_output_from_dequantize(g, di, ti, o, std::move(v));
  return true;
}

// Model outputs as boards describe them (the two folds above); the runtime
// model drops the CPU node that only reshapes or permutes the Dequantize's
// result. Same bytes in the user's buffer; the ONNX files keep the model's
// nodes.
Graph with_board_outputs(const Graph& in) {
  Graph g = in;
  for (const std::string& o : in.outputs)
    if (!fold_fc_reshape(&g, o)) fold_nhwc_transpose(&g, o);
  return g;
}

std::unique_ptr<fb::AttrT> attr_of(const std::string& name, const rt::AttrValue& v, model::ModelFileWriter* w) {
  auto a = std::make_unique<fb::AttrT>();
  a->name = name;
  switch (v.type) {
    case rt::AttrValue::kInt: a->type = fb::AttrType::INT, a->i = v.i; break;
    case rt::AttrValue::kFloat: a->type = fb::AttrType::FLOAT, a->f = v.f; break;
    case rt::AttrValue::kString: a->type = fb::AttrType::STRING, a->s = v.s; break;
    case rt::AttrValue::kInts: a->type = fb::AttrType::INTS, a->ints = v.ints; break;
    case rt::AttrValue::kFloats: a->type = fb::AttrType::FLOATS, a->floats = v.floats; break;
    case rt::AttrValue::kStrings: a->type = fb::AttrType::STRINGS, a->strings = v.strings; break;
    case rt::AttrValue::kBlob:
      a->type = fb::AttrType::BLOB;
      a->blob = std::make_unique<fb::BlobRef>(w->add_blob(v.blob, v.blob_size));
      break;
    case rt::AttrValue::kTensor:
      // A tensor attribute: the data as a blob, "tensor" marks it, i holds
      // the data type and ints the dimensions.
      a->type = fb::AttrType::BLOB;
      a->s = "tensor";
      a->i = v.tensor_type;
      a->ints = v.tensor_dims;
      a->blob = std::make_unique<fb::BlobRef>(w->add_blob(*v.tensor));
      break;
  }
  return a;
}

// The HBM description JSON of an .hbm file (hbDNNGetHBMDesc).
std::string hbm_desc(const Graph& g, const BinWriteOptions& opt) {
  nlohmann::ordered_json model;
  model["desc"] = "";
  model["march"] = opt.march;
  model["inputs"] = g.inputs;
  model["outputs"] = g.outputs;
  nlohmann::ordered_json root;
  root["models"][opt.model_name] = model;
  root["builder"] = opt.builder;
  return root.dump();
}

}  // namespace

namespace {

fb::DataType layer_data_type(isa::DType t) {
  return t == isa::DType::kInt32 ? fb::DataType::S32 : t == isa::DType::kInt16 ? fb::DataType::S16 : fb::DataType::S8;
}

// Where layer output `value` of subgraph k is when its instructions are done.
std::unique_ptr<fb::LayerOutputT> layer_output(const LayerTrace& t, const std::string& name) {
  auto o = std::make_unique<fb::LayerOutputT>();
  o->name = name;
  o->value = t.value;
  o->region = static_cast<uint8_t>(t.ref.region);
  o->index = t.ref.index;
  o->offset = t.ref.offset;
  o->data_type = layer_data_type(t.ref.dtype);
  const int es = isa::dtype_size(t.ref.dtype);
  for (int d = 0; d < 4; ++d) {
    o->dims.push_back(t.ref.dims[d]);
    o->strides.push_back(t.ref.strides[d] * es);
  }
  o->quant = std::make_unique<fb::QuantT>();
  o->quant->type = fb::QuantType::SCALE;
  const bool per_channel = t.q.dtype == isa::DType::kInt32 && !t.q.channel_scales.empty();
  o->quant->scales = per_channel ? t.q.channel_scales : std::vector<float>{t.q.scale};
  o->quant->axis = per_channel ? 3 : 0;
  if (!per_channel && t.q.zero_point != 0) o->quant->zero_points = {static_cast<int8_t>(t.q.zero_point)};
  return o;
}

// The debug records of every BPU segment's layers (views, which have no
// instructions, are left out).
void add_layer_records(const CompiledModel& cm, const isa::MarchInfo& march, fb::ModelT* m) {
  std::map<std::pair<int, std::string>, const LayerTrace*> trace;
  for (const LayerTrace& t : cm.traces) trace[{t.subgraph, t.value}] = &t;
  for (size_t s = 0; s < m->segments.size(); ++s) {
    if (m->segments[s]->kind.AsBpuProgram() == nullptr) continue;
    for (size_t k = 0; k < cm.subgraphs.size(); ++k) {
      const CompiledSubgraph& sg = cm.subgraphs[k];
      if (sg.name != m->segments[s]->name) continue;
      for (const LayerSpan& l : sg.layers) {
        if (l.count == 0) continue;
        auto r = std::make_unique<fb::LayerDebugT>();
        r->name = l.node;
        r->op_type = l.op_type;
        r->segment = static_cast<uint32_t>(s);
        r->first_instruction = l.first;
        r->instruction_count = l.count;
        for (uint32_t i = l.first; i < l.first + l.count && i < sg.program.size(); ++i)
          r->est_cycles += sim::estimate_cost(sg.program[i], march).cycles;
        r->nodes = l.nodes;
        for (size_t o = 0; o < l.outputs.size(); ++o) {
          auto t = trace.find({static_cast<int>(k), l.outputs[o]});
          if (t != trace.end() && t->second->ref.region != isa::Region::kInput)
            r->outputs.push_back(layer_output(*t->second, l.output_names[o]));
        }
        m->layers.push_back(std::move(r));
      }
    }
  }
}

}  // namespace

bool build_bin(const CompiledModel& cm, const BinWriteOptions& opt, std::vector<uint8_t>* bytes, std::string* error) {
  const Graph g = with_board_outputs(cm.graph);
  model::ModelFileWriter w;
  auto m = std::make_unique<fb::ModelT>();
  m->name = opt.model_name;
  m->march = opt.march;
  std::map<std::string, uint32_t> index;
  auto tensor_index = [&](const std::string& name) -> int64_t {
    auto it = index.find(name);
    if (it != index.end()) return it->second;
    const Value* v = g.value(name);
    if (v == nullptr) return -1;
    auto t = tensor_of(*v);
    if (v->is_constant()) {
      t->constant = std::make_unique<fb::BlobRef>(w.add_blob(*v->data));
      t->aligned_byte_size = static_cast<int64_t>(v->data->size());
    }
    const uint32_t i = static_cast<uint32_t>(m->tensors.size());
    m->tensors.push_back(std::move(t));
    index[name] = i;
    return i;
  };
  for (const auto& in : g.inputs) {
    if (tensor_index(in) < 0) {
      *error = "writer: unknown input '" + in + "'";
      return false;
    }
    auto mi = std::make_unique<fb::InputT>();
    mi->tensor = index[in];
    auto it = opt.inputs.find(in);
    if (it != opt.inputs.end()) {
      mi->input_type_rt = it->second.type_rt;
      mi->input_type_train = it->second.type_train;
      mi->source = it->second.source == "pyramid"   ? fb::InputSource::PYRAMID
                   : it->second.source == "resizer" ? fb::InputSource::RESIZER
                                                    : fb::InputSource::DDR;
    }
    m->inputs.push_back(std::move(mi));
  }
  size_t sg_index = 0;
  for (const Node& n : g.nodes) {
    auto seg = std::make_unique<fb::SegmentT>();
    seg->name = n.name;
    if (n.domain == "openbpu" && n.op_type == "BpuSubgraph") {
      CompiledSubgraph sg;
      if (!program_from_attrs(n.attrs, &sg, error)) return false;
      fb::BpuProgramT p;
      const std::vector<uint8_t> code = isa::encode_program(sg.program);
      p.code = std::make_unique<fb::BlobRef>(w.add_blob(code));
      const Value* consts = g.value(n.inputs.back());
      p.constants = std::make_unique<fb::BlobRef>(w.add_blob(*consts->data));
      p.scratch_size = sg.scratch_size;
      for (const auto& fc : sg.fcs) {
        p.fcs.emplace_back(static_cast<uint32_t>(fc[0]), static_cast<uint32_t>(fc[1]), fc[2]);
      }
      p.macs = sg.macs;
      for (size_t i = 0; i + 1 < n.inputs.size(); ++i) seg->inputs.push_back(static_cast<uint32_t>(tensor_index(n.inputs[i])));
      seg->kind.Set(std::move(p));
      ++sg_index;
    } else {
      fb::CpuOpT op;
      op.op_type = n.op_type;
      op.domain = n.domain;
      for (const auto& [name, v] : n.attrs.all()) op.attrs.push_back(attr_of(name, v, &w));
      rt::AttrValue opset;
      opset.type = rt::AttrValue::kInt;
      opset.i = g.opset;
      if (!n.attrs.has("__opset")) op.attrs.push_back(attr_of("__opset", opset, &w));
      for (const auto& in : n.inputs) {
        seg->inputs.push_back(in.empty() ? model::kAbsentInput : static_cast<uint32_t>(tensor_index(in)));
      }
      seg->kind.Set(std::move(op));
    }
    // Omitted optional outputs keep their position (kAbsentInput); trailing
    // ones are left out.
    size_t n_out = n.outputs.size();
    while (n_out > 0 && n.outputs[n_out - 1].empty()) --n_out;
    for (size_t k = 0; k < n_out; ++k)
      seg->outputs.push_back(n.outputs[k].empty() ? model::kAbsentInput
                                                  : static_cast<uint32_t>(tensor_index(n.outputs[k])));
    m->segments.push_back(std::move(seg));
  }
  (void)sg_index;
  for (const auto& o : g.outputs) {
    auto mo = std::make_unique<fb::OutputT>();
    mo->tensor = static_cast<uint32_t>(tensor_index(o));
    mo->operator_type = 1;
    m->outputs.push_back(std::move(mo));
  }
  if (const isa::MarchInfo* march = isa::find_march(opt.march); opt.debug && march != nullptr)
    add_layer_records(cm, *march, m.get());
  for (const auto& [k, v] : opt.metadata) model::set_metadata(m.get(), k, v);
  m->config_yaml = opt.config_yaml;
  m->core_num = static_cast<uint8_t>(opt.core_num);
  m->estimated_latency_us = static_cast<uint32_t>(std::min(estimate_model_latency_us(*m), 2147483647.0));
  fb::ModelFileT file;
  file.builder = opt.builder;
  if (opt.hbm) {
    file.generation = fb::Generation::B;
    file.desc = hbm_desc(g, opt);
  }
  for (const auto& [k, v] : opt.tool_versions) {
    auto kv = std::make_unique<fb::KeyValueT>();
    kv->key = k;
    kv->value = v;
    file.tool_versions.push_back(std::move(kv));
  }
  file.models.push_back(std::move(m));
  *bytes = w.finish(&file);
  return true;
}

double estimate_model_latency_us(const fb::ModelT& m) {
  const isa::MarchInfo* march = isa::find_march(m.march);
  if (march == nullptr) return 0.0;
  std::vector<sim::SegmentCost> costs;
  for (const auto& seg : m.segments) {
    sim::SegmentCost c;
    if (const auto* p = seg->kind.AsBpuProgram()) {
      c.bpu = true;
      for (const auto& fc : p->fcs) c.cycles += fc.est_cycles();
    } else if (const auto* op = seg->kind.AsCpuOp()) {
      c.op_type = op->op_type;
      for (uint32_t o : seg->outputs) {
        if (o >= m.tensors.size()) continue;
        uint64_t n = 1;
        for (int d : m.tensors[o]->valid_shape) n *= static_cast<uint64_t>(std::max(d, 0));
        c.elements += n;
      }
    }
    costs.push_back(c);
  }
  return sim::estimate_model_us(costs, *march);
}

bool write_bin(const CompiledModel& cm, const BinWriteOptions& opt, const std::string& path, std::string* error) {
  std::vector<uint8_t> bytes;
  if (!build_bin(cm, opt, &bytes, error)) return false;
  return model::write_file_atomic(path, bytes, error);
}

}  // namespace openbpu::cvt
