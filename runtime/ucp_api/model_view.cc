// SPDX-License-Identifier: Apache-2.0
#include "runtime/ucp_api/model_view.h"

#include <cmath>
#include <cstring>

namespace openbpu::ucp {

namespace {

using rt::error;
using rt::Status;
using rt::TensorDesc;

// Y/UV row strides must be multiples of this on S100/S100P (HBUCP_API.md 3.5).
constexpr int64_t kImageRowAlign = 32;

void set_shape(hbDNNTensorShape* s, const std::vector<int32_t>& dims) {
  s->numDimensions = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size() && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) s->dimensionSize[i] = dims[i];
}

// In layout order (the model's inputs and outputs, as applications see
// them), or in the logical ONNX order of rt::logical_view (layer outputs).
ViewTensor tensor_view(const TensorDesc& d, uint32_t io, bool logical = false) {
  ViewTensor v;
  v.name = d.name;
  v.io = io;
  const rt::LogicalView lv = rt::logical_view(d);
  if (logical)
    set_shape(&v.props.validShape, std::vector<int32_t>(lv.dims.begin(), lv.dims.end()));
  else
    set_shape(&v.props.validShape, d.valid);
  v.props.tensorType = ucp_data_type(d.data_type);
  const std::vector<int64_t> st = logical ? lv.strides : d.byte_strides();
  for (size_t i = 0; i < st.size() && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i) v.props.stride[i] = st[i];
  v.props.alignedByteSize = d.aligned_byte_size;
  if (d.quant.type == rt::kQuantScale) {
    v.scales = d.quant.scales;
    v.zero_points.assign(d.quant.zero_points.begin(), d.quant.zero_points.end());
  } else if (d.quant.type == rt::kQuantShift) {
    // The UCP generation has no SHIFT: 2^-shift is the same scale.
    for (uint8_t s : d.quant.shifts) v.scales.push_back(std::ldexp(1.0f, -static_cast<int>(s)));
  }
  v.props.quantiType = v.scales.empty() ? NONE : SCALE;
  v.props.quantizeAxis = v.scales.size() <= 1 ? -1 : logical ? rt::logical_axis(d, d.quant.axis) : d.quant.axis;
  return v;
}

// One plane of an image input: validShape (1, rows, cols, channels), dynamic
// N and H strides (the caller's row pitch), alignedByteSize -1.
ViewTensor plane_view(const std::string& name, uint32_t io, ViewTensor::Kind kind, int rows, int cols,
                      int channels) {
  ViewTensor v;
  v.name = name;
  v.io = io;
  v.kind = kind;
  set_shape(&v.props.validShape, {1, rows, cols, channels});
  v.props.tensorType = HB_DNN_TENSOR_TYPE_U8;
  const int64_t strides[4] = {-1, -1, channels, 1};
  for (int i = 0; i < 4; ++i) v.props.stride[i] = strides[i];
  v.props.alignedByteSize = -1;
  v.props.quantiType = NONE;
  v.props.quantizeAxis = -1;
  return v;
}

// The ROI input of a resizer input: S32 validShape (1, 4), stride (16, 4).
ViewTensor roi_view(const std::string& name, uint32_t io) {
  ViewTensor v;
  v.name = name;
  v.io = io;
  v.kind = ViewTensor::Kind::kRoi;
  set_shape(&v.props.validShape, {1, 4});
  v.props.tensorType = HB_DNN_TENSOR_TYPE_S32;
  v.props.stride[0] = 4 * sizeof(int32_t);
  v.props.stride[1] = sizeof(int32_t);
  v.props.alignedByteSize = 4 * sizeof(int32_t);
  v.props.quantiType = NONE;
  v.props.quantizeAxis = -1;
  return v;
}

void point_scales(ViewTensor* v) {
  v->props.scale.scaleLen = static_cast<int32_t>(v->scales.size());
  v->props.scale.scaleData = v->scales.empty() ? nullptr : v->scales.data();
  v->props.scale.zeroPointLen = static_cast<int32_t>(v->zero_points.size());
  v->props.scale.zeroPointData = v->zero_points.empty() ? nullptr : v->zero_points.data();
}

void point_scales(std::vector<ViewTensor>* ts) {
  for (ViewTensor& v : *ts) point_scales(&v);
}

// The caller's validShape must be the model's (dynamic dimensions filled in).
Status check_shape(const hbDNNTensorShape& s, const std::vector<int32_t>& model, const std::string& what) {
  if (s.numDimensions != static_cast<int32_t>(model.size()))
    return error(rt::kInvalidArgument, what + ": validShape has " + std::to_string(s.numDimensions) +
                                           " dimensions, the model's has " + std::to_string(model.size()));
  for (size_t i = 0; i < model.size(); ++i) {
    if (s.dimensionSize[i] <= 0 && (model[i] == -1 || s.dimensionSize[i] == -1))
      return error(rt::kInvalidArgument, what + ": dynamic dimension " + std::to_string(i) + " should be set" +
                                             (s.dimensionSize[i] == -1 ? "" : " (it is " +
                                                                                  std::to_string(s.dimensionSize[i]) + ")"));
    if (model[i] != -1 && s.dimensionSize[i] != model[i])
      return error(rt::kInvalidArgument, what + ": validShape[" + std::to_string(i) + "] is " +
                                             std::to_string(s.dimensionSize[i]) + ", the model's is " +
                                             std::to_string(model[i]));
  }
  return Status::Ok();
}

Status check_type(const hbDNNTensor& t, const ViewTensor& v, const std::string& what) {
  if (t.properties.tensorType != v.props.tensorType)
    return error(rt::kInvalidArgument, what + ": tensorType " + std::to_string(t.properties.tensorType) +
                                           " is not the model's " + std::to_string(v.props.tensorType));
  if (t.sysMem.virAddr == nullptr) return error(rt::kInvalidArgument, what + ": sysMem.virAddr is NULL");
  return Status::Ok();
}

// A tensor the caller describes by its strides (every one set).
Status tensor_buffer(const hbDNNTensor& t, const ViewTensor& v, const TensorDesc& md, const std::string& what,
                     rt::IoBuffer* b) {
  OBPU_RETURN_IF_ERROR(check_type(t, v, what));
  OBPU_RETURN_IF_ERROR(check_shape(t.properties.validShape, md.valid, what));
  b->strides.assign(t.properties.stride, t.properties.stride + md.valid.size());
  for (size_t i = 0; i < b->strides.size(); ++i)
    if (b->strides[i] <= 0)
      return error(rt::kInvalidArgument, what + ": stride[" + std::to_string(i) + "] is " +
                                             std::to_string(b->strides[i]) + (b->strides[i] == -1 ? ", it should be set" : ""));
  b->data[0] = static_cast<uint8_t*>(t.sysMem.virAddr);
  b->size[0] = t.sysMem.memSize;
  b->data_type = md.data_type;
  b->layout = md.layout;
  b->valid = md.valid;
  b->aligned = md.aligned;
  return Status::Ok();
}

// One plane of an image input: (1, rows, cols, ch) U8 (a resizer input's
// rows and cols are the caller's frame), element strides (ch, 1), a row
// stride of at least cols * ch bytes aligned to 32, and the batch stride
// covering the rows.
Status plane_buffer(const hbDNNTensor& t, const ViewTensor& v, const std::string& what, int plane,
                    rt::IoBuffer* b) {
  OBPU_RETURN_IF_ERROR(check_type(t, v, what));
  const hbDNNTensorShape& vs = v.props.validShape;
  OBPU_RETURN_IF_ERROR(check_shape(t.properties.validShape,
                                   {vs.dimensionSize[0], vs.dimensionSize[1], vs.dimensionSize[2], vs.dimensionSize[3]},
                                   what));
  const hbDNNTensorShape& cs = t.properties.validShape;
  const int64_t rows = cs.dimensionSize[1], ch = cs.dimensionSize[3], row_bytes = cs.dimensionSize[2] * ch;
  const int64_t* st = t.properties.stride;
  if (st[3] != 1 || st[2] != ch)
    return error(rt::kInvalidArgument, what + ": element strides (stride[2], stride[3]) must be (" +
                                           std::to_string(ch) + ", 1)");
  if (st[1] < row_bytes)
    return error(rt::kInvalidArgument, what + ": stride[1] " + std::to_string(st[1]) + " should be at least " +
                                           std::to_string(row_bytes) + (st[1] == -1 ? " (it is dynamic: set it)" : ""));
  if (st[1] % kImageRowAlign != 0)
    return error(rt::kInvalidArgument, what + ": stride[1] " + std::to_string(st[1]) + " should be align to " +
                                           std::to_string(kImageRowAlign));
  if (st[0] < st[1] * rows)
    return error(rt::kInvalidArgument, what + ": stride[0] " + std::to_string(st[0]) + " should be at least " +
                                           std::to_string(st[1] * rows));
  b->data[plane] = static_cast<uint8_t*>(t.sysMem.virAddr);
  b->size[plane] = t.sysMem.memSize;
  b->row_stride[plane] = st[1];
  return Status::Ok();
}

// The roi tensor of a resizer input: S32 (1, 4), element stride 4, 16 bytes
// readable; its values are read now (hbDNNInferV2), the frame when the task
// runs.
Status roi_buffer(const hbDNNTensor& t, const ViewTensor& v, const std::string& what, rt::IoBuffer* b) {
  OBPU_RETURN_IF_ERROR(check_type(t, v, what));
  OBPU_RETURN_IF_ERROR(check_shape(t.properties.validShape, {1, 4}, what));
  if (t.properties.stride[1] != static_cast<int64_t>(sizeof(int32_t)) ||
      t.properties.stride[0] < static_cast<int64_t>(4 * sizeof(int32_t)))
    return error(rt::kInvalidArgument, what + ": stride (" + std::to_string(t.properties.stride[0]) + ", " +
                                           std::to_string(t.properties.stride[1]) + ") should be (16, 4)");
  if (t.sysMem.memSize < 4 * sizeof(int32_t))
    return error(rt::kInvalidArgument, what + ": sysMem holds " + std::to_string(t.sysMem.memSize) +
                                           " bytes, the roi needs 16 (int32 left, top, right, bottom)");
  int32_t r[4];
  std::memcpy(r, t.sysMem.virAddr, sizeof(r));
  b->roi = rt::RoiBox{r[0], r[1], r[2], r[3]};
  return Status::Ok();
}

// A resizer input's planes describe one frame: UV has half the Y rows and
// columns.
Status frame_size(const hbDNNTensor& t, ViewTensor::Kind kind, const std::string& what, rt::IoBuffer* b) {
  const int32_t rows = t.properties.validShape.dimensionSize[1], cols = t.properties.validShape.dimensionSize[2];
  b->resizer = true;
  if (kind == ViewTensor::Kind::kY) {
    b->image_h = rows;
    b->image_w = cols;
    return Status::Ok();
  }
  if (2 * static_cast<int64_t>(rows) != b->image_h || 2 * static_cast<int64_t>(cols) != b->image_w)
    return error(rt::kInvalidArgument, what + ": validShape (1, " + std::to_string(rows) + ", " + std::to_string(cols) +
                                           ", 2) is not half of the Y plane's frame " + std::to_string(b->image_h) +
                                           "x" + std::to_string(b->image_w) + " (rows x columns)");
  return Status::Ok();
}

}  // namespace

