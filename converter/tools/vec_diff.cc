// SPDX-License-Identifier: Apache-2.0
#include "converter/tools/vec_diff.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

namespace openbpu::cvt {

bool compare_vectors(const std::vector<float>& a, const std::vector<float>& b, VecDiff* out, std::string* why) {
  if (a.size() != b.size()) {
    *why = "different lengths (" + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " values)";
    return false;
  }
  if (a.empty()) {
    *why = "empty";
    return false;
  }
  double ab = 0, aa = 0, bb = 0, dd = 0, mx = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      *why = "value " + std::to_string(i) + " is not finite";
      return false;
    }
    ab += x * y;
    aa += x * x;
    bb += y * y;
    dd += (x - y) * (x - y);
    mx = std::max(mx, std::fabs(x - y));
  }
  if (aa == 0 || bb == 0) {
    *why = std::string(aa == 0 ? "the left" : "the right") + " vector is all zeros (no cosine)";
    return false;
  }
  out->cosine = ab / (std::sqrt(aa) * std::sqrt(bb));
  out->rel_euclidean = std::sqrt(dd) / std::sqrt(aa);
  out->max_abs = mx;
  out->mse = dd / static_cast<double>(a.size());
  return true;
}

std::string pairing_key(const std::string& file_name) {
  std::string s = file_name;
  const size_t dot = s.rfind('.');
  if (dot != std::string::npos && dot > 0) s.resize(dot);
  for (const char* suffix : {"_float", "_calibrated", "_quantized"}) {
    const size_t n = std::strlen(suffix);
    if (s.size() > n && s.compare(s.size() - n, n, suffix) == 0) {
      s.resize(s.size() - n);
      break;
    }
  }
  return s;
}

std::vector<std::string> execution_order(const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream f(dir + "/execution_order.txt");
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

bool read_floats(const std::string& path, std::vector<float>* out, std::string* why) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *why = "cannot open " + path;
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() % 4 != 0) {
    *why = path + " is not float32 data (" + std::to_string(bytes.size()) + " bytes)";
    return false;
  }
  out->resize(bytes.size() / 4);
  if (!bytes.empty()) std::memcpy(out->data(), bytes.data(), bytes.size());
  return true;
}

}  // namespace openbpu::cvt
