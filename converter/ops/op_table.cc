// SPDX-License-Identifier: Apache-2.0
// The one table of operator units, indexed by OpId, and what is derived from
// it: lookup by node, the consistency check, docs/supported_ops.md.
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "converter/ops/op_unit.h"

namespace openbpu::cvt {

namespace {

#define OPENBPU_CPU_UNIT(Name)                                                                                   \
  {.id = OpId::k##Name, .domain = "", .op_type = #Name, .place = nullptr, .table_type = #Name, .limits = "",     \
   .output_scale = OutputScale::kCalibrated, .int32_tail = nullptr, .fusion = Fusion::kNone, .passive = true, \
   .view = false, .emit = nullptr}

}  // namespace

// Operators that never run on the BPU but only move data: placement keeps
// the passive BPU operators next to them on the CPU at a model's head or tail.
const OpUnit kIdentityUnit = OPENBPU_CPU_UNIT(Identity);
const OpUnit kGatherUnit = OPENBPU_CPU_UNIT(Gather);
const OpUnit kCastUnit = OPENBPU_CPU_UNIT(Cast);
const OpUnit kLogSoftmaxUnit = OPENBPU_CPU_UNIT(LogSoftmax);
#undef OPENBPU_CPU_UNIT

namespace {

// In OpId order (checked by op_table_errors()).
const OpUnit* const kTable[] = {
    &kPreprocessUnit,
    &kConvUnit, &kConvTransposeUnit,
    &kMaxPoolUnit, &kAveragePoolUnit, &kGlobalAveragePoolUnit, &kGlobalMaxPoolUnit, &kReduceMeanUnit,
    &kReduceSumUnit,
    &kAddUnit, &kSubUnit, &kMulUnit, &kDivUnit, &kMaxUnit, &kMinUnit,
    &kReluUnit, &kClipUnit, &kLeakyReluUnit, &kPReluUnit, &kSigmoidUnit, &kTanhUnit, &kHardSigmoidUnit,
    &kHardSwishUnit, &kSwishUnit, &kGeluUnit, &kEluUnit, &kSeluUnit, &kSoftplusUnit, &kExpUnit, &kErfUnit,
    &kAbsUnit, &kNegUnit, &kReciprocalUnit, &kSqrtUnit,
    &kResizeUnit, &kUpsampleUnit,
    &kConcatUnit, &kSplitUnit, &kSliceUnit, &kPadUnit,
    &kBatchNormalizationUnit,
    &kArgMaxUnit,
    &kMatMulUnit,
    &kSoftmaxUnit, &kLayerNormalizationUnit,
    &kReshapeUnit, &kFlattenUnit, &kSqueezeUnit, &kUnsqueezeUnit, &kTransposeUnit, &kDepthToSpaceUnit,
    &kSpaceToDepthUnit,
    &kIdentityUnit, &kGatherUnit, &kCastUnit, &kLogSoftmaxUnit,
};
static_assert(sizeof(kTable) / sizeof(kTable[0]) == static_cast<size_t>(OpId::kCount),
              "one unit per OpId in kTable");

}  // namespace

std::vector<std::string> op_table_errors() {
  std::vector<std::string> errors;
  for (size_t i = 0; i < sizeof(kTable) / sizeof(kTable[0]); ++i) {
    const OpUnit& u = *kTable[i];
    const std::string name = std::string(u.domain).empty() ? u.op_type : std::string(u.domain) + "::" + u.op_type;
    if (static_cast<size_t>(u.id) != i) errors.push_back(name + ": listed at position " + std::to_string(i) + " of the table, not at its OpId");
    if (u.place != nullptr && u.emit == nullptr) errors.push_back(name + ": has a placement rule but no emitter");
    if (u.place == nullptr && u.emit != nullptr) errors.push_back(name + ": has an emitter but no placement rule");
    if (u.lut != nullptr && u.emit == nullptr) errors.push_back(name + ": has a table function but no emitter");
    for (size_t j = 0; j < i; ++j)
      if (std::string(kTable[j]->domain) == u.domain && std::string(kTable[j]->op_type) == u.op_type)
        errors.push_back(name + ": listed twice");
  }
  return errors;
}

const std::vector<const OpUnit*>& op_units() {
  static const std::vector<const OpUnit*> units = [] {
    const std::vector<std::string> errors = op_table_errors();
    for (const auto& e : errors) std::fprintf(stderr, "openbpu: BPU operator table: %s\n", e.c_str());
    if (!errors.empty()) std::abort();
    return std::vector<const OpUnit*>(std::begin(kTable), std::end(kTable));
  }();
  return units;
}

const OpUnit& op_unit(OpId id) { return *op_units()[static_cast<size_t>(id)]; }

const OpUnit* find_op_unit(const Node& n) {
  for (const OpUnit* u : op_units())
    if (n.domain == u->domain && n.op_type == u->op_type) return u;
  return nullptr;
}

std::string supported_ops_markdown() {
  std::ostringstream s;
  s << "| operator | table name | limits |\n|---|---|---|\n";
  for (const OpUnit* u : op_units()) {
    if (u->place == nullptr) continue;
    s << "| " << (std::string(u->domain).empty() ? "" : std::string(u->domain) + "::") << u->op_type << " | "
      << u->table_type << " | " << u->limits << " |\n";
  }
  s << "\nLimits per march:\n\n| march | kernel | stride | dilation | channels | deconv kernel | "
       "Reshape family | Transpose family | MatMul of activations | int16 |\n"
       "|---|---|---|---|---|---|---|---|---|---|\n";
  int n = 0;
  const isa::MarchInfo* marches = isa::all_marches(&n);
  for (int i = 0; i < n; ++i) {
    const isa::OpLimits& l = marches[i].limits;
    const auto yn = [](bool b) { return b ? "BPU" : "CPU"; };
    s << "| " << marches[i].name << " | " << l.max_kernel << " | " << l.max_stride << " | " << l.max_dilation << " | "
      << l.max_channels << " | " << l.max_deconv_kernel << " | " << yn(l.reshape) << " | " << yn(l.transpose)
      << " | " << yn(l.matmul) << " | " << (marches[i].int16 ? "yes" : "no") << " |\n";
  }
  return s.str();
}

}  // namespace openbpu::cvt
