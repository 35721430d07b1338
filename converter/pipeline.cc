// SPDX-License-Identifier: Apache-2.0
// The stages of hb_mapper in order. Each stage lives in its own module; this
// file only sequences them, logs and writes the outputs.
#include "converter/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <optional>

#include "bpu_sim/isa/march.h"
#include "converter/codegen/quant_params.h"
#include "converter/frontend/onnx/legalize.h"
#include "converter/frontend/onnx/onnx_io.h"
#include "converter/ir/executor.h"
#include "converter/ops/op_unit.h"
#include "converter/options.h"
#include "converter/passes/passes.h"
#include "converter/passes/preprocess.h"
#include "converter/passes/remove_io_nodes.h"
#include "converter/quant/cal_data.h"
#include "converter/quant/calibration.h"
#include "converter/quant/equalization.h"
#include "converter/quant/int16_promotion.h"
#include "converter/quant/method_search.h"
#include "converter/quant/qdq_load.h"
#include "converter/quant/threshold_search.h"
#include "converter/quant/weight_rounding.h"
#include "converter/report/report.h"
#include "converter/tools/infer_input.h"
#include "converter/writer/bin_writer.h"
#include "converter/writer/output_files.h"
#include "runtime/core/tensor.h"

namespace openbpu::cvt {

namespace fs = std::filesystem;

namespace {

// calibration_type load: the Q/DQ pairs of the model removed, their
// thresholds kept.
// (Another calibration type on a QDQ model: a warning that its pairs stay
// fake quantization on the CPU.)
bool strip_loaded(const Config& config, Graph* g, QdqModel* qdq, MapperLog& log, std::string* error) {
  if (qdq == nullptr || config.calibration_parameters.calibration_type != "load") {
    const auto n = std::count_if(g->nodes.begin(), g->nodes.end(),
                                 [](const Node& x) { return x.domain.empty() && x.op_type == "QuantizeLinear"; });
    if (n > 0)
      log.warn("the model has " + std::to_string(n) + " QuantizeLinear nodes: they run on the CPU as fake " +
               "quantization, splitting the BPU subgraphs; calibration_type load takes their thresholds instead");
    return true;
  }
  if (!strip_qdq(g, qdq, error)) return false;
  if (qdq->pairs == 0) {
    *error = "calibration_type load: the model has no QuantizeLinear/DequantizeLinear pair on an activation "
             "(load takes the thresholds of a QDQ model, e.g. a quantization-aware training export)";
    return false;
  }
  log.info("calibration_type load: " + std::to_string(qdq->pairs) + " activation QuantizeLinear/DequantizeLinear " +
           "pairs removed (their scale * 127 is the value's threshold), " + std::to_string(qdq->weights) +
           " quantized weights dequantized (" + std::to_string(qdq->weights_kept) +
           " with the scales our max|w| / 127 per output channel rule gives again).");
  for (const auto& n : qdq->notes) log.info("calibration_type load: " + n);
  return true;
}

}  // namespace

bool load_and_prepare(const Config& config, Graph* g, MapperLog& log, std::string* error, QdqModel* qdq) {
  const auto& mp = config.model_parameters;
  if (mp.model_type == "caffe") {
    *error = "model_parameters.caffe_model: Caffe models are not supported yet; convert the model to ONNX";
    return false;
  }
  log.info("Start to parse the onnx model.");
  if (!onnxio::load_model(mp.onnx_model, g, error) || !strip_loaded(config, g, qdq, log, error)) return false;
  log.info("Input ONNX model infomation:");
  log.info("ONNX IR version:          " + std::to_string(g->ir_version));
  log.info("Opset version:            ['ai.onnx v" + std::to_string(g->opset) + "']");
  // Input shapes: the config's (validated against the model) with input_batch.
  for (const auto& in : config.input_parameters) {
    Value* v = g->value(in.name);
    if (v == nullptr) {
      *error = "input_parameters.input_name: '" + in.name + "' is not an input of the model";
      return false;
    }
    v->has_shape = true;
    v->shape = in.shape;
    if (in.batch > 1 && !v->shape.empty()) v->shape[0] = in.batch;
  }
  for (const auto& in : g->inputs) {
    const Value* v = g->value(in);
    if (!v->shape_known()) {
      *error = "input '" + in + "' has dimensions of 0 or unknown. Please specify input-shape parameter.";
      return false;
    }
  }
  if (!g->check_tensor_sizes(error)) return false;
  for (const auto& o : g->outputs)
    if (g->producer(o) == nullptr && !g->value(o)->is_constant() &&
        std::find(g->inputs.begin(), g->inputs.end(), o) == g->inputs.end()) {
      *error = "model output '" + o + "' is not produced by any node";
      return false;
    }
  if (g->outputs.size() > 32) {
    *error = "tool limits for max output num is 32";
    return false;
  }
  log.info("End to parse the onnx model.");
  if (!config.model_parameters.output_nodes.empty()) {
    std::vector<std::string> outs;
    for (const auto& name : config.model_parameters.output_nodes) {
      std::string value = name;
      for (const auto& n : g->nodes)
        if (n.name == name && !n.outputs.empty()) value = n.outputs[0];
      if (g->value(value) == nullptr) {
        *error = "model_parameters.output_nodes: '" + name + "' is neither a node nor a value of the model";
        return false;
      }
      outs.push_back(value);
    }
    g->outputs = outs;
    g->remove_dead();
  }
  if (!insert_preprocess(g, preprocess_specs(config), error)) return false;
  if (fold_constants(g, error) < 0) return false;
  return true;
}

int run_checker(const CheckerOptions& opt, MapperLog& log) {
  log.info("Start hb_mapper....");
  log.info("hb_mapper version " + std::string(kMapperVersion));
  const isa::MarchInfo* march = isa::find_march(opt.march);
  if (march == nullptr) {
    log.error("--march: '" + opt.march + "' is not one of bernoulli2, bayes, bayes-e, nash-e, nash-m");
    return 1;
  }
  if (opt.model_type != "onnx") {
    log.error(opt.model_type == "caffe" ? "Caffe models are not supported yet; convert the model to ONNX"
                                        : "--model-type must be onnx or caffe");
    return 1;
  }
  Config c = make_fast_perf_config(opt.model, opt.march, opt.model_type, opt.input_shapes, opt.proto);
  std::string err;
  Graph g;
  {
    Graph probe;
    if (!onnxio::load_model(opt.model, &probe, &err)) {
      log.error(err);
      return 1;
    }
    std::vector<ModelInput> mins;
    for (const auto& in : probe.inputs) mins.push_back({in, probe.value(in)->shape});
    std::vector<std::string> warnings;
    if (!validate_with_model(c, mins, &warnings, &err)) {
      log.error(err);
      return 1;
    }
    for (const auto& w : warnings) log.warn(w);
  }
  if (!load_and_prepare(c, &g, log, &err) || !optimize(&g, &err)) {
    log.error(err);
    return 1;
  }
  PlacementOptions po;
  po.march = march;
  const Placement pl = place(&g, po);
  log_placement(log, g, pl);
  log.info("End to check the model. The model has " + std::to_string(pl.subgraphs) + " BPU subgraph(s).");
  return 0;
}

namespace {

// compiler_parameters.jobs: threads for calibration (1 when unset).
int jobs(const Config& config) { return config.compiler_parameters.jobs.value_or(1); }

// *_original_float_model.onnx / *_optimized_float_model.onnx.
bool save_float_model(const Graph& g, const std::string& suffix, const OutputFiles& out, MapperLog& log,
                      std::string* err) {
  Graph legal = g;
  if (!legalize_for_onnx(&legal, err) || !onnxio::save_model(legal, out.path(suffix), err)) return false;
  log.info("Saving model to: " + out.final_path(suffix) + ".");
  return true;
}

bool optimize_stage(Graph* g, const OutputFiles& out, MapperLog& log, std::string* err) {
  log.info("Start to optimize the model.");
  if (!optimize(g, err) || fold_constants(g, err) < 0 ||
      !save_float_model(*g, "_optimized_float_model.onnx", out, log, err))
    return false;
  log.info("End to optimize the model.");
  return true;
}

// debug_mode dump_calibration_data: the samples as the float models take
// them, <working_dir>/calibration_data/<input>/<k>.npy (the vendor's layout
// for its accuracy debugger).
bool dump_samples(const Config& config, const std::vector<Sample>& samples, const OutputFiles& out, MapperLog& log,
                  std::string* err) {
  std::vector<std::string> files;
  const bool ok = dump_calibration_data(out.folder("calibration_data"), samples, &files, err);
  if (ok)
    log.info("debug_mode dump_calibration_data: " + std::to_string(files.size()) + " .npy files in " +
             config.model_parameters.working_dir + "/calibration_data");
  return ok;
}

// Calibration samples (random ones for calibration_type skip).
bool calibration_samples(const Config& config, std::vector<Sample>* samples, const OutputFiles& out, MapperLog& log,
                         std::string* err) {
  const auto& cp = config.calibration_parameters;
  const std::vector<CalInputSpec> specs = cal_specs(config);
  std::vector<std::string> warnings;
  if (cp.calibration_type == "skip") {
    *samples = random_calibration(specs, 4, 1234);
    log.info("calibration_type skip: calibrating with random data (for performance evaluation only)");
  } else if (cp.calibration_type == "load") {
    if (cp.min_output_cosine) {
      *err = "calibration_parameters.min_output_cosine: calibration_type load has no calibration data to measure "
             "the accuracy budget on";
      return false;
    }
    *samples = random_calibration(specs, 1, 1234);
    log.info("calibration_type load: no calibration data; the similarity report uses a random input");
    return true;
  } else if (!load_calibration(specs, samples, &warnings, err)) {
    return false;
  }
  for (const auto& w : warnings) log.warn(w);
  return config.model_parameters.debug_mode != "dump_calibration_data" || dump_samples(config, *samples, out, log, err);
}

// calibration_type load: the thresholds of the QDQ model, compiled.
bool load_stage(const Graph& g, const Placement& pl, const QdqModel& qdq, const CompileOptions& co,
                CalibrationChoice* best, MapperLog& log, std::string* err) {
  std::vector<std::string> derived;
  if (!loaded_thresholds(g, pl, co, qdq, &best->thresholds, &derived, err)) return false;
  for (const auto& d : derived) log.debug("calibration_type load: threshold of " + d);
  log.info("calibration_type load: " + std::to_string(best->thresholds.size() - derived.size()) +
           " thresholds from the model, " + std::to_string(derived.size()) +
           " taken from their neighbours (through data movement, Relu/Clip, average pools).");
  best->label = "load";
  return compile(g, pl, best->thresholds, co, &best->model, err);
}

using Lap = std::function<void(const char*)>;

// *_calibrated_model.onnx: the float model with a QDQ pair on every int8
// value the BPU reads or computes (int16 and int32 values have none: opset 13
// has no int16 QuantizeLinear, and their error is far below int8's) and a
// per-output-channel one on the weights of BPU convolutions (the compiler's
// scales).
bool save_calibrated_model(const Graph& g, const Placement& pl, const CalibrationChoice& best,
                           const CompileOptions& co, const OutputFiles& out, MapperLog& log,
                           std::string* err) {
  Graph legal = g;
  if (!legalize_for_onnx(&legal, err)) return false;
  auto int16 = [&](const std::string& v) { return !co.int8_values.count(v) && (co.all_int16 || co.int16_values.count(v)); };
  std::vector<std::string> qvalues;
  for (const auto& t : best.model.traces)
    if (t.q.dtype == isa::DType::kInt8) qvalues.push_back(t.value);
  std::map<std::string, std::vector<float>> weight_scales;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (pl.nodes[i].device != Device::kBpu) continue;
    const Node& n = g.nodes[i];
    for (const auto& in : n.inputs)
      if (!in.empty() && g.value(in) && !g.value(in)->is_constant() && !int16(in)) qvalues.push_back(in);
    const Value* w = n.inputs.size() > 1 ? g.value(n.inputs[1]) : nullptr;
    const OpUnit* unit = find_op_unit(n);
    if (n.op_type == "Conv" && unit != nullptr && unit->int32_tail != nullptr && w != nullptr && w->is_constant() &&
        w->elem_type == kFloat && w->shape.size() == 4 && legal.value(w->name) != nullptr)
      weight_scales[w->name] = unit->int32_tail(g, n, value_scale(best.thresholds, n.inputs[0], int16(n.inputs[0])));
  }
  std::sort(qvalues.begin(), qvalues.end());
  qvalues.erase(std::unique(qvalues.begin(), qvalues.end()), qvalues.end());
  std::vector<std::string> present;
  for (const auto& v : qvalues)
    if (legal.value(v) && legal.value(v)->elem_type == kFloat) present.push_back(v);
  if (!onnxio::save_calibrated(legal, best.thresholds, present, weight_scales, out.path("_calibrated_model.onnx"),
                               err))
    return false;
  log.info("Saving model to: " + out.final_path("_calibrated_model.onnx") + ".");
  return true;
}

// default/mix: per-value threshold search after the method choice (default
// within a compute budget).
bool search_stage(const Graph& g, const Placement& pl, const CalibrationStats& stats, const std::vector<Sample>& samples,
                  const CompileOptions& co, const std::string& type, CalibrationChoice* best, MapperLog& log,
                  std::string* err) {
  const auto t0 = std::chrono::steady_clock::now();
  ThresholdSearchResult r;
  if (!search_thresholds(g, pl, stats, co, calibration_candidates(type, std::nullopt, co.all_int16), samples,
                         threshold_search_budget(type), [&](const std::string& m) { log.debug(m); }, best, &r, err))
    return false;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log.info("Per-value threshold search: " + std::to_string(r.changed) + " thresholds changed, " +
           std::to_string(r.searched) + " of " + std::to_string(r.candidates) + " values with alternatives searched" +
           (r.budget_exhausted ? " (compute budget of default reached, " + r.order + " order; mix searches all)"
                               : "") +
           ", " +
           std::to_string(r.evaluated) + " alternatives compiled and scored on " + std::to_string(r.samples) +
           " samples in " + fixed(secs, 1) + " s; mean output cosine " + fixed(r.score_before, 6) + " -> " +
           fixed(r.score_after, 6) + ".");
  return true;
}

// The statistics of every float value of g over the samples, the weights
// rounded for the output error, the calibration-method choice and (default,
// mix) the per-value threshold search.
bool calibrate_graph(const Config& config, const Graph& g, const Placement& pl, const std::vector<Sample>& samples,
                     CalibrationStats* stats, CompileOptions* co, CalibrationChoice* best, MapperLog& log,
                     std::string* err, const Lap& lap) {
  FloatExecutor fexec;
  if (!fexec.prepare(g, err) || !collect_stats(fexec, samples, stats, err,
                                                [&](size_t d, size_t t) { log.progress(d, t); }, jobs(config)))
    return false;
  lap("calibration statistics");
  add_calibration_options(config, *stats, co);
  int tried = 0;
  co->rounded_weights = std::make_shared<const std::map<std::string, RoundedWeights>>(
      round_weights_for_error(g, pl, *stats, [&](const std::string& node, double gain) {
        ++tried;
        log.debug("weight rounding of " + node + ": cross-validated output error gain " + fixed(gain, 4) +
                  (gain > kMinRoundingGain ? "" : ", nearest kept"));
      }));
  if (tried > 0) {
    log.info("Weights rounded for the output error: " + std::to_string(co->rounded_weights->size()) + " of " +
             std::to_string(tried) +
             " 1x1 convolutions and MatMuls (used where their input is int16; the others' rounding did not lower "
             "the error on the samples it was not fitted to), input moments of " +
             std::to_string(std::min(samples.size(), kMomentSamples)) + " calibration samples.");
    lap("weight rounding");
  }
  const auto& cp = config.calibration_parameters;
  const auto candidates = calibration_candidates(cp.calibration_type, cp.max_percentile, co->all_int16);
  if (candidates.size() > 1)
    for (const auto& o : g.outputs)
      if (const std::string s = scored_value(g, pl, o); s != o)
        log.info("Scoring " + o + " by its logits (" + s + ", the Softmax input) in the method choice and the "
                 "threshold search");
  const bool ok = choose_calibration(g, pl, *stats, samples, *co, candidates,
                                     [&](const std::string& m) { log.debug(m); }, best, err, jobs(config));
  lap("calibration method choice");
  // (the searching calibration types, default and mix, also choose the number format)
  if (ok && threshold_search_applies(cp.calibration_type, co->all_int16) && !co->asymmetric) {
    choose_asymmetric(g, pl, *stats, samples, candidates, co, best, [&](const std::string& m) { log.info(m); },
                      jobs(config));
    lap("asymmetric choice");
  }
  if (!ok || !threshold_search_applies(cp.calibration_type, co->all_int16)) return ok;
  const bool searched = search_stage(g, pl, *stats, samples, *co, cp.calibration_type, best, log, err);
  lap("per-value threshold search");
  return searched;
}

// calibration_parameters cross_layer_equalization True (default and mix
// with int8 activations): the float graph with its BPU convolution pairs
// equalized is a second candidate, calibrated the same way (statistics,
// method choice, threshold search); it is kept when its mean output cosine
// on the scoring samples beats the plain graph's by more than kMinScoreGain.
bool equalization_stage(const Config& config, const Placement& pl, const std::vector<Sample>& samples,
                        const CompileOptions& co0, Graph* g, CalibrationStats* stats, CompileOptions* co,
                        CalibrationChoice* best, MapperLog& log, std::string* err, const Lap& lap) {
  Graph eq = *g;
  std::vector<EqualizedPair> pairs;
  if (!equalize_cross_layer(&eq, pl, samples, &pairs, err)) return false;
  lap("cross-layer equalization");
  double top = 1;
  for (const auto& p : pairs) {
    log.debug("cross-layer equalization of " + p.first + " -> " + p.second + ": largest scale " + fixed(p.max_scale, 2));
    top = std::max(top, p.max_scale);
  }
  const std::string what = "Cross-layer equalization: " + std::to_string(pairs.size()) + " convolution pairs";
  if (pairs.empty()) {
    log.info(what + ", nothing to equalize.");
    return true;
  }
  CalibrationStats eq_stats;
  eq_stats.moment_inputs = stats->moment_inputs;
  CompileOptions eq_co = co0;
  CalibrationChoice eq_best;
  if (!calibrate_graph(config, eq, pl, samples, &eq_stats, &eq_co, &eq_best, log, err, lap)) return false;
  const bool keep = eq_best.score > best->score + kMinScoreGain;
  log.info(what + ", channel scales up to " + fixed(top, 2) + " (ranges of " +
           std::to_string(std::min(samples.size(), kEqualizationSamples)) +
           " calibration samples); mean output cosine " + fixed(best->score, 6) + " without (" + best->label + "), " +
           fixed(eq_best.score, 6) + " with (" + eq_best.label + "): " +
           (keep ? "kept" : "not kept (a gain above " + fixed(kMinScoreGain, 6) + " is needed)") + ".");
  if (!keep) return true;
  *g = std::move(eq);
  *stats = std::move(eq_stats);
  *co = std::move(eq_co);
  *best = std::move(eq_best);
  return true;
}

// calibration_parameters min_output_cosine: int16 promotion until the
// budget is met (marches with int16), then the accuracy gate.
bool promotion_stage(const Graph& g, const Placement& pl, const std::vector<Sample>& samples,
                     const CalibrationStats& stats, double min_cosine, CompileOptions* co, CalibrationChoice* best,
                     MapperLog& log, std::string* err) {
  PromotionResult r;
  const bool can = co->march->int16;
  // (no statistics with calibration_type load: the QDQ model's thresholds stay)
  if (!promote_to_int16(g, pl, samples, min_cosine, can, int16_thresholds(g, stats),
                        [&](const std::string& m) { log.debug(m); }, co, best, &r, err))
    return false;
  const std::string scored = " on " + std::to_string(r.samples) + " calibration samples (" +
                             std::to_string(r.first_sample + 1) + "-" + std::to_string(r.first_sample + r.samples) +
                             (r.first_sample > 0 ? ", not the searches' scoring samples)" : ")");
  if (!r.steps.empty() || !r.met)
    log.info(std::string("int16 promotion (") + (r.measured_ranking ? "measured" : "local-error") + " ranking, " +
             std::to_string(r.candidates) + " int8 candidates, " + std::to_string(r.evaluated) +
             " compilations scored): " + std::to_string(r.steps.size()) + " values promoted, output cosine " +
             fixed(r.score_before, 6) + " -> " + fixed(r.score_after, 6) + ", estimated BPU time " +
             fixed(r.us_before, 1) + " -> " + fixed(r.us_after, 1) + " us.");
  for (const auto& s : r.steps)
    log.info("  int16 promotion: " + s.value + (r.measured_ranking ? ", output cosine gain alone " : ", local error ") +
             fixed(s.rank, 6) + ", estimated BPU time +" + fixed(s.extra_us, 1) + " us");
  if (r.met) {
    log.info("Accuracy budget met: mean output cosine " + fixed(r.score_after, 6) + scored +
             " >= min_output_cosine " + fixed(min_cosine, 6) + ".");
    return true;
  }
  *err = "accuracy budget not met: mean output cosine " + fixed(r.score_after, 6) + scored +
         " < calibration_parameters.min_output_cosine " + fixed(min_cosine, 6) +
         (can ? " with all " + std::to_string(r.candidates) + " int8 activations that can be int16 promoted"
              : std::string(" and march ") + co->march->name + " has no int16 to promote values to") +
         "; no model file written";
  return false;
}

// Similarity on the first sample (a debug build keeps every intermediate
// value in the scratch arena; its arithmetic is identical).
bool similarity_stage(const Graph& g, const Placement& pl, const CalibrationChoice& best, const CompileOptions& co,
                      const Sample& sample, Similarity* sim, std::string* err) {
  CompileOptions dbg = co;
  dbg.no_scratch_reuse = true;
  CompiledModel debug_model;
  return compile(g, pl, best.thresholds, dbg, &debug_model, err) &&
         compute_similarity(g, debug_model, sample, sim, err);
}

// *_quantized_model.onnx and the .bin (after remove_node_type/name).
bool write_outputs(const Config& config, const ConvertTool& tool, CompiledModel* cm, const OutputFiles& out,
                   MapperLog& log, std::string* err) {
  std::map<std::string, std::string> rt_override;
  remove_io_nodes(cm, config, &rt_override, log);
  if (!onnxio::save_model(cm->graph, out.path("_quantized_model.onnx"), err)) return false;
  log.info("Saving model to: " + out.final_path("_quantized_model.onnx") + ".");
  BinWriteOptions bo = bin_write_options(config, rt_override, tool.version);
  if (tool.hbm) {
    bo.hbm = true;
    bo.builder = "openbpu " + tool.name;
    bo.tool_versions = {{tool.name, tool.version}, {"openbpu", "0.1.0"}};
  }
  return write_bin(*cm, bo, out.path(tool.hbm ? ".hbm" : ".bin"), err);
}

}  // namespace

