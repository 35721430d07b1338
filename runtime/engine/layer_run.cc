// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/layer_run.h"

#include <string>

#include "bpu_sim/executor.h"
#include "bpu_sim/isa/codec.h"
#include "runtime/engine/engine.h"
#include "schema/verify.h"

namespace openbpu::rt {

Status run_bpu_on_host(const Model& m, size_t si, const std::vector<uint8_t*>& ptr, uint8_t* scratch,
                       const LayerDone& on_layer) {
  const Segment& seg = m.segments[si];
  std::vector<isa::Instruction> program;
  std::string why;
  // The device validated this program at load; decoding the same bytes
  // again cannot fail unless the file changed under the mapping.
  if (!isa::decode_program(seg.code, seg.code_size, &program, &why))
    return error(kRunTaskFailed, "BPU segment '" + seg.name + "': " + why);
  sim::Memory mem;
  for (uint32_t t : seg.inputs)
    mem.inputs.push_back({ptr[t], static_cast<uint64_t>(m.tensors[t].aligned_byte_size)});
  for (uint32_t t : seg.outputs)
    mem.outputs.push_back({ptr[t], static_cast<uint64_t>(m.tensors[t].aligned_byte_size)});
  mem.constants = {const_cast<uint8_t*>(seg.constants), seg.constants_size};
  mem.scratch = {scratch, seg.scratch_size};
  const sim::KernelTable& kernels = sim::best_kernels();
  size_t next = 0;  // seg.layers are ordered by their last instruction
  for (size_t i = 0; i < program.size(); ++i) {
    sim::execute(program[i], mem, kernels);
    for (; on_layer && next < seg.layers.size() && seg.layers[next].first + seg.layers[next].count <= i + 1; ++next) {
      const LayerRecord& l = seg.layers[next];
      std::vector<const uint8_t*> at;
      for (const LayerOutputDesc& o : l.outputs)
        at.push_back((o.in_scratch ? scratch : ptr[seg.outputs[o.index]]) + o.offset);
      if (!on_layer(l, at)) return error(kRunTaskFailed, "the layer output callback stopped the run");
    }
  }
  return Status::Ok();
}

bool LayerValueObserver::segment_done(const Model& m, size_t si, const std::vector<uint8_t*>& ptr) {
  const Segment& seg = m.segments[si];
  for (size_t k = 0; k < seg.outputs.size(); ++k) {
    const uint32_t t = seg.outputs[k];
    if (t == openbpu::model::kAbsentInput) continue;
    LayerValue v;
    v.name = layer_dump_name(seg.name, k);
    v.op_type = seg.bpu ? "" : seg.op.op_type;
    v.nodes = seg.name;
    v.tensor = m.tensors[t].name;
    v.bpu = seg.bpu;
    v.segment = si;
    v.desc = &m.tensors[t];
    v.data = ptr[t];
    if (!report(v)) return false;
  }
  return true;
}

bool LayerValueObserver::layer_done(const Model&, size_t si, const LayerRecord& l,
                                    const std::vector<const uint8_t*>& out) {
  for (size_t k = 0; k < l.outputs.size(); ++k) {
    const LayerOutputDesc& d = l.outputs[k];
    LayerValue v;
    v.name = layer_dump_name(d.name, 0);
    v.op_type = l.op_type;
    v.nodes = l.nodes;
    v.tensor = d.value;
    v.bpu = true;
    v.segment = si;
    v.first = l.first;
    v.count = l.count;
    v.desc = &d.desc;
    v.data = out[k];
    if (!report(v)) return false;
  }
  return true;
}

}  // namespace openbpu::rt
