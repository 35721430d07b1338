// SPDX-License-Identifier: Apache-2.0
#include "model.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "log.h"

namespace openbpu::tools {

int element_size(int32_t type) {
  switch (type) {
#ifdef OPENBPU_HRT_UCP
    case HB_DNN_TENSOR_TYPE_BOOL8:
#else
    case HB_DNN_IMG_TYPE_Y:
    case HB_DNN_IMG_TYPE_NV12:
    case HB_DNN_IMG_TYPE_NV12_SEPARATE:
    case HB_DNN_IMG_TYPE_YUV444:
    case HB_DNN_IMG_TYPE_RGB:
    case HB_DNN_IMG_TYPE_BGR:
#endif
    case HB_DNN_TENSOR_TYPE_S8:
    case HB_DNN_TENSOR_TYPE_U8: return 1;
    case HB_DNN_TENSOR_TYPE_F16:
    case HB_DNN_TENSOR_TYPE_S16:
    case HB_DNN_TENSOR_TYPE_U16: return 2;
    case HB_DNN_TENSOR_TYPE_F32:
    case HB_DNN_TENSOR_TYPE_S32:
    case HB_DNN_TENSOR_TYPE_U32: return 4;
    case HB_DNN_TENSOR_TYPE_F64:
    case HB_DNN_TENSOR_TYPE_S64:
    case HB_DNN_TENSOR_TYPE_U64: return 8;
  }
  return 0;
}

bool image_hw(const hbDNNTensorProperties& p, int* h, int* w) {
  const hbDNNTensorShape& s = p.validShape;
  if (s.numDimensions != 4) return false;
  const bool nhwc = image_nhwc(p);
  *h = s.dimensionSize[nhwc ? 1 : 2];
  *w = s.dimensionSize[nhwc ? 2 : 3];
  return *h > 0 && *w > 0;
}

bool TensorSet::add_output(const hbDNNTensorProperties& props) {
  outputs.emplace_back();
  hbDNNTensor& t = outputs.back();
  std::memset(&t, 0, sizeof(t));
  t.properties = props;
  return alloc(&tensor_mem(t), props.alignedByteSize);
}

ModelPack::~ModelPack() {
  if (pack_ != nullptr) {
    const int32_t rc = hbDNNRelease(pack_);
    if (rc != 0) log_warn("hbDNNRelease failed: %s", dnn_error(rc).c_str());
  }
}

bool ModelPack::load(const std::vector<std::string>& files) {
  // libdnn reports a missing file as a bare status code; naming the file
  // here saves the user a guess when several are given.
  for (const std::string& f : files) {
    struct stat st;
    if (::stat(f.c_str(), &st) != 0) {
      log_error("model file '%s' does not exist: %s", f.c_str(), std::strerror(errno));
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      log_error("model file '%s' is not a regular file", f.c_str());
      return false;
    }
  }
  std::vector<const char*> paths;
  for (const std::string& f : files) paths.push_back(f.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  const int32_t rc =
      hbDNNInitializeFromFiles(&pack_, paths.data(), static_cast<int32_t>(paths.size()));
  const auto t1 = std::chrono::steady_clock::now();
  if (rc != 0) {
    pack_ = nullptr;
    std::string list;
    for (const std::string& f : files) list += (list.empty() ? "" : ",") + f;
    log_error("hbDNNInitializeFromFiles failed for '%s': %s", list.c_str(), dnn_error(rc).c_str());
    return false;
  }
  std::printf("Load model to DDR cost %.3fms.\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count());
  const char** names = nullptr;
  int32_t count = 0;
  const int32_t rc2 = hbDNNGetModelNameList(&names, &count, pack_);
  if (rc2 != 0) {
    log_error("hbDNNGetModelNameList failed: %s", dnn_error(rc2).c_str());
    return false;
  }
  for (int32_t i = 0; i < count; ++i) names_.emplace_back(names[i]);
  return true;
}

std::string ModelPack::name_list() const {
  std::string s;
  for (const std::string& n : names_) s += (s.empty() ? "[" : " [") + n + "]";
  return s;
}

bool ModelPack::handle(const std::string& name, hbDNNHandle_t* h) const {
  bool known = false;
  for (const std::string& n : names_) known = known || n == name;
  if (!known) {
    log_error("model_name '%s' is not in the model file(s); available models: %s", name.c_str(),
              name_list().c_str());
    return false;
  }
  const int32_t rc = hbDNNGetModelHandle(h, pack_, name.c_str());
  if (rc != 0) {
    log_error("hbDNNGetModelHandle failed for '%s': %s", name.c_str(), dnn_error(rc).c_str());
    return false;
  }
  return true;
}

bool ModelPack::select(const std::string& model_name, std::string* name, hbDNNHandle_t* h) const {
  if (model_name.empty()) {
    if (names_.size() != 1) {
      log_error("%zu models are loaded (%s): choose one with --model_name", names_.size(),
                name_list().c_str());
      return false;
    }
    *name = names_[0];
  } else {
    *name = model_name;
  }
  return handle(*name, h);
}

std::string shape_str(const hbDNNTensorShape& s) {
  std::string out = "(";
  for (int32_t i = 0; i < s.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i)
    out += std::to_string(s.dimensionSize[i]) + ",";
  return out + ")";
}

int64_t element_count(const hbDNNTensorShape& s) {
  int64_t n = 1;
  for (int32_t i = 0; i < s.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i)
    n *= s.dimensionSize[i] > 0 ? s.dimensionSize[i] : 0;
  return n;
}

TensorSet::~TensorSet() {
  for (auto* v : {&inputs, &outputs})
    for (hbDNNTensor& t : *v) free_tensor(&t);
}

void TensorSet::invalidate_outputs() {
  for (hbDNNTensor& t : outputs) flush_mem(&tensor_mem(t), false);
}

}  // namespace openbpu::tools
