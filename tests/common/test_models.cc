// SPDX-License-Identifier: Apache-2.0
#include "tests/common/test_models.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "bpu_sim/isa/codec.h"
#include "bpu_sim/isa/program_builder.h"
#include "bpu_sim/timing.h"
#include "schema/writer.h"

namespace openbpu::testing {

namespace {

using isa::DType;
using isa::Region;
using isa::TensorRef;

std::unique_ptr<fb::QuantT> quant_scale(std::vector<float> scales, int axis) {
  auto q = std::make_unique<fb::QuantT>();
  q->type = fb::QuantType::SCALE;
  q->axis = axis;
  q->scales = std::move(scales);
  return q;
}

int esize_of(fb::DataType t) {
  switch (t) {
    case fb::DataType::S16: case fb::DataType::F16: case fb::DataType::U16: return 2;
    case fb::DataType::S32: case fb::DataType::F32: case fb::DataType::U32: return 4;
    default: return 1;
  }
}

// Dense tensor in layout order; aligned may pad.
std::unique_ptr<fb::TensorT> make_tensor(const std::string& name, fb::DataType t, fb::Layout layout,
                                         std::vector<int32_t> valid, std::vector<int32_t> aligned,
                                         std::unique_ptr<fb::QuantT> quant = nullptr) {
  auto tt = std::make_unique<fb::TensorT>();
  tt->name = name;
  tt->data_type = t;
  tt->layout = layout;
  tt->valid_shape = std::move(valid);
  tt->aligned_shape = std::move(aligned);
  int64_t acc = esize_of(t);
  tt->strides.assign(tt->aligned_shape.size(), 0);
  for (size_t i = tt->aligned_shape.size(); i-- > 0;) {
    tt->strides[i] = acc;
    acc *= tt->aligned_shape[i];
  }
  tt->aligned_byte_size = acc;
  tt->quant = std::move(quant);
  return tt;
}

// Native NHWC int tensor with the march's channel padding.
std::unique_ptr<fb::TensorT> native_tensor(const std::string& name, fb::DataType t, int n, int h, int w, int c,
                                           int align, std::unique_ptr<fb::QuantT> quant) {
  return make_tensor(name, t, fb::Layout::NHWC, {n, h, w, c}, {n, h, w, isa::align_up(c, align)},
                     std::move(quant));
}

std::unique_ptr<fb::TensorT> nv12_tensor(const std::string& name, int h, int w) {
  auto tt = std::make_unique<fb::TensorT>();
  tt->name = name;
  tt->data_type = fb::DataType::IMG_NV12;
  tt->layout = fb::Layout::NCHW;
  tt->valid_shape = {1, 3, h, w};
  tt->aligned_shape = {1, 3, h, w};
  tt->strides = {0, 0, 0, 0};
  tt->aligned_byte_size = int64_t{h} * w * 3 / 2;
  return tt;
}

std::unique_ptr<fb::SegmentT> cpu_segment(const std::string& name, const std::string& domain, const std::string& op,
                                          std::vector<uint32_t> in, std::vector<uint32_t> out,
                                          std::vector<std::unique_ptr<fb::AttrT>> attrs = {}) {
  auto s = std::make_unique<fb::SegmentT>();
  s->name = name;
  s->inputs = std::move(in);
  s->outputs = std::move(out);
  fb::CpuOpT c;
  c.op_type = op;
  c.domain = domain;
  c.attrs = std::move(attrs);
  s->kind.Set(std::move(c));
  return s;
}

std::unique_ptr<fb::AttrT> int_attr(const std::string& name, int64_t v) {
  auto a = std::make_unique<fb::AttrT>();
  a->name = name;
  a->type = fb::AttrType::INT;
  a->i = v;
  return a;
}

std::unique_ptr<fb::SegmentT> bpu_segment(const std::string& name, const isa::ProgramBuilder& pb,
                                          model::ModelFileWriter* writer, std::vector<uint32_t> in,
                                          std::vector<uint32_t> out, double max_fc_us = 0.0) {
  auto s = std::make_unique<fb::SegmentT>();
  s->name = name;
  s->inputs = std::move(in);
  s->outputs = std::move(out);
  fb::BpuProgramT p;
  const std::vector<uint8_t> code = isa::encode_program(pb.program());
  p.code = std::make_unique<fb::BlobRef>(writer->add_blob(code));
  p.constants = std::make_unique<fb::BlobRef>(writer->add_blob(pb.constants()));
  p.scratch_size = pb.scratch_size();
  for (const auto& fc : sim::split_function_calls(pb.program(), pb.march(), max_fc_us)) {
    p.fcs.emplace_back(fc.first, fc.count, fc.cycles);
  }
  for (const auto& ins : pb.program()) p.macs += sim::estimate_cost(ins, pb.march()).macs;
  s->kind.Set(std::move(p));
  return s;
}

std::unique_ptr<fb::InputT> model_input(uint32_t tensor, fb::InputSource src, const std::string& rt,
                                        const std::string& train) {
  auto i = std::make_unique<fb::InputT>();
  i->tensor = tensor;
  i->source = src;
  i->input_type_rt = rt;
  i->input_type_train = train;
  return i;
}

std::unique_ptr<fb::OutputT> model_output(uint32_t tensor) {
  auto o = std::make_unique<fb::OutputT>();
  o->tensor = tensor;
  o->operator_type = 1;  // conv
  return o;
}

std::vector<uint8_t> finish_file(std::unique_ptr<fb::ModelT> m, model::ModelFileWriter* writer) {
  fb::ModelFileT file;
  file.builder = "openbpu tests";
  model::set_metadata(m.get(), "BUILDER_TOOL", "openbpu test model generator");
  model::set_metadata(m.get(), "MARCH", m->march);
  file.models.push_back(std::move(m));
  return writer->finish(&file);
}

isa::ConstRef const_i32(isa::ProgramBuilder& pb, const std::vector<int32_t>& v) { return pb.add_const(v); }

// Emits a conv with the given int8 weights; fills the ConstRefs.
isa::Conv conv_instr(isa::ProgramBuilder& pb, const TensorRef& in, const TensorRef& out, int k, int stride, int pad,
                     int groups, const std::vector<int8_t>& w, const std::vector<int32_t>& bias,
                     const std::vector<int32_t>& mult, const std::vector<int8_t>& shift, int act_min, int act_max) {
  isa::Conv c;
  c.in = in;
  c.out = out;
  c.kernel_h = c.kernel_w = k;
  c.stride_h = c.stride_w = stride;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = pad;
  c.groups = groups;
  c.weight = pb.add_const(w);
  c.bias = bias.empty() ? isa::ConstRef{} : const_i32(pb, bias);
  if (!mult.empty()) {
    c.multiplier = const_i32(pb, mult);
    c.shift = pb.add_const(shift);
  }
  c.act_min = act_min;
  c.act_max = act_max;
  return c;
}

// Random conv layer on int8 activations: weights uniform in [-127, 127],
// requantization chosen to keep the output magnitude near the input's.
struct RandomLayer {
  std::mt19937* rng;
  isa::ProgramBuilder* pb;
  TensorRef run(const TensorRef& in, int cout, int k, int stride, int groups, int act_min, int act_max,
                const TensorRef* out_view = nullptr, DType out_dtype = DType::kInt8,
                std::vector<float>* int32_scales = nullptr, float s_in = 1.0f / 16) {
    const int h = in.dims[1], w = in.dims[2], cin = in.dims[3];
    const int pad = k / 2;
    const int oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
    const TensorRef out = out_view ? *out_view : pb->scratch_nhwc(1, oh, ow, cout, out_dtype);
    const int kk = k * k * (cin / groups);
    std::uniform_int_distribution<int> wd(-127, 127);
    std::vector<int8_t> wts(static_cast<size_t>(cout) * kk);
    for (auto& v : wts) v = static_cast<int8_t>(wd(*rng));
    std::vector<int32_t> mult, bias(static_cast<size_t>(cout), 0);
    std::vector<int8_t> shift;
    if (out_dtype != DType::kInt32) {
      for (int c = 0; c < cout; ++c) {
        int32_t m, s;
        isa::quantize_multiplier(1.0 / (std::sqrt(static_cast<double>(kk)) * 40.0), &m, &s);
        mult.push_back(m);
        shift.push_back(static_cast<int8_t>(s));
      }
    } else if (int32_scales) {
      for (int c = 0; c < cout; ++c)
        int32_scales->push_back(s_in / (127.0f * std::sqrt(static_cast<float>(kk))));
    }
    pb->emit(isa::Opcode::kConv,
             conv_instr(*pb, in, out, k, stride, pad, groups, wts, bias, mult, shift, act_min, act_max));
    return out;
  }
};

}  // namespace

// ---------------------------------------------------------------------------
TinyCnn::Params TinyCnn::params() const {
  Params p;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> wd(-127, 127);
  std::uniform_real_distribution<float> bd(-0.5f, 0.5f);
  p.s_in = 1.0f / 32;
  p.s1 = 0.05f;
  p.w1.resize(8 * 3 * 3 * 3);
  for (auto& v : p.w1) v = static_cast<int8_t>(wd(rng));
  for (int c = 0; c < 8; ++c) p.sw1.push_back((0.5f + 0.5f * c / 8) / 127.0f);
  for (int c = 0; c < 8; ++c)
    p.b1.push_back(static_cast<int32_t>(std::lround(bd(rng) / (p.s_in * p.sw1[c]))));
  p.w2.resize(4 * 8);
  for (auto& v : p.w2) v = static_cast<int8_t>(wd(rng));
  for (int c = 0; c < 4; ++c) p.sw2.push_back((0.3f + 0.1f * c) / 127.0f);
  for (int c = 0; c < 4; ++c)
    p.b2.push_back(static_cast<int32_t>(std::lround(0.4f * bd(rng) / (p.s1 * p.sw2[c]))));
  return p;
}

std::vector<float> TinyCnn::random_input(uint32_t s) const {
  std::mt19937 rng(s);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  std::vector<float> x(static_cast<size_t>(3 * h * w));
  for (auto& v : x) v = d(rng);
  return x;
}

std::vector<uint8_t> TinyCnn::build() const {
  const isa::MarchInfo& march_info = *isa::find_march(march);
  const int align = march_info.channel_align;
  const Params p = params();
  model::ModelFileWriter writer;
  auto m = std::make_unique<fb::ModelT>();
  m->name = name;
  m->march = march;
  m->tensors.push_back(make_tensor("data", fb::DataType::F32, fb::Layout::NCHW, {1, 3, h, w}, {1, 3, h, w}));
  m->tensors.push_back(native_tensor("data_quantized", fb::DataType::S8, 1, h, w, 3, align, quant_scale({p.s_in}, 3)));
  std::vector<float> out_scales;
  for (int c = 0; c < 4; ++c) out_scales.push_back(p.s1 * p.sw2[c]);
  m->tensors.push_back(native_tensor("conv2_out", fb::DataType::S32, 1, h / 2, w / 2, 4, align,
                                     quant_scale(out_scales, 3)));
  m->tensors.push_back(make_tensor("output", fb::DataType::F32, fb::Layout::NCHW, {1, 4, h / 2, w / 2},
                                   {1, 4, h / 2, w / 2}));
  m->inputs.push_back(model_input(0, fb::InputSource::DDR, "featuremap", "featuremap"));
  m->outputs.push_back(model_output(3));

  isa::ProgramBuilder pb(march_info);
  const TensorRef in = isa::nhwc_view(Region::kInput, 0, 0, 1, h, w, 3, DType::kInt8, align);
  const TensorRef c1 = pb.scratch_nhwc(1, h, w, 8, DType::kInt8);
  std::vector<int32_t> m1;
  std::vector<int8_t> s1;
  for (int c = 0; c < 8; ++c) {
    int32_t mm, ss;
    isa::quantize_multiplier(static_cast<double>(p.s_in) * p.sw1[c] / p.s1, &mm, &ss);
    m1.push_back(mm);
    s1.push_back(static_cast<int8_t>(ss));
  }
  pb.emit(isa::Opcode::kConv, conv_instr(pb, in, c1, 3, 1, 1, 1, p.w1, p.b1, m1, s1, 0, 127));
  const TensorRef pooled = pb.scratch_nhwc(1, h / 2, w / 2, 8, DType::kInt8);
  isa::Pool pool;
  pool.in = c1;
  pool.out = pooled;
  pool.kind = isa::PoolKind::kMax;
  pool.kernel_h = pool.kernel_w = 2;
  pool.stride_h = pool.stride_w = 2;
  pb.emit(isa::Opcode::kPool, pool);
  const TensorRef out = isa::nhwc_view(Region::kOutput, 0, 0, 1, h / 2, w / 2, 4, DType::kInt32, align);
  pb.emit(isa::Opcode::kConv, conv_instr(pb, pooled, out, 1, 1, 0, 1, p.w2, p.b2, {}, {}, INT32_MIN, INT32_MAX));

  m->segments.push_back(cpu_segment("data", "openbpu", "Quantize", {0}, {1}));
  m->segments.push_back(bpu_segment("TINY_subgraph_0", pb, &writer, {1}, {2}));
  m->segments.push_back(cpu_segment("conv2_out", "openbpu", "Dequantize", {2}, {3}));
  if (!custom_layer.empty()) {
    m->tensors.push_back(make_tensor("custom_out", fb::DataType::F32, fb::Layout::NCHW, {1, 4, h / 2, w / 2},
                                     {1, 4, h / 2, w / 2}));
    m->outputs[0] = model_output(4);
    std::vector<std::unique_ptr<fb::AttrT>> attrs;
    auto alpha = std::make_unique<fb::AttrT>();
    alpha->name = "alpha";
    alpha->type = fb::AttrType::FLOAT;
    alpha->f = 0.5f;
    attrs.push_back(std::move(alpha));
    attrs.push_back(int_attr("shift", 3));
    auto tag = std::make_unique<fb::AttrT>();
    tag->name = "tag";
    tag->type = fb::AttrType::STRING;
    tag->s = "tiny";
    attrs.push_back(std::move(tag));
    m->segments.push_back(cpu_segment("custom_layer", "custom", custom_layer, {3}, {4}, std::move(attrs)));
  }
  return finish_file(std::move(m), &writer);
}

std::vector<float> TinyCnn::expected(const std::vector<float>& x) const {
  const Params p = params();
  auto q8 = [](double v) { return static_cast<int64_t>(std::max(-128.0, std::min(127.0, std::round(v)))); };
  // Quantize, NCHW.
  std::vector<int64_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i) q[i] = q8(static_cast<double>(x[i]) / static_cast<double>(p.s_in));
  auto at = [&](int c, int y, int xx) -> int64_t {
    if (y < 0 || y >= h || xx < 0 || xx >= w) return 0;
    return q[static_cast<size_t>((c * h + y) * w + xx)];
  };
  // conv1 3x3 pad 1, requantize (floor((acc*M + 2^(S-1)) / 2^S)), relu.
  std::vector<int64_t> y1(static_cast<size_t>(8 * h * w));
  for (int co = 0; co < 8; ++co) {
    int32_t mm, ss;
    isa::quantize_multiplier(static_cast<double>(p.s_in) * p.sw1[co] / p.s1, &mm, &ss);
    for (int y = 0; y < h; ++y)
      for (int xx = 0; xx < w; ++xx) {
        int64_t acc = p.b1[co];
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx)
            for (int ci = 0; ci < 3; ++ci)
              acc += at(ci, y + ky - 1, xx + kx - 1) * p.w1[static_cast<size_t>(((co * 3 + ky) * 3 + kx) * 3 + ci)];
        const double real = std::floor((static_cast<double>(acc) * mm + std::ldexp(1.0, ss - 1)) / std::ldexp(1.0, ss));
        y1[static_cast<size_t>((co * h + y) * w + xx)] = std::max<int64_t>(0, std::min<int64_t>(127, static_cast<int64_t>(real)));
      }
  }
  // maxpool 2x2/2, conv2 1x1 int32, dequantize.
  const int oh = h / 2, ow = w / 2;
  std::vector<float> out(static_cast<size_t>(4 * oh * ow));
  for (int co = 0; co < 4; ++co) {
    const float scale = p.s1 * p.sw2[co];
    for (int y = 0; y < oh; ++y)
      for (int xx = 0; xx < ow; ++xx) {
        int64_t acc = p.b2[co];
        for (int ci = 0; ci < 8; ++ci) {
          int64_t mx = INT64_MIN;
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx)
              mx = std::max(mx, y1[static_cast<size_t>((ci * h + 2 * y + dy) * w + 2 * xx + dx)]);
          acc += mx * p.w2[static_cast<size_t>(co * 8 + ci)];
        }
        out[static_cast<size_t>((co * oh + y) * ow + xx)] =
            static_cast<float>(static_cast<double>(acc) * static_cast<double>(scale));
      }
  }
  return out;
}

