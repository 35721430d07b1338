// SPDX-License-Identifier: Apache-2.0
// Channel argmax (kArgMax): out[n, h, w, 0] = the smallest c with
// in[n, h, w, c] = max over all channels (the first one on ties).
#include "bpu_sim/reference/kernels.h"
#include "bpu_sim/reference/ref_util.h"

namespace openbpu::sim::ref {

void argmax(const isa::ArgMax& a, const Memory& mem) {
  const detail::View in(mem, a.in), out(mem, a.out);
  for (int64_t n = 0; n < a.in.dims[0]; ++n) {
    for (int64_t h = 0; h < a.in.dims[1]; ++h) {
      for (int64_t w = 0; w < a.in.dims[2]; ++w) {
        int64_t best = 0;
        int64_t best_value = 0;
        for (int64_t c = 0; c < a.in.dims[3]; ++c) {
          const int64_t x = in.get(n, h, w, c);
          if (c == 0 || x > best_value) {  // strictly greater: ties keep the first
            best = c;
            best_value = x;
          }
        }
        out.set(best, n, h, w, 0);
      }
    }
  }
}

}  // namespace openbpu::sim::ref
