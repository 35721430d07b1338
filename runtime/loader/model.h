// SPDX-License-Identifier: Apache-2.0
// A loaded model and the pack (hbPackedDNNHandle_t) that owns it.
#ifndef OPENBPU_RUNTIME_LOADER_MODEL_H_
#define OPENBPU_RUNTIME_LOADER_MODEL_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bpu_driver/device.h"
#include "runtime/core/tensor.h"
#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::rt {

class Pack;

// hbDNNInputSource values (schema InputSource).
inline constexpr int32_t kInputFromDdr = 0;
inline constexpr int32_t kInputFromResizer = 1;
inline constexpr int32_t kInputFromPyramid = 2;

struct InputInfo {
  uint32_t tensor = 0;
  int32_t source = kInputFromDdr;  // hbDNNInputSource
  std::string type_rt, type_train, desc;
  // Layout the BPU reads an image input in (nv12: tight rows, UV after Y).
  bool nv12 = false;
};

struct OutputInfo {
  uint32_t tensor = 0;
  int32_t operator_type = 0;
  std::string desc;
};

// One output of a BPU layer's debug record (schema LayerOutput): an NHWC
// view of the segment's scratch area or of one of its outputs, valid right
// after the layer's instructions ran.
struct LayerOutputDesc {
  std::string name, value;  // the computing ONNX node ("_<k>" for output k > 0), the ONNX value
  bool in_scratch = true;   // else the segment's output `index`
  uint32_t index = 0;
  uint64_t offset = 0;
  TensorDesc desc;          // valid = N,H,W,C, byte strides, SCALE quantization
};

// A layer of a BPU segment (debug builds, schema LayerDebug).
struct LayerRecord {
  std::string name, op_type, nodes;  // nodes: the fused ONNX nodes, ';'-separated
  uint32_t first = 0, count = 0;     // instruction range
  std::vector<LayerOutputDesc> outputs;
};

struct Segment {
  std::string name;          // as in the file, e.g. "MOBILENET_subgraph_0"
  std::string profile_name;  // as in profiler.log: "BPU_<name>" or "<Op>_<name>"
  bool bpu = false;
  std::vector<uint32_t> inputs, outputs;
  // CPU segment
  CpuOpDef op;
  std::unique_ptr<CpuKernel> kernel;
  // BPU segment
  std::unique_ptr<drv::Program> program;
  const uint8_t* constants = nullptr;
  uint64_t constants_size = 0;
  uint64_t scratch_size = 0;
  uint64_t scratch_offset = 0;  // in the task arena
  uint64_t est_cycles = 0;
  double est_us = 0.0;
  // The encoded program in the file (host runs for per-layer outputs decode it).
  const uint8_t* code = nullptr;
  uint64_t code_size = 0;
  std::vector<LayerRecord> layers;  // debug records, by instruction range
};

// Per-task working memory (intermediate tensors, scratch, staging copies of
// inputs/outputs), planned once per model and recycled between tasks.
class ArenaPool {
 public:
  ArenaPool(drv::Device* device, uint64_t size) : device_(device), size_(size) {}
  ~ArenaPool();
  // Returns a buffer of size() bytes (nullptr data on allocation failure).
  drv::DmaBuffer acquire();
  void release(const drv::DmaBuffer& buffer);
  uint64_t size() const { return size_; }

 private:
  drv::Device* device_;
  uint64_t size_;
  std::mutex mu_;
  std::vector<drv::DmaBuffer> free_;
};

class Model {
 public:
  Pack* pack = nullptr;
  drv::Device* device = nullptr;
  std::string name, march;
  std::vector<TensorDesc> tensors;
  // Data of constant tensors (in the file's data section); nullptr otherwise.
  std::vector<const uint8_t*> constant_data;
  std::vector<InputInfo> inputs;
  std::vector<OutputInfo> outputs;
  std::vector<Segment> segments;
  std::map<std::string, std::string> metadata;
  std::string desc, tag, config_yaml;
  uint32_t estimated_latency_us = 0;
  // BPU cores each run occupies: the core_num the programs were compiled
  // for (1, or 2 on bernoulli2; docs/scheduling.md).
  int core_num = 1;
  // Host time of this model's one-run tasks, start to end, smoothed (the
  // engine's waits wake up ahead of a task's expected end; 0 = none yet).
  std::atomic<uint64_t> usual_run_ns{0};

  // Arena plan: offset of every tensor that lives in the arena (-1 = bound to
  // a user buffer), and staging slots for model inputs/outputs.
  std::vector<int64_t> arena_offset;
  std::vector<uint64_t> input_staging, output_staging;
  std::unique_ptr<ArenaPool> arenas;

  bool is_model_input(uint32_t tensor) const;
  bool is_model_output(uint32_t tensor) const;
};

// Memory holding one model file, owned by the runtime (read or copied, never
// mapped: a file changed after loading cannot reach a loaded model).
class FileData {
 public:
  FileData() = default;
  FileData(const FileData&) = delete;
  FileData& operator=(const FileData&) = delete;
  ~FileData();
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Reads a regular file (FIFOs, directories and devices are refused before
  // any read); returns a status naming the file on failure.
  static Status open(const std::string& path, std::unique_ptr<FileData>* out);
  // Copies a memory image into 64-byte aligned storage.
  static Status copy(const void* data, size_t size, std::unique_ptr<FileData>* out);

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* owned_ = nullptr;
};

// The API generation a file is built for (schema ModelFile.generation,
// docs/ucp.md): kA = libdnn 1.x (.bin), kB = the UCP generation (.hbm).
enum class Generation : uint8_t { kA = 0, kB = 1 };

class Pack {
 public:
  Generation generation = Generation::kA;
  std::vector<std::unique_ptr<FileData>> files;
  std::vector<std::string> file_desc;  // ModelFile.desc per file, in load order
  std::vector<std::unique_ptr<Model>> models;
  std::vector<const char*> name_list;
  // Tasks created and not yet both released and stopped.
  std::atomic<int> live_tasks{0};

  // Counts a new task against the pack; false when the pack was released
  // (close() succeeded). Serialized with close(), so that a release never
  // succeeds while a task is being created on one of its models.
  bool add_task();
  void remove_task() { live_tasks.fetch_sub(1); }
  // hbDNNRelease: closes the pack when no task counts against it and
  // returns 0; otherwise returns the number of tasks and sets *first_refusal
  // on the first refusal only (the API logs a refusal once per pack).
  int close(bool* first_refusal);

 private:
  std::mutex mu_;
  bool closed_ = false;
  bool refusal_logged_ = false;
};

// Loads model files (already in memory) into a pack: verifies each file,
// builds models, creates CPU kernels and loads BPU programs on the device.
// A file of another generation than the calling API's is kIncompatibleModel.
Status load_pack(std::vector<std::unique_ptr<FileData>> files, std::unique_ptr<Pack>* out,
                 Generation generation = Generation::kA);

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_LOADER_MODEL_H_
