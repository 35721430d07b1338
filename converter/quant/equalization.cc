// SPDX-License-Identifier: Apache-2.0
#include "converter/quant/equalization.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "converter/ir/executor.h"
#include "converter/passes/pass_util.h"

namespace openbpu::cvt {

namespace {

struct Pair {
  size_t a = 0, b = 0;
  std::string act;  // the value B reads (A's output, or the Relu's)
};

bool on_bpu(const Placement& pl, size_t i) { return i < pl.nodes.size() && pl.nodes[i].device == Device::kBpu; }

// A BPU Conv with constant 4-D float weights.
bool conv_with_weights(const Graph& g, const Placement& pl, size_t i) {
  const Node& n = g.nodes[i];
  if (n.op_type != "Conv" || !n.domain.empty() || !on_bpu(pl, i) || n.inputs.size() < 2) return false;
  const Value* w = g.value(n.inputs[1]);
  if (w == nullptr || !w->is_constant() || w->elem_type != kFloat || w->shape.size() != 4) return false;
  return n.inputs.size() < 3 || n.inputs[2].empty() || (g.value(n.inputs[2]) && g.value(n.inputs[2])->is_constant());
}

// The only reader of `value` (index), or -1.
int only_reader(const Graph& g, const std::string& value) {
  if (!single_use(g, value)) return -1;
  return static_cast<int>(g.consumers(value)[0]);
}

std::vector<Pair> find_pairs(const Graph& g, const Placement& pl) {
  std::vector<Pair> pairs;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!conv_with_weights(g, pl, i)) continue;
    Pair p{i, 0, g.nodes[i].outputs[0]};
    int k = only_reader(g, p.act);
    if (k >= 0 && g.nodes[static_cast<size_t>(k)].op_type == "Relu" && on_bpu(pl, static_cast<size_t>(k))) {
      p.act = g.nodes[static_cast<size_t>(k)].outputs[0];
      k = only_reader(g, p.act);
    }
    if (k < 0 || !conv_with_weights(g, pl, static_cast<size_t>(k))) continue;
    p.b = static_cast<size_t>(k);
    const Node& b = g.nodes[p.b];
    const int64_t cout_a = g.value(g.nodes[i].inputs[1])->shape[0];
    const Value* wb = g.value(b.inputs[1]);
    if (b.inputs[0] != p.act || wb->shape[1] * b.attrs.get_int("group", 1) != cout_a) continue;
    pairs.push_back(p);
  }
  return pairs;
}

// Largest |x| per channel (axis 1) of each value over the samples.
bool channel_ranges(const Graph& g, const std::vector<std::map<std::string, Value>>& samples,
                    const std::set<std::string>& keep, std::map<std::string, std::vector<double>>* ranges,
                    std::string* error) {
  FloatExecutor exec;
  if (!exec.prepare(g, error)) return false;
  for (size_t s = 0; s < std::min(samples.size(), kEqualizationSamples); ++s) {
    std::map<std::string, Value> vals;
    if (!exec.run(samples[s], &vals, error, &keep)) return false;
    for (const auto& name : keep) {
      const Value& v = vals.at(name);
      const std::vector<double> x = v.to_doubles();
      const int64_t c = v.shape.size() > 1 ? v.shape[1] : 1;
      const int64_t inner = static_cast<int64_t>(x.size()) / std::max<int64_t>(1, c * v.shape[0]);
      auto& r = (*ranges)[name];
      r.resize(static_cast<size_t>(c), 0.0);
      for (size_t e = 0; e < x.size(); ++e) {
        const size_t ch = static_cast<size_t>((static_cast<int64_t>(e) / inner) % c);
        r[ch] = std::max(r[ch], std::fabs(x[e]));
      }
    }
  }
  return true;
}

void set_floats(Graph* g, Node* n, size_t input, const std::vector<int64_t>& shape, const std::vector<float>& v) {
  const std::string name = g->add_constant(n->name + "_equalized", kFloat, shape, float_bytes(v));
  if (n->inputs.size() <= input) n->inputs.resize(input + 1);
  n->inputs[input] = name;
}

