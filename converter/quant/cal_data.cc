// SPDX-License-Identifier: Apache-2.0
#include "converter/quant/cal_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "converter/ir/local_ops.h"
#include "converter/passes/preprocess.h"

namespace openbpu::cvt {

namespace {

namespace fs = std::filesystem;

int dtype_size(const std::string& t) {
  if (t == "float32" || t == "int32") return 4;
  if (t == "int16") return 2;
  if (t == "uint8" || t == "int8") return 1;
  return 0;
}

std::vector<float> decode(const std::vector<uint8_t>& bytes, const std::string& t) {
  const int es = dtype_size(t);
  std::vector<float> out(bytes.size() / static_cast<size_t>(es));
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t* p = bytes.data() + i * static_cast<size_t>(es);
    if (t == "float32") {
      float f;
      std::memcpy(&f, p, 4);
      out[i] = f;
    } else if (t == "int32") {
      int32_t v;
      std::memcpy(&v, p, 4);
      out[i] = static_cast<float>(v);
    } else if (t == "int16") {
      int16_t v;
      std::memcpy(&v, p, 2);
      out[i] = v;
    } else if (t == "int8") {
      out[i] = static_cast<int8_t>(p[0]);
    } else {
      out[i] = p[0];
    }
  }
  return out;
}

int64_t elements(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<std::string> sorted_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file()) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

uint8_t clamp_u8(double v) { return static_cast<uint8_t>(std::max(0.0, std::min(255.0, std::round(v)))); }

}  // namespace

bool write_npy(const std::string& path, const Value& v, std::string* error) {
  const char* descr = v.elem_type == kFloat ? "<f4" : v.elem_type == kInt8 ? "|i1" : v.elem_type == kUint8 ? "|u1" : nullptr;
  if (descr == nullptr || !v.data) {
    *error = "'" + path + "': only float32, int8 and uint8 values are written as .npy";
    return false;
  }
  std::string shape;
  for (size_t i = 0; i < v.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(v.shape[i]);
  if (v.shape.size() == 1) shape += ",";  // a one-element tuple
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a
  // multiple of 64 and ended by a newline.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header += std::string(total - 10 - header.size() - 1, ' ') + "\n";
  std::ofstream f(path, std::ios::binary);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f << header;
  f.write(reinterpret_cast<const char*>(v.data->data()), static_cast<std::streamsize>(v.data->size()));
  if (!f) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

bool dump_calibration_data(const std::string& dir, const std::vector<std::map<std::string, Value>>& samples,
                           std::vector<std::string>* written, std::string* error) {
  for (size_t k = 0; k < samples.size(); ++k)
    for (const auto& [name, v] : samples[k]) {
      std::string sub = name;
      for (char& c : sub)
        if (c == '/' || c == '\\') c = '_';
      std::error_code ec;
      std::filesystem::create_directories(dir + "/" + sub, ec);
      const std::string path = dir + "/" + sub + "/" + std::to_string(k) + ".npy";
      if (ec || !write_npy(path, v, error)) {
        if (ec) *error = "cannot create '" + dir + "/" + sub + "': " + ec.message();
        return false;
      }
      written->push_back(path);
    }
  return true;
}

bool read_npy(const std::string& path, std::vector<float>* values, std::vector<int64_t>* shape, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  char magic[6];
  if (!f.read(magic, 6) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    *error = "'" + path + "' is not a .npy file";
    return false;
  }
  unsigned char ver[2];
  f.read(reinterpret_cast<char*>(ver), 2);
  uint32_t hlen = 0;
  if (ver[0] == 1) {
    unsigned char l[2];
    f.read(reinterpret_cast<char*>(l), 2);
    hlen = l[0] | (l[1] << 8);
  } else {
    unsigned char l[4];
    f.read(reinterpret_cast<char*>(l), 4);
    hlen = l[0] | (l[1] << 8) | (l[2] << 16) | (static_cast<uint32_t>(l[3]) << 24);
  }
  if (hlen > (1u << 20)) {
    *error = "'" + path + "': .npy header too large";
    return false;
  }
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  auto field = [&](const std::string& key) {
    const size_t p = header.find("'" + key + "'");
    if (p == std::string::npos) return std::string();
    size_t s = header.find(':', p) + 1;
    while (s < header.size() && header[s] == ' ') ++s;
    return header.substr(s);
  };
  const std::string descr = field("descr");
  if (field("fortran_order").rfind("True", 0) == 0) {
    *error = "'" + path + "': Fortran-ordered arrays are not supported";
    return false;
  }
  std::string dt = descr.size() > 3 ? descr.substr(1, 3) : "";
  std::string t;
  int es = 0;
  if (dt == "<f4") t = "f4", es = 4;
  else if (dt == "<f8") t = "f8", es = 8;
  else if (dt == "|u1" || dt == "<u1") t = "u1", es = 1;
  else if (dt == "|i1" || dt == "<i1") t = "i1", es = 1;
  else if (dt == "<i2") t = "i2", es = 2;
  else if (dt == "<i4") t = "i4", es = 4;
  else if (dt == "<i8") t = "i8", es = 8;
  else {
    *error = "'" + path + "': unsupported .npy dtype " + dt;
    return false;
  }
  shape->clear();
  std::string sh = field("shape");
  const size_t open = sh.find('('), close = sh.find(')');
  if (open == std::string::npos || close == std::string::npos) {
    *error = "'" + path + "': bad .npy shape";
    return false;
  }
  std::string dims = sh.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    while (pos < dims.size() && (dims[pos] == ' ' || dims[pos] == ',')) ++pos;
    if (pos >= dims.size()) break;
    shape->push_back(std::stoll(dims.substr(pos)));
    while (pos < dims.size() && dims[pos] != ',') ++pos;
  }
  const int64_t n = elements(*shape);
  std::vector<uint8_t> raw(static_cast<size_t>(n * es));
  if (!f.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()))) {
    *error = "'" + path + "': truncated .npy data";
    return false;
  }
  values->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = raw.data() + i * es;
    double v = 0;
    if (t == "f4") { float x; std::memcpy(&x, p, 4); v = x; }
    else if (t == "f8") { std::memcpy(&v, p, 8); }
    else if (t == "u1") v = p[0];
    else if (t == "i1") v = static_cast<int8_t>(p[0]);
    else if (t == "i2") { int16_t x; std::memcpy(&x, p, 2); v = x; }
    else if (t == "i4") { int32_t x; std::memcpy(&x, p, 4); v = x; }
    else { int64_t x; std::memcpy(&x, p, 8); v = static_cast<double>(x); }
    (*values)[static_cast<size_t>(i)] = static_cast<float>(v);
  }
  return true;
}

