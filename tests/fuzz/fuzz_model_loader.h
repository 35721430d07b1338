// SPDX-License-Identifier: Apache-2.0
// The model-loader fuzz entry, shared by the libFuzzer target
// (fuzz_model_loader, clang only) and the corpus replay test (fuzz_replay,
// every compiler). See docs/robustness.md.
#ifndef OPENBPU_TESTS_FUZZ_FUZZ_MODEL_LOADER_H_
#define OPENBPU_TESTS_FUZZ_FUZZ_MODEL_LOADER_H_

#include <cstddef>
#include <cstdint>

namespace openbpu::fuzz {

struct Result {
  int32_t load_rc = 0;     // hbDNNInitializeFromDDR on the bytes as given
  int models = 0;          // models in the pack (0 when the load failed)
  int inferred = 0;        // models run once
  int skipped = 0;         // models not run: above the caps, or a known-bug filter
  int32_t infer_rc = 0;    // first non-zero hbDNNInfer / hbDNNWaitTaskDone code
};

// Sets up the process (platform bernoulli2, quiet log unless
// HB_DNN_LOG_LEVEL is set). Call once before run_one. With
// known_bug_filters, inputs that trigger an open finding of
// docs/robustness.md are not run (or not loaded); the fuzzer uses them so
// that known bugs do not hide new ones, the replay test does not.
void init(bool known_bug_filters);

// load_rc of an input skipped by a known-bug filter.
inline constexpr int32_t kFiltered = -1;

// Loads `data` with hbDNNInitializeFromDDR; when that succeeds, queries every
// model, runs each (within the caps) once on zero-filled buffers and releases
// everything. If the header's file_size does not match `size` (a mutation
// changed the length), a copy with the sizes fixed up is tried as well, so
// that length-changing mutations still reach the deeper checks; the result
// describes the bytes as given. Aborts on an API contract violation (a
// query of a loaded model failing, a hang, a release refused).
Result run_one(const uint8_t* data, size_t size);

// Caps on one inference: estimated multiply-accumulates and bytes of task
// memory (all tensors plus scratch).
inline constexpr double kMaxWork = 1 << 24;
inline constexpr double kMaxBytes = 64.0 * (1 << 20);

}  // namespace openbpu::fuzz

#endif  // OPENBPU_TESTS_FUZZ_FUZZ_MODEL_LOADER_H_
