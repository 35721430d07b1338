// SPDX-License-Identifier: Apache-2.0
// Float graph passes. Each preserves the graph's float results (tested against
// the unoptimized graph on random inputs) and returns how many rewrites it
// made (negative on error, with *error set).
#ifndef OPENBPU_CONVERTER_PASSES_PASSES_H_
#define OPENBPU_CONVERTER_PASSES_PASSES_H_

#include <string>

#include "converter/ir/graph.h"

namespace openbpu::cvt {

// Shape inference + constant folding to a fixed point: nodes whose inputs are
// all constant are evaluated (Shape/Size of known shapes too), so
// Shape->Gather->Concat->Reshape chains become constants once input shapes
// are fixed. Leaves every value with a known shape, or fails naming the
// first value whose shape stays unknown.
int fold_constants(Graph* g, std::string* error);

int remove_identity(Graph* g, std::string* error);         // Identity, Dropout, no-op Cast/Reshape
int fold_batchnorm(Graph* g, std::string* error);          // BN after Conv -> Conv weights/bias
int fold_conv_affine(Graph* g, std::string* error);        // per-channel Mul/Add after Conv -> Conv
int gemm_to_conv(Graph* g, std::string* error);            // Gemm/MatMul with constant weight -> 1x1 Conv
int split_heads(Graph* g, std::string* error);             // 5-D qkv Reshape/Transpose/Gather -> Slice/Reshape/Transpose
int cleanup_reshapes(Graph* g, std::string* error);        // Reshape/Flatten chains, Transpose pairs
int fuse_activations(Graph* g, std::string* error);        // hard-swish, hard-sigmoid, swish, gelu, layernorm

// The optimization pipeline in order (logs each pass).
bool optimize(Graph* g, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_PASSES_PASSES_H_
