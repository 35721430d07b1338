// SPDX-License-Identifier: Apache-2.0
// hrt_model_exec on libdnn 1.x (dnn/*.h, .bin models): the functions of
// model.h whose behaviour is generation-specific.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "dnn/hb_dnn_ext.h"
#include "log.h"
#include "model.h"
#include "openbpu/openbpu.h"

namespace openbpu::tools {

namespace {

// model_info's quantization lines of a tensor.
void print_quantization(const hbDNNTensorProperties& p) {
  if (p.quantiType == SCALE) {
    std::ostringstream s;
    for (int32_t i = 0; i < p.scale.scaleLen && p.scale.scaleData != nullptr; ++i)
      s << p.scale.scaleData[i] << ",";
    std::printf("scale data: %s\n", s.str().c_str());
    if (p.scale.zeroPointLen > 0 && p.scale.zeroPointData != nullptr) {
      std::string z;
      for (int32_t i = 0; i < p.scale.zeroPointLen; ++i)
        z += std::to_string(p.scale.zeroPointData[i]) + ",";
      std::printf("zero point data: %s\n", z.c_str());
    }
    std::printf("quantizeAxis: %d\n", p.quantizeAxis);
  } else if (p.quantiType == SHIFT) {
    std::string s;
    for (int32_t i = 0; i < p.shift.shiftLen && p.shift.shiftData != nullptr; ++i)
      s += std::to_string(p.shift.shiftData[i]) + ",";
    std::printf("shift data: %s\n", s.c_str());
    std::printf("quantizeAxis: %d\n", p.quantizeAxis);
  }
}

// hbDNNInferCtrlParam::bpuCoreId for a --core_id value (0 any, k -> core k-1).
int32_t core_mask(int core_id) { return core_id <= 0 ? HB_BPU_CORE_ANY : (1 << (core_id - 1)); }

ImageKind kind_of(int32_t type) {
  switch (type) {
    case HB_DNN_IMG_TYPE_NV12:
    case HB_DNN_IMG_TYPE_NV12_SEPARATE: return ImageKind::kNV12;
    case HB_DNN_IMG_TYPE_Y: return ImageKind::kY;
    case HB_DNN_IMG_TYPE_RGB: return ImageKind::kRGB;
    case HB_DNN_IMG_TYPE_BGR: return ImageKind::kBGR;
    case HB_DNN_IMG_TYPE_YUV444: return ImageKind::kYUV444;
    default: return ImageKind::kNone;
  }
}

}  // namespace

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
  desc->input_resizer.resize(nin);
  desc->input_kinds.resize(nin);
  desc->input_roi.assign(nin, false);
  for (int32_t i = 0; i < nin; ++i) {
    desc->input_resizer[i] = desc->input_sources[i] == HB_DNN_INPUT_FROM_RESIZER;
    desc->input_kinds[i] = kind_of(desc->inputs[i].tensorType);
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
  if (obpuGetBpuCoreNum(&desc->cores, h) != 0) desc->cores = 1;
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

bool is_image_type(int32_t type) {
  return type >= HB_DNN_IMG_TYPE_Y && type <= HB_DNN_IMG_TYPE_BGR;
}

bool image_size(const hbDNNTensorProperties& p, ImageKind kind, int* h, int* w) {
  return kind != ImageKind::kNone && image_hw(p, h, w);
}

bool image_nhwc(const hbDNNTensorProperties& p) { return p.tensorLayout == HB_DNN_LAYOUT_NHWC; }

void set_image_size(hbDNNTensorProperties* p, ImageKind kind, int h, int w) {
  (void)kind;
  const bool nhwc = image_nhwc(*p);
  p->validShape.dimensionSize[nhwc ? 1 : 2] = h;
  p->validShape.dimensionSize[nhwc ? 2 : 3] = w;
  p->alignedShape = p->validShape;
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

bool TensorSet::alloc(SysMem* mem, int64_t size) {
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

int32_t run_inference(const ModelDesc& desc, TensorSet* tensors, int core_id, const std::vector<Roi>* roi_list,
                      double* latency_ms, int32_t priority) {
  // hbDNNRoiInfer takes a non-const array.
  std::vector<hbDNNRoi> roi_array;
  if (roi_list != nullptr)
    for (const Roi& r : *roi_list) roi_array.push_back(hbDNNRoi{r.left, r.top, r.right, r.bottom});
  std::vector<hbDNNRoi>* rois = roi_list != nullptr ? &roi_array : nullptr;
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  param.bpuCoreId = core_mask(core_id);
  param.priority = priority;
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


void print_version_banner() { std::printf("[DNN] Runtime version = %s\n", hbDNNGetVersion()); }

void print_tensor_info(const char* kind, int index, const std::string& name, const hbDNNTensorProperties& p,
                       const int32_t* source) {
  std::printf("%s[%d]: \n", kind, index);
  std::printf("name: %s\n", name.c_str());
  if (source != nullptr) std::printf("input source: %s\n", input_source_name(*source));
  std::printf("valid shape: %s\n", shape_str(p.validShape).c_str());
  std::printf("aligned shape: %s\n", shape_str(p.alignedShape).c_str());
  std::printf("aligned byte size: %d\n", p.alignedByteSize);
  std::printf("tensor type: %s\n", data_type_name(p.tensorType));
  std::printf("tensor layout: %s\n", layout_name(p.tensorLayout));
  std::printf("quanti type: %s\n", quanti_type_name(p.quantiType));
  std::string stride = "(";
  for (int32_t i = 0; i < p.validShape.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i)
    stride += std::to_string(p.stride[i]) + ",";
  std::printf("stride: %s)\n", stride.c_str());
  print_quantization(p);
}

int quant_channels(const hbDNNTensorProperties& p) {
  if (p.quantiType == SCALE && p.scale.scaleData != nullptr) return p.scale.scaleLen;
  if (p.quantiType == SHIFT && p.shift.shiftData != nullptr) return p.shift.shiftLen;
  return 0;
}

void quant_params(const hbDNNTensorProperties& p, int c, double* scale, double* zero_point) {
  *zero_point = 0.0;
  if (p.quantiType == SHIFT) {
    *scale = std::ldexp(1.0, -static_cast<int>(p.shift.shiftData[c]));
    return;
  }
  *scale = static_cast<double>(p.scale.scaleData[c]);
  if (p.scale.zeroPointData != nullptr && c < p.scale.zeroPointLen) *zero_point = p.scale.zeroPointData[c];
}

hbDNNTensorShape raw_shape(const hbDNNTensorProperties& p) { return p.alignedShape; }

void free_tensor(hbDNNTensor* t) {
  for (hbSysMem& m : t->sysMem)
    if (m.virAddr != nullptr) hbSysFreeMem(&m);
}

void flush_mem(SysMem* m, bool clean) {
  hbSysFlushMem(m, clean ? HB_SYS_MEM_CACHE_CLEAN : HB_SYS_MEM_CACHE_INVALIDATE);
}

}  // namespace openbpu::tools