ConvertTool hb_compile_tool() {
  ConvertTool t;
  t.name = "hb_compile";
  t.command = "hb_compile";
  t.version = kCompileVersion;
  t.hbm = true;
  return t;
}

int run_makertbin(const Config& config, MapperLog& log, const ConvertTool& tool) {
  const auto& mp = config.model_parameters;
  log.info("Start " + tool.name + "....");
  log.info(tool.name + " version " + tool.version);
  log.info("Dump config:\n" + config.echo_yaml());
  warn_ineffective_keys(config, log);
  const isa::MarchInfo* march = isa::find_march(mp.march);
  OutputFiles out;
  std::string err;
  if (!out.open(mp.working_dir, mp.output_model_file_prefix, &err)) {
    log.error(err);
    return 1;
  }
  // Seconds per step, logged as each ends (what the conversion time goes to).
  Lap lap = [&log, t = std::chrono::steady_clock::now()](const char* step) mutable {
    const auto now = std::chrono::steady_clock::now();
    log.info(std::string("Step time: ") + step + " " + fixed(std::chrono::duration<double>(now - t).count(), 1) +
             " s.");
    t = now;
  };
  auto fail = [&](const std::string& m) {
    log.error(m);
    log.error("exception in command: " + tool.command);
    return 1;
  };

  Graph g;
  QdqModel qdq;
  if (!load_and_prepare(config, &g, log, &err, &qdq) ||
      !save_float_model(g, "_original_float_model.onnx", out, log, &err) || !optimize_stage(&g, out, log, &err))
    return fail(err);
  const Placement pl = place(&g, placement_options(config, *march, g, log));
  for (const auto& w : pl.warnings) log.warn(w);
  log_cpu_reasons(log, g, pl);
  if (pl.subgraphs == 0) return fail("no operator of the model can run on the BPU");
  lap("import, optimization and placement");

  log.info("Start to calibrate the model.");
  std::vector<Sample> samples;
  CalibrationStats stats;
  CompileOptions co = compile_options(config, *march, g, pl, log);
  if (int16_possible(config, co)) stats.moment_inputs = weight_rounding_inputs(g, pl);  // used by int16 inputs only
  const auto& cp = config.calibration_parameters;
  const CompileOptions co0 = co;
  CalibrationChoice best;
  if (!calibration_samples(config, &samples, out, log, &err)) return fail(err);
  lap("calibration data");
  if (cp.calibration_type == "load" ? !load_stage(g, pl, qdq, co, &best, log, &err)
                                    : !calibrate_graph(config, g, pl, samples, &stats, &co, &best, log, &err, lap) ||
                                          (threshold_search_applies(cp.calibration_type, co.all_int16) &&
                                           cp.cross_layer_equalization.value_or(false) &&
                                           !equalization_stage(config, pl, samples, co0, &g, &stats, &co, &best,
                                                               log, &err, lap)))
    return fail(err);
  if (cp.cross_layer_equalization.value_or(false) && co.all_int16)
    log.warn("calibration_parameters cross_layer_equalization: ignored, every activation is int16");
  log.info("Select " + best.label + " method.");
  if (cp.min_output_cosine) {
    if (!promotion_stage(g, pl, samples, stats, *cp.min_output_cosine, &co, &best, log, &err)) return fail(err);
    lap("accuracy budget (int16 promotion)");
  }
  log.info("End to calibrate the model.");

  Similarity sim;
  if (!save_calibrated_model(g, pl, best, co, out, log, &err) ||
      !similarity_stage(g, pl, best, co, samples.front(), &sim, &err) ||
      !write_outputs(config, tool, &best.model, out, log, &err))
    return fail(err);
  lap("calibrated model, similarity report and output files");

  log_subgraphs(log, best.model, *march);
  log_advice(log, best.model, *march, config.compiler_parameters.advice.value_or(0));
  log_quantized_nodes(log, g, pl, best.model, best.thresholds, sim);
  warn_unmet_int16(co, g, best.model, log);
  if (co.int16_weights && best.model.int16_weight_convs == 0)
    log.warn("optimization int16_weights: no convolution reads an int16 value (ask int16 with node_info, "
             "set_all_nodes_int16 or min_output_cosine); every weight stays int8");
  else if (co.int16_weights)
    log.info("optimization int16_weights: " + std::to_string(best.model.int16_weight_convs) +
             " convolutions reading int16 compute with 16-bit weights (two int8 planes)");
  log_asymmetric(config, co, best.model, log);
  log_outputs(log, sim);
  if (!out.commit(&err)) return fail(err);
  log.info(tool.hbm ? "Convert to runtime hbm file successfully!" : "Convert to runtime bin file successfully!");
  log.info("End Model Convert");
  return 0;
}