// ---------------------------------------------------------------------------
namespace {

// Emits preprocess (nv12 -> bgr) for an h x w nv12 input in kInput 0.
TensorRef emit_nv12_preprocess(isa::ProgramBuilder& pb, int h, int w) {
  isa::Preprocess pre;
  pre.in.region = Region::kInput;
  pre.in.dtype = DType::kUInt8;
  pre.in.dims[0] = 1, pre.in.dims[1] = h, pre.in.dims[2] = w, pre.in.dims[3] = 1;
  pre.in.strides[0] = int64_t{h} * w * 3 / 2, pre.in.strides[1] = w, pre.in.strides[2] = 1, pre.in.strides[3] = 1;
  pre.out = pb.scratch_nhwc(1, h, w, 3, DType::kInt8);
  pre.src_format = isa::ImageFormat::kNV12;
  pre.dst_format = isa::ImageFormat::kBGR;
  pre.range = isa::ColorRange::kFull;
  pre.uv_offset = static_cast<uint64_t>(h) * w;
  pre.uv_row_stride = w;
  pb.emit(isa::Opcode::kPreprocess, pre);
  return pre.out;
}

TensorRef emit_global_avgpool(isa::ProgramBuilder& pb, const TensorRef& in) {
  isa::Pool pool;
  pool.in = in;
  pool.out = pb.scratch_nhwc(1, 1, 1, in.dims[3], DType::kInt8);
  pool.kind = isa::PoolKind::kAvg;
  pool.kernel_h = in.dims[1];
  pool.kernel_w = in.dims[2];
  pool.stride_h = pool.stride_w = 1;
  pb.emit(isa::Opcode::kPool, pool);
  return pool.out;
}

// NV12 input -> BPU program built by `body` (ending in an int32 fc output of
// `classes` channels) -> Dequantize -> Softmax.
// Compiler options of the classifier builders (max_time_per_fc, core_num).
struct CompileOptions {
  double max_fc_us = 0.0;
  int core_num = 1;
  bool resizer = false;  // input_source resizer
};

template <class Body>
std::vector<uint8_t> nv12_classifier_file(const std::string& name, const std::string& march, int h, int w,
                                          int classes, uint32_t seed, const std::string& subgraph,
                                          const CompileOptions& opts, Body body) {
  const isa::MarchInfo& mi = *isa::find_march(march);
  const int align = mi.channel_align;
  model::ModelFileWriter writer;
  std::mt19937 rng(seed);
  isa::ProgramBuilder pb(mi);
  RandomLayer layer{&rng, &pb};
  const TensorRef img = emit_nv12_preprocess(pb, h, w);
  const TensorRef feat = body(layer, img);
  const TensorRef pooled = emit_global_avgpool(pb, feat);
  const TensorRef out = isa::nhwc_view(Region::kOutput, 0, 0, 1, 1, 1, classes, DType::kInt32, align);
  std::vector<float> scales;
  layer.run(pooled, classes, 1, 1, 1, INT32_MIN, INT32_MAX, &out, DType::kInt32, &scales);

  auto m = std::make_unique<fb::ModelT>();
  m->name = name;
  m->march = march;
  m->tensors.push_back(nv12_tensor("data", h, w));
  m->tensors.push_back(native_tensor("fc", fb::DataType::S32, 1, 1, 1, classes, align, quant_scale(scales, 3)));
  m->tensors.push_back(make_tensor("fc_dequantized", fb::DataType::F32, fb::Layout::NCHW, {1, classes, 1, 1},
                                   {1, classes, 1, 1}));
  m->tensors.push_back(make_tensor("prob", fb::DataType::F32, fb::Layout::NCHW, {1, classes, 1, 1}, {1, classes, 1, 1}));
  m->inputs.push_back(model_input(0, opts.resizer ? fb::InputSource::RESIZER : fb::InputSource::PYRAMID, "nv12", "bgr"));
  m->outputs.push_back(model_output(3));
  m->segments.push_back(bpu_segment(subgraph, pb, &writer, {0}, {1}, opts.max_fc_us));
  m->segments.push_back(cpu_segment("fc", "openbpu", "Dequantize", {1}, {2}));
  std::vector<std::unique_ptr<fb::AttrT>> attrs;
  attrs.push_back(int_attr("axis", 1));
  m->segments.push_back(cpu_segment("prob", "", "Softmax", {2}, {3}, std::move(attrs)));
  if (opts.core_num != 1) {  // as hb_mapper writes it: the typed field and the echoed compiler options
    m->core_num = static_cast<uint8_t>(opts.core_num);
    model::set_metadata(m.get(), "hbdk_pass_through_params", "--O3 --core-num " + std::to_string(opts.core_num));
  }
  return finish_file(std::move(m), &writer);
}

}  // namespace

