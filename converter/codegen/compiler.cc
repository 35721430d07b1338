// SPDX-License-Identifier: Apache-2.0
#include "converter/codegen/compiler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "bpu_sim/isa/codec.h"
#include "bpu_sim/timing.h"
#include <cctype>
#include "converter/passes/pass_util.h"
#include "runtime/core/tensor.h"

namespace openbpu::cvt {

namespace {

using isa::DType;
using isa::Region;
using isa::TensorRef;

bool fail(std::string* e, const std::string& m) {
  *e = m;
  return false;
}

bool is_act(const Graph& g, const Node& n) {
  if (!n.domain.empty()) return false;
  if (n.op_type == "Relu") return true;
  if (n.op_type != "Clip") return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !(g.value(n.inputs[i]) && g.value(n.inputs[i])->is_constant())) return false;
  return true;
}

std::string op_kind(const Node& n) {
  const std::string& t = n.op_type;
  if (n.domain == "openbpu") return t == "Preprocess" ? "preprocess" : "lut";
  if (t == "Conv") return "conv";
  if (t == "ConvTranspose") return "deconv";
  if (t == "BatchNormalization") return "batchnorm";
  if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool" || t == "GlobalMaxPool" || t == "ReduceMean")
    return "pool";
  if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Max" || t == "Min") return "eltwise";
  if (t == "Resize" || t == "Upsample") return "resize";
  if (t == "Concat") return "concat";
  if (t == "Split") return "split";
  if (t == "Slice") return "slice";
  if (t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze") return "reshape";
  if (t == "Transpose") return "transpose";
  if (t == "DepthToSpace" || t == "SpaceToDepth") return "depth_space";
  if (t == "Pad") return "pad";
  if (t == "ArgMax") return "argmax";
  return "lut";
}

// Operators whose output keeps the input's scale (no requantization).
bool keeps_scale(const Node& n) {
  const std::string& t = n.op_type;
  if (!n.domain.empty()) return false;
  if (t == "Resize" || t == "Upsample") return n.attrs.get_string("mode", "nearest") == "nearest";
  return t == "MaxPool" || t == "GlobalMaxPool" || t == "Reshape" || t == "Flatten" || t == "Squeeze" ||
         t == "Unsqueeze" || t == "Transpose" || t == "Slice" || t == "Split" || t == "Pad" ||
         t == "DepthToSpace" || t == "SpaceToDepth";
}

struct Block {
  uint64_t offset, size;
};

// First-fit allocator over the scratch region.
class Arena {
 public:
  uint64_t alloc(uint64_t size) {
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
  void free(uint64_t offset) {
    live_.erase(std::remove_if(live_.begin(), live_.end(), [&](const Block& b) { return b.offset == offset; }),
                live_.end());
  }
  uint64_t peak() const { return peak_; }

 private:
  std::vector<Block> live_;
  uint64_t peak_ = 0;
};

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

isa::ImageFormat image_format(const std::string& t) {
  if (t == "nv12") return isa::ImageFormat::kNV12;
  if (t == "yuv444") return isa::ImageFormat::kYUV444;
  if (t == "rgb") return isa::ImageFormat::kRGB;
  if (t == "gray") return isa::ImageFormat::kGray;
  return isa::ImageFormat::kBGR;
}

struct SubgraphPlan {
  std::vector<Op> ops;
  std::vector<std::string> inputs, outputs;
};

}  // namespace

void set_program_attrs(const CompiledSubgraph& sg, rt::Attrs* attrs) {
  rt::AttrValue code;
  code.type = rt::AttrValue::kString;
  const std::vector<uint8_t> bytes = isa::encode_program(sg.program);
  code.s.assign(bytes.begin(), bytes.end());
  attrs->set("code", code);
  rt::AttrValue scratch;
  scratch.type = rt::AttrValue::kInt;
  scratch.i = static_cast<int64_t>(sg.scratch_size);
  attrs->set("scratch_size", scratch);
  rt::AttrValue fcs;
  fcs.type = rt::AttrValue::kInts;
  for (const auto& fc : sg.fcs)
    for (uint64_t v : fc) fcs.ints.push_back(static_cast<int64_t>(v));
  attrs->set("fcs", fcs);
  rt::AttrValue macs;
  macs.type = rt::AttrValue::kInt;
  macs.i = static_cast<int64_t>(sg.macs);
  attrs->set("macs", macs);
}

bool program_from_attrs(const rt::Attrs& attrs, CompiledSubgraph* sg, std::string* error) {
  const std::string code = attrs.get_string("code", "");
  if (!isa::decode_program(reinterpret_cast<const uint8_t*>(code.data()), code.size(), &sg->program, error))
    return false;
  sg->scratch_size = static_cast<uint64_t>(attrs.get_int("scratch_size", 0));
  const std::vector<int64_t> f = attrs.get_ints("fcs");
  if (f.size() % 3 != 0) return fail(error, "bad function call table");
  sg->fcs.clear();
  for (size_t i = 0; i < f.size(); i += 3)
    sg->fcs.push_back({static_cast<uint64_t>(f[i]), static_cast<uint64_t>(f[i + 1]), static_cast<uint64_t>(f[i + 2])});
  sg->macs = static_cast<uint64_t>(attrs.get_int("macs", 0));
  return true;
}

bool compile(const Graph& g, const Placement& placement, const std::map<std::string, double>& thresholds,
             const CompileOptions& opt, CompiledModel* out, std::string* error) {
  const int align = opt.march->channel_align;
  const size_t nn = g.nodes.size();
  std::vector<int> sg_of(nn, -1);
  for (size_t i = 0; i < nn; ++i) sg_of[i] = placement.nodes[i].subgraph;
  std::map<std::string, int> producer;
  for (size_t i = 0; i < nn; ++i)
    for (const auto& o : g.nodes[i].outputs) producer[o] = static_cast<int>(i);
  auto consumers_of = [&](const std::string& v) { return g.consumers(v); };
  auto const_value = [&](const std::string& v) { return !v.empty() && g.value(v) && g.value(v)->is_constant(); };

  // ---- 1. ops per subgraph, with fusion -----------------------------------
  std::vector<SubgraphPlan> plans(static_cast<size_t>(placement.subgraphs));
  std::vector<bool> fused(nn, false);
  for (size_t i = 0; i < nn; ++i) {
    const int k = sg_of[i];
    if (k < 0 || fused[i]) continue;
    const Node& n = g.nodes[i];
    Op op;
    op.nodes = {i};
    op.kind = op_kind(n);
    for (const auto& in : n.inputs)
      if (!in.empty() && !const_value(in)) op.inputs.push_back(in);
    op.outputs = n.outputs;
    const bool fusible = op.kind == "conv" || op.kind == "deconv" || op.kind == "batchnorm" ||
                         (op.kind == "eltwise" && n.op_type != "Div");
    if (fusible) {
      std::string cur = n.outputs[0];
      auto single_consumer_in_sg = [&](const std::string& v) -> int {
        const auto c = consumers_of(v);
        if (c.size() != 1 || g.is_graph_output(v) || sg_of[c[0]] != k || fused[c[0]]) return -1;
        return static_cast<int>(c[0]);
      };
      if (op.kind == "conv") {
        const int j = single_consumer_in_sg(cur);
        if (j >= 0) {
          const Node& a = g.nodes[static_cast<size_t>(j)];
          if (a.op_type == "Add" && a.domain.empty() && a.inputs.size() == 2) {
            const std::string other = a.inputs[0] == cur ? a.inputs[1] : a.inputs[0];
            const Value* ov = g.value(other);
            const Value* cv = g.value(cur);
            if (ov && !ov->is_constant() && other != cur && ov->shape == cv->shape) {
              op.residual = other;
              op.inputs.push_back(other);
              op.nodes.push_back(static_cast<size_t>(j));
              fused[static_cast<size_t>(j)] = true;
              cur = a.outputs[0];
            }
          }
        }
      }
      const int j = single_consumer_in_sg(cur);
      if (j >= 0 && is_act(g, g.nodes[static_cast<size_t>(j)])) {
        op.act_min_node = j;
        op.nodes.push_back(static_cast<size_t>(j));
        fused[static_cast<size_t>(j)] = true;
        cur = g.nodes[static_cast<size_t>(j)].outputs[0];
      }
      op.outputs = {cur};
    }
    plans[static_cast<size_t>(k)].ops.push_back(op);
  }
  // Ops run at the position of their last fused node (a residual operand may
  // be produced between the conv and the add).
  for (auto& p : plans)
    std::stable_sort(p.ops.begin(), p.ops.end(), [](const Op& a, const Op& b) {
      return *std::max_element(a.nodes.begin(), a.nodes.end()) < *std::max_element(b.nodes.begin(), b.nodes.end());
    });

  // ---- 2. quantization parameters ----------------------------------------
  std::map<std::string, QParams> q;
  auto wide = [&](const std::string& v) { return opt.all_int16 || opt.int16_values.count(v) != 0; };
  auto scale_of = [&](const std::string& v) -> float {
    auto it = thresholds.find(v);
    const double t = it != thresholds.end() ? it->second : 1.0;
    return static_cast<float>(std::max(t, 1e-8) / (wide(v) ? 32767.0 : 127.0));
  };
  auto act_dtype = [&](const std::string& v) { return wide(v) ? DType::kInt16 : DType::kInt8; };
  std::map<std::string, int> value_sg;  // subgraph producing a value
  for (size_t k = 0; k < plans.size(); ++k)
    for (const Op& op : plans[k].ops)
      for (const auto& o : op.outputs) value_sg[o] = static_cast<int>(k);
  auto used_only_off_bpu = [&](const std::string& v) {
    for (size_t c : consumers_of(v))
      if (sg_of[c] >= 0) return false;
    return true;
  };
  for (size_t k = 0; k < plans.size(); ++k) {
    for (const Op& op : plans[k].ops) {
      for (const auto& in : op.inputs)
        if (!q.count(in)) q[in] = QParams{act_dtype(in), scale_of(in), {}};
      const Node& n = g.nodes[op.nodes[0]];
      for (const auto& o : op.outputs) {
        if (o.empty()) continue;
        QParams p{act_dtype(o), scale_of(o), {}};
        if (keeps_scale(n) && !op.inputs.empty()) p = q[op.inputs[0]];
        if (op.kind == "argmax") p = QParams{DType::kInt32, 1.0f, {}};
        const bool relu_or_none =
            op.act_min_node < 0 || g.nodes[static_cast<size_t>(op.act_min_node)].op_type == "Relu";
        if (opt.int32_tail && (op.kind == "conv" || op.kind == "deconv") && op.residual.empty() && relu_or_none &&
            used_only_off_bpu(o)) {
          const std::vector<float> w = [&] {
            std::vector<float> f;
            for (double d : g.value(n.inputs[1])->to_doubles()) f.push_back(static_cast<float>(d));
            return f;
          }();
          int64_t cout = g.value(n.inputs[1])->shape[0];
          std::vector<float> wt = w;
          if (op.kind == "deconv") {
            // channel scales of the transposed layout: per output channel
            const auto& ws = g.value(n.inputs[1])->shape;
            const int64_t grp = n.attrs.get_int("group", 1), cin = ws[0], cog = ws[1], taps = ws[2] * ws[3];
            cout = cog * grp;
            wt.assign(w.size(), 0.0f);
            for (int64_t ci = 0; ci < cin; ++ci)
              for (int64_t co = 0; co < cog; ++co)
                for (int64_t t = 0; t < taps; ++t) {
                  const int64_t gco = (ci / (cin / grp)) * cog + co;
                  wt[static_cast<size_t>(gco * (cin / grp) * taps + (ci % (cin / grp)) * taps + t)] =
                      w[static_cast<size_t>((ci * cog + co) * taps + t)];
                }
          }
          const std::vector<float> sw = channel_scales(wt, cout);
          p = QParams{DType::kInt32, 1.0f, {}};
          for (float s : sw) p.channel_scales.push_back(q[op.inputs[0]].scale * s);
        }
        q[o] = p;
      }
    }
  }

  // ---- 3. per subgraph: I/O, memory plan, emission ------------------------
  std::set<std::string> image_inputs;
  for (size_t i = 0; i < nn; ++i)
    if (g.nodes[i].domain == "openbpu" && g.nodes[i].op_type == "Preprocess") image_inputs.insert(g.nodes[i].inputs[0]);
  out->subgraphs.clear();
  out->traces.clear();
  std::vector<std::vector<std::string>> sg_inputs(plans.size()), sg_outputs(plans.size());
  for (size_t k = 0; k < plans.size(); ++k) {
    SubgraphPlan& plan = plans[k];
    std::set<std::string> produced;
    for (const Op& op : plan.ops)
      for (const auto& o : op.outputs) produced.insert(o);
    for (const Op& op : plan.ops)
      for (const auto& in : op.inputs)
        if (!produced.count(in) && std::find(plan.inputs.begin(), plan.inputs.end(), in) == plan.inputs.end())
          plan.inputs.push_back(in);
    std::set<size_t> op_nodes;
    for (const Op& op : plan.ops) op_nodes.insert(op.nodes.begin(), op.nodes.end());
    for (const Op& op : plan.ops)
      for (const auto& o : op.outputs) {
        bool external = g.is_graph_output(o);
        for (size_t c : consumers_of(o)) external = external || !op_nodes.count(c);
        if (external) plan.outputs.push_back(o);
      }
    sg_inputs[k] = plan.inputs;
    sg_outputs[k] = plan.outputs;

    LoweringContext ctx(g, *opt.march);
    ctx.q = q;
    ctx.channel_means = &opt.channel_means;
    // Regions for inputs and outputs.
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      const std::string& v = plan.inputs[i];
      if (image_inputs.count(v)) continue;  // read by the preprocess emitter
      ctx.refs[v] = native_ref(Region::kInput, static_cast<uint16_t>(i), 0, ctx.dims(v), q[v].dtype, align);
    }
    std::set<std::string> outputs(plan.outputs.begin(), plan.outputs.end());
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
      const std::string& v = plan.outputs[i];
      ctx.refs[v] = native_ref(Region::kOutput, static_cast<uint16_t>(i), 0, ctx.dims(v), q[v].dtype, align);
    }
    // Liveness (op index of the last read) and aliases of memory-identical reshapes.
    std::map<std::string, size_t> last_use;
    std::map<std::string, std::string> alias_of;
    for (size_t oi = 0; oi < plan.ops.size(); ++oi)
      for (const auto& in : plan.ops[oi].inputs) last_use[in] = oi;
    auto root = [&](std::string v) {
      while (alias_of.count(v)) v = alias_of[v];
      return v;
    };
    Arena arena;
    std::map<std::string, uint64_t> offset_of;  // root value -> scratch offset
    std::map<std::string, size_t> root_last;
    for (size_t oi = 0; oi < plan.ops.size(); ++oi) {
      const Op& op = plan.ops[oi];
      for (const auto& in : op.inputs) {
        const std::string r = root(in);
        root_last[r] = std::max(root_last[r], last_use[in]);
      }
      if (op.kind == "reshape" && !outputs.count(op.outputs[0]) && ctx.dims(op.inputs[0]) == ctx.dims(op.outputs[0]) &&
          q[op.inputs[0]].dtype == q[op.outputs[0]].dtype && q[op.inputs[0]].scale == q[op.outputs[0]].scale) {
        alias_of[op.outputs[0]] = op.inputs[0];
        const std::string r = root(op.inputs[0]);
        root_last[r] = std::max(root_last[r], last_use.count(op.outputs[0]) ? last_use[op.outputs[0]] : oi);
      }
    }
    // Recompute root lifetimes now that every alias is known.
    for (const auto& [v, lu] : last_use) {
      const std::string r = root(v);
      root_last[r] = std::max(root_last[r], lu);
    }
    std::vector<std::vector<std::string>> to_free(plan.ops.size());
    std::string err;
    for (size_t oi = 0; oi < plan.ops.size(); ++oi) {
      const Op& op = plan.ops[oi];
      for (const auto& o : op.outputs) {
        if (o.empty() || outputs.count(o) || alias_of.count(o)) continue;
        const uint64_t off = arena.alloc(native_bytes(ctx.dims(o), q[o].dtype, align));
        offset_of[o] = off;
        ctx.refs[o] = native_ref(Region::kScratch, 0, off, ctx.dims(o), q[o].dtype, align);
        const size_t end = root_last.count(o) ? root_last[o] : oi;
        to_free[std::max(end, oi)].push_back(o);
      }
      for (const auto& o : op.outputs)
        if (alias_of.count(o)) ctx.refs[o] = native_ref(ctx.refs[root(o)].region, ctx.refs[root(o)].index,
                                                         ctx.refs[root(o)].offset, ctx.dims(o), q[o].dtype, align);
      // Emission.
      if (alias_of.count(op.outputs[0])) {
        // no instruction: the output is a view of the input
      } else if (op.kind == "preprocess") {
        const Node& n = g.nodes[op.nodes[0]];
        const std::string& x = n.inputs[0];
        const std::string& y = op.outputs[0];
        const Dims4 d = ctx.dims(y);
        const std::string rt = n.attrs.get_string("rt", "bgr");
        const std::string rt_layout = n.attrs.get_string("rt_layout", "NHWC");
        const size_t in_index = static_cast<size_t>(std::find(plan.inputs.begin(), plan.inputs.end(), x) - plan.inputs.begin());
        isa::Preprocess pre;
        pre.in.region = Region::kInput;
        pre.in.index = static_cast<uint16_t>(in_index);
        pre.in.dtype = DType::kUInt8;
        const int64_t h = d[2], w = d[3];
        if (rt == "nv12" || rt == "gray") {
          pre.in.dims[0] = 1, pre.in.dims[1] = static_cast<int32_t>(h), pre.in.dims[2] = static_cast<int32_t>(w), pre.in.dims[3] = 1;
          pre.in.strides[0] = rt == "nv12" ? h * w * 3 / 2 : h * w, pre.in.strides[1] = w, pre.in.strides[2] = 1, pre.in.strides[3] = 1;
          if (rt == "nv12") {
            pre.uv_offset = static_cast<uint64_t>(h * w);
            pre.uv_row_stride = w;
          }
        } else if (rt_layout == "NCHW") {
          pre.src_planar = 1;
          pre.in.dims[0] = 1, pre.in.dims[1] = 3, pre.in.dims[2] = static_cast<int32_t>(h), pre.in.dims[3] = static_cast<int32_t>(w);
          pre.in.strides[0] = 3 * h * w, pre.in.strides[1] = h * w, pre.in.strides[2] = w, pre.in.strides[3] = 1;
        } else {
          pre.in.dims[0] = 1, pre.in.dims[1] = static_cast<int32_t>(h), pre.in.dims[2] = static_cast<int32_t>(w), pre.in.dims[3] = 3;
          pre.in.strides[0] = 3 * h * w, pre.in.strides[1] = 3 * w, pre.in.strides[2] = 3, pre.in.strides[3] = 1;
        }
        pre.src_format = image_format(rt);
        pre.dst_format = image_format(n.attrs.get_string("dst", "bgr"));
        pre.range = n.attrs.get_string("range", "regular") == "bt601_video" ? isa::ColorRange::kVideo : isa::ColorRange::kFull;
        const uint64_t tmp = arena.alloc(native_bytes(d, DType::kInt8, align));
        pre.out = native_ref(Region::kScratch, 0, tmp, d, DType::kInt8, align);
        ctx.pb.emit(isa::Opcode::kPreprocess, pre);
        std::vector<float> mean = n.attrs.get_floats("mean"), scale = n.attrs.get_floats("scale");
        std::vector<double> a(static_cast<size_t>(d[1])), b(static_cast<size_t>(d[1]));
        for (int64_t c = 0; c < d[1]; ++c) {
          const double m = mean.empty() ? 0.0 : mean[mean.size() == 1 ? 0 : static_cast<size_t>(c)];
          const double s = scale.empty() ? 1.0 : scale[scale.size() == 1 ? 0 : static_cast<size_t>(c)];
          a[static_cast<size_t>(c)] = s;
          b[static_cast<size_t>(c)] = (128.0 - m) * s;
        }
        emit_affine(ctx, pre.out, ctx.refs[y], 1.0, q[y], a, b, -1);
        arena.free(tmp);
      } else if (!emit_op(ctx, op, &err)) {
        return fail(error, err);
      }
      if (!opt.no_scratch_reuse)
        for (const auto& v : to_free[oi]) arena.free(offset_of[v]);
    }
    CompiledSubgraph sg;
    std::string upper;
    for (unsigned char c : opt.model_name) upper += static_cast<char>(std::isalnum(c) ? std::toupper(c) : '_');
    sg.name = upper + "_subgraph_" + std::to_string(k);
    sg.program = ctx.pb.program();
    sg.constants = ctx.pb.constants();
    sg.scratch_size = std::max<uint64_t>(arena.peak(), 64);
    if (sg.program.empty()) {
      // A subgraph made only of views: copy each output so the program has work.
      for (const auto& o : plan.outputs) {
        Op copy;
        copy.kind = "copy";
        copy.inputs = {root(o)};
        copy.outputs = {o};
        if (!emit_op(ctx, copy, &err)) return fail(error, err);
      }
      sg.program = ctx.pb.program();
      sg.constants = ctx.pb.constants();
    }
    for (const auto& fc : sim::split_function_calls(sg.program, *opt.march, opt.max_time_per_fc_us)) {
      sg.fcs.push_back({fc.first, fc.count, fc.cycles});
      sg.est_cycles += fc.cycles;
    }
    for (const auto& ins : sg.program) sg.macs += sim::estimate_cost(ins, *opt.march).macs;
    for (const Op& op : plan.ops)
      for (const auto& o : op.outputs)
        if (!o.empty() && ctx.refs.count(o)) out->traces.push_back({o, static_cast<int>(k), ctx.refs[o], q[o]});
    out->subgraphs.push_back(std::move(sg));
  }

