// SPDX-License-Identifier: Apache-2.0
// dnn/plugin/*.h: custom CPU layers. hbDNNRegisterLayerCreator records a
// creator per layer type; a model whose CPU operator has the custom-layer
// domain (runtime/loader/custom_layer.h) gets, per such node, one layer from
// the creator: Init with the node's attributes at load, Forward at every run
// with the node's tensors as NDArrays (docs/custom_ops.md).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/plugin/hb_dnn_dtype.h"
#include "dnn/plugin/hb_dnn_plugin.h"
#include "runtime/c_api/api.h"
#include "runtime/loader/custom_layer.h"

namespace hobot {
namespace dnn {
__attribute__((visibility("default"))) size_t TypeSize[static_cast<uint32_t>(TypeFlag::kUnused) + 1U] = {
    1U, 1U, 1U, 2U, 2U, 4U, 4U, 8U, 8U, 2U, 4U, 8U, 0U};
}  // namespace dnn
}  // namespace hobot

namespace {

namespace rt = openbpu::rt;
using hobot::dnn::NDArray;
using hobot::dnn::TShape;
using hobot::dnn::TypeFlag;

std::mutex g_mu;
std::map<std::string, hbDNNLayerCreator>& creators() {
  static auto* m = new std::map<std::string, hbDNNLayerCreator>();
  return *m;
}

hbDNNLayerCreator find_creator(const std::string& type) {
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = creators().find(type);
  return it == creators().end() ? nullptr : it->second;
}

// hbDNNDataType -> the plugin's TypeFlag (kUnused: no NDArray type).
TypeFlag type_flag(int32_t t) {
  switch (t) {
    case HB_DNN_TENSOR_TYPE_S8: return TypeFlag::kInt8;
    case HB_DNN_TENSOR_TYPE_U8: return TypeFlag::kUInt8;
    case HB_DNN_TENSOR_TYPE_S16: return TypeFlag::kInt16;
    case HB_DNN_TENSOR_TYPE_U16: return TypeFlag::kUInt16;
    case HB_DNN_TENSOR_TYPE_S32: return TypeFlag::kInt32;
    case HB_DNN_TENSOR_TYPE_U32: return TypeFlag::kUInt32;
    case HB_DNN_TENSOR_TYPE_S64: return TypeFlag::kInt64;
    case HB_DNN_TENSOR_TYPE_U64: return TypeFlag::kUInt64;
    case HB_DNN_TENSOR_TYPE_F16: return TypeFlag::kFloat16;
    case HB_DNN_TENSOR_TYPE_F32: return TypeFlag::kFloat32;
    case HB_DNN_TENSOR_TYPE_F64: return TypeFlag::kFloat64;
    case rt::kBool8: return TypeFlag::kBool;
    default: return TypeFlag::kUnused;
  }
}

// The node's attributes for Layer::Init. GetAttributeValue returns 0, or
// HB_DNN_INVALID_ARGUMENT when the key is missing or holds another type.
class NodeAttributes final : public hobot::dnn::Attribute {
 public:
  explicit NodeAttributes(const rt::Attrs& attrs) : attrs_(attrs) {}
  int32_t GetAttributeValue(int32_t* value, char const* key) const override {
    const rt::AttrValue* a = get(value, key, rt::AttrValue::kInt);
    if (a == nullptr || a->i < INT32_MIN || a->i > INT32_MAX) return HB_DNN_INVALID_ARGUMENT;
    *value = static_cast<int32_t>(a->i);
    return HB_DNN_SUCCESS;
  }
  int32_t GetAttributeValue(float* value, char const* key) const override {
    const rt::AttrValue* a = get(value, key, rt::AttrValue::kFloat);
    if (a == nullptr) return HB_DNN_INVALID_ARGUMENT;
    *value = a->f;
    return HB_DNN_SUCCESS;
  }
  int32_t GetAttributeValue(std::string* value, char const* key) const override {
    const rt::AttrValue* a = get(value, key, rt::AttrValue::kString);
    if (a == nullptr) return HB_DNN_INVALID_ARGUMENT;
    *value = a->s;
    return HB_DNN_SUCCESS;
  }
  // A tensor-valued attribute, copied into a new array.
  int32_t GetAttributeValue(NDArray* value, char const* key) const override {
    const rt::AttrValue* a = get(value, key, rt::AttrValue::kTensor);
    if (a == nullptr || type_flag(a->tensor_type) == TypeFlag::kUnused) return HB_DNN_INVALID_ARGUMENT;
    std::vector<uint32_t> dims;
    for (int64_t d : a->tensor_dims) {
      if (d < 0 || d > UINT32_MAX) return HB_DNN_INVALID_ARGUMENT;
      dims.push_back(static_cast<uint32_t>(d));
    }
    NDArray array(TShape(dims), type_flag(a->tensor_type));
    if (array.ByteSize() != a->tensor->size()) return HB_DNN_INVALID_ARGUMENT;
    if (!a->tensor->empty()) array.SyncCopyFrom(a->tensor->data(), array.ByteSize());
    *value = array;
    return HB_DNN_SUCCESS;
  }
  int32_t GetAttributeValue(std::vector<int32_t>* value, char const* key) const override {
    const rt::AttrValue* a = get(value, key, rt::AttrValue::kInts);
    if (a == nullptr) return HB_DNN_INVALID_ARGUMENT;
    value->clear();
    for (int64_t v : a->ints) {
      if (v < INT32_MIN || v > INT32_MAX) return HB_DNN_INVALID_ARGUMENT;
      value->push_back(static_cast<int32_t>(v));
    }
    return HB_DNN_SUCCESS;
  }
  int32_t GetAttributeValue(std::vector<float>* value, char const* key) const override {
    const rt::AttrValue* a = get(value, key, rt::AttrValue::kFloats);
    if (a == nullptr) return HB_DNN_INVALID_ARGUMENT;
    *value = a->floats;
    return HB_DNN_SUCCESS;
  }
  int32_t GetAttributeValue(std::vector<std::string>* value, char const* key) const override {
    const rt::AttrValue* a = get(value, key, rt::AttrValue::kStrings);
    if (a == nullptr) return HB_DNN_INVALID_ARGUMENT;
    *value = a->strings;
    return HB_DNN_SUCCESS;
  }
  // The model format has no list-of-tensors attribute: never present.
  int32_t GetAttributeValue(std::vector<NDArray>* value, char const* key) const override {
    (void)value, (void)key;
    return HB_DNN_INVALID_ARGUMENT;
  }