std::vector<uint8_t> Nv12Classifier::build() const {
  return nv12_classifier_file(name, march, h, w, classes, seed, "CLS_subgraph_0", {max_fc_us, core_num, resizer},
                              [](RandomLayer& l, const TensorRef& img) {
                                TensorRef x = l.run(img, 16, 3, 2, 1, 0, 96);  // relu6 at scale 1/16
                                x = l.run(x, 16, 3, 1, 16, 0, 127);            // depthwise
                                return l.run(x, 32, 1, 1, 1, 0, 127);
                              });
}

std::vector<uint8_t> MobileNetV1::build() const {
  return nv12_classifier_file(name, march, h, w, classes, seed, "MOBILENET_subgraph_0", {max_fc_us, core_num},
                              [](RandomLayer& l, const TensorRef& img) {
                                TensorRef x = l.run(img, 32, 3, 2, 1, 0, 127);
                                const int cfg[][2] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},
                                                      {512, 2}, {512, 1}, {512, 1}, {512, 1}, {512, 1},
                                                      {512, 1}, {1024, 2}, {1024, 1}};
                                for (const auto& c : cfg) {
                                  x = l.run(x, x.dims[3], 3, c[1], x.dims[3], 0, 127);  // depthwise
                                  x = l.run(x, c[0], 1, 1, 1, 0, 127);                  // pointwise
                                }
                                return x;
                              });
}

