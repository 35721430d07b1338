// SPDX-License-Identifier: Apache-2.0
// Einsum: explicit ("ij,jk->ik") and implicit ("ij,jk": output = labels
// appearing once, sorted) equations, ellipsis ("...") with broadcasting,
// repeated labels within an operand (diagonals). Evaluated directly as a sum
// over every label combination - simple and exact (double accumulation for
// floats, int64 for integers), fine for the small contractions exported
// models use; large matmul-like einsums should be rewritten to MatMul by
// the converter.
#include <algorithm>
#include <cctype>
#include <map>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"

namespace openbpu::rt {

namespace {

constexpr int kEllipsisBase = 52;  // label ids: a-z 0..25, A-Z 26..51, ellipsis dims 52..

int letter_id(char c) {
  return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : c - 'A' + 26;
}

class EinsumKernel final : public CpuKernel {
 public:
  int32_t type = kF32;
  Dims sizes;                    // per used label (dense ids 0..L-1)
  std::vector<Dims> in_strides;  // per input, element stride per label
  Dims out_strides;              // per label (0 for summed labels)
  int64_t out_count = 0;
  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    std::vector<InBuf> xs;
    xs.reserve(in.size());
    for (const auto& t : in) xs.emplace_back(t, type);
    OutBuf y(out[0], type);
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      std::vector<Acc> acc(static_cast<size_t>(out_count), Acc(0));
      const size_t L = sizes.size();
      int64_t total = 1;
      for (int64_t s : sizes) total *= s;
      std::vector<int64_t> idx(L, 0), off(xs.size(), 0);
      int64_t oo = 0;
      for (int64_t e = 0; e < total; ++e) {
        Acc p = Acc(1);
        for (size_t i = 0; i < xs.size(); ++i) p *= static_cast<Acc>(xs[i].as<T>()[off[i]]);
        acc[oo] += p;
        for (size_t l = L; l-- > 0;) {
          for (size_t i = 0; i < xs.size(); ++i) off[i] += in_strides[i][l];
          oo += out_strides[l];
          if (++idx[l] < sizes[l]) break;
          for (size_t i = 0; i < xs.size(); ++i) off[i] -= in_strides[i][l] * sizes[l];
          oo -= out_strides[l] * sizes[l];
          idx[l] = 0;
        }
      }
      T* yp = y.as<T>();
      for (int64_t i = 0; i < out_count; ++i) yp[i] = static_cast<T>(acc[i]);
    });
    y.commit();
    return Status::Ok();
  }
};

// Parses one operand's subscript into label ids; `ell` = its ellipsis rank.
bool parse_term(const std::string& s, int64_t rank, std::vector<int>* labels, int* ell_rank,
                int max_ell) {
  labels->clear();
  const size_t dots = s.find("...");
  int letters = 0;
  for (char c : s)
    if (std::isalpha(static_cast<unsigned char>(c))) ++letters;
  *ell_rank = dots == std::string::npos ? 0 : static_cast<int>(rank) - letters;
  if (*ell_rank < 0 || (dots == std::string::npos && letters != rank)) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "...") == 0) {
      // Ellipsis dims are right-aligned across operands.
      for (int k = 0; k < *ell_rank; ++k)
        labels->push_back(kEllipsisBase + max_ell - *ell_rank + k);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
      labels->push_back(letter_id(s[i]));
    } else if (s[i] != ' ') {
      return false;
    }
  }
  return true;
}

}  // namespace

Status create_einsum(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  if (in.empty() || !all_present(in) || out.size() != 1 || !out[0])
    return op_error(def, "needs inputs and 1 output");
  auto k = std::make_unique<EinsumKernel>();
  k->type = compute_type(in[0]->data_type);
  if (!is_numeric_type(k->type) || compute_type(out[0]->data_type) != k->type)
    return op_error(def, "numeric tensors of one type expected");
  for (const TensorDesc* t : in)
    if (compute_type(t->data_type) != k->type)
      return op_error(def, "inputs have different data types");
  std::string eq;
  for (char c : def.attrs.get_string("equation", ""))
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t p = 0;;) {
    const size_t q = lhs.find(',', p);
    terms.push_back(lhs.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  if (terms.size() != in.size())
    return op_error(def, "equation has " + std::to_string(terms.size()) + " operands");
  // Ellipsis rank: the largest over the operands.
  int max_ell = 0;
  std::vector<Dims> dims;
  for (size_t i = 0; i < in.size(); ++i) {
    dims.push_back(dims_of(*in[i]));
    std::vector<int> l;
    int e;
    if (!parse_term(terms[i], static_cast<int64_t>(dims[i].size()), &l, &e, 0))
      return op_error(def, "bad subscript '" + terms[i] + "'");
    max_ell = std::max(max_ell, e);
  }
  std::map<int, int64_t> size_of;
  std::map<int, int> count;
  std::vector<std::vector<int>> labels(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    int e;
    parse_term(terms[i], static_cast<int64_t>(dims[i].size()), &labels[i], &e, max_ell);
    for (size_t d = 0; d < labels[i].size(); ++d) {
      const int l = labels[i][d];
      const int64_t s = dims[i][d];
      auto it = size_of.find(l);
      if (it == size_of.end() || it->second == 1) {
        size_of[l] = s;
      } else if (s != it->second && !(l >= kEllipsisBase && s == 1)) {
        return op_error(def, "label sizes disagree");
      }
      ++count[l];
    }
  }
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    int e;
    const std::string rhs = eq.substr(arrow + 2);
    int letters = 0;
    for (char c : rhs)
      if (std::isalpha(static_cast<unsigned char>(c))) ++letters;
    const bool has_ell = rhs.find("...") != std::string::npos;
    if (!parse_term(rhs, letters + (has_ell ? max_ell : 0), &out_labels, &e, max_ell))
      return op_error(def, "bad output subscript '" + rhs + "'");
    for (int l : out_labels)
      if (!size_of.count(l)) return op_error(def, "output label not in the inputs");
  } else {
    for (int k2 = 0; k2 < max_ell; ++k2) out_labels.push_back(kEllipsisBase + k2);
    for (const auto& [l, c] : count)
      if (l < kEllipsisBase && c == 1) out_labels.push_back(l);
  }
  Dims od;
  for (int l : out_labels) od.push_back(size_of[l]);
  if (od != dims_of(*out[0])) return op_error(def, "output shape must be " + dims_str(od));
  // Dense label order: output labels first, then the summed ones.
  std::vector<int> order = out_labels;
  for (const auto& [l, s] : size_of)
    if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  std::map<int, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i)
    pos[order[i]] = i, k->sizes.push_back(size_of[order[i]]);
  for (size_t i = 0; i < in.size(); ++i) {
    Dims s(order.size(), 0);
    const Dims es = elem_strides(dims[i]);
    for (size_t d = 0; d < labels[i].size(); ++d)
      if (dims[i][d] != 1 || size_of[labels[i][d]] == 1) s[pos[labels[i][d]]] += es[d];
    k->in_strides.push_back(s);
  }
  k->out_strides.assign(order.size(), 0);
  const Dims os = elem_strides(od);
  for (size_t d = 0; d < out_labels.size(); ++d) k->out_strides[pos[out_labels[d]]] += os[d];
  k->out_count = count_of(od);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
