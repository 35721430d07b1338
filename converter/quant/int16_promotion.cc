// SPDX-License-Identifier: Apache-2.0
#include "converter/quant/int16_promotion.h"

#include <algorithm>
#include <map>
#include <set>

#include "bpu_sim/timing.h"
#include "converter/report/report.h"
#include "converter/report/similarity.h"

namespace openbpu::cvt {

namespace {

struct Candidate {
  std::string value;
  double rank = 0;  // measured gain, or local error
};

isa::DType traced_dtype(const CompiledModel& cm, const std::string& value) {
  for (const LayerTrace& t : cm.traces)
    if (t.value == value) return t.q.dtype;
  return isa::DType::kInt8;
}

// int8 activations the BPU computes that the user did not pin to int8.
std::vector<std::string> int8_activations(const Graph& g, const CompiledModel& cm, const CompileOptions& co) {
  const std::set<std::string> inputs(g.inputs.begin(), g.inputs.end());
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const LayerTrace& t : cm.traces) {
    const Value* v = g.value(t.value);
    if (t.q.dtype != isa::DType::kInt8 || v == nullptr || v->is_constant() || inputs.count(t.value) ||
        co.int8_values.count(t.value) || !seen.insert(t.value).second)
      continue;
    out.push_back(t.value);
  }
  return out;
}

// Compiles and scores a set of promotions. A promoted value (one in
// int16_values that `base` did not have) takes its int16 threshold
// (method_search.h int16_method), not the clipping threshold the int8
// method chose for it.
class Evaluator {
 public:
  Evaluator(const Graph& g, const Placement& pl, const std::map<std::string, double>& thr,
            const std::map<std::string, double>& int16_thr, const CompileOptions& base, const OutputScorer& s)
      : g_(g), pl_(pl), thr_(thr), int16_thr_(int16_thr), base_int16_(base.int16_values), scorer_(s) {}

  std::map<std::string, double> thresholds(const CompileOptions& co) const {
    std::map<std::string, double> t = thr_;
    for (const auto& v : co.int16_values) {
      auto it = int16_thr_.find(v);
      if (it != int16_thr_.end() && t.count(v) && !base_int16_.count(v)) t[v] = it->second;
    }
    return t;
  }
  bool build(const CompileOptions& co, CompiledModel* cm, std::string* error) const {
    return compile(g_, pl_, thresholds(co), co, cm, error);
  }
  bool score(const CompiledModel& cm, double* score, std::string* error) const {
    return scorer_.score(cm, score, error);
  }

 private:
  const Graph& g_;
  const Placement& pl_;
  const std::map<std::string, double> thr_;
  const std::map<std::string, double>& int16_thr_;
  const std::set<std::string> base_int16_;
  const OutputScorer& scorer_;
};

// Each candidate promoted alone: its measured gain (values whose promotion
// does not compile or does not take effect are dropped).
bool measured_ranking(const Evaluator& ev, const CompileOptions& co, const std::vector<std::string>& values,
                      double base, const std::function<void(const std::string&)>& log, std::vector<Candidate>* out,
                      int* evaluated, std::string* error) {
  for (const auto& v : values) {
    CompileOptions one = co;
    one.int16_values.insert(v);
    CompiledModel cm;
    double score = 0;
    std::string why;
    if (!ev.build(one, &cm, &why)) {
      log("int16 promotion: " + v + " cannot be int16 (" + why + ")");
      continue;
    }
    if (traced_dtype(cm, v) != isa::DType::kInt16) continue;
    if (!ev.score(cm, &score, error)) return false;
    ++*evaluated;
    out->push_back({v, score - base});
  }
  return true;
}

// Local error on the first sample: the drop of the cosine to float across
// the node producing each value (a debug build keeps every value).
bool local_error_ranking(const Graph& g, const Placement& pl, const std::map<std::string, double>& thr,
                         const CompileOptions& co, const Sample& sample, const std::vector<std::string>& values,
                         std::vector<Candidate>* out, std::string* error) {
  CompileOptions dbg = co;
  dbg.no_scratch_reuse = true;
  CompiledModel cm;
  Similarity sim;
  if (!compile(g, pl, thr, dbg, &cm, error) || !compute_similarity(g, cm, sample, &sim, error)) return false;
  const std::map<std::string, double> cos(sim.nodes.begin(), sim.nodes.end());
  auto cosine_of = [&](const std::string& v) {
    auto it = cos.find(v);
    return it == cos.end() ? 1.0 : it->second;
  };
  for (const auto& v : values) {
    const Node* producer = g.producer(v);
    double in = 1.0;
    if (producer != nullptr)
      for (const auto& i : producer->inputs)
        if (!i.empty() && g.value(i) != nullptr && !g.value(i)->is_constant()) in = std::min(in, cosine_of(i));
    out->push_back({v, std::max(0.0, in - cosine_of(v))});
  }
  return true;
}

}  // namespace