int run_infer(const Config& config, const std::string& model_file,
              const std::vector<std::pair<std::string, std::string>>& inputs, const std::string& output_dir,
              MapperLog& log) {
  std::string err;
  Graph g;
  if (!onnxio::load_model(model_file, &g, &err)) {
    log.error(err);
    return 1;
  }
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  std::map<std::string, Value> feed;
  const std::vector<CalInputSpec> specs = cal_specs(config);
  for (const auto& in : g.inputs) {
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == in; });
    if (it == inputs.end()) {
      log.error("--image-file: no data given for model input '" + in + "'");
      return 1;
    }
    const Value& gv = *g.value(in);
    const InputParameter* ip = nullptr;
    for (const auto& p : config.input_parameters)
      if (p.name == in) ip = &p;
    const CalInputSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.input == in) spec = &s;
    // A sample in the train type (an image, or a raw file of the train
    // size): the quantized model takes the runtime bytes, the float models
    // their "_128" input, made like calibration samples.
    const auto feed_train_sample = [&](const std::vector<float>& values) {
      Value v = gv;
      if (gv.native) {
        std::vector<uint8_t> bytes;
        if (!train_values_to_rt_bytes(*ip, values, &bytes, &err)) return false;
        v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
      } else {
        v = to_graph_input(*spec, values);
      }
      feed[in] = v;
      return true;
    };
    if (is_image_file(it->second)) {
      std::vector<float> values;
      if (ip == nullptr || spec == nullptr) {
        log.error("--image-file '" + it->second + "': input '" + in + "' is not in the config's input_parameters");
        return 1;
      }
      if (!image_to_train_values(it->second, *ip, &values, &err) || !feed_train_sample(values)) {
        log.error(err);
        return 1;
      }
      continue;
    }
    std::ifstream f(it->second, std::ios::binary);
    if (!f) {
      log.error("--image-file: cannot open '" + it->second + "'");
      return 1;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const int64_t need = gv.native ? gv.byte_size : gv.elements() * elem_size(gv.elem_type);
    if (static_cast<int64_t>(bytes.size()) == need) {
      Value v = gv;
      v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
      feed[in] = v;
      continue;
    }
    // A raw sample in the train type (uint8 or float32, like calibration data).
    int64_t train_elems = 1;
    if (spec != nullptr)
      for (int64_t d : spec->shape) train_elems *= d;
    std::vector<float> values;
    if (spec != nullptr && ip != nullptr && static_cast<int64_t>(bytes.size()) == train_elems) {
      values.assign(bytes.begin(), bytes.end());
    } else if (spec != nullptr && ip != nullptr && static_cast<int64_t>(bytes.size()) == train_elems * 4) {
      values.resize(static_cast<size_t>(train_elems));
      std::memcpy(values.data(), bytes.data(), bytes.size());
    } else {
      log.error("input file '" + it->second + "' has " + std::to_string(bytes.size()) + " bytes; model input '" + in +
                "' takes " + std::to_string(need) +
                (spec != nullptr ? " (or a train-type sample of " + std::to_string(train_elems) + " uint8 or float32 values)"
                                 : std::string()));
      return 1;
    }
    if (!feed_train_sample(values)) {
      log.error(err);
      return 1;
    }
  }
  FloatExecutor exec;
  std::map<std::string, Value> values;
  if (!exec.prepare(g, &err) || !exec.run(feed, &values, &err, nullptr, true)) {
    log.error(err);
    return 1;
  }
  // Per node output, under the name hrt_model_exec --dump_intermediate gives
  // the same value, in execution order (vec_diff pairs and orders by them).
  std::string order;
  size_t written = 0;
  for (const Node& n : g.nodes)
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      auto it = values.find(n.outputs[k]);
      if (n.outputs[k].empty() || it == values.end()) continue;
      const Value& v = it->second;
      if (v.native || v.elem_type != kFloat || !v.data) continue;
      const std::string file = rt::layer_dump_name(n.name, k) + "_float.bin";
      std::ofstream o(output_dir + "/" + file, std::ios::binary);
      o.write(reinterpret_cast<const char*>(v.data->data()), static_cast<std::streamsize>(v.data->size()));
      if (!o) {
        log.error("cannot write " + output_dir + "/" + file);
        return 1;
      }
      order += file + "\n";
      ++written;
    }
  std::ofstream eo(output_dir + "/execution_order.txt");
  eo << order;
  if (!eo) {
    log.error("cannot write " + output_dir + "/execution_order.txt");
    return 1;
  }
  log.info("infer done: " + std::to_string(written) + " node outputs written to " + output_dir);
  return 0;
}

}  // namespace openbpu::cvt
