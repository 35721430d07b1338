// SPDX-License-Identifier: Apache-2.0
#include "converter/codegen/quant_params.h"

#include <algorithm>

#include "bpu_sim/isa/numerics.h"
#include "converter/ops/op_unit.h"

namespace openbpu::cvt {

namespace {

class Scales {
 public:
  Scales(const std::map<std::string, double>& thresholds, const QuantOptions& o, std::set<std::string>* asked)
      : thr_(thresholds), opt_(o), asked_(asked) {}
  bool wide(const std::string& v) const {
    return !opt_.int8_values.count(v) && (opt_.all_int16 || opt_.int16_values.count(v) != 0);
  }
  isa::DType dtype(const std::string& v) const { return wide(v) ? isa::DType::kInt16 : isa::DType::kInt8; }
  QParams calibrated(const std::string& v) const {
    if (asked_ != nullptr) asked_->insert(v);
    return QParams{dtype(v), static_cast<float>(value_scale(thr_, v, wide(v))), {}};
  }

 private:
  const std::map<std::string, double>& thr_;
  const QuantOptions& opt_;
  std::set<std::string>* asked_;
};

// The rule of the op's unit for one output.
QParams output_params(const Graph& g, const Op& op, const std::string& o, const Scales& s,
                      const std::map<std::string, QParams>& q) {
  const Node& n = g.nodes[op.nodes[0]];
  switch (op.unit->output_scale) {
    case OutputScale::kIndex: return QParams{isa::DType::kInt32, 1.0f, {}};
    case OutputScale::kInputIfNearest:
      if (n.attrs.get_string("mode", "nearest") != "nearest") break;
      [[fallthrough]];
    case OutputScale::kInput:
      if (!op.inputs.empty()) return q.at(op.inputs[0]);
      break;
    case OutputScale::kCalibrated: break;
  }
  return s.calibrated(o);
}

}  // namespace

double value_scale(const std::map<std::string, double>& thresholds, const std::string& v, bool int16) {
  auto it = thresholds.find(v);
  const double t = it != thresholds.end() ? it->second : 1.0;
  return std::max(t, 1e-8) / static_cast<double>(isa::dtype_range(int16 ? isa::DType::kInt16 : isa::DType::kInt8).hi);
}

double int8_threshold(double scale) { return scale * static_cast<double>(isa::dtype_range(isa::DType::kInt8).hi); }

bool int32_tail_applies(const Graph& g, const Placement& pl, const Op& op, const std::string& output) {
  if (op.unit->int32_tail == nullptr || !op.residual.empty()) return false;
  if (op.act_min_node >= 0 && g.nodes[static_cast<size_t>(op.act_min_node)].op_type != "Relu") return false;
  for (size_t c : g.consumers(output))
    if (pl.nodes[c].subgraph >= 0) return false;
  return true;
}

QParams int32_tail_params(const Graph& g, const Op& op, float input_scale) {
  QParams p{isa::DType::kInt32, 1.0f, {}};
  for (float s : op.unit->int32_tail(g, g.nodes[op.nodes[0]], input_scale)) p.channel_scales.push_back(input_scale * s);
  return p;
}

std::map<std::string, QParams> assign_qparams(const Graph& g, const Placement& pl,
                                              const std::vector<SubgraphPlan>& plans,
                                              const std::map<std::string, double>& thresholds,
                                              const QuantOptions& options, std::set<std::string>* calibrated) {
  const Scales scales(thresholds, options, calibrated);
  std::map<std::string, QParams> q;
  for (const SubgraphPlan& plan : plans)
    for (const Op& op : plan.ops) {
      for (const auto& in : op.inputs)
        if (!q.count(in)) q[in] = scales.calibrated(in);
      for (const auto& o : op.outputs) {
        if (o.empty()) continue;
        q[o] = options.int32_tail && int32_tail_applies(g, pl, op, o)
                   ? int32_tail_params(g, op, q[op.inputs[0]].scale)
                   : output_params(g, op, o, scales, q);
      }
    }
  return q;
}

}  // namespace openbpu::cvt
