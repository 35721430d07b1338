// SPDX-License-Identifier: Apache-2.0
#include "converter/quant/qdq_load.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "converter/codegen/quant_params.h"
#include "converter/ops/op_unit.h"

namespace openbpu::cvt {

namespace {

bool fail(std::string* error, const std::string& m) {
  *error = "calibration_type load: " + m;
  return false;
}

std::string what(const Node& n) { return n.op_type + " '" + n.name + "'"; }

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The constant a node input holds, through Identity nodes (PyTorch's export
// shares one zero point through them); nullptr if none.
const Value* constant_input(const Graph& g, const Node& n, size_t k) {
  if (n.inputs.size() <= k || n.inputs[k].empty()) return nullptr;
  std::string v = n.inputs[k];
  for (const Node* p = g.producer(v); p != nullptr && p->op_type == "Identity" && !p->inputs.empty();
       p = g.producer(v))
    v = p->inputs[0];
  const Value* c = g.value(v);
  return c != nullptr && c->is_constant() ? c : nullptr;
}

// Scale, zero point, quantized type and axis of a QuantizeLinear or
// DequantizeLinear node (no zero point: 0 of uint8, or of the
// DequantizeLinear's input type, as ONNX says).
struct QuantSpec {
  std::vector<double> scale;
  std::vector<int64_t> zp;
  int32_t type = kUint8;
  int64_t axis = 1;
};

bool read_spec(const Graph& g, const Node& n, QuantSpec* p, std::string* error) {
  const Value* s = constant_input(g, n, 1);
  if (s == nullptr) return fail(error, what(n) + ": the scale is not a constant");
  p->scale = s->to_doubles();
  if (p->scale.empty()) return fail(error, what(n) + ": the scale is empty");
  for (double x : p->scale)
    if (!(x > 0) || !std::isfinite(x)) return fail(error, what(n) + ": scale " + num(x) + " is not a positive number");
  const bool has_zp = n.inputs.size() > 2 && !n.inputs[2].empty();
  const Value* z = constant_input(g, n, 2);
  if (has_zp && z == nullptr) return fail(error, what(n) + ": the zero point is not a constant");
  // Without a zero point: QuantizeLinear writes uint8, DequantizeLinear
  // reads the type of its input.
  const Value* x = n.op_type == "DequantizeLinear" && !n.inputs.empty() ? g.value(n.inputs[0]) : nullptr;
  p->type = z != nullptr ? z->elem_type : x != nullptr ? x->elem_type : kUint8;
  p->zp = z != nullptr ? z->to_ints() : std::vector<int64_t>(p->scale.size(), 0);
  if (p->zp.size() != p->scale.size())
    return fail(error, what(n) + ": " + std::to_string(p->zp.size()) + " zero points for " +
                           std::to_string(p->scale.size()) + " scales");
  p->axis = n.attrs.get_int("axis", 1);
  return true;
}

// The BPU's int8 is symmetric: zero point 0 (int8; int32 for biases) or
// 128 (uint8, the same grid shifted).
bool check_symmetric(const Node& n, const QuantSpec& p, bool allow_int32, std::string* error) {
  const int64_t want = p.type == kInt8 || (allow_int32 && p.type == kInt32) ? 0 : p.type == kUint8 ? 128 : -1;
  if (want < 0) return fail(error, what(n) + ": quantized type " + elem_name(p.type) + " is not int8 or uint8");
  for (int64_t z : p.zp)
    if (z != want)
      return fail(error, what(n) + ": zero point " + std::to_string(z) + " of " + elem_name(p.type) +
                             " (asymmetric quantization); the BPU quantizes symmetrically, zero point 0 for int8, " +
                             "128 for uint8");
  return true;
}

// The quantization axis counted from the front (ONNX: negative from the back).
int64_t axis_of(const Value& v, const QuantSpec& p) {
  return p.axis < 0 ? p.axis + static_cast<int64_t>(v.shape.size()) : p.axis;
}

// Index along the quantization axis of each element (0 per tensor).
std::vector<size_t> channel_of(const Value& v, const QuantSpec& p) {
  std::vector<size_t> c(static_cast<size_t>(std::max<int64_t>(v.elements(), 0)), 0);
  if (p.scale.size() == 1) return c;
  const int64_t rank = static_cast<int64_t>(v.shape.size());
  const int64_t axis = axis_of(v, p);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= v.shape[static_cast<size_t>(d)];
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = static_cast<size_t>((static_cast<int64_t>(i) / inner) % v.shape[static_cast<size_t>(axis)]);
  return c;
}

bool axis_fits(const Node& n, const Value& v, const QuantSpec& p, std::string* error) {
  if (p.scale.size() == 1) return true;
  const int64_t rank = static_cast<int64_t>(v.shape.size());
  const int64_t axis = axis_of(v, p);
  if (axis < 0 || axis >= rank || v.shape[static_cast<size_t>(axis)] != static_cast<int64_t>(p.scale.size()))
    return fail(error, what(n) + ": " + std::to_string(p.scale.size()) + " scales do not match axis " +
                           std::to_string(p.axis) + " of '" + v.name + "' (" + format_shape(v.shape) + ")");
  return true;
}

// The integers of a constant: QuantizeLinear of float values (round half to
// even, saturated, as ONNX), or the stored ones of a DequantizeLinear input.
std::vector<int64_t> quantized(const Value& v, const QuantSpec& p, bool quantize) {
  if (!quantize) return v.to_ints();
  const std::vector<double> x = v.to_doubles();
  const std::vector<size_t> c = channel_of(v, p);
  const double lo = p.type == kInt8 ? -128 : 0, hi = p.type == kInt8 ? 127 : 255;
  std::vector<int64_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float r = std::nearbyint(static_cast<float>(x[i]) / static_cast<float>(p.scale[c[i]]));
    q[i] = static_cast<int64_t>(std::clamp(static_cast<double>(r) + static_cast<double>(p.zp[c[i]]), lo, hi));
  }
  return q;
}

// Whether our weight rule (per output channel max |w| / 127) gives these
// scales again: every output channel's largest |q - zp| is 127.
bool fits_our_rule(const Value& v, const QuantSpec& p, const std::vector<int64_t>& q, const std::vector<size_t>& c) {
  if (v.shape.size() < 2 || (p.scale.size() > 1 && p.axis != 0)) return false;
  const size_t channels = static_cast<size_t>(v.shape[0]);
  std::vector<int64_t> mx(channels, 0);
  const size_t per = q.size() / std::max<size_t>(channels, 1);
  for (size_t i = 0; i < q.size(); ++i) mx[i / per] = std::max(mx[i / per], std::abs(q[i] - p.zp[c[i]]));
  return std::all_of(mx.begin(), mx.end(), [](int64_t m) { return m == 127; });
}

// A constant's Q/DQ: its dequantized float values as a new constant, which
// the readers of `dq_out` read from now on.
bool dequantize_constant(Graph* g, const Node& n, const Value& v, const QuantSpec& p, bool quantize,
                         const std::vector<std::string>& dq_outs, QdqModel* qdq, std::string* error) {
  if (!axis_fits(n, v, p, error)) return false;
  const std::vector<int64_t> q = quantized(v, p, quantize);
  const std::vector<size_t> c = channel_of(v, p);
  std::vector<float> w(q.size());
  for (size_t i = 0; i < q.size(); ++i)
    w[i] = static_cast<float>(static_cast<double>(q[i] - p.zp[c[i]]) * static_cast<float>(p.scale[c[i]]));
  std::vector<uint8_t> bytes(w.size() * sizeof(float));
  std::memcpy(bytes.data(), w.data(), bytes.size());
  const std::string name = g->add_constant(v.name + "_dequantized", kFloat, v.shape, std::move(bytes));
  for (const auto& o : dq_outs) g->replace_uses(o, name);
  if (p.type == kInt32) return true;  // a bias
  ++qdq->weights;
  if (fits_our_rule(v, p, q, c))
    ++qdq->weights_kept;
  else
    qdq->notes.push_back("weight '" + v.name + "' (" + what(n) + "): its scales are not max|w| / 127 per output " +
                         "channel; dequantized and quantized again with that rule");
  return true;
}

// The DequantizeLinear readers of a QuantizeLinear, each with its scale and
// zero point equal to the QuantizeLinear's.
bool pair_readers(const Graph& g, const Node& q, const QuantSpec& p, std::vector<size_t>* dqs, std::string* error) {
  const std::string& y = q.outputs[0];
  *dqs = g.consumers(y);
  if (dqs->empty() || g.is_graph_output(y))
    return fail(error, what(q) + ": its output '" + y + "' is not read by a DequantizeLinear (a QuantizeLinear " +
                           "without its DequantizeLinear)");
  for (size_t d : *dqs) {
    const Node& dq = g.nodes[d];
    QuantSpec dp;
    if (dq.op_type != "DequantizeLinear" || dq.inputs[0] != y || dq.outputs.empty())
      return fail(error, what(q) + ": its output '" + y + "' is read by " + what(dq) + ", not by a DequantizeLinear");
    if (!read_spec(g, dq, &dp, error)) return false;
    if (dp.scale != p.scale || dp.zp != p.zp || dp.type != p.type)
      return fail(error, what(dq) + ": its scale or zero point differ from those of " + what(q));
  }
  return true;
}

// Model output y becomes a copy of x (an Identity node, which the float
// passes keep between two model outputs) where x cannot take y's name.
void keep_output(Graph* g, const std::string& x, const std::string& y) {
  Node id;
  id.name = y + "_output";
  id.op_type = "Identity";
  id.inputs = {x};
  id.outputs = {y};
  g->nodes.push_back(std::move(id));
}

// An activation pair: the threshold of the value it sits on, whose readers
// read it directly again. A model output keeps its name: the value's
// producer writes it, or, when the value is a model input or output itself
// (or already renamed for another output), an Identity copies it.
bool strip_activation(Graph* g, const Node& q, const QuantSpec& p, const std::vector<size_t>& dqs, QdqModel* qdq,
                      std::string* error) {
  if (p.scale.size() != 1)
    return fail(error, what(q) + ": per-axis quantization of activation '" + q.inputs[0] + "' (" +
                           std::to_string(p.scale.size()) + " scales) is not supported; the BPU has one scale per " +
                           "activation");
  std::string x = q.inputs[0];
  std::vector<std::string> outs;
  for (size_t d : dqs) outs.push_back(g->nodes[d].outputs[0]);
  for (const auto& y : outs) {
    if (!g->is_graph_output(y)) {
      g->replace_uses(y, x);
    } else if (g->producer(x) != nullptr && x == q.inputs[0] && !g->is_graph_output(x)) {
      g->rename_value(x, y);
      x = y;
    } else {
      keep_output(g, x, y);
    }
  }
  qdq->thresholds[x] = int8_threshold(p.scale[0]);
  ++qdq->pairs;
  return true;
}

bool strip_quantize(Graph* g, size_t i, QdqModel* qdq, std::set<size_t>* drop, std::string* error) {
  const Node q = g->nodes[i];
  QuantSpec p;
  std::vector<size_t> dqs;
  if (q.inputs.empty() || q.outputs.empty() || !read_spec(*g, q, &p, error) ||
      !check_symmetric(q, p, false, error) || !pair_readers(*g, q, p, &dqs, error))
    return false;
  drop->insert(i);
  drop->insert(dqs.begin(), dqs.end());
  const Value* x = g->value(q.inputs[0]);
  if (x != nullptr && x->is_constant()) {
    std::vector<std::string> outs;
    for (size_t d : dqs) outs.push_back(g->nodes[d].outputs[0]);
    return dequantize_constant(g, q, *x, p, true, outs, qdq, error);
  }
  return strip_activation(g, q, p, dqs, qdq, error);
}

bool strip_dequantize(Graph* g, size_t i, QdqModel* qdq, std::string* error) {
  const Node dq = g->nodes[i];
  QuantSpec p;
  if (dq.inputs.empty() || dq.outputs.empty() || !read_spec(*g, dq, &p, error)) return false;
  const Value* x = g->value(dq.inputs[0]);
  if (x == nullptr || !x->is_constant())
    return fail(error, what(dq) + ": it reads '" + dq.inputs[0] + "', which is neither the output of a " +
                           "QuantizeLinear nor a constant");
  return check_symmetric(dq, p, true, error) && dequantize_constant(g, dq, *x, p, false, {dq.outputs[0]}, qdq, error);
}

void drop_nodes(Graph* g, const std::set<size_t>& indices) {
  std::vector<Node> kept;
  for (size_t i = 0; i < g->nodes.size(); ++i)
    if (!indices.count(i)) kept.push_back(std::move(g->nodes[i]));
  g->nodes = std::move(kept);
}

bool is_op(const Node& n, const char* type) { return n.domain.empty() && n.op_type == type; }

// Operators whose output takes its input's scale on the BPU (data movement,
// max pooling, nearest resize), the Relu / constant Clip activations (they
// commute with the clipping: relu(clip(x, -T, T)) = clip(relu(x), 0, T), so
// the unfused pre-activation value of optimize_level O0 takes its output's
// threshold) and the preprocess of an input (its output is the float input):
// a threshold passes through them both ways. Averages stay within their
// input's range: it passes forward (PyTorch's quantized average pooling
// keeps its input's scale too).
bool passes_threshold(const Node& n, bool forward) {
  if (n.domain == "openbpu" && n.op_type == "Preprocess") return true;
  if (forward && n.domain.empty() && (n.op_type == "AveragePool" || n.op_type == "GlobalAveragePool")) return true;
  const OpUnit* u = find_op_unit(n);
  return u != nullptr && (u->output_scale == OutputScale::kInput || u->output_scale == OutputScale::kInputIfNearest ||
                          u->fusion == Fusion::kActivation);
}

// One sweep of the derivation (forward first, then backward); true if
// anything was added.
bool derive_once(const Graph& g, std::map<std::string, double>* thr, std::vector<std::string>* derived) {
  bool added = false;
  for (bool forward : {true, false})
    for (const Node& n : g.nodes) {
      if (n.inputs.empty() || n.outputs.empty() || !passes_threshold(n, forward)) continue;
      const std::string& from = forward ? n.inputs[0] : n.outputs[0];
      const std::string& to = forward ? n.outputs[0] : n.inputs[0];
      const Value* tv = g.value(to);
      if (!thr->count(from) || thr->count(to) || tv == nullptr || tv->is_constant()) continue;
      (*thr)[to] = thr->at(from);
      derived->push_back(to + " <- " + from + " (" + what(n) + ")");
      added = true;
    }
  return added;
}

}  // namespace

bool strip_qdq(Graph* g, QdqModel* qdq, std::string* error) {
  std::set<size_t> drop;
  for (size_t i = 0; i < g->nodes.size(); ++i)
    if (is_op(g->nodes[i], "QuantizeLinear") && !strip_quantize(g, i, qdq, &drop, error)) return false;
  drop_nodes(g, drop);
  drop.clear();
  for (size_t i = 0; i < g->nodes.size(); ++i)
    if (is_op(g->nodes[i], "DequantizeLinear")) {
      if (!strip_dequantize(g, i, qdq, error)) return false;
      drop.insert(i);
    }
  drop_nodes(g, drop);
  g->remove_dead();
  return true;
}

bool loaded_thresholds(const Graph& g, const Placement& pl, const CompileOptions& co, const QdqModel& qdq,
                       std::map<std::string, double>* thresholds, std::vector<std::string>* derived,
                       std::string* error) {
  std::set<std::string> need;
  if (!calibrated_values(g, pl, co, &need, error)) return false;
  thresholds->clear();
  for (const auto& [v, t] : qdq.thresholds)
    if (g.value(v) != nullptr) (*thresholds)[v] = t;
  while (derive_once(g, thresholds, derived)) {
  }
  std::vector<std::string> missing;
  for (const auto& v : need)
    if (!thresholds->count(v) && g.value(v) != nullptr && !g.value(v)->is_constant()) missing.push_back(v);
  if (missing.empty()) return true;
  std::string list;
  for (size_t k = 0; k < missing.size() && k < 5; ++k) {
    const Node* p = g.producer(missing[k]);
    list += (k ? ", '" : "'") + missing[k] + "'" + (p ? " (output of " + what(*p) + ")" : std::string(" (input)"));
  }
  if (missing.size() > 5) list += " and " + std::to_string(missing.size() - 5) + " more";
  return fail(error, "no threshold for " + list + ": the model has no QuantizeLinear/DequantizeLinear pair on " +
                         (missing.size() > 1 ? "them" : "it") + " and none comes from a neighbour (through data movement, " +
                         "Relu/Clip, average pools); add a fake quantization there, or use another calibration_type");
}

}  // namespace openbpu::cvt
