// SPDX-License-Identifier: Apache-2.0
// The float optimization pipeline and the helpers its passes share.
#include <algorithm>

#include "converter/passes/pass_util.h"
#include "converter/passes/passes.h"
#include "runtime/core/log.h"

namespace openbpu::cvt {

// `in` and `out` are taken by value: callers pass names of the node erased here.
bool bypass_node(Graph* g, size_t index, std::string in, std::string out) {
  if (!g->is_graph_output(out)) {
    g->nodes.erase(g->nodes.begin() + static_cast<std::ptrdiff_t>(index));
    g->replace_uses(out, in);
    return true;
  }
  // `out` is a model output and keeps its name: rename `in` to `out` when `in`
  // is an intermediate value that is not itself a model output.
  const int p = producer_index(*g, in);
  if (p < 0 || g->is_graph_output(in)) return false;
  g->nodes.erase(g->nodes.begin() + static_cast<std::ptrdiff_t>(index));
  for (auto& n : g->nodes) {
    for (auto& o : n.outputs)
      if (o == in) o = out;
    for (auto& i : n.inputs)
      if (i == in) i = out;
  }
  Value v = g->values[in];
  v.name = out;
  g->values.erase(in);
  g->values[out] = v;
  return true;
}

bool optimize(Graph* g, std::string* error) {
  struct Pass {
    const char* name;
    int (*fn)(Graph*, std::string*);
  };
  static const Pass kPasses[] = {
      {"remove_identity", remove_identity}, {"fold_batchnorm", fold_batchnorm},
      {"fold_conv_affine", fold_conv_affine}, {"gemm_to_conv", gemm_to_conv},
      {"split_heads", split_heads}, {"cleanup_reshapes", cleanup_reshapes}, {"fuse_activations", fuse_activations},
  };
  // Passes enable each other (e.g. BN folding after identity removal): run
  // the list until nothing changes.
  for (int round = 0; round < 8; ++round) {
    int total = 0;
    for (const Pass& p : kPasses) {
      const int n = p.fn(g, error);
      if (n < 0) return false;
      if (n > 0) OBPU_LOGI("pass %s: %d rewrite(s)", p.name, n);
      total += n;
    }
    g->remove_dead();
    if (!g->topo_sort(error)) return false;
    if (total == 0) break;
  }
  return true;
}

}  // namespace openbpu::cvt
