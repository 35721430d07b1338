// SPDX-License-Identifier: Apache-2.0
// ArgMax over the channels (C <= 64), int32 indices.
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"

namespace openbpu::cvt {

namespace {

using ops::fail;

bool place_argmax(const Graph& g, const Node& n, const isa::MarchInfo&, std::string* why) {
  if (!ops::activation4d(g, n, why)) return false;
  if (n.attrs.get_int("axis", 0) != 1) return fail(why, "only along the channel axis");
  if (n.attrs.get_int("keepdims", 1) != 1) return fail(why, "keepdims must be 1");
  if (n.attrs.get_int("select_last_index", 0) != 0) return fail(why, "select_last_index is not supported");
  const int64_t c = g.value(n.inputs[0])->shape[1];
  if (c > isa::kMaxArgMaxChannels)
    return fail(why, "channel count " + std::to_string(c) + " exceeds " + std::to_string(isa::kMaxArgMaxChannels));
  return true;
}

bool emit_argmax(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  isa::ArgMax a;
  a.in = ctx.ref(n.inputs[0]);
  a.out = ctx.ref(op.outputs[0]);
  ctx.pb.emit(isa::Opcode::kArgMax, a);
  return true;
}

}  // namespace

const OpUnit kArgMaxUnit = {
    .id = OpId::kArgMax, .domain = "", .op_type = "ArgMax", .place = place_argmax, .table_type = "HzChannelArgmax",
    .limits = "channel axis, C <= 64", .output_scale = OutputScale::kIndex, .int32_tail = nullptr,
    .fusion = Fusion::kNone, .passive = false, .view = false, .emit = emit_argmax};

}  // namespace openbpu::cvt
