// SPDX-License-Identifier: Apache-2.0
#include "converter/ir/executor.h"

#include "converter/ir/local_ops.h"

namespace openbpu::cvt {

rt::TensorDesc desc_of(const Value& v) {
  rt::TensorDesc d;
  d.name = v.name;
  if (v.native) {
    d.data_type = v.rt_type;
    d.layout = v.layout;
    for (int64_t s : v.valid) d.valid.push_back(static_cast<int32_t>(s));
    for (int64_t s : v.aligned) d.aligned.push_back(static_cast<int32_t>(s));
    d.aligned_byte_size = v.byte_size;
    d.quant = v.quant;
    if (!rt::is_image_type(d.data_type)) d.strides = rt::dense_strides(d.aligned, rt::element_size(d.data_type));
    return d;
  }
  d.data_type = to_rt_type(v.elem_type);
  d.layout = rt::kLayoutNone;
  for (int64_t s : v.shape) d.valid.push_back(static_cast<int32_t>(s));
  d.aligned = d.valid;
  d.aligned_byte_size = std::max<int64_t>(v.elements(), 0) * elem_size(v.elem_type);
  return d;
}

bool create_kernel(const Graph& g, const Node& n, std::unique_ptr<rt::CpuKernel>* kernel, std::string* error) {
  rt::CpuOpDef def;
  def.name = n.name;
  def.op_type = n.op_type;
  def.domain = n.domain;
  def.attrs = n.attrs;
  rt::AttrValue opset;
  opset.type = rt::AttrValue::kInt;
  opset.i = g.opset;
  def.attrs.set("__opset", opset);
  std::vector<rt::TensorDesc> ins, outs;
  for (const auto& name : n.inputs) {
    const Value* v = name.empty() ? nullptr : g.value(name);
    if (!name.empty() && (v == nullptr || !v->shape_known())) {
      *error = "node '" + n.name + "': input '" + name + "' has no known shape";
      return false;
    }
    ins.push_back(v ? desc_of(*v) : rt::TensorDesc{});
  }
  for (const auto& name : n.outputs) {
    const Value* v = name.empty() ? nullptr : g.value(name);
    if (!name.empty() && (v == nullptr || !v->shape_known())) {
      *error = "node '" + n.name + "': output '" + name + "' has no known shape";
      return false;
    }
    outs.push_back(v ? desc_of(*v) : rt::TensorDesc{});
  }
  std::vector<const rt::TensorDesc*> in_ptrs, out_ptrs;
  for (const auto& d : ins) in_ptrs.push_back(&d);
  for (const auto& d : outs) out_ptrs.push_back(&d);
  const rt::CpuOpEntry* local = find_local_op(n.domain, n.op_type);
  const rt::Status st = local ? local->create(def, in_ptrs, out_ptrs, kernel)
                              : rt::create_cpu_kernel(def, in_ptrs, out_ptrs, kernel);
  if (!st.ok()) {
    *error = st.message();
    return false;
  }
  return true;
}

Value make_value(const std::string& name, int32_t elem_type, const std::vector<int64_t>& shape) {
  Value v;
  v.name = name;
  v.elem_type = elem_type;
  v.has_shape = true;
  v.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  v.data = std::make_shared<const std::vector<uint8_t>>(static_cast<size_t>(n * elem_size(elem_type)), 0);
  return v;
}

bool FloatExecutor::prepare(const Graph& g, std::string* error) {
  graph_ = &g;
  kernels_.clear();
  in_desc_.clear();
  out_desc_.clear();
  last_use_.clear();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::unique_ptr<rt::CpuKernel> k;
    if (!create_kernel(g, n, &k, error)) return false;
    kernels_.push_back(std::move(k));
    std::vector<rt::TensorDesc> ins, outs;
    for (const auto& name : n.inputs) ins.push_back(name.empty() ? rt::TensorDesc{} : desc_of(*g.value(name)));
    for (const auto& name : n.outputs) outs.push_back(name.empty() ? rt::TensorDesc{} : desc_of(*g.value(name)));
    in_desc_.push_back(std::move(ins));
    out_desc_.push_back(std::move(outs));
    for (const auto& name : n.inputs)
      if (!name.empty()) last_use_[name] = static_cast<int>(i);
  }
  return true;
}