int32_t ucp_data_type(int32_t t) {
  switch (t) {
    case rt::kS4: return HB_DNN_TENSOR_TYPE_S4;
    case rt::kU4: return HB_DNN_TENSOR_TYPE_U4;
    case rt::kS8: return HB_DNN_TENSOR_TYPE_S8;
    case rt::kF16: return HB_DNN_TENSOR_TYPE_F16;
    case rt::kS16: return HB_DNN_TENSOR_TYPE_S16;
    case rt::kU16: return HB_DNN_TENSOR_TYPE_U16;
    case rt::kF32: return HB_DNN_TENSOR_TYPE_F32;
    case rt::kS32: return HB_DNN_TENSOR_TYPE_S32;
    case rt::kU32: return HB_DNN_TENSOR_TYPE_U32;
    case rt::kF64: return HB_DNN_TENSOR_TYPE_F64;
    case rt::kS64: return HB_DNN_TENSOR_TYPE_S64;
    case rt::kU64: return HB_DNN_TENSOR_TYPE_U64;
    case rt::kBool8: return HB_DNN_TENSOR_TYPE_BOOL8;
    default: return HB_DNN_TENSOR_TYPE_U8;  // U8 and the image types (bytes)
  }
}

void layer_view(const TensorDesc& d, ViewTensor* v) {
  *v = tensor_view(d, 0, true);
  point_scales(v);
}

