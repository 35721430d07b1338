// SPDX-License-Identifier: Apache-2.0
// hrt_model_exec on the UCP generation (hobot/*.h, .hbm models): the
// functions of model.h whose behaviour is generation-specific. Tensors are
// described by validShape and byte strides (-1 = dynamic, filled by the
// tool); NV12 images are two inputs, the Y and the UV plane.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "log.h"
#include "model.h"

namespace openbpu::tools {

namespace {

// Y/UV row strides are multiples of 32 bytes on S100/S100P (HBUCP_API.md 3.5).
constexpr int64_t kRowAlign = 32;

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// An NV12 plane input: U8 (1, rows, cols, 1) with strides (-1,-1,1,1) is a
// Y plane, (1, rows, cols, 2) with (-1,-1,2,1) a UV plane.
ImageKind plane_kind(const hbDNNTensorProperties& p) {
  const hbDNNTensorShape& s = p.validShape;
  if (p.tensorType != HB_DNN_TENSOR_TYPE_U8 || s.numDimensions != 4 || s.dimensionSize[0] != 1) return ImageKind::kNone;
  if (p.stride[3] != 1 || p.stride[2] != s.dimensionSize[3] || p.stride[1] != -1) return ImageKind::kNone;
  if (s.dimensionSize[3] == 1) return ImageKind::kPlaneY;
  if (s.dimensionSize[3] == 2) return ImageKind::kPlaneUV;
  return ImageKind::kNone;
}

// The roi input of a resizer input (after its planes): S32 (1, 4), stride
// (16, 4) holding left, top, right, bottom.
bool is_roi_tensor(const hbDNNTensorProperties& p) {
  const hbDNNTensorShape& s = p.validShape;
  return p.tensorType == HB_DNN_TENSOR_TYPE_S32 && s.numDimensions == 2 && s.dimensionSize[0] == 1 &&
         s.dimensionSize[1] == 4 && p.stride[0] == 16 && p.stride[1] == 4;
}

// The simulated SoC's BPU cores and march, from the SoC name the way S100
// applications read it (S600: nash-p with 4 cores; S100P: nash-m).
void soc_platform(std::string* march, int* cores) {
  const std::string soc = hbUCPGetSocName();
  *cores = soc.find("S600") != std::string::npos ? 4 : 1;
  *march = soc.find("S600") != std::string::npos   ? "nash-p"
           : soc.find("S100P") != std::string::npos ? "nash-m"
                                                    : "nash-e";
}

std::string list(const hbDNNTensorProperties& p, bool strides) {
  std::string s = "(";
  for (int32_t i = 0; i < p.validShape.numDimensions && i < HB_DNN_TENSOR_MAX_DIMENSIONS; ++i)
    s += std::to_string(strides ? p.stride[i] : p.validShape.dimensionSize[i]) + ",";
  return s + ")";
}

// Copies tight row-major data of `valid` into a strided buffer.
void copy_to_strided(const uint8_t* src, const hbDNNTensorProperties& p, int esize, uint8_t* dst) {
  const int n = p.validShape.numDimensions;
  const int64_t inner = p.validShape.dimensionSize[n - 1];
  const int64_t rows = inner > 0 ? element_count(p.validShape) / inner : 0;
  std::vector<int> idx(static_cast<size_t>(n - 1), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t off = 0;
    for (int k = 0; k + 1 < n; ++k) off += idx[static_cast<size_t>(k)] * p.stride[k];
    for (int64_t x = 0; x < inner; ++x)
      std::memcpy(dst + off + x * p.stride[n - 1], src + (r * inner + x) * esize, static_cast<size_t>(esize));
    for (int k = n - 2; k >= 0; --k) {
      if (++idx[static_cast<size_t>(k)] < p.validShape.dimensionSize[k]) break;
      idx[static_cast<size_t>(k)] = 0;
    }
  }
}

void print_quantization(const hbDNNTensorProperties& p) {
  if (p.quantiType != SCALE) return;
  std::string s;
  char buf[64];
  for (int32_t i = 0; i < p.scale.scaleLen && p.scale.scaleData != nullptr; ++i) {
    std::snprintf(buf, sizeof(buf), "%g,", static_cast<double>(p.scale.scaleData[i]));
    s += buf;
  }
  std::printf("scale data: %s\n", s.c_str());
  if (p.scale.zeroPointLen > 0 && p.scale.zeroPointData != nullptr) {
    std::string z;
    for (int32_t i = 0; i < p.scale.zeroPointLen; ++i) z += std::to_string(p.scale.zeroPointData[i]) + ",";
    std::printf("zero point data: %s\n", z.c_str());
  }
  std::printf("quantizeAxis: %d\n", p.quantizeAxis);
}

}  // namespace

bool describe_model(hbDNNHandle_t h, const std::string& name, ModelDesc* desc) {
  desc->name = name;
  desc->handle = h;
  int32_t nin = 0, nout = 0;
  int32_t rc = hbDNNGetInputCount(&nin, h);
  if (rc == 0) rc = hbDNNGetOutputCount(&nout, h);
  if (rc != 0) {
    log_error("cannot read the tensor counts of model '%s': %s", name.c_str(), dnn_error(rc).c_str());
    return false;
  }
  desc->inputs.resize(nin);
  desc->input_names.resize(nin);
  desc->input_sources.assign(nin, 0);
  desc->input_resizer.assign(nin, false);
  desc->input_kinds.assign(nin, ImageKind::kNone);
  desc->input_roi.assign(nin, false);
  bool frame = false;  // a resizer input's planes came before
  for (int32_t i = 0; i < nin && rc == 0; ++i) {
    const char* n = nullptr;
    rc = hbDNNGetInputTensorProperties(&desc->inputs[i], h, i);
    if (rc == 0) rc = hbDNNGetInputName(&n, h, i);
    if (rc == 0) desc->input_names[i] = n != nullptr ? n : "";
    if (rc != 0) break;
    desc->input_kinds[i] = plane_kind(desc->inputs[i]);
    frame = frame || (desc->input_kinds[i] == ImageKind::kPlaneY && desc->inputs[i].validShape.dimensionSize[1] == -1);
    desc->input_roi[i] = frame && is_roi_tensor(desc->inputs[i]);
    if (desc->input_roi[i]) frame = false;
  }
  desc->outputs.resize(nout);
  desc->output_names.resize(nout);
  for (int32_t i = 0; i < nout && rc == 0; ++i) {
    const char* n = nullptr;
    rc = hbDNNGetOutputTensorProperties(&desc->outputs[i], h, i);
    if (rc == 0) rc = hbDNNGetOutputName(&n, h, i);
    if (rc == 0) desc->output_names[i] = n != nullptr ? n : "";
  }
  if (rc != 0) {
    log_error("cannot read the tensor properties of model '%s': %s", name.c_str(), dnn_error(rc).c_str());
    return false;
  }
  soc_platform(&desc->march, &desc->cores);
  return true;
}

bool check_core_id(const ModelDesc& desc, int core_id) {
  std::string march;
  int cores = 1;
  soc_platform(&march, &cores);
  if (core_id < 0 || core_id > cores) {
    std::fprintf(stderr,
                 "ERROR: invalid value for flag 'core_id': %d; model '%s' runs on %s (%s, %d BPU core%s): "
                 "0 is any core, 1..%d core 0..%d\n",
                 core_id, desc.name.c_str(), hbUCPGetSocName(), march.c_str(), cores, cores == 1 ? "" : "s", cores,
                 cores - 1);
    return false;
  }
  return true;
}

void print_version_banner() {
  std::printf("[UCP]: UCP version = %s\n", hbUCPGetVersion());
  std::printf("[DNN]: %s\n", hbDNNGetVersion());
}

const char* data_type_name(int32_t type) {
  static const char* kNames[] = {"HB_DNN_TENSOR_TYPE_S4",  "HB_DNN_TENSOR_TYPE_U4",  "HB_DNN_TENSOR_TYPE_S8",
                                 "HB_DNN_TENSOR_TYPE_U8",  "HB_DNN_TENSOR_TYPE_F16", "HB_DNN_TENSOR_TYPE_S16",
                                 "HB_DNN_TENSOR_TYPE_U16", "HB_DNN_TENSOR_TYPE_F32", "HB_DNN_TENSOR_TYPE_S32",
                                 "HB_DNN_TENSOR_TYPE_U32", "HB_DNN_TENSOR_TYPE_F64", "HB_DNN_TENSOR_TYPE_S64",
                                 "HB_DNN_TENSOR_TYPE_U64", "HB_DNN_TENSOR_TYPE_BOOL8"};
  if (type < 0 || type >= HB_DNN_TENSOR_TYPE_MAX) return "HB_DNN_TENSOR_TYPE_UNKNOWN";
  return kNames[type];
}

const char* quanti_type_name(int32_t type) { return type == SCALE ? "SCALE" : type == NONE ? "NONE" : "UNKNOWN"; }

// This generation has no image tensor types (images are U8 planes).
bool is_image_type(int32_t) { return false; }

bool image_size(const hbDNNTensorProperties& p, ImageKind kind, int* h, int* w) {
  if (kind != ImageKind::kPlaneY && kind != ImageKind::kPlaneUV) return false;
  if (!image_hw(p, h, w)) return false;
  if (kind == ImageKind::kPlaneUV) {
    *h *= 2;
    *w *= 2;
  }
  return true;
}

bool image_nhwc(const hbDNNTensorProperties&) { return true; }

void set_image_size(hbDNNTensorProperties* p, ImageKind kind, int h, int w) {
  const int div = kind == ImageKind::kPlaneUV ? 2 : 1;
  p->validShape.dimensionSize[1] = h / div;
  p->validShape.dimensionSize[2] = w / div;
}

int64_t tight_byte_size(const hbDNNTensorProperties& p) {
  for (int32_t i = 0; i < p.validShape.numDimensions; ++i)
    if (p.validShape.dimensionSize[i] <= 0) return 0;
  return element_count(p.validShape) * element_size(p.tensorType);
}

std::vector<int64_t> byte_strides(const hbDNNTensorProperties& p) {
  const int n = p.validShape.numDimensions;
  return std::vector<int64_t>(p.stride, p.stride + (n > 0 ? n : 0));
}

bool TensorSet::alloc(SysMem* mem, int64_t size) {
  *mem = hbUCPSysMem{};
  if (size <= 0) {
    log_error("cannot allocate a tensor buffer of %lld bytes", static_cast<long long>(size));
    return false;
  }
  const int32_t rc = hbUCPMallocCached(mem, static_cast<uint64_t>(size), 0);
  if (rc != 0) {
    *mem = hbUCPSysMem{};
    log_error("hbUCPMallocCached(%lld) failed: %s", static_cast<long long>(size), dnn_error(rc).c_str());
    return false;
  }
  return true;
}

bool TensorSet::add_input(const hbDNNTensorProperties& props, const std::vector<uint8_t>& data) {
  inputs.emplace_back();
  hbDNNTensor& t = inputs.back();
  std::memset(&t, 0, sizeof(t));
  t.properties = props;
  hbDNNTensorProperties& p = t.properties;
  const int n = p.validShape.numDimensions;
  const int esize = element_size(p.tensorType);
  if (n <= 0 || esize == 0 || static_cast<int64_t>(data.size()) != tight_byte_size(p)) {
    log_error("input data of %zu bytes does not fit valid shape %s", data.size(), shape_str(p.validShape).c_str());
    return false;
  }
  // Dynamic strides: the minimal ones, rows aligned as the BPU needs.
  for (int i = n - 1; i >= 0; --i)
    if (p.stride[i] == -1)
      p.stride[i] = i == n - 1 ? esize : align_up(p.stride[i + 1] * p.validShape.dimensionSize[i + 1], kRowAlign);
  int64_t size = p.stride[0] * p.validShape.dimensionSize[0];
  if (p.alignedByteSize > size) size = p.alignedByteSize;
  if (!alloc(&t.sysMem, size)) return false;
  std::memset(t.sysMem.virAddr, 0, static_cast<size_t>(size));
  copy_to_strided(data.data(), p, esize, static_cast<uint8_t*>(t.sysMem.virAddr));
  hbUCPMemFlush(&t.sysMem, HB_SYS_MEM_CACHE_CLEAN);
  return true;
}

int32_t run_inference(const ModelDesc& desc, TensorSet* tensors, int core_id, const std::vector<Roi>* rois,
                      double* latency_ms, int32_t priority) {
  if (rois != nullptr) {
    log_error("model '%s': resizer inputs take their ROI as an input tensor in this generation", desc.name.c_str());
    return HB_DNN_INVALID_ARGUMENT;
  }
  hbUCPSchedParam sched;
  HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
  sched.backend = core_id <= 0 ? HB_UCP_BPU_CORE_ANY : (HB_UCP_BPU_CORE_0 << (core_id - 1));
  sched.priority = priority;
  hbUCPTaskHandle_t task = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  int32_t rc = hbDNNInferV2(&task, tensors->outputs.data(), tensors->inputs.data(), desc.handle);
  if (rc != 0) {
    log_error("hbDNNInferV2 failed for model '%s': %s", desc.name.c_str(), dnn_error(rc).c_str());
    if (task != nullptr) hbUCPReleaseTask(task);
    return rc;
  }
  rc = hbUCPSubmitTask(task, &sched);
  if (rc == 0) rc = hbUCPWaitTaskDone(task, 0);
  const auto t1 = std::chrono::steady_clock::now();
  hbUCPReleaseTask(task);
  if (rc != 0) {
    log_error("the task of model '%s' failed: %s", desc.name.c_str(), dnn_error(rc).c_str());
    return rc;
  }
  *latency_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  tensors->invalidate_outputs();
  return 0;
}

void print_tensor_info(const char* kind, int index, const std::string& name, const hbDNNTensorProperties& p,
                       const int32_t*) {
  std::printf("%s[%d]: \n", kind, index);
  std::printf("name: %s\n", name.c_str());
  std::printf("valid shape: %s\n", list(p, false).c_str());
  std::printf("aligned byte size: %lld\n", static_cast<long long>(p.alignedByteSize));
  std::printf("tensor type: %s\n", data_type_name(p.tensorType));
  std::printf("quanti type: %s\n", quanti_type_name(p.quantiType));
  std::printf("stride: %s\n", list(p, true).c_str());
  print_quantization(p);
}

int quant_channels(const hbDNNTensorProperties& p) {
  return p.quantiType == SCALE && p.scale.scaleData != nullptr ? p.scale.scaleLen : 0;
}

void quant_params(const hbDNNTensorProperties& p, int c, double* scale, double* zero_point) {
  *scale = static_cast<double>(p.scale.scaleData[c]);
  *zero_point = p.scale.zeroPointData != nullptr && c < p.scale.zeroPointLen ? p.scale.zeroPointData[c] : 0.0;
}

hbDNNTensorShape raw_shape(const hbDNNTensorProperties& p) { return p.validShape; }

void free_tensor(hbDNNTensor* t) {
  if (t->sysMem.virAddr != nullptr) hbUCPFree(&t->sysMem);
}

void flush_mem(SysMem* m, bool clean) { hbUCPMemFlush(m, clean ? HB_SYS_MEM_CACHE_CLEAN : HB_SYS_MEM_CACHE_INVALIDATE); }

}  // namespace openbpu::tools