bool FloatExecutor::run(const std::map<std::string, Value>& inputs, std::map<std::string, Value>* outputs,
                        std::string* error, const std::set<std::string>* keep, bool keep_all,
                        const ValueHook& hook) const {
  const Graph& g = *graph_;
  std::map<std::string, std::shared_ptr<std::vector<uint8_t>>> live;
  for (const auto& in : g.inputs) {
    auto it = inputs.find(in);
    if (it == inputs.end() || !it->second.data) {
      *error = "missing data for graph input '" + in + "'";
      return false;
    }
    const Value* gv = g.value(in);
    const int64_t need = gv->native ? gv->byte_size : gv->elements() * elem_size(gv->elem_type);
    if (static_cast<int64_t>(it->second.data->size()) != need) {
      *error = "graph input '" + in + "' needs " + std::to_string(need) + " bytes, got " +
               std::to_string(it->second.data->size());
      return false;
    }
    live[in] = std::make_shared<std::vector<uint8_t>>(*it->second.data);
  }
  auto wanted = [&](const std::string& name) {
    return keep_all || g.is_graph_output(name) || (keep && keep->count(name));
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::vector<rt::CpuTensor> ins, outs;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const std::string& name = n.inputs[k];
      uint8_t* p = nullptr;
      if (!name.empty()) {
        const Value* v = g.value(name);
        if (v->is_constant()) {
          p = const_cast<uint8_t*>(v->data->data());
        } else {
          auto it = live.find(name);
          if (it == live.end()) {
            *error = "node '" + n.name + "': input '" + name + "' was not computed";
            return false;
          }
          p = it->second->data();
        }
      }
      ins.push_back({&in_desc_[i][k], p});
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const std::string& name = n.outputs[k];
      if (name.empty()) {
        outs.push_back({&out_desc_[i][k], nullptr});
        continue;
      }
      auto buf = std::make_shared<std::vector<uint8_t>>(
          static_cast<size_t>(std::max<int64_t>(out_desc_[i][k].aligned_byte_size, 1)), 0);
      outs.push_back({&out_desc_[i][k], buf->data()});
      live[name] = buf;
    }
    const rt::Status st = kernels_[i]->run(ins, outs);
    if (!st.ok()) {
      *error = "node '" + n.name + "' (" + n.op_type + "): " + st.message();
      return false;
    }
    if (hook)
      for (size_t k = 0; k < n.outputs.size(); ++k)
        if (!n.outputs[k].empty()) hook(n.outputs[k], g.value(n.outputs[k])->elem_type, *live[n.outputs[k]]);
    // Free values whose last reader ran, unless wanted.
    for (const auto& name : n.inputs) {
      auto lu = last_use_.find(name);
      if (!name.empty() && lu != last_use_.end() && lu->second == static_cast<int>(i) && !wanted(name))
        live.erase(name);
    }
  }
  for (auto& [name, buf] : live) {
    if (!wanted(name)) continue;
    const Value* gv = g.value(name);
    Value v = *gv;
    v.data = nullptr;
    buf->resize(static_cast<size_t>(gv->native ? gv->byte_size : gv->elements() * elem_size(gv->elem_type)));
    v.data = buf;
    (*outputs)[name] = std::move(v);
  }
  for (const auto& o : g.outputs)
    if (outputs->count(o) == 0) {
      const Value* gv = g.value(o);
      if (gv && gv->is_constant()) (*outputs)[o] = *gv;
    }
  return true;
}

}  // namespace openbpu::cvt