Value to_graph_input(const CalInputSpec& spec, const std::vector<float>& x) {
  Value v;
  v.name = spec.input;
  v.has_shape = true;
  v.shape = spec.shape;
  const std::string family = intermediate_family(spec.type_rt);
  if (spec.type_rt == "featuremap" || family.empty()) {
    v.elem_type = kFloat;
    std::vector<uint8_t> bytes(x.size() * 4);
    std::memcpy(bytes.data(), x.data(), bytes.size());
    v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    return v;
  }
  // Image: per pixel convert the train type to the runtime family, then - 128.
  v.elem_type = kInt8;
  const bool nhwc = spec.layout_train == "NHWC";
  const int64_t n = spec.shape[0], c = nhwc ? spec.shape[3] : spec.shape[1];
  const int64_t h = nhwc ? spec.shape[1] : spec.shape[2], w = nhwc ? spec.shape[2] : spec.shape[3];
  auto idx = [&](int64_t b, int64_t ch, int64_t y, int64_t xx) {
    return static_cast<size_t>(nhwc ? ((b * h + y) * w + xx) * c + ch : ((b * c + ch) * h + y) * w + xx);
  };
  std::vector<uint8_t> out(x.size());
  const bool video = spec.space_and_range == "bt601_video";
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t xx = 0; xx < w; ++xx) {
        double p[3] = {0, 0, 0};
        for (int64_t ch = 0; ch < c && ch < 3; ++ch) p[ch] = x[idx(b, ch, y, xx)];
        double o[3] = {p[0], p[1], p[2]};
        if (family == "yuv444" && (spec.type_train == "rgb" || spec.type_train == "bgr")) {
          const double r = spec.type_train == "rgb" ? p[0] : p[2], bl = spec.type_train == "rgb" ? p[2] : p[0];
          rgb_to_yuv(r, p[1], bl, &o[0], &o[1], &o[2]);
        }
        if (family == "yuv444" && video) {
          o[0] = 16.0 + o[0] * 219.0 / 255.0;
          o[1] = 128.0 + (o[1] - 128.0) * 224.0 / 255.0;
          o[2] = 128.0 + (o[2] - 128.0) * 224.0 / 255.0;
        }
        if ((family == "rgb" && spec.type_train == "bgr") || (family == "bgr" && spec.type_train == "rgb"))
          std::swap(o[0], o[2]);
        for (int64_t ch = 0; ch < c && ch < 3; ++ch)
          out[idx(b, ch, y, xx)] = static_cast<uint8_t>(static_cast<int>(clamp_u8(o[ch])) - 128);
      }
  v.data = std::make_shared<const std::vector<uint8_t>>(std::move(out));
  return v;
}