 private:
  template <typename T>
  const rt::AttrValue* get(T* value, char const* key, rt::AttrValue::Type type) const {
    if (value == nullptr || key == nullptr) return nullptr;
    const rt::AttrValue* a = attrs_.find(key);
    return a != nullptr && a->type == type ? a : nullptr;
  }
  const rt::Attrs& attrs_;
};

// Shape and type of one tensor as the layer sees it (dense, listed order).
struct ArrayInfo {
  TShape shape;
  TypeFlag type = TypeFlag::kUnused;
};

rt::Status array_info(const rt::TensorDesc* t, const std::string& where, ArrayInfo* out) {
  if (t == nullptr) return rt::error(rt::kInvalidModel, where + " is omitted (custom layers take every tensor)");
  out->type = type_flag(t->data_type);
  if (out->type == TypeFlag::kUnused)
    return rt::error(rt::kInvalidModel, where + " has data type " + std::to_string(t->data_type) +
                                            ", which has no NDArray type");
  std::vector<uint32_t> dims;
  for (int32_t d : t->valid) dims.push_back(static_cast<uint32_t>(d));
  if (t->valid != t->aligned || t->byte_strides() != rt::dense_strides(t->valid, rt::element_size(t->data_type)))
    return rt::error(rt::kInvalidModel, where + " is padded; custom layers take dense tensors");
  out->shape = TShape(dims);
  return rt::Status::Ok();
}

// One node's layer. run() is const and may be called by several tasks at
// once; a layer's Forward is not required to be thread-safe, so calls of one
// node are serialized.
class LayerKernel final : public rt::CpuKernel {
 public:
  LayerKernel(std::string node, std::unique_ptr<hobot::dnn::Layer> layer, std::vector<ArrayInfo> in,
              std::vector<ArrayInfo> out)
      : node_(std::move(node)), layer_(std::move(layer)), in_(std::move(in)), out_(std::move(out)) {}