std::unique_ptr<ModelView> make_view(rt::Model* model) {
  auto view = std::make_unique<ModelView>();
  view->model = model;
  for (uint32_t i = 0; i < model->inputs.size(); ++i) {
    const rt::InputInfo& in = model->inputs[i];
    const TensorDesc& d = model->tensors[in.tensor];
    const bool nhwc = d.layout == rt::kNHWC;
    const int h = nhwc ? d.valid[1] : (d.rank() == 4 ? d.valid[2] : 0);
    const int w = nhwc ? d.valid[2] : (d.rank() == 4 ? d.valid[3] : 0);
    // A resizer input takes the whole frame: its sides are the caller's.
    const bool resizer = in.source == rt::kInputFromResizer && (in.nv12 || d.data_type == rt::kImgY);
    const int fh = resizer ? -1 : h, fw = resizer ? -1 : w;
    if (in.nv12) {
      view->inputs.push_back(plane_view(d.name + "_y", i, ViewTensor::Kind::kY, fh, fw, 1));
      view->inputs.push_back(plane_view(d.name + "_uv", i, ViewTensor::Kind::kUV, resizer ? -1 : h / 2,
                                        resizer ? -1 : w / 2, 2));
    } else if (d.data_type == rt::kImgY) {
      view->inputs.push_back(plane_view(resizer ? d.name + "_y" : d.name, i, ViewTensor::Kind::kY, fh, fw, 1));
    }
    if (resizer) {
      view->inputs.push_back(roi_view(d.name + "_roi", i));
    } else if (!in.nv12 && d.data_type != rt::kImgY) {
      view->inputs.push_back(tensor_view(d, i));
    }
  }
  for (uint32_t o = 0; o < model->outputs.size(); ++o)
    view->outputs.push_back(tensor_view(model->tensors[model->outputs[o].tensor], o));
  point_scales(&view->inputs);
  point_scales(&view->outputs);
  return view;
}