// Scales t_c of the pair's channels (B's largest |weight| per input channel
// against the activation's range).
std::vector<double> pair_scales(const Graph& g, const Node& b, const std::vector<double>& rx) {
  const Value& wv = *g.value(b.inputs[1]);
  const std::vector<float> w = const_floats(g, b.inputs[1]);
  const int64_t cout = wv.shape[0], cin_g = wv.shape[1], taps = wv.shape[2] * wv.shape[3];
  const int64_t groups = b.attrs.get_int("group", 1), per_group = cout / groups;
  const double top = *std::max_element(rx.begin(), rx.end());
  std::vector<double> rw(rx.size(), 0.0), t(rx.size(), 1.0);
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t k = 0; k < taps; ++k) {
        const size_t c = static_cast<size_t>(o / per_group * cin_g + ci);
        rw[c] = std::max(rw[c], std::fabs(static_cast<double>(w[static_cast<size_t>((o * cin_g + ci) * taps + k)])));
      }
  for (size_t c = 0; c < rx.size(); ++c) {
    if (rx[c] <= 0 || rw[c] <= 0) continue;
    const double s = cin_g == 1 ? top / rx[c] : std::sqrt(rw[c] / rx[c]);
    t[c] = std::clamp(s, 1.0 / kMaxEqualizationScale, kMaxEqualizationScale);
  }
  return t;
}

void apply(Graph* g, const Pair& p, const std::vector<double>& t) {
  Node& a = g->nodes[p.a];
  const std::vector<int64_t> sa = g->value(a.inputs[1])->shape;
  std::vector<float> wa = const_floats(*g, a.inputs[1]);
  std::vector<float> ba = a.inputs.size() > 2 && !a.inputs[2].empty() ? const_floats(*g, a.inputs[2])
                                                                      : std::vector<float>(t.size(), 0.0f);
  const size_t per_a = wa.size() / t.size();
  for (size_t i = 0; i < wa.size(); ++i) wa[i] = static_cast<float>(wa[i] * t[i / per_a]);
  for (size_t c = 0; c < t.size(); ++c) ba[c] = static_cast<float>(ba[c] * t[c]);
  set_floats(g, &a, 1, sa, wa);
  set_floats(g, &a, 2, {static_cast<int64_t>(t.size())}, ba);
  Node& b = g->nodes[p.b];
  const std::vector<int64_t> sb = g->value(b.inputs[1])->shape;
  std::vector<float> wb = const_floats(*g, b.inputs[1]);
  const int64_t cin_g = sb[1], taps = sb[2] * sb[3], per_group = sb[0] / b.attrs.get_int("group", 1);
  for (size_t i = 0; i < wb.size(); ++i) {
    const int64_t o = static_cast<int64_t>(i) / (cin_g * taps), ci = static_cast<int64_t>(i) / taps % cin_g;
    wb[i] = static_cast<float>(wb[i] / t[static_cast<size_t>(o / per_group * cin_g + ci)]);
  }
  set_floats(g, &b, 1, sb, wb);
}

}  // namespace

bool equalize_cross_layer(Graph* g, const Placement& pl, const std::vector<std::map<std::string, Value>>& samples,
                          std::vector<EqualizedPair>* pairs, std::string* error) {
  const std::vector<Pair> found = find_pairs(*g, pl);
  if (found.empty()) return true;
  std::set<std::string> keep;
  for (const auto& p : found) keep.insert(p.act);
  std::map<std::string, std::vector<double>> ranges;
  if (!channel_ranges(*g, samples, keep, &ranges, error)) return false;
  for (const auto& p : found) {
    const std::vector<double> t = pair_scales(*g, g->nodes[p.b], ranges[p.act]);
    double m = 1;
    for (double s : t) m = std::max({m, s, 1.0 / s});
    if (m <= 1.0) continue;
    apply(g, p, t);
    pairs->push_back({g->nodes[p.a].name, g->nodes[p.b].name, m});
  }
  return true;
}

}  // namespace openbpu::cvt
