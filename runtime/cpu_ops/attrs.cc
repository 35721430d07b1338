// SPDX-License-Identifier: Apache-2.0
#include "runtime/cpu_ops/cpu_op.h"

namespace openbpu::rt {

const AttrValue* Attrs::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

int64_t Attrs::get_int(const std::string& name, int64_t def) const {
  const AttrValue* v = find(name);
  return (v && v->type == AttrValue::kInt) ? v->i : def;
}

float Attrs::get_float(const std::string& name, float def) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return def;
  if (v->type == AttrValue::kFloat) return v->f;
  if (v->type == AttrValue::kInt) return static_cast<float>(v->i);
  return def;
}

std::string Attrs::get_string(const std::string& name, const std::string& def) const {
  const AttrValue* v = find(name);
  return (v && v->type == AttrValue::kString) ? v->s : def;
}

std::vector<int64_t> Attrs::get_ints(const std::string& name) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return {};
  if (v->type == AttrValue::kInts) return v->ints;
  if (v->type == AttrValue::kInt) return {v->i};
  return {};
}

std::vector<float> Attrs::get_floats(const std::string& name) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return {};
  if (v->type == AttrValue::kFloats) return v->floats;
  if (v->type == AttrValue::kFloat) return {v->f};
  return {};
}

}  // namespace openbpu::rt