std::vector<uint8_t> TrivialBpu::build() const {
  const isa::MarchInfo& mi = *isa::find_march(march);
  const int align = mi.channel_align;
  model::ModelFileWriter writer;
  auto m = std::make_unique<fb::ModelT>();
  m->name = name;
  m->march = march;
  m->tensors.push_back(native_tensor("data", fb::DataType::S8, 1, 1, 1, c, align, quant_scale({1.0f / 64}, 3)));
  m->tensors.push_back(native_tensor("copy", fb::DataType::S8, 1, 1, 1, c, align, quant_scale({1.0f / 64}, 3)));
  m->inputs.push_back(model_input(0, fb::InputSource::DDR, "featuremap", "featuremap"));
  m->outputs.push_back(model_output(1));
  isa::ProgramBuilder pb(mi);
  isa::Move mv;
  mv.in = isa::nhwc_view(Region::kInput, 0, 0, 1, 1, 1, c, DType::kInt8, align);
  mv.out = isa::nhwc_view(Region::kOutput, 0, 0, 1, 1, 1, c, DType::kInt8, align);
  pb.emit(isa::Opcode::kMove, mv);
  m->segments.push_back(bpu_segment("TRIVIAL_subgraph_0", pb, &writer, {0}, {1}));
  return finish_file(std::move(m), &writer);
}

