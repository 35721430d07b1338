// SPDX-License-Identifier: Apache-2.0
// Config translation: the yaml Config -> the options of each conversion
// stage (preprocess insertion, calibration data, placement, compilation,
// .bin writing). Every key a stage honours is read here, so a key that
// appears nowhere in this file has no effect (docs/config.md says which).
#ifndef OPENBPU_CONVERTER_OPTIONS_H_
#define OPENBPU_CONVERTER_OPTIONS_H_

#include <map>
#include <string>
#include <vector>

#include "bpu_sim/isa/march.h"
#include "converter/codegen/compiler.h"
#include "converter/config/config.h"
#include "converter/partition/placement.h"
#include "converter/passes/preprocess.h"
#include "converter/quant/cal_data.h"
#include "converter/quant/calibration.h"
#include "converter/tools/mapper_log.h"
#include "converter/writer/bin_writer.h"

namespace openbpu::cvt {

std::vector<PreprocessSpec> preprocess_specs(const Config& c);
std::vector<CalInputSpec> cal_specs(const Config& c);

// run_on_cpu / run_on_bpu and node_info ON; warns about node names that are
// not in the (optimized) graph.
PlacementOptions placement_options(const Config& c, const isa::MarchInfo& march, const Graph& g, MapperLog& log);

// Compiler options: max_time_per_fc, activation types (node_info
// OutputType / InputType / InputType<k>, optimization set_all_nodes_int16
// and set_<Kind>_input|output_int8|int16), set_model_output_int8,
// optimize_level (O0: no fusion). pl: the placement of g (a per-kind key
// warns when no node of its kind was placed on the BPU). Known before
// calibration; add_calibration_options adds what the statistics give.
CompileOptions compile_options(const Config& c, const isa::MarchInfo& march, const Graph& g, const Placement& pl,
                               MapperLog& log);

// True when the options can give an activation int16 (all, per node, or by
// the accuracy budget's promotion): the int16 layers' weight rounding needs
// input moments from the calibration.
bool int16_possible(const Config& c, const CompileOptions& co);

// bias_correction: channel means from the calibration statistics.
void add_calibration_options(const Config& c, const CalibrationStats& stats, CompileOptions* co);

// Values the compile options ask int16 that the compiled model `cm` keeps
// int8 (a data movement op gives its output its input's type): a warning
// each, naming the producer and the value to ask for instead.
// optimization asymmetric (or default's choice of it): how many int8 values
// took zero points, or a warning that none qualified when the yaml asked
// for it (INFO when the calibration chose it).
void log_asymmetric(const Config& c, const CompileOptions& co, const CompiledModel& cm, MapperLog& log);
void warn_unmet_int16(const CompileOptions& co, const Graph& g, const CompiledModel& cm, MapperLog& log);

// Keys and values accepted for compatibility that have no effect in OpenBPU:
// one warning each (docs/config.md lists them). Keys with no effect that
// the config parser already warns about (deprecated keys, balance_factor
// outside balance mode, max_percentile outside max) are not repeated.
void warn_ineffective_keys(const Config& c, MapperLog& log);

// The .bin's metadata and input descriptions. rt_override: inputs whose
// runtime type changed (a removed Quantize node makes an input a featuremap).
BinWriteOptions bin_write_options(const Config& c, const std::map<std::string, std::string>& rt_override,
                                  const std::string& mapper_version);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_OPTIONS_H_
