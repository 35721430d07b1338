// SPDX-License-Identifier: Apache-2.0
// openbpu::Preprocess (inserted by passes/preprocess.cc for image inputs):
// the runtime image bytes -> colour conversion (Preprocess instruction, into
// a temporary int8 "value - 128" image) -> mean/scale as a depthwise 1x1
// convolution into the calibrated output.
#include "converter/ops/op_unit.h"
#include "converter/ops/op_util.h"

namespace openbpu::cvt {

namespace {

using isa::DType;
using isa::Region;

bool place_preprocess(const Graph&, const Node&, const isa::MarchInfo&, std::string*) { return true; }

isa::ImageFormat image_format(const std::string& t) {
  if (t == "nv12") return isa::ImageFormat::kNV12;
  if (t == "yuv444") return isa::ImageFormat::kYUV444;
  if (t == "rgb") return isa::ImageFormat::kRGB;
  if (t == "gray") return isa::ImageFormat::kGray;
  return isa::ImageFormat::kBGR;
}

// The uint8 view of the runtime image (rt type and layout) of an H x W input.
isa::TensorRef image_view(const isa::TensorRef& input, const std::string& rt, const std::string& rt_layout, int64_t h,
                          int64_t w, isa::Preprocess* pre) {
  isa::TensorRef in;
  in.region = input.region;
  in.index = input.index;
  in.dtype = DType::kUInt8;
  const auto i32 = [](int64_t v) { return static_cast<int32_t>(v); };
  if (rt == "nv12" || rt == "gray") {
    in.dims[0] = 1, in.dims[1] = i32(h), in.dims[2] = i32(w), in.dims[3] = 1;
    in.strides[0] = rt == "nv12" ? h * w * 3 / 2 : h * w, in.strides[1] = w, in.strides[2] = 1, in.strides[3] = 1;
    if (rt == "nv12") {
      pre->uv_offset = static_cast<uint64_t>(h * w);
      pre->uv_row_stride = w;
    }
  } else if (rt_layout == "NCHW") {
    pre->src_planar = 1;
    in.dims[0] = 1, in.dims[1] = 3, in.dims[2] = i32(h), in.dims[3] = i32(w);
    in.strides[0] = 3 * h * w, in.strides[1] = h * w, in.strides[2] = w, in.strides[3] = 1;
  } else {
    in.dims[0] = 1, in.dims[1] = i32(h), in.dims[2] = i32(w), in.dims[3] = 3;
    in.strides[0] = 3 * h * w, in.strides[1] = 3 * w, in.strides[2] = 3, in.strides[3] = 1;
  }
  return in;
}

uint64_t preprocess_scratch(const Graph& g, const Op& op, int align) {
  return native_bytes(logical4(g.value(op.outputs[0])->shape), DType::kInt8, align);
}

bool emit_preprocess(LoweringContext& ctx, const Op& op, std::string* /*error*/) {
  const Node& n = ctx.graph.nodes[op.nodes[0]];
  const std::string& y = op.outputs[0];
  const Dims4 d = ctx.dims(y);
  isa::Preprocess pre;
  pre.in = image_view(ctx.ref(n.inputs[0]), n.attrs.get_string("rt", "bgr"), n.attrs.get_string("rt_layout", "NHWC"),
                      d[2], d[3], &pre);
  pre.src_format = image_format(n.attrs.get_string("rt", "bgr"));
  pre.dst_format = image_format(n.attrs.get_string("dst", "bgr"));
  pre.range = n.attrs.get_string("range", "regular") == "bt601_video" ? isa::ColorRange::kVideo : isa::ColorRange::kFull;
  pre.out = native_ref(Region::kScratch, 0, op.scratch_offset, d, DType::kInt8, ctx.align());
  ctx.pb.emit(isa::Opcode::kPreprocess, pre);
  // (u - mean) * scale of u = v + 128: a = scale, b = (128 - mean) * scale.
  std::vector<float> mean = n.attrs.get_floats("mean"), scale = n.attrs.get_floats("scale");
  std::vector<double> a(static_cast<size_t>(d[1])), b(static_cast<size_t>(d[1]));
  for (int64_t c = 0; c < d[1]; ++c) {
    const double m = mean.empty() ? 0.0 : mean[mean.size() == 1 ? 0 : static_cast<size_t>(c)];
    const double s = scale.empty() ? 1.0 : scale[scale.size() == 1 ? 0 : static_cast<size_t>(c)];
    a[static_cast<size_t>(c)] = s;
    b[static_cast<size_t>(c)] = (128.0 - m) * s;
  }
  ops::emit_affine(ctx, pre.out, ctx.ref(y), 1.0, ctx.qp(y), a, b, -1);
  return true;
}

}  // namespace

const OpUnit kPreprocessUnit = {
    .id = OpId::kPreprocess, .domain = "openbpu", .op_type = "Preprocess", .place = place_preprocess,
    .table_type = "HzPreprocess", .limits = "image inputs: colour conversion + mean/scale",
    .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = false,
    .view = false, .emit = emit_preprocess, .scratch = preprocess_scratch};

}  // namespace openbpu::cvt
