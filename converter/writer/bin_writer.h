// SPDX-License-Identifier: Apache-2.0
// Writes the compiled (quantized) graph as a .bin model file: one segment per
// node of the quantized graph, BPU programs and constants in the data section.
#ifndef OPENBPU_CONVERTER_WRITER_BIN_WRITER_H_
#define OPENBPU_CONVERTER_WRITER_BIN_WRITER_H_

#include <map>
#include <string>
#include <vector>

#include "converter/codegen/compiler.h"
#include "schema/model_generated.h"

namespace openbpu::cvt {

struct InputMeta {
  std::string type_rt, type_train, source;  // source: ddr, pyramid, resizer
};

struct BinWriteOptions {
  std::string model_name;
  std::string march;
  int core_num = 1;  // BPU cores the programs are compiled for (Model.core_num)
  std::map<std::string, std::string> metadata;  // vendor keys (MARCH, INPUT_TYPE_RT, ...)
  std::string config_yaml;
  std::map<std::string, InputMeta> inputs;      // per graph input
  std::map<std::string, std::string> tool_versions;
  std::string builder = "openbpu hb_mapper";  // ModelFile.builder
  // hb_compile's .hbm: ModelFile.generation B and the HBM description JSON
  // ({"models": {<name>: {"desc", "march", "inputs", "outputs"}},
  // "builder"}) hbDNNGetHBMDesc returns (docs/ucp.md).
  bool hbm = false;
  // compiler_parameters.debug: per-layer records (Model.layers: instruction
  // ranges, fused ONNX nodes, where each layer's outputs are) for hb_perf's
  // Layer Details and hrt_model_exec --dump_intermediate.
  bool debug = false;
};

// Serializes to bytes (for tests) or writes atomically.
bool build_bin(const CompiledModel& model, const BinWriteOptions& options, std::vector<uint8_t>* bytes,
               std::string* error);
bool write_bin(const CompiledModel& model, const BinWriteOptions& options, const std::string& path,
               std::string* error);

// Estimated board latency of one run of a model in microseconds: the
// march's timing model (bpu_sim/timing.h estimate_model_us) over its
// segments; CPU operators count their outputs' valid elements. 0 for an
// unknown march.
double estimate_model_latency_us(const fb::ModelT& model);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_WRITER_BIN_WRITER_H_