std::vector<uint8_t> pack_models(const std::vector<std::vector<uint8_t>>& files) {
  std::vector<uint8_t> out;
  std::string err;
  if (!model::pack_model_files(files, "tests", &out, &err)) return {};
  return out;
}

std::vector<uint8_t> as_hbm(const std::vector<uint8_t>& file, const std::string& desc) {
  fb::ModelFileT f;
  std::vector<uint8_t> data;
  std::string err;
  if (!model::unpack_model_file(file.data(), file.size(), &f, &data, &err)) return {};
  model::ModelFileWriter writer;
  for (auto& m : f.models)
    if (!model::relocate_blobs(m.get(), data, &writer, &err)) return {};
  f.generation = fb::Generation::B;
  f.desc = desc;
  return writer.finish(&f);
}

std::vector<uint8_t> bgr_to_nv12(const std::vector<uint8_t>& bgr, int h, int w) {
  std::vector<uint8_t> nv12(static_cast<size_t>(h) * w * 3 / 2);
  auto clamp = [](int v) { return static_cast<uint8_t>(std::max(0, std::min(255, v))); };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = &bgr[(static_cast<size_t>(y) * w + x) * 3];
      const int b = p[0], g = p[1], r = p[2];
      nv12[static_cast<size_t>(y) * w + x] = clamp((4899 * r + 9617 * g + 1868 * b + 8192) >> 14);
    }
  for (int y = 0; y < h / 2; ++y)
    for (int x = 0; x < w / 2; ++x) {
      int b = 0, g = 0, r = 0;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const uint8_t* p = &bgr[(static_cast<size_t>(2 * y + dy) * w + 2 * x + dx) * 3];
          b += p[0], g += p[1], r += p[2];
        }
      b = (b + 2) / 4, g = (g + 2) / 4, r = (r + 2) / 4;
      uint8_t* uv = &nv12[static_cast<size_t>(h) * w + static_cast<size_t>(y) * w + 2 * x];
      uv[0] = clamp(((-2765 * r - 5427 * g + 8192 * b + 8192) >> 14) + 128);
      uv[1] = clamp(((8192 * r - 6860 * g - 1332 * b + 8192) >> 14) + 128);
    }
  return nv12;
}

}  // namespace openbpu::testing