Status to_io_buffers(const ModelView& view, const hbDNNTensor* input, const hbDNNTensor* output,
                     std::vector<rt::IoBuffer>* ins, std::vector<rt::IoBuffer>* outs) {
  const rt::Model& m = *view.model;
  ins->assign(m.inputs.size(), rt::IoBuffer{});
  outs->assign(m.outputs.size(), rt::IoBuffer{});
  for (size_t j = 0; j < view.inputs.size(); ++j) {
    const ViewTensor& v = view.inputs[j];
    const TensorDesc& md = m.tensors[m.inputs[v.io].tensor];
    const std::string what = "model '" + m.name + "' input " + std::to_string(j) + " '" + v.name + "'";
    rt::IoBuffer& b = (*ins)[v.io];
    if (v.kind == ViewTensor::Kind::kTensor) {
      OBPU_RETURN_IF_ERROR(tensor_buffer(input[j], v, md, what, &b));
      continue;
    }
    if (v.kind == ViewTensor::Kind::kRoi) {
      OBPU_RETURN_IF_ERROR(roi_buffer(input[j], v, what, &b));
      continue;
    }
    OBPU_RETURN_IF_ERROR(plane_buffer(input[j], v, what, v.kind == ViewTensor::Kind::kY ? 0 : 1, &b));
    if (m.inputs[v.io].source == rt::kInputFromResizer) OBPU_RETURN_IF_ERROR(frame_size(input[j], v.kind, what, &b));
    b.data_type = m.inputs[v.io].nv12 ? rt::kImgNV12Separate : md.data_type;
    b.layout = md.layout;
    b.valid = md.valid;
    b.aligned = md.aligned;
  }
  for (size_t j = 0; j < view.outputs.size(); ++j) {
    const ViewTensor& v = view.outputs[j];
    const std::string what = "model '" + m.name + "' output " + std::to_string(j) + " '" + v.name + "'";
    OBPU_RETURN_IF_ERROR(tensor_buffer(output[j], v, m.tensors[m.outputs[v.io].tensor], what, &(*outs)[v.io]));
  }
  return Status::Ok();
}

}  // namespace openbpu::ucp