bool load_calibration(const std::vector<CalInputSpec>& inputs, std::vector<std::map<std::string, Value>>* samples,
                      std::vector<std::string>* warnings, std::string* error, size_t max_samples) {
  std::vector<std::vector<std::string>> files;
  size_t count = SIZE_MAX;
  for (const auto& in : inputs) {
    files.push_back(sorted_files(in.dir));
    if (files.back().empty()) {
      *error = "calibration_parameters.cal_data_dir: no calibration files in '" + in.dir + "' (input '" + in.input + "')";
      return false;
    }
    count = std::min(count, files.back().size());
  }
  for (size_t i = 0; i + 1 < files.size(); ++i)
    if (files[i].size() != files[i + 1].size() && warnings)
      warnings->push_back("calibration directories hold different numbers of files; using " + std::to_string(count));
  if (max_samples != 0) count = std::min(count, max_samples);
  samples->clear();
  for (size_t s = 0; s < count; ++s) {
    std::map<std::string, Value> sample;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const CalInputSpec& spec = inputs[k];
      const std::string& path = files[k][s];
      std::vector<float> values;
      const int64_t need = elements(spec.shape);
      if (path.size() > 4 && path.substr(path.size() - 4) == ".npy") {
        std::vector<int64_t> shape;
        if (!read_npy(path, &values, &shape, error)) return false;
        if (static_cast<int64_t>(values.size()) != need) {
          *error = "calibration file '" + path + "' holds " + std::to_string(values.size()) +
                   " values; input '" + spec.input + "' needs " + std::to_string(need);
          return false;
        }
      } else {
        std::ifstream f(path, std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        const int es = dtype_size(spec.dtype);
        if (es == 0) {
          *error = "calibration_parameters.cal_data_type: unsupported type '" + spec.dtype + "'";
          return false;
        }
        if (static_cast<int64_t>(bytes.size()) != need * es) {
          *error = "calibration file '" + path + "' has " + std::to_string(bytes.size()) + " bytes; input '" +
                   spec.input + "' (shape of " + std::to_string(need) + " " + spec.dtype + " values) needs " +
                   std::to_string(need * es) + " (check input_shape and cal_data_type)";
          return false;
        }
        values = decode(bytes, spec.dtype);
      }
      sample[spec.input] = to_graph_input(spec, values);
    }
    samples->push_back(std::move(sample));
  }
  return true;
}

std::vector<std::map<std::string, Value>> random_calibration(const std::vector<CalInputSpec>& inputs, int count,
                                                             uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::map<std::string, Value>> out;
  for (int s = 0; s < count; ++s) {
    std::map<std::string, Value> sample;
    for (const auto& spec : inputs) {
      std::vector<float> x(static_cast<size_t>(elements(spec.shape)));
      if (spec.type_rt == "featuremap") {
        std::normal_distribution<float> d(0.0f, 1.0f);
        for (auto& v : x) v = d(rng);
      } else {
        std::uniform_int_distribution<int> d(0, 255);
        for (auto& v : x) v = static_cast<float>(d(rng));
      }
      sample[spec.input] = to_graph_input(spec, x);
    }
    out.push_back(std::move(sample));
  }
  return out;
}

}  // namespace openbpu::cvt