  rt::Status run(const std::vector<rt::CpuTensor>& inputs, const std::vector<rt::CpuTensor>& outputs) const override {
    std::vector<NDArray> bottom, top;
    std::vector<NDArray*> bottom_ptr, top_ptr;
    for (size_t i = 0; i < in_.size(); ++i) bottom.emplace_back(inputs[i].data, 0, in_[i].shape, in_[i].type);
    for (size_t i = 0; i < out_.size(); ++i) top.emplace_back(outputs[i].data, 0, out_[i].shape, out_[i].type);
    for (auto& a : bottom) bottom_ptr.push_back(&a);
    for (auto& a : top) top_ptr.push_back(&a);
    std::lock_guard<std::mutex> lk(mu_);
    const int32_t rc = layer_->Forward(bottom_ptr, top_ptr, nullptr);
    if (rc != 0)
      return rt::error(rt::kRunTaskFailed, "custom layer '" + layer_->GetType() + "' (node '" + node_ +
                                               "'): Forward returned " + std::to_string(rc));
    // A layer may have pointed a top blob at its own memory: copy it over.
    for (size_t i = 0; i < out_.size(); ++i) {
      if (top[i].RawData() == outputs[i].data) continue;
      if (top[i].IsNone() || top[i].ByteSize() != NDArray(outputs[i].data, 0, out_[i].shape, out_[i].type).ByteSize())
        return rt::error(rt::kRunTaskFailed, "custom layer '" + layer_->GetType() + "' (node '" + node_ +
                                                 "'): output " + std::to_string(i) + " changed its size");
      top[i].SyncCopyTo(outputs[i].data, top[i].ByteSize());
    }
    return rt::Status::Ok();
  }

 private:
  std::string node_;
  std::unique_ptr<hobot::dnn::Layer> layer_;
  std::vector<ArrayInfo> in_, out_;
  mutable std::mutex mu_;
};

rt::Status create_layer_kernel(const rt::CpuOpDef& def, const std::vector<const rt::TensorDesc*>& inputs,
                               const std::vector<const rt::TensorDesc*>& outputs,
                               std::unique_ptr<rt::CpuKernel>* kernel) {
  const std::string what = "custom layer '" + def.op_type + "' (node '" + def.name + "')";
  const hbDNNLayerCreator creator = find_creator(def.op_type);
  if (creator == nullptr)
    return rt::error(rt::kApiUseError, what + ": no creator is registered for this layer type "
                                              "(hbDNNRegisterLayerCreator before loading the model)");
  std::unique_ptr<hobot::dnn::Layer> layer(creator());
  if (!layer) return rt::error(rt::kInvalidArgument, what + ": its creator returned NULL");
  if (layer->GetInputCount() != inputs.size() || layer->GetOutputCount() != outputs.size())
    return rt::error(rt::kInvalidModel, what + " has " + std::to_string(inputs.size()) + " input(s) and " +
                                            std::to_string(outputs.size()) + " output(s); the layer takes " +
                                            std::to_string(layer->GetInputCount()) + " and " +
                                            std::to_string(layer->GetOutputCount()));
  std::vector<ArrayInfo> in(inputs.size()), out(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    OBPU_RETURN_IF_ERROR(array_info(inputs[i], what + " input " + std::to_string(i), &in[i]));
  for (size_t i = 0; i < outputs.size(); ++i)
    OBPU_RETURN_IF_ERROR(array_info(outputs[i], what + " output " + std::to_string(i), &out[i]));
  const NodeAttributes attributes(def.attrs);
  if (const int32_t rc = layer->Init(attributes); rc != 0)
    return rt::error(rt::kInvalidModel, what + ": Init returned " + std::to_string(rc));
  *kernel = std::make_unique<LayerKernel>(def.name, std::move(layer), std::move(in), std::move(out));
  return rt::Status::Ok();
}

}  // namespace

__attribute__((visibility("default"))) int32_t hbDNNRegisterLayerCreator(char const* layerType,
                                                                          hbDNNLayerCreator layerCreator) {
  using openbpu::rt::capi::fail;
  if (layerType == nullptr || layerCreator == nullptr)
    return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRegisterLayerCreator: NULL argument");
  if (*layerType == '\0') return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNRegisterLayerCreator: empty layer type");
  std::lock_guard<std::mutex> lk(g_mu);
  if (!creators().emplace(layerType, layerCreator).second)
    return fail(HB_DNN_INVALID_ARGUMENT, std::string("hbDNNRegisterLayerCreator: '") + layerType +
                                             "' is already registered");
  rt::set_custom_layer_factory(create_layer_kernel);
  return HB_DNN_SUCCESS;
}

// Models loaded already keep the layers they created.
__attribute__((visibility("default"))) int32_t hbDNNUnregisterLayerCreator(char const* layerType) {
  using openbpu::rt::capi::fail;
  if (layerType == nullptr) return fail(HB_DNN_INVALID_ARGUMENT, "hbDNNUnregisterLayerCreator: NULL argument");
  std::lock_guard<std::mutex> lk(g_mu);
  if (creators().erase(layerType) == 0)
    return fail(HB_DNN_INVALID_ARGUMENT, std::string("hbDNNUnregisterLayerCreator: '") + layerType +
                                             "' is not registered");
  return HB_DNN_SUCCESS;
}
