// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: model bytes -> hbDNNInitializeFromDDR; when the file
// loads, every model is queried through the public API and run once with
// zero-filled buffers of the sizes it reports (so fuzzed BPU programs reach
// the simulator), then everything is released. Work per input is capped:
// models whose estimated work or task memory is above the caps are only
// queried, never run, so each input stays fast and deterministic.
#include "tests/fuzz/fuzz_model_loader.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bpu_sim/isa/codec.h"
#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "openbpu/openbpu.h"
#include "schema/model_generated.h"
#include "schema/verify.h"

namespace openbpu::fuzz {

namespace {

// A broken API contract is a finding: abort so that the fuzzer reports the
// input (and the replay test fails).
#define FUZZ_REQUIRE(cond)                                                            \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "fuzz_model_loader: contract violated: %s (%s:%d)\n", #cond, \
                   __FILE__, __LINE__);                                               \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)

double elements(const isa::TensorRef& t) {
  double n = 1;
  for (int d : t.dims) n *= d > 0 ? d : 0;
  return n;
}

// Multiply-accumulates (or element steps) of one instruction, from its
// decoded fields: the reference kernels' loop counts.
double instruction_work(const isa::Instruction& ins) {
  return std::visit(
      [](const auto& b) -> double {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, isa::Conv>) {
          const double g = b.groups > 0 ? b.groups : 1;
          return elements(b.out) * std::max(1, b.kernel_h) * std::max(1, b.kernel_w) *
                 std::max(1.0, b.in.dims[3] / g);
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          return elements(b.out) * std::max(1, b.kernel_h) * std::max(1, b.kernel_w);
        } else if constexpr (std::is_same_v<T, isa::Resize>) {
          return elements(b.out) * 4;
        } else if constexpr (std::is_same_v<T, isa::Eltwise>) {
          return elements(b.out);
        } else if constexpr (std::is_same_v<T, isa::Fill>) {
          return elements(b.out);
        } else if constexpr (std::is_same_v<T, isa::ArgMax>) {
          return elements(b.in);
        } else if constexpr (std::is_same_v<T, isa::MatMul>) {
          return elements(b.out) * std::max(1, b.a.dims[3]);
        } else {
          return std::max(elements(b.in), elements(b.out));
        }
      },
      ins.body);
}

struct Budget {
  double work = 0, bytes = 0;
  const char* known_bug = nullptr;  // why the model is not run (filter below)
};

// ---- Known-bug filters -----------------------------------------------------
// Open findings (docs/robustness.md) that the fuzzer would otherwise hit on
// almost every run, hiding everything else: each filter skips what triggers
// one finding and goes with its fix. None is open; add one (with the input in
// known_bugs/) for the next crasher. OPENBPU_FUZZ_NO_FILTERS=1 (and the
// replay test) disables them all.
bool g_filters = true;

// Findings triggered when a model runs; returns the first that applies.
const char* run_filter(const fb::Model& /*m*/) { return nullptr; }

// Findings triggered by loading alone: the whole input is skipped.
const char* load_filter(const uint8_t* /*data*/, size_t /*size*/) { return nullptr; }

// Work and memory of each model of a file that verifies, by model name.
std::map<std::string, Budget> budgets(const uint8_t* data, size_t size) {
  std::map<std::string, Budget> out;
  model::FileHeader h;
  std::string err;
  if (!model::verify_model_file(data, size, &h, &err)) return out;
  const auto* file = fb::GetModelFile(data + h.meta_offset);
  const uint8_t* section = data + h.data_offset;
  for (const auto* m : *file->models()) {
    Budget b;
    for (const auto* t : *m->tensors()) {
      b.bytes += static_cast<double>(t->aligned_byte_size());
      double n = 1;
      for (int32_t d : *t->valid_shape()) n *= d;
      b.work += n;  // CPU operators and staging copies touch every element
    }
    for (const auto* s : *m->segments()) {
      const auto* p = s->kind_as_BpuProgram();
      if (p == nullptr) continue;
      b.bytes += static_cast<double>(p->scratch_size());
      std::vector<isa::Instruction> program;
      if (isa::decode_program(section + p->code()->offset(), p->code()->size(), &program, &err))
        for (const auto& ins : program) b.work += instruction_work(ins);
    }
    if (g_filters) b.known_bug = run_filter(*m);
    out[m->name()->str()] = b;
  }
  return out;
}

