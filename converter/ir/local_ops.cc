// SPDX-License-Identifier: Apache-2.0
#include "converter/ir/local_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "bpu_sim/executor.h"
#include "bpu_sim/isa/nonlinear.h"
#include "bpu_sim/validate.h"
#include "converter/codegen/compiler.h"

namespace openbpu::cvt {

ScratchCapture*& scratch_capture() {
  static thread_local ScratchCapture* capture = nullptr;
  return capture;
}

namespace {

using rt::CpuKernel;
using rt::CpuTensor;
using rt::Status;
using rt::TensorDesc;

Status unary_check(const rt::CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out) {
  if (in.size() != 1 || out.size() != 1 || in[0]->data_type != rt::kF32 || out[0]->data_type != rt::kF32 ||
      in[0]->valid != out[0]->valid)
    return Status(rt::kInvalidModel, "node '" + def.name + "' (" + def.op_type + "): one float input and output of equal shape expected");
  return Status::Ok();
}

template <class F> class UnaryKernel final : public CpuKernel {
 public:
  explicit UnaryKernel(F f) : f_(f) {}
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const float* x = reinterpret_cast<const float*>(in[0].data);
    float* y = reinterpret_cast<float*>(out[0].data);
    const int64_t n = in[0].desc->valid_elements();
    for (int64_t i = 0; i < n; ++i) y[i] = f_(x[i]);
    return Status::Ok();
  }

 private:
  F f_;
};

Status create_swish(const rt::CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                    const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* k) {
  OBPU_RETURN_IF_ERROR(unary_check(def, in, out));
  auto f = [](float x) { return static_cast<float>(isa::fn::swish(static_cast<double>(x))); };
  *k = std::make_unique<UnaryKernel<decltype(f)>>(f);
  return Status::Ok();
}

Status create_gelu(const rt::CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* k) {
  OBPU_RETURN_IF_ERROR(unary_check(def, in, out));
  auto f = [](float x) { return static_cast<float>(isa::fn::gelu(static_cast<double>(x))); };
  *k = std::make_unique<UnaryKernel<decltype(f)>>(f);
  return Status::Ok();
}

// openbpu::Preprocess: x (int8 "_128" image or uint8) in the train layout ->
// float: u = x + 128 (int8 inputs), colour conversion src -> dst (clamped
// to 0..255), then (u - mean[c]) * scale[c].
class PreprocessKernel final : public CpuKernel {
 public:
  std::string src, dst;
  bool nhwc = false, video = false, offset128 = true;
  std::vector<float> mean, scale;
  int64_t n = 1, c = 3, h = 1, w = 1;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    const int32_t it = in[0].desc->data_type;
    float* y = reinterpret_cast<float*>(out[0].data);
    auto idx = [&](int64_t b, int64_t ch, int64_t yy, int64_t xx) {
      return nhwc ? ((b * h + yy) * w + xx) * c + ch : ((b * c + ch) * h + yy) * w + xx;
    };
    for (int64_t b = 0; b < n; ++b)
      for (int64_t yy = 0; yy < h; ++yy)
        for (int64_t xx = 0; xx < w; ++xx) {
          double px[3] = {0, 0, 0};
          for (int64_t ch = 0; ch < c; ++ch) {
            const int es = rt::element_size(it);
            px[ch] = rt::load_as_double(it, in[0].data + idx(b, ch, yy, xx) * es) + (offset128 ? 128.0 : 0.0);
          }
          double o[3] = {px[0], px[1], px[2]};
          if (src == "yuv444" && (dst == "rgb" || dst == "bgr")) {
            double r, g, bl;
            yuv_to_rgb(px[0], px[1], px[2], video, &r, &g, &bl);
            r = std::clamp(r, 0.0, 255.0), g = std::clamp(g, 0.0, 255.0), bl = std::clamp(bl, 0.0, 255.0);
            o[0] = dst == "rgb" ? r : bl, o[1] = g, o[2] = dst == "rgb" ? bl : r;
          } else if ((src == "rgb" && dst == "bgr") || (src == "bgr" && dst == "rgb")) {
            o[0] = px[2], o[2] = px[0];
          } else if (src == "yuv444" && dst == "yuv444" && video) {
            o[0] = std::clamp((px[0] - 16.0) * 255.0 / 219.0, 0.0, 255.0);
            o[1] = std::clamp((px[1] - 128.0) * 255.0 / 224.0 + 128.0, 0.0, 255.0);
            o[2] = std::clamp((px[2] - 128.0) * 255.0 / 224.0 + 128.0, 0.0, 255.0);
          } else if (src == "gray" && video) {
            o[0] = std::clamp((px[0] - 16.0) * 255.0 / 219.0, 0.0, 255.0);
          }
          for (int64_t ch = 0; ch < c; ++ch) {
            const float m = mean.empty() ? 0.0f : mean[mean.size() == 1 ? 0 : static_cast<size_t>(ch)];
            const float s = scale.empty() ? 1.0f : scale[scale.size() == 1 ? 0 : static_cast<size_t>(ch)];
            y[idx(b, ch, yy, xx)] = static_cast<float>((o[ch] - m) * s);
          }
        }
    return Status::Ok();
  }
};

