// SPDX-License-Identifier: Apache-2.0
#include "converter/codegen/memory_plan.h"

#include <algorithm>

#include "converter/ops/op_unit.h"

namespace openbpu::cvt {

using isa::Region;

uint64_t ScratchArena::alloc(uint64_t size) {
  size = (size + 63) / 64 * 64;
  uint64_t off = 0;
  std::sort(live_.begin(), live_.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
  for (const Block& b : live_) {
    if (off + size <= b.offset) break;
    off = std::max(off, b.offset + b.size);
  }
  live_.push_back({off, size});
  peak_ = std::max(peak_, off + size);
  return off;
}

void ScratchArena::free(uint64_t offset) {
  live_.erase(std::remove_if(live_.begin(), live_.end(), [&](const Block& b) { return b.offset == offset; }),
              live_.end());
}

std::string MemoryPlan::root(std::string v) const {
  for (auto it = alias_of.find(v); it != alias_of.end(); it = alias_of.find(v)) v = it->second;
  return v;
}

namespace {

Dims4 dims_of(const Graph& g, const std::string& v) { return logical4(g.value(v)->shape); }

// Views: outputs of view units (Reshape family) that are not subgraph
// outputs and have the input's dims, type and scale share its memory. Also
// the op index after which each root value is dead.
void find_views(const Graph& g, const SubgraphPlan& plan, const std::map<std::string, QParams>& q,
                const std::set<std::string>& outputs, MemoryPlan* mp, std::map<std::string, size_t>* root_last) {
  std::map<std::string, size_t> last_use;
  for (size_t oi = 0; oi < plan.ops.size(); ++oi)
    for (const auto& in : plan.ops[oi].inputs) last_use[in] = oi;
  for (size_t oi = 0; oi < plan.ops.size(); ++oi) {
    const Op& op = plan.ops[oi];
    for (const auto& in : op.inputs) {
      const std::string r = mp->root(in);
      (*root_last)[r] = std::max((*root_last)[r], last_use[in]);
    }
    const std::string& x = op.inputs.empty() ? std::string() : op.inputs[0];
    const std::string& y = op.outputs[0];
    if (op.unit->view && !outputs.count(y) && dims_of(g, x) == dims_of(g, y) && q.at(x).dtype == q.at(y).dtype &&
        q.at(x).scale == q.at(y).scale && q.at(x).zero_point == q.at(y).zero_point) {
      mp->alias_of[y] = x;
      const std::string r = mp->root(x);
      (*root_last)[r] = std::max((*root_last)[r], last_use.count(y) ? last_use[y] : oi);
    }
  }
  // Root lifetimes again now that every alias is known.
  for (const auto& [v, lu] : last_use) {
    const std::string r = mp->root(v);
    (*root_last)[r] = std::max((*root_last)[r], lu);
  }
}

}  // namespace

MemoryPlan plan_memory(const Graph& g, const SubgraphPlan& plan, const std::map<std::string, QParams>& q,
                       const std::set<std::string>& image_inputs, const MemoryOptions& opt) {
  MemoryPlan mp;
  const int align = opt.align;
  auto native = [&](Region r, size_t index, uint64_t offset, const std::string& v) {
    return native_ref(r, static_cast<uint16_t>(index), offset, dims_of(g, v), q.at(v).dtype, align);
  };
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const std::string& v = plan.inputs[i];
    if (image_inputs.count(v)) {  // runtime image bytes, read by the preprocess
      isa::TensorRef r;
      r.region = Region::kInput;
      r.index = static_cast<uint16_t>(i);
      r.dtype = isa::DType::kUInt8;
      mp.refs[v] = r;
    } else {
      mp.refs[v] = native(Region::kInput, i, 0, v);
    }
  }
  const std::set<std::string> outputs(plan.outputs.begin(), plan.outputs.end());
  for (size_t i = 0; i < plan.outputs.size(); ++i) mp.refs[plan.outputs[i]] = native(Region::kOutput, i, 0, plan.outputs[i]);
  std::map<std::string, size_t> root_last;
  find_views(g, plan, q, outputs, &mp, &root_last);

  ScratchArena arena;
  std::map<std::string, uint64_t> offset_of;
  std::vector<std::vector<std::string>> to_free(plan.ops.size());
  mp.scratch_offset.assign(plan.ops.size(), 0);
  for (size_t oi = 0; oi < plan.ops.size(); ++oi) {
    const Op& op = plan.ops[oi];
    for (const auto& o : op.outputs) {
      if (o.empty() || outputs.count(o) || mp.alias_of.count(o)) continue;
      const uint64_t off = arena.alloc(native_bytes(dims_of(g, o), q.at(o).dtype, align));
      offset_of[o] = off;
      mp.refs[o] = native(Region::kScratch, 0, off, o);
      const size_t end = root_last.count(o) ? root_last[o] : oi;
      to_free[std::max(end, oi)].push_back(o);
    }
    for (const auto& o : op.outputs)
      if (mp.alias_of.count(o)) {
        const isa::TensorRef& r = mp.refs.at(mp.root(o));
        mp.refs[o] = native(r.region, r.index, r.offset, o);
      }
    const uint64_t scratch = op.unit->scratch != nullptr && !mp.alias_of.count(op.outputs[0]) ? op.unit->scratch(g, op, align) : 0;
    if (scratch > 0) {
      mp.scratch_offset[oi] = arena.alloc(scratch);
      arena.free(mp.scratch_offset[oi]);
    }
    if (!opt.no_reuse)
      for (const auto& v : to_free[oi]) arena.free(offset_of[v]);
  }
  mp.scratch_size = std::max<uint64_t>(arena.peak(), 64);
  return mp;
}

}  // namespace openbpu::cvt