// Every query of a loaded model succeeds; out-of-range indices fail cleanly.
void query_model(hbDNNHandle_t h, int32_t nin, int32_t nout) {
  const char* s = nullptr;
  uint32_t len = 0;
  int32_t type = 0, v = 0;
  hbDNNTensorProperties props;
  for (int32_t i = 0; i < nin; ++i) {
    FUZZ_REQUIRE(hbDNNGetInputName(&s, h, i) == HB_DNN_SUCCESS && s != nullptr);
    FUZZ_REQUIRE(hbDNNGetInputTensorProperties(&props, h, i) == HB_DNN_SUCCESS);
    FUZZ_REQUIRE(props.validShape.numDimensions >= 0 && props.validShape.numDimensions <= 8);
    FUZZ_REQUIRE(hbDNNGetInputSource(&v, h, i) == HB_DNN_SUCCESS);
    FUZZ_REQUIRE(hbDNNGetInputDesc(&s, &len, &type, h, i) == HB_DNN_SUCCESS);
  }
  for (int32_t i = 0; i < nout; ++i) {
    FUZZ_REQUIRE(hbDNNGetOutputName(&s, h, i) == HB_DNN_SUCCESS && s != nullptr);
    FUZZ_REQUIRE(hbDNNGetOutputTensorProperties(&props, h, i) == HB_DNN_SUCCESS);
    FUZZ_REQUIRE(hbDNNGetOutputOperatorType(&v, h, i) == HB_DNN_SUCCESS);
    FUZZ_REQUIRE(hbDNNGetOutputDesc(&s, &len, &type, h, i) == HB_DNN_SUCCESS);
  }
  FUZZ_REQUIRE(hbDNNGetInputName(&s, h, nin) == HB_DNN_INVALID_ARGUMENT);
  FUZZ_REQUIRE(hbDNNGetOutputTensorProperties(&props, h, nout) == HB_DNN_INVALID_ARGUMENT);
  FUZZ_REQUIRE(hbDNNGetModelDesc(&s, &len, &type, h) == HB_DNN_SUCCESS);
  FUZZ_REQUIRE(hbDNNGetEstimateLatency(&v, h) == HB_DNN_SUCCESS);
  FUZZ_REQUIRE(hbDNNGetModelTag(&s, h) == HB_DNN_SUCCESS);
  FUZZ_REQUIRE(obpuGetModelMarch(&s, h) == HB_DNN_SUCCESS);
  FUZZ_REQUIRE(obpuGetModelMetadata(&s, h, "MARCH") == HB_DNN_SUCCESS);
}