Status create_preprocess(const rt::CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                         const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* k) {
  if (in.size() != 1 || out.size() != 1 || in[0]->rank() != 4 || in[0]->valid != out[0]->valid ||
      out[0]->data_type != rt::kF32)
    return Status(rt::kInvalidModel, "node '" + def.name + "' (Preprocess): 4-D input and float output expected");
  auto p = std::make_unique<PreprocessKernel>();
  p->src = def.attrs.get_string("src", "bgr");
  p->dst = def.attrs.get_string("dst", "bgr");
  p->nhwc = def.attrs.get_string("layout", "NCHW") == "NHWC";
  p->video = def.attrs.get_string("range", "regular") == "bt601_video";
  p->offset128 = in[0]->data_type == rt::kS8;
  p->mean = def.attrs.get_floats("mean");
  p->scale = def.attrs.get_floats("scale");
  const auto& d = in[0]->valid;
  p->n = d[0];
  p->c = p->nhwc ? d[3] : d[1];
  p->h = p->nhwc ? d[1] : d[2];
  p->w = p->nhwc ? d[2] : d[3];
  if (p->c != 1 && p->c != 3)
    return Status(rt::kInvalidModel, "node '" + def.name + "' (Preprocess): 1 or 3 channels expected");
  *k = std::move(p);
  return Status::Ok();
}

// openbpu::BpuSubgraph: runs a compiled BPU program on the host with the
// simulator's kernels; inputs are the program's input regions plus its
// constant blob (last input), outputs its output regions.
class BpuSubgraphKernel final : public CpuKernel {
 public:
  std::string name;
  CompiledSubgraph sg;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    // Validate against the actual regions and constants (a quantized model
    // file may have been edited by hand).
    sim::RegionLayout regions;
    for (size_t i = 0; i + 1 < in.size(); ++i) regions.inputs.push_back(static_cast<uint64_t>(in[i].desc->aligned_byte_size));
    for (const auto& o : out) regions.outputs.push_back(static_cast<uint64_t>(o.desc->aligned_byte_size));
    regions.constants = in.back().data;
    regions.constants_size = static_cast<uint64_t>(in.back().desc->aligned_byte_size);
    regions.scratch_size = sg.scratch_size;
    std::string why;
    if (!sim::validate_program(sg.program, regions, &why))
      return Status(rt::kInvalidModel, "BPU subgraph '" + name + "': " + why);
    sim::Memory mem;
    for (size_t i = 0; i + 1 < in.size(); ++i)
      mem.inputs.push_back({in[i].data, static_cast<uint64_t>(in[i].desc->aligned_byte_size)});
    for (const auto& o : out) mem.outputs.push_back({o.data, static_cast<uint64_t>(o.desc->aligned_byte_size)});
    mem.constants = {in.back().data, static_cast<uint64_t>(in.back().desc->aligned_byte_size)};
    std::vector<uint8_t> scratch(sg.scratch_size, 0);
    mem.scratch = {scratch.data(), scratch.size()};
    sim::execute_range(sg.program, 0, sg.program.size(), mem, sim::best_kernels());
    if (ScratchCapture* cap = scratch_capture()) cap->scratch[name] = std::move(scratch);
    return Status::Ok();
  }
};

Status create_bpu_subgraph(const rt::CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                           const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* k) {
  auto kernel = std::make_unique<BpuSubgraphKernel>();
  kernel->name = def.name;
  std::string err;
  if (in.empty() || !program_from_attrs(def.attrs, &kernel->sg, &err))
    return Status(rt::kInvalidModel, "node '" + def.name + "': " + (err.empty() ? "no constants input" : err));
  (void)out;
  *k = std::move(kernel);
  return Status::Ok();
}

}  // namespace

void yuv_to_rgb(double y, double u, double v, bool video, double* r, double* g, double* b) {
  if (video) {
    const double yv = 1.164383562 * (y - 16.0);
    *r = yv + 1.596026786 * (v - 128.0);
    *g = yv - 0.391762290 * (u - 128.0) - 0.812967647 * (v - 128.0);
    *b = yv + 2.017232143 * (u - 128.0);
  } else {
    *r = y + 1.402 * (v - 128.0);
    *g = y - 0.344136 * (u - 128.0) - 0.714136 * (v - 128.0);
    *b = y + 1.772 * (u - 128.0);
  }
}

void rgb_to_yuv(double r, double g, double b, double* y, double* u, double* v) {
  *y = 0.299 * r + 0.587 * g + 0.114 * b;
  *u = -0.168736 * r - 0.331264 * g + 0.5 * b + 128.0;
  *v = 0.5 * r - 0.418688 * g - 0.081312 * b + 128.0;
}

const rt::CpuOpEntry* find_local_op(const std::string& domain, const std::string& op_type) {
  static const rt::CpuOpEntry kOps[] = {
      {"openbpu", "Swish", create_swish},
      {"openbpu", "Gelu", create_gelu},
      {"openbpu", "Preprocess", create_preprocess},
      {"openbpu", "BpuSubgraph", create_bpu_subgraph},
  };
  for (const auto& e : kOps)
    if (domain == e.domain && op_type == e.op_type) return &e;
  return nullptr;
}

}  // namespace openbpu::cvt
