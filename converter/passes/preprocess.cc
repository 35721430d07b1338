// SPDX-License-Identifier: Apache-2.0
// Preprocess insertion: for each image input (input_type_rt not featuremap)
// the model's float input becomes the int8 intermediate type of the runtime
// format (yuv444_128 for nv12/yuv444, RGB_128, BGR_128, GRAY_128: value - 128,
// in input_layout_train) and an openbpu::Preprocess node converts it to the
// training format and applies norm_type's mean/scale:
//   y[c] = (convert(x + 128)[c] - mean[c]) * scale[c]
// The Preprocess output is NCHW; for NHWC-trained models a Transpose follows
// so the model's own operators see their layout.
#include "converter/passes/preprocess.h"

#include <algorithm>

#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

rt::AttrValue str(const std::string& s) {
  rt::AttrValue a;
  a.type = rt::AttrValue::kString;
  a.s = s;
  return a;
}

rt::AttrValue floats(const std::vector<float>& f) {
  rt::AttrValue a;
  a.type = rt::AttrValue::kFloats;
  a.floats = f;
  return a;
}

}  // namespace

std::string intermediate_family(const std::string& type_rt) {
  if (type_rt == "nv12" || type_rt == "yuv444" || type_rt == "yuv444_128" || type_rt == "yuv_bt601_full" ||
      type_rt == "yuv_bt601_video")
    return "yuv444";
  if (type_rt == "rgb" || type_rt == "bgr" || type_rt == "gray") return type_rt;
  return "";
}

bool insert_preprocess(Graph* g, const std::vector<PreprocessSpec>& specs, std::string* error) {
  for (const PreprocessSpec& p : specs) {
    if (p.type_rt == "featuremap") continue;
    Value* in = g->value(p.input);
    if (in == nullptr || std::find(g->inputs.begin(), g->inputs.end(), p.input) == g->inputs.end()) {
      *error = "input_parameters.input_name: '" + p.input + "' is not a model input";
      return false;
    }
    if (!in->shape_known() || in->shape.size() != 4) {
      *error = "input '" + p.input + "': image inputs must be 4-D with a known shape";
      return false;
    }
    const std::string family = intermediate_family(p.type_rt);
    if (family.empty()) {
      *error = "input_parameters.input_type_rt: '" + p.type_rt + "' is not an image type";
      return false;
    }
    const bool nhwc = p.layout_train == "NHWC";
    const std::vector<int64_t> shape = in->shape;
    const int64_t c = nhwc ? shape[3] : shape[1];
    const std::vector<int64_t> nchw = nhwc ? std::vector<int64_t>{shape[0], shape[3], shape[1], shape[2]} : shape;

    // Consumers of the float input read the preprocess output from now on.
    const std::string pre_out = g->unique_name(p.input + "_preprocessed");
    std::string model_side = pre_out;
    Node pre;
    pre.name = g->unique_name("HzPreprocess_" + p.input);
    pre.op_type = "Preprocess";
    pre.domain = "openbpu";
    pre.inputs = {p.input};
    pre.outputs = {pre_out};
    pre.attrs.set("rt", str(p.type_rt));
    pre.attrs.set("rt_layout", str(p.type_rt == "nv12" ? "NCHW" : (p.layout_rt.empty() ? "NHWC" : p.layout_rt)));
    pre.attrs.set("src", str(family));
    pre.attrs.set("dst", str(p.type_train));
    pre.attrs.set("layout", str(p.layout_train));
    pre.attrs.set("range", str(p.space_and_range));
    if (!p.mean.empty()) pre.attrs.set("mean", floats(p.mean));
    if (!p.scale.empty()) pre.attrs.set("scale", floats(p.scale));
    Value out;
    out.name = pre_out;
    out.elem_type = kFloat;
    out.has_shape = true;
    out.shape = nchw;
    g->values[pre_out] = out;
    std::vector<Node> added = {pre};
    if (nhwc) {
      model_side = g->unique_name(p.input + "_preprocessed_nhwc");
      Node t;
      t.name = g->unique_name("HzPreprocess_" + p.input + "_to_nhwc");
      t.op_type = "Transpose";
      t.inputs = {pre_out};
      t.outputs = {model_side};
      rt::AttrValue perm;
      perm.type = rt::AttrValue::kInts;
      perm.ints = {0, 2, 3, 1};
      t.attrs.set("perm", perm);
      Value tv = out;
      tv.name = model_side;
      tv.shape = shape;
      g->values[model_side] = tv;
      added.push_back(t);
    }
    for (auto& n : g->nodes)
      for (auto& i : n.inputs)
        if (i == p.input) i = model_side;
    for (auto& o : g->outputs)
      if (o == p.input) o = model_side;
    g->nodes.insert(g->nodes.begin(), added.begin(), added.end());
    // The model input is now the int8 intermediate image in the train layout.
    in->elem_type = kInt8;
    (void)c;
  }
  return g->topo_sort(error);
}

}  // namespace openbpu::cvt
