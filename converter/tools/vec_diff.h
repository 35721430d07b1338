// SPDX-License-Identifier: Apache-2.0
// vec_diff: pairs the float32 vector files of two dump folders by name and
// measures how far apart each pair is (docs/vec_diff.md).
#ifndef OPENBPU_CONVERTER_TOOLS_VEC_DIFF_H_
#define OPENBPU_CONVERTER_TOOLS_VEC_DIFF_H_

#include <string>
#include <vector>

namespace openbpu::cvt {

struct VecDiff {
  double cosine = 0;          // <a, b> / (|a| |b|)
  double rel_euclidean = 0;   // |a - b| / |a|  (a = the left, reference side)
  double max_abs = 0;         // max |a_i - b_i|
  double mse = 0;             // mean (a_i - b_i)^2
};

// Compares two vectors of equal, non-zero length. False with a reason when
// they cannot be compared (length mismatch, empty, a zero-norm vector, a
// non-finite value).
bool compare_vectors(const std::vector<float>& a, const std::vector<float>& b, VecDiff* out, std::string* why);

// The name two dump files are paired by: the file name without its
// extension and without a trailing "_float", "_calibrated" or "_quantized"
// (hb_mapper infer's and the vendor's suffixes).
std::string pairing_key(const std::string& file_name);

// The order files of a dump folder were written in (execution order): the
// folder's execution_order.txt (one file name per line) when present.
std::vector<std::string> execution_order(const std::string& dir);

// Reads a raw little-endian float32 file.
bool read_floats(const std::string& path, std::vector<float>* out, std::string* why);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_TOOLS_VEC_DIFF_H_