// One inference with zero-filled heap buffers of exactly the size the API
// requires (tight planes for NV12/Y inputs, as applications allocate them),
// so that ASan sees any access past them. Returns the first error code.
int32_t run_model(hbDNNHandle_t h, int32_t nin, int32_t nout) {
  std::vector<hbDNNTensor> in(static_cast<size_t>(nin)), out(static_cast<size_t>(nout));
  std::vector<void*> buffers;
  auto give = [&](hbDNNTensor* t, int64_t size) {
    const size_t n = static_cast<size_t>(std::max<int64_t>(size, 1));
    void* p = std::calloc(n, 1);
    FUZZ_REQUIRE(p != nullptr);
    buffers.push_back(p);
    t->sysMem[0].virAddr = p;
    t->sysMem[0].phyAddr = reinterpret_cast<uintptr_t>(p);
    t->sysMem[0].memSize = static_cast<uint32_t>(n);
  };
  for (int32_t i = 0; i < nin; ++i) {
    hbDNNTensor& t = in[static_cast<size_t>(i)];
    std::memset(&t, 0, sizeof(t));
    FUZZ_REQUIRE(hbDNNGetInputTensorProperties(&t.properties, h, i) == HB_DNN_SUCCESS);
    const int32_t type = t.properties.tensorType;
    const bool nv12 = type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE;
    if ((nv12 || type == HB_DNN_IMG_TYPE_Y) && t.properties.validShape.numDimensions == 4) {
      // The loader guarantees 4-D batch-1 image inputs.
      const int32_t* d = t.properties.validShape.dimensionSize;
      const bool nhwc = t.properties.tensorLayout == HB_DNN_LAYOUT_NHWC;
      const int64_t hw = int64_t{nhwc ? d[1] : d[2]} * (nhwc ? d[2] : d[3]);
      t.properties.tensorType = nv12 ? HB_DNN_IMG_TYPE_NV12 : type;
      t.properties.alignedShape = t.properties.validShape;
      give(&t, nv12 ? hw * 3 / 2 : hw);
    } else {
      give(&t, t.properties.alignedByteSize);
    }
  }
  for (int32_t i = 0; i < nout; ++i) {
    hbDNNTensor& t = out[static_cast<size_t>(i)];
    std::memset(&t, 0, sizeof(t));
    FUZZ_REQUIRE(hbDNNGetOutputTensorProperties(&t.properties, h, i) == HB_DNN_SUCCESS);
    give(&t, t.properties.alignedByteSize);
  }
  hbDNNTaskHandle_t task = nullptr;
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  hbDNNTensor* outp = out.data();
  int32_t rc = hbDNNInfer(&task, &outp, in.data(), h, &param);
  if (rc == HB_DNN_SUCCESS) {
    FUZZ_REQUIRE(task != nullptr);
    // A model that fits the caps finishes in far less than a minute.
    rc = hbDNNWaitTaskDone(task, 60000);
    FUZZ_REQUIRE(rc != HB_DNN_TIMEOUT);
    FUZZ_REQUIRE(rc == HB_DNN_SUCCESS || rc == HB_DNN_RUN_TASK_FAILED);
    FUZZ_REQUIRE(hbDNNReleaseTask(task) == HB_DNN_SUCCESS);
  } else {
    FUZZ_REQUIRE(task == nullptr);
    FUZZ_REQUIRE(rc == HB_DNN_INVALID_ARGUMENT || rc == HB_DNN_OUT_OF_MEMORY);
  }
  for (void* p : buffers) std::free(p);
  return rc;
}

