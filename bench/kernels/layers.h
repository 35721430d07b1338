// SPDX-License-Identifier: Apache-2.0
// `bench_kernels --layers <model.bin> [--reps N] [--json FILE] [--quiet]
// [--no-peaks] [--table NAME]` (--no-peaks skips the machine figures, e.g.
// under valgrind): runs every BPU program of the file's first model with the
// kernel table the simulator selects (--table names another one usable on
// this CPU, e.g. avx2 on an AVX-512 machine), times each instruction
// (minimum over the repetitions) and sums the times per layer kind: 3x3 (and
// other dense kernels > 1), 1x1, strided 1x1, depthwise, grouped, FC,
// deconv, eltwise, LUT, pooling, resize, preprocess, move/fill/argmax. MAC
// kinds report int8 MACs per cycle and the fraction of THAT table's measured
// peak; the others report bytes (read + written) per cycle and the fraction
// of the measured L2 copy rate.
#ifndef OPENBPU_BENCH_KERNELS_LAYERS_H_
#define OPENBPU_BENCH_KERNELS_LAYERS_H_

namespace openbpu::bench {

int run_layers(int argc, char** argv);  // argv[0] is "--layers"

}  // namespace openbpu::bench

#endif  // OPENBPU_BENCH_KERNELS_LAYERS_H_
