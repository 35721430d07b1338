// SPDX-License-Identifier: Apache-2.0
// Machine figures the kernel benchmarks divide by, measured in the same run:
// the core clock, the int8 multiply-accumulate peak of each kernel table's
// own instruction mix, and the streaming (copy) rate of an L2-resident
// buffer (the roofline of the passes without MACs).
#ifndef OPENBPU_BENCH_KERNELS_PEAKS_H_
#define OPENBPU_BENCH_KERNELS_PEAKS_H_

#include <string>

#include "bpu_sim/executor.h"

namespace openbpu::bench {

double thread_seconds();  // CPU time of the calling thread

// Core clock in Hz: a dependent chain of 1-cycle register adds, best of
// several tries.
double core_hz();

struct TablePeak {
  double macs_per_cycle = 0;  // int8 MACs per cycle of the table's best exact instruction mix
  std::string what;           // that mix, e.g. "AVX2 vpmaddubsw+vpmaddwd+vpaddd"
  // 3x3 depthwise: the rate of its least instruction mix per output from
  // registers (useful MACs per cycle; 0 where not measured: avx512vnni only).
  double dw_bound_macs_per_cycle = 0;
};
// The peak of `table` (by name: avx512vnni, avx2, neondot, neon, portable,
// reference): an unrolled loop of the multiply-accumulate its convolution
// GEMM uses, on independent accumulators. Measured once per table.
const TablePeak& table_peak(const sim::KernelTable& table);

// Bytes read plus bytes written per cycle by memcpy over a 256 KB buffer.
double copy_bytes_per_cycle();

}  // namespace openbpu::bench

#endif  // OPENBPU_BENCH_KERNELS_PEAKS_H_