Result load_and_run(const uint8_t* data, size_t size) {
  Result r;
  if (g_filters && load_filter(data, size) != nullptr) {
    r.load_rc = kFiltered;
    return r;
  }
  hbPackedDNNHandle_t pack = nullptr;
  const void* ptrs[1] = {data};
  int32_t lens[1] = {static_cast<int32_t>(std::min<size_t>(size, INT32_MAX))};
  r.load_rc = hbDNNInitializeFromDDR(&pack, ptrs, lens, 1);
  if (r.load_rc != HB_DNN_SUCCESS) {
    FUZZ_REQUIRE(pack == nullptr);
    FUZZ_REQUIRE(r.load_rc == HB_DNN_INVALID_MODEL || r.load_rc == HB_DNN_INCOMPATIBLE_MODEL ||
                 r.load_rc == HB_DNN_INVALID_ARGUMENT || r.load_rc == HB_DNN_MODEL_NUMBER_EXCEED_LIMIT ||
                 r.load_rc == HB_DNN_OUT_OF_MEMORY);
    return r;
  }
  const std::map<std::string, Budget> budget = budgets(data, size);
  const char** names = nullptr;
  int32_t count = 0;
  FUZZ_REQUIRE(hbDNNGetModelNameList(&names, &count, pack) == HB_DNN_SUCCESS);
  FUZZ_REQUIRE(count >= 1 && count <= 64);
  r.models = count;
  for (int32_t m = 0; m < count; ++m) {
    hbDNNHandle_t h = nullptr;
    FUZZ_REQUIRE(hbDNNGetModelHandle(&h, pack, names[m]) == HB_DNN_SUCCESS);
    int32_t nin = 0, nout = 0;
    FUZZ_REQUIRE(hbDNNGetInputCount(&nin, h) == HB_DNN_SUCCESS && nin >= 1);
    FUZZ_REQUIRE(hbDNNGetOutputCount(&nout, h) == HB_DNN_SUCCESS && nout >= 1);
    query_model(h, nin, nout);
    const auto it = budget.find(names[m]);
    FUZZ_REQUIRE(it != budget.end());
    if (it->second.work > kMaxWork || it->second.bytes > kMaxBytes || it->second.known_bug != nullptr) {
      ++r.skipped;
      continue;
    }
    const int32_t rc = run_model(h, nin, nout);
    ++r.inferred;
    if (r.infer_rc == HB_DNN_SUCCESS) r.infer_rc = rc;
  }
  FUZZ_REQUIRE(hbDNNRelease(pack) == HB_DNN_SUCCESS);
  return r;
}

}  // namespace

void init(bool known_bug_filters) {
  const char* off = std::getenv("OPENBPU_FUZZ_NO_FILTERS");
  g_filters = known_bug_filters && !(off != nullptr && *off != '\0' && *off != '0');
  setenv("HB_DNN_SIM_PLATFORM", "BERNOULLI2", 1);
  setenv("HB_DNN_LOG_LEVEL", "0", 0);
  unsetenv("HB_DNN_PROFILER_LOG_PATH");
}

Result run_one(const uint8_t* input, size_t size) {
  // libFuzzer's buffer is not aligned; the runtime copies model data to
  // 64-byte aligned memory, and so does the work estimate's parse here
  // (flatbuffers structs are read in place).
  std::vector<uint64_t> storage((size + 7) / 8 + 1);
  uint8_t* data = reinterpret_cast<uint8_t*>(storage.data());
  if (size != 0) std::memcpy(data, input, size);
  const Result r = load_and_run(size != 0 ? data : input, size);
  // Length-changing mutations: retry with the header's sizes made to match.
  static const char kMagic[8] = {'O', 'B', 'P', 'U', 'M', 'D', 'L', '\0'};
  if (size >= 64 && std::memcmp(data, kMagic, 8) == 0) {
    uint64_t file_size = 0, data_offset = 0, data_size = 0;
    for (int i = 0; i < 8; ++i) {
      file_size |= uint64_t{data[48 + i]} << (8 * i);
      data_offset |= uint64_t{data[32 + i]} << (8 * i);
      data_size |= uint64_t{data[40 + i]} << (8 * i);
    }
    if (file_size != size) {
      std::vector<uint8_t> fixed(data, data + size);
      const uint64_t new_data_size =
          data_offset <= size ? std::min<uint64_t>(data_size, size - data_offset) : data_size;
      for (int i = 0; i < 8; ++i) {
        fixed[48 + i] = static_cast<uint8_t>(static_cast<uint64_t>(size) >> (8 * i));
        fixed[40 + i] = static_cast<uint8_t>(new_data_size >> (8 * i));
      }
      load_and_run(fixed.data(), fixed.size());
    }
  }
  return r;
}

}  // namespace openbpu::fuzz

// The libFuzzer entry points (only called when linked with -fsanitize=fuzzer).
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  openbpu::fuzz::init(/*known_bug_filters=*/true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  openbpu::fuzz::run_one(data, size);
  return 0;
}