double estimated_bpu_us(const CompiledModel& cm, const isa::MarchInfo& march) {
  uint64_t cycles = 0;
  for (const auto& sg : cm.subgraphs)
    for (const auto& ins : sg.program) cycles += sim::estimate_cost(ins, march).cycles;
  return sim::cycles_to_us(cycles, march);
}

namespace {

CompileOptions with_prefix(const CompileOptions& co, const std::vector<Candidate>& ranked, size_t k) {
  CompileOptions out = co;
  for (size_t i = 0; i < k; ++i) out.int16_values.insert(ranked[i].value);
  return out;
}

// The promotions of the first k ranked values, each with its rank figure
// and the estimated time it adds in that order (compilation only).
bool record_steps(const Evaluator& ev, const CompileOptions& co, const std::vector<Candidate>& ranked, size_t k,
                  PromotionResult* r, std::string* error) {
  double us = r->us_before;
  for (size_t i = 1; i <= k; ++i) {
    CompiledModel cm;
    if (!ev.build(with_prefix(co, ranked, i), &cm, error)) return false;
    const double now = estimated_bpu_us(cm, *co.march);
    r->steps.push_back({ranked[i - 1].value, ranked[i - 1].rank, now - us});
    us = now;
  }
  return true;
}

// The budget's samples (kBudgetScoringSamples) and the index of the first.
std::vector<Sample> budget_samples(const std::vector<Sample>& samples, size_t* first) {
  *first = samples.size() >= kScoringSamples + kMinHeldOutSamples ? kScoringSamples : 0;
  const size_t end = std::min(samples.size(), *first + kBudgetScoringSamples);
  return {samples.begin() + static_cast<std::ptrdiff_t>(*first), samples.begin() + static_cast<std::ptrdiff_t>(end)};
}

}  // namespace

bool promote_to_int16(const Graph& g, const Placement& pl, const std::vector<Sample>& samples, double min_cosine,
                      bool can_promote, const std::map<std::string, double>& int16_thresholds,
                      const std::function<void(const std::string&)>& log, CompileOptions* co,
                      CalibrationChoice* choice, PromotionResult* r, std::string* error) {
  OutputScorer scorer;
  const std::vector<Sample> held = budget_samples(samples, &r->first_sample);
  if (!scorer.init(g, held, kBudgetScoringSamples, error)) return false;
  r->samples = scorer.samples();
  if (!scorer.score(choice->model, &choice->score, error)) return false;
  r->score_before = r->score_after = choice->score;
  r->us_before = r->us_after = estimated_bpu_us(choice->model, *co->march);
  r->met = choice->score >= min_cosine;
  if (r->met || !can_promote) return true;

  const Evaluator ev(g, pl, choice->thresholds, int16_thresholds, *co, scorer);
  const std::vector<std::string> values = int8_activations(g, choice->model, *co);
  const double cost = model_macs(choice->model) * static_cast<double>(r->samples);
  std::vector<Candidate> ranked;
  r->measured_ranking = cost * static_cast<double>(values.size()) <= kMeasuredRankingBudgetMacs;
  if (r->measured_ranking ? !measured_ranking(ev, *co, values, choice->score, log, &ranked, &r->evaluated, error)
                          : !local_error_ranking(g, pl, choice->thresholds, *co, samples.front(), values, &ranked,
                                                 error))
    return false;
  r->candidates = static_cast<int>(ranked.size());
  std::stable_sort(ranked.begin(), ranked.end(), [](const Candidate& a, const Candidate& b) { return a.rank > b.rank; });

  // Smallest prefix of the ranking that meets the budget (bisection; every
  // prefix is compiled and scored). The whole ranking first: when even that
  // misses, the gate fails without the search. `best` holds the shortest
  // prefix found so far that meets it.
  CompiledModel best;
  double best_score = 0;
  auto meets = [&](size_t k, bool* ok) {
    CompiledModel cm;
    double score = 0;
    if (!ev.build(with_prefix(*co, ranked, k), &cm, error) || !ev.score(cm, &score, error)) return false;
    ++r->evaluated;
    *ok = score >= min_cosine;
    if (*ok || k == ranked.size()) best = std::move(cm), best_score = score;
    return true;
  };
  bool ok = false;
  if (!meets(ranked.size(), &ok)) return false;
  if (!ok) {
    r->score_after = best_score;
    log("int16 promotion: promoting all " + std::to_string(ranked.size()) + " candidates reaches output cosine " +
        fixed(r->score_after, 6) + " only");
    return true;
  }
  size_t lo = 0, hi = ranked.size();
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (!meets(mid, &ok)) return false;
    (ok ? hi : lo) = mid;
  }
  if (!record_steps(ev, *co, ranked, hi, r, error)) return false;
  *co = with_prefix(*co, ranked, hi);
  choice->thresholds = ev.thresholds(*co);
  choice->model = std::move(best);
  choice->score = r->score_after = best_score;
  r->us_after = estimated_bpu_us(choice->model, *co->march);
  r->met = true;
  return true;
}

}  // namespace openbpu::cvt
