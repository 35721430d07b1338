// SPDX-License-Identifier: Apache-2.0
// OpenBPU libdnn plugin API: custom CPU layer interface (C++ only),
// source-compatible with <dnn/plugin/hb_dnn_layer.h>.
#ifndef DNN_PLUGIN_HB_DNN_LAYER_H_
#define DNN_PLUGIN_HB_DNN_LAYER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hb_dnn_ndarray.h"

namespace hobot {
namespace dnn {

struct hbDNNInferCtrlParam;

// Attributes of a layer as stored in the model; each getter returns 0 when the
// key exists with that type.
class Attribute {
 public:
  virtual ~Attribute() = default;
  virtual int32_t GetAttributeValue(int32_t *value, char const *key) const = 0;
  virtual int32_t GetAttributeValue(float *value, char const *key) const = 0;
  virtual int32_t GetAttributeValue(std::string *value, char const *key) const = 0;
  virtual int32_t GetAttributeValue(NDArray *value, char const *key) const = 0;
  virtual int32_t GetAttributeValue(std::vector<int32_t> *value, char const *key) const = 0;
  virtual int32_t GetAttributeValue(std::vector<float> *value, char const *key) const = 0;
  virtual int32_t GetAttributeValue(std::vector<std::string> *value, char const *key) const = 0;
  virtual int32_t GetAttributeValue(std::vector<NDArray> *value, char const *key) const = 0;
};

class Layer {
 public:
  Layer() = default;
  Layer(Layer const &) = delete;
  Layer &operator=(Layer const &) = delete;
  virtual ~Layer() = default;

  virtual int32_t Init(Attribute const &attributes) {
    (void)attributes;
    return 0;
  }
  virtual int32_t Forward(std::vector<NDArray *> const &bottomBlobs,
                          std::vector<NDArray *> &topBlobs,
                          hbDNNInferCtrlParam const *inferCtrlParam) = 0;
  virtual uint32_t GetInputCount() const { return 1U; }
  virtual uint32_t GetOutputCount() const { return 1U; }
  virtual std::string GetType() const = 0;
};

}  // namespace dnn
}  // namespace hobot

#endif  // DNN_PLUGIN_HB_DNN_LAYER_H_