  // ---- 4. the quantized graph ---------------------------------------------
  Graph& qg = out->graph;
  qg = Graph();
  qg.name = g.name;
  qg.opset = g.opset;
  qg.ir_version = g.ir_version;
  std::map<std::string, std::string> preprocess_rt, preprocess_layout;
  std::map<std::string, std::pair<int64_t, int64_t>> image_hw;
  for (const auto& n : g.nodes)
    if (n.domain == "openbpu" && n.op_type == "Preprocess") {
      preprocess_rt[n.inputs[0]] = n.attrs.get_string("rt", "bgr");
      preprocess_layout[n.inputs[0]] = n.attrs.get_string("rt_layout", "NHWC");
      const Dims4 d = logical4(g.value(n.outputs[0])->shape);
      image_hw[n.inputs[0]] = {d[2], d[3]};
    }
  for (const auto& in : g.inputs) {
    if (image_inputs.count(in)) {
      qg.values[in] = image_value(in, preprocess_rt[in], preprocess_layout[in], image_hw[in].first, image_hw[in].second);
    } else {
      qg.values[in] = *g.value(in);
    }
    qg.inputs.push_back(in);
  }
  std::set<std::string> have_native, have_float(g.inputs.begin(), g.inputs.end());
  for (const auto& in : g.inputs)
    if (image_inputs.count(in)) have_native.insert(in);
  auto native_of = [&](const std::string& v) { return image_inputs.count(v) ? v : native_name(v); };
  auto ensure_native = [&](const std::string& v) {
    if (have_native.count(v)) return;
    // Quantize on the CPU: float value -> native int8.
    Node qn;
    qn.name = v + "_HzQuantize";
    qn.op_type = "Quantize";
    qn.domain = "openbpu";
    qn.inputs = {v};
    qn.outputs = {native_name(v)};
    qg.values[native_name(v)] = native_value(native_name(v), logical4(g.value(v)->shape), q[v], align);
    qg.nodes.push_back(qn);
    have_native.insert(v);
  };
  auto ensure_float = [&](const std::string& v) {
    if (have_float.count(v)) return;
    const Value* fv = g.value(v);
    Node dn;
    dn.name = v + (q[v].dtype == DType::kInt32 && fv->elem_type != kFloat ? "_LayoutConvert" : "_HzDequantize");
    dn.op_type = fv->elem_type == kFloat ? "Dequantize" : "LayoutConvert";
    dn.domain = "openbpu";
    dn.inputs = {native_name(v)};
    dn.outputs = {v};
    qg.values[v] = *fv;
    qg.nodes.push_back(dn);
    have_float.insert(v);
  };
  std::vector<bool> sg_done(plans.size(), false);
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = g.nodes[i];
    const int k = sg_of[i];
    if (k >= 0) {
      if (sg_done[static_cast<size_t>(k)]) continue;
      sg_done[static_cast<size_t>(k)] = true;
      const CompiledSubgraph& sg = out->subgraphs[static_cast<size_t>(k)];
      Node bn;
      bn.name = sg.name;
      bn.op_type = "BpuSubgraph";
      bn.domain = "openbpu";
      for (const auto& in : sg_inputs[static_cast<size_t>(k)]) {
        ensure_native(in);
        bn.inputs.push_back(native_of(in));
      }
      std::vector<uint8_t> cbytes = sg.constants;
      if (cbytes.empty()) cbytes.assign(64, 0);
      const int64_t csize = static_cast<int64_t>(cbytes.size());
      const std::string cname = qg.add_constant(sg.name + "_constants", kUint8, {csize}, std::move(cbytes));
      bn.inputs.push_back(cname);
      for (const auto& o : sg_outputs[static_cast<size_t>(k)]) {
        qg.values[native_name(o)] = native_value(native_name(o), logical4(g.value(o)->shape), q[o], align);
        bn.outputs.push_back(native_name(o));
        have_native.insert(o);
      }
      set_program_attrs(sg, &bn.attrs);
      qg.nodes.push_back(bn);
      continue;
    }
    for (const auto& in : n.inputs) {
      if (in.empty()) continue;
      const Value* v = g.value(in);
      if (v && v->is_constant()) {
        qg.values[in] = *v;
        continue;
      }
      ensure_float(in);
    }
    for (const auto& o : n.outputs) {
      if (o.empty()) continue;
      qg.values[o] = *g.value(o);
      have_float.insert(o);
    }
    qg.nodes.push_back(n);
  }
  for (const auto& o : g.outputs) {
    if (!have_float.count(o)) {
      if (!have_native.count(o)) return fail(error, "model output '" + o + "' is never computed");
      ensure_float(o);
    }
    qg.outputs.push_back(o);
  }
  out->thresholds = thresholds;
  return true;
}

}  // namespace openbpu::cvt
