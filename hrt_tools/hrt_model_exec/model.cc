// SPDX-License-Identifier: Apache-2.0
#include "model.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_sys.h"
#include "log.h"
#include "openbpu/openbpu.h"

namespace openbpu::tools {

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

bool describe_model(hbDNNHandle_t h, const std::string& name, ModelDesc* desc) {
  desc->name = name;
  desc->handle = h;
  int32_t nin = 0, nout = 0;
  int32_t rc = hbDNNGetInputCount(&nin, h);
  if (rc == 0) rc = hbDNNGetOutputCount(&nout, h);
  if (rc != 0) {
    log_error("cannot read the tensor counts of model '%s': %s", name.c_str(),
              dnn_error(rc).c_str());
    return false;
  }
  desc->inputs.resize(nin);
  desc->input_names.resize(nin);
  desc->input_sources.resize(nin);
  for (int32_t i = 0; i < nin && rc == 0; ++i) {
    const char* n = nullptr;
    rc = hbDNNGetInputTensorProperties(&desc->inputs[i], h, i);
    if (rc == 0) rc = hbDNNGetInputName(&n, h, i);
    if (rc == 0) rc = hbDNNGetInputSource(&desc->input_sources[i], h, i);
    if (rc == 0) desc->input_names[i] = n != nullptr ? n : "";
  }
  desc->outputs.resize(nout);
  desc->output_names.resize(nout);
  for (int32_t i = 0; i < nout && rc == 0; ++i) {
    const char* n = nullptr;
    rc = hbDNNGetOutputTensorProperties(&desc->outputs[i], h, i);
    if (rc == 0) rc = hbDNNGetOutputName(&n, h, i);
    if (rc == 0) desc->output_names[i] = n != nullptr ? n : "";
  }
  const char* march = nullptr;
  if (rc == 0) rc = obpuGetModelMarch(&march, h);
  if (rc != 0) {
    log_error("cannot read the tensor properties of model '%s': %s", name.c_str(),
              dnn_error(rc).c_str());
    return false;
  }
  desc->march = march != nullptr ? march : "";
  return true;
}

namespace {

// BPU cores per march (TOOLS.md 0 / HBDNN_API.md 9.3). The public API has no
// core-count query; an unknown march is left to libdnn, which rejects a core
// the device does not have when the task is submitted.
int march_cores(const std::string& march) {
  if (march == "bernoulli2" || march == "bayes") return 2;
  if (march == "bayes-e" || march == "nash-e" || march == "nash-m") return 1;
  return 0;
}

}  // namespace

bool check_core_id(const ModelDesc& desc, int core_id) {
  const int cores = march_cores(desc.march);
  const int max_id = cores > 0 ? cores : 2;
  if (core_id < 0 || core_id > max_id) {
    std::fprintf(stderr,
                 "ERROR: invalid value for flag 'core_id': %d; model '%s' (march %s, %d BPU "
                 "core%s) accepts 0 (any core)%s\n",
                 core_id, desc.name.c_str(), desc.march.c_str(), cores > 0 ? cores : 2,
                 cores == 1 ? "" : "s", max_id == 1 ? " or 1 (core0)" : ", 1 (core0) or 2 (core1)");
    return false;
  }
  return true;
}

int32_t core_mask(int core_id) { return core_id <= 0 ? HB_BPU_CORE_ANY : (1 << (core_id - 1)); }

const char* data_type_name(int32_t type) {
  static const char* kNames[] = {
      "HB_DNN_IMG_TYPE_Y",      "HB_DNN_IMG_TYPE_NV12",   "HB_DNN_IMG_TYPE_NV12_SEPARATE",
      "HB_DNN_IMG_TYPE_YUV444", "HB_DNN_IMG_TYPE_RGB",    "HB_DNN_IMG_TYPE_BGR",
      "HB_DNN_TENSOR_TYPE_S4",  "HB_DNN_TENSOR_TYPE_U4",  "HB_DNN_TENSOR_TYPE_S8",
      "HB_DNN_TENSOR_TYPE_U8",  "HB_DNN_TENSOR_TYPE_F16", "HB_DNN_TENSOR_TYPE_S16",
      "HB_DNN_TENSOR_TYPE_U16", "HB_DNN_TENSOR_TYPE_F32", "HB_DNN_TENSOR_TYPE_S32",
      "HB_DNN_TENSOR_TYPE_U32", "HB_DNN_TENSOR_TYPE_F64", "HB_DNN_TENSOR_TYPE_S64",
      "HB_DNN_TENSOR_TYPE_U64"};
  if (type < 0 || type >= HB_DNN_TENSOR_TYPE_MAX) return "HB_DNN_TENSOR_TYPE_UNKNOWN";
  return kNames[type];
}

const char* layout_name(int32_t layout) {
  switch (layout) {
    case HB_DNN_LAYOUT_NHWC: return "HB_DNN_LAYOUT_NHWC";
    case HB_DNN_LAYOUT_NCHW: return "HB_DNN_LAYOUT_NCHW";
    case HB_DNN_LAYOUT_NHCW_NATIVE: return "HB_DNN_LAYOUT_NHCW_NATIVE";
    case HB_DNN_LAYOUT_NONE: return "HB_DNN_LAYOUT_NONE";
  }
  return "HB_DNN_LAYOUT_UNKNOWN";
}

const char* quanti_type_name(int32_t type) {
  switch (type) {
    case NONE: return "NONE";
    case SHIFT: return "SHIFT";
    case SCALE: return "SCALE";
  }
  return "UNKNOWN";
}

const char* input_source_name(int32_t source) {
  switch (source) {
    case HB_DNN_INPUT_FROM_DDR: return "HB_DNN_INPUT_FROM_DDR";
    case HB_DNN_INPUT_FROM_RESIZER: return "HB_DNN_INPUT_FROM_RESIZER";
    case HB_DNN_INPUT_FROM_PYRAMID: return "HB_DNN_INPUT_FROM_PYRAMID";
  }
  return "HB_DNN_INPUT_FROM_UNKNOWN";
}

std::string shape_str(const hbDNNTensorShape& s) {
  std::string out = "(";
  for (int32_t i = 0; i < s.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i)
    out += std::to_string(s.dimensionSize[i]) + ",";
  return out + ")";
}

bool is_image_type(int32_t type) {
  return type >= HB_DNN_IMG_TYPE_Y && type <= HB_DNN_IMG_TYPE_BGR;
}

int element_size(int32_t type) {
  switch (type) {
    case HB_DNN_IMG_TYPE_Y:
    case HB_DNN_IMG_TYPE_NV12:
    case HB_DNN_IMG_TYPE_NV12_SEPARATE:
    case HB_DNN_IMG_TYPE_YUV444:
    case HB_DNN_IMG_TYPE_RGB:
    case HB_DNN_IMG_TYPE_BGR:
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

int64_t element_count(const hbDNNTensorShape& s) {
  int64_t n = 1;
  for (int32_t i = 0; i < s.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i)
    n *= s.dimensionSize[i] > 0 ? s.dimensionSize[i] : 0;
  return n;
}

bool image_hw(const hbDNNTensorProperties& p, int* h, int* w) {
  const hbDNNTensorShape& s = p.validShape;
  if (s.numDimensions != 4) return false;
  const bool nhwc = p.tensorLayout == HB_DNN_LAYOUT_NHWC;
  *h = s.dimensionSize[nhwc ? 1 : 2];
  *w = s.dimensionSize[nhwc ? 2 : 3];
  return *h > 0 && *w > 0;
}

int64_t tight_byte_size(const hbDNNTensorProperties& p) {
  int h = 0, w = 0;
  switch (p.tensorType) {
    case HB_DNN_IMG_TYPE_NV12:
    case HB_DNN_IMG_TYPE_NV12_SEPARATE:
      if (!image_hw(p, &h, &w)) return 0;
      return static_cast<int64_t>(p.validShape.dimensionSize[0]) * h * w * 3 / 2;
    case HB_DNN_IMG_TYPE_Y:
      if (!image_hw(p, &h, &w)) return 0;
      return static_cast<int64_t>(p.validShape.dimensionSize[0]) * h * w;
    default: return element_count(p.validShape) * element_size(p.tensorType);
  }
}

std::vector<int64_t> byte_strides(const hbDNNTensorProperties& p) {
  const int n = p.validShape.numDimensions;
  std::vector<int64_t> st(n > 0 ? n : 0);
  if (n <= 0) return st;
  if (p.stride[n - 1] > 0) {
    for (int i = 0; i < n; ++i) st[i] = p.stride[i];
    return st;
  }
  int64_t acc = element_size(p.tensorType);
  for (int i = n - 1; i >= 0; --i) {
    st[i] = acc;
    const int a = p.alignedShape.numDimensions == n ? p.alignedShape.dimensionSize[i]
                                                    : p.validShape.dimensionSize[i];
    acc *= a;
  }
  return st;
}

TensorSet::~TensorSet() {
  for (auto* v : {&inputs, &outputs})
    for (hbDNNTensor& t : *v)
      for (hbSysMem& m : t.sysMem)
        if (m.virAddr != nullptr) hbSysFreeMem(&m);
}

bool TensorSet::alloc(hbSysMem* mem, int64_t size) {
  if (size <= 0 || size > 0xFFFFFFFFLL) {
    log_error("cannot allocate a tensor buffer of %lld bytes", static_cast<long long>(size));
    return false;
  }
  const int32_t rc = hbSysAllocCachedMem(mem, static_cast<uint32_t>(size));
  if (rc != 0) {
    *mem = hbSysMem{};
    log_error("hbSysAllocCachedMem(%lld) failed: %s", static_cast<long long>(size),
              dnn_error(rc).c_str());
    return false;
  }
  return true;
}

bool TensorSet::add_input(const hbDNNTensorProperties& props, const std::vector<uint8_t>& data) {
  inputs.emplace_back();
  hbDNNTensor& t = inputs.back();
  std::memset(&t, 0, sizeof(t));
  t.properties = props;
  // Tight data: libdnn adds the padding itself (HBDNN_API.md 6.3 case 2).
  t.properties.alignedShape = props.validShape;
  if (props.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
    const size_t y = data.size() * 2 / 3;
    if (!alloc(&t.sysMem[0], static_cast<int64_t>(y)) ||
        !alloc(&t.sysMem[1], static_cast<int64_t>(data.size() - y)))
      return false;
    std::memcpy(t.sysMem[0].virAddr, data.data(), y);
    std::memcpy(t.sysMem[1].virAddr, data.data() + y, data.size() - y);
    hbSysFlushMem(&t.sysMem[1], HB_SYS_MEM_CACHE_CLEAN);
  } else {
    if (!alloc(&t.sysMem[0], static_cast<int64_t>(data.size()))) return false;
    std::memcpy(t.sysMem[0].virAddr, data.data(), data.size());
  }
  hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_CLEAN);
  return true;
}

bool TensorSet::add_output(const hbDNNTensorProperties& props) {
  outputs.emplace_back();
  hbDNNTensor& t = outputs.back();
  std::memset(&t, 0, sizeof(t));
  t.properties = props;
  return alloc(&t.sysMem[0], props.alignedByteSize);
}

void TensorSet::invalidate_outputs() {
  for (hbDNNTensor& t : outputs) hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE);
}

int32_t run_inference(const ModelDesc& desc, TensorSet* tensors, int core_id,
                      std::vector<hbDNNRoi>* rois, double* latency_ms) {
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  param.bpuCoreId = core_mask(core_id);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* out = tensors->outputs.data();
  const auto t0 = std::chrono::steady_clock::now();
  int32_t rc = 0;
  if (rois != nullptr) {
    rc = hbDNNRoiInfer(&task, &out, tensors->inputs.data(), rois->data(),
                       static_cast<int32_t>(rois->size()), desc.handle, &param);
  } else {
    rc = hbDNNInfer(&task, &out, tensors->inputs.data(), desc.handle, &param);
  }
  if (rc != 0) {
    log_error("%s failed for model '%s': %s", rois != nullptr ? "hbDNNRoiInfer" : "hbDNNInfer",
              desc.name.c_str(), dnn_error(rc).c_str());
    if (task != nullptr) hbDNNReleaseTask(task);
    return rc;
  }
  rc = hbDNNWaitTaskDone(task, 0);
  const auto t1 = std::chrono::steady_clock::now();
  hbDNNReleaseTask(task);
  if (rc != 0) {
    log_error("hbDNNWaitTaskDone failed for model '%s': %s", desc.name.c_str(),
              dnn_error(rc).c_str());
    return rc;
  }
  *latency_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  tensors->invalidate_outputs();
  return 0;
}

}  // namespace openbpu::tools
