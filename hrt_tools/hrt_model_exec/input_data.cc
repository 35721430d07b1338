// SPDX-License-Identifier: Apache-2.0
#include "input_data.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "numeric.h"
#include "options.h"

namespace openbpu::tools {

namespace {

// A txt input holds at most this many bytes per number the input takes (plus
// the slack): "-1.2345678901234567e+300, " is 26.
constexpr uint64_t kTxtBytesPerNumber = 64;
constexpr uint64_t kTxtSlackBytes = 1 << 20;

std::string lower_suffix(const std::string& file) {
  const size_t dot = file.rfind('.');
  const size_t slash = file.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string s = file.substr(dot + 1);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string describe_input(const ModelDesc& d, int i) {
  const hbDNNTensorProperties& p = d.inputs[i];
  return "input[" + std::to_string(i) + "] '" + d.input_names[i] + "' (" +
         data_type_name(p.tensorType) + ", valid shape " + shape_str(p.validShape) + ")";
}

bool load_bin(const std::string& file, const ModelDesc& d, int i, InputData* data) {
  uint64_t size = 0;
  const int fd = open_input_file(file, &size);
  if (fd < 0) return false;
  const int64_t need = tight_byte_size(data->props);
  if (size != static_cast<uint64_t>(need)) {
    ::close(fd);
    log_error("input file '%s' has %llu bytes but %s needs %lld bytes", file.c_str(),
              static_cast<unsigned long long>(size), describe_input(d, i).c_str(), static_cast<long long>(need));
    return false;
  }
  return read_input_file(fd, file, size, &data->bytes);
}

// Whitespace (or comma) separated numbers, at least as many as the input
// has elements; extra numbers are ignored, as by the vendor tool.
bool load_txt(const std::string& file, const ModelDesc& d, int i, InputData* data) {
  const int32_t type = data->props.tensorType;
  const int esize = element_size(type);
  const int64_t need = tight_byte_size(data->props) / esize;
  uint64_t size = 0;
  const int fd = open_input_file(file, &size);
  if (fd < 0) return false;
  const uint64_t limit = static_cast<uint64_t>(need) * kTxtBytesPerNumber + kTxtSlackBytes;
  if (size > limit) {
    ::close(fd);
    log_error("input file '%s' has %llu bytes, more than the %llu bytes of text %s can take (%lld numbers)",
              file.c_str(), static_cast<unsigned long long>(size), static_cast<unsigned long long>(limit),
              describe_input(d, i).c_str(), static_cast<long long>(need));
    return false;
  }
  std::vector<uint8_t> text;
  if (!read_input_file(fd, file, size, &text)) return false;
  text.push_back('\0');
  data->bytes.assign(static_cast<size_t>(need * esize), 0);
  const char* p = reinterpret_cast<const char*>(text.data());
  int64_t count = 0;
  while (count < need) {
    while (*p != '\0' && (std::isspace(static_cast<unsigned char>(*p)) || *p == ',')) ++p;
    if (*p == '\0') break;
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) {
      std::string token(p, std::strcspn(p, " \t\r\n,"));
      log_error("input file '%s': '%s' (number %lld) is not a number", file.c_str(), token.c_str(),
                static_cast<long long>(count + 1));
      return false;
    }
    store_element(v, d.input_kinds[i] != ImageKind::kNone ? HB_DNN_TENSOR_TYPE_U8 : type,
                  data->bytes.data() + count * esize);
    ++count;
    p = end;
  }
  if (count < need) {
    log_error("input file '%s' holds %lld numbers but %s needs %lld", file.c_str(),
              static_cast<long long>(count), describe_input(d, i).c_str(),
              static_cast<long long>(need));
    return false;
  }
  return true;
}

// A Y or UV plane of a gen-B resizer input whose frame size is still open:
// an image file gives it (its own size), or --input_valid_shape.
bool open_frame(const ModelDesc& d, const hbDNNTensorProperties& p, int i) {
  const ImageKind k = d.input_kinds[static_cast<size_t>(i)];
  return (k == ImageKind::kPlaneY || k == ImageKind::kPlaneUV) && p.validShape.dimensionSize[1] == -1;
}

bool check_supported(const ModelDesc& d, int i) {
  if (open_frame(d, d.inputs[i], i)) return true;
  if (element_size(d.inputs[i].tensorType) == 0 || tight_byte_size(d.inputs[i]) <= 0) {
    log_error("%s: this tensor type or shape is not supported by hrt_model_exec",
              describe_input(d, i).c_str());
    return false;
  }
  return true;
}

}  // namespace

int open_input_file(const std::string& file, uint64_t* size) {
  // O_NONBLOCK: a FIFO does not block the open; fstat (after symlinks) then
  // refuses anything that is not a regular file before a byte is read.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    log_error("cannot open input file '%s': %s", file.c_str(), std::strerror(errno));
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    log_error("input file '%s' is not a regular file (a FIFO, directory or device cannot be an input)",
              file.c_str());
    return -1;
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

bool read_input_file(int fd, const std::string& file, uint64_t size, std::vector<uint8_t>* bytes) {
  bytes->resize(size);
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, bytes->data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  if (done != size) {
    log_error("cannot read input file '%s' (%llu of %llu bytes; it changed while being read)", file.c_str(),
              static_cast<unsigned long long>(done), static_cast<unsigned long long>(size));
    return false;
  }
  return true;
}

bool is_image_file(const std::string& file) {
  const std::string s = lower_suffix(file);
  return s == "jpg" || s == "jpeg" || s == "png";
}

namespace {
// One input file by its kind (image, bin, txt).
bool load_one(const ModelDesc& desc, const std::string& file, int i, bool resizer, const std::string& suffix,
              InputData* data);
}  // namespace

bool load_inputs(const ModelDesc& desc, const std::vector<std::string>& files, bool roi_infer,
                 std::vector<InputData>* out) {
  if (files.size() != desc.inputs.size()) {
    std::string names;
    for (const std::string& n : desc.input_names) names += (names.empty() ? "" : ", ") + n;
    log_error("--input_file has %zu file(s) but model '%s' has %zu input(s) (%s)", files.size(),
              desc.name.c_str(), desc.inputs.size(), names.c_str());
    return false;
  }
  bool any_resizer = false;
  out->clear();
  for (size_t k = 0; k < files.size(); ++k) {
    const int i = static_cast<int>(k);
    const std::string& file = files[k];
    InputData data;
    data.props = desc.inputs[k];
    if (!check_supported(desc, i)) return false;
    const bool resizer = desc.input_resizer[k];
    any_resizer = any_resizer || resizer;
    if (resizer && !roi_infer) {
      log_error("%s is a resizer input: run with --roi_infer=true and --roi",
                describe_input(desc, i).c_str());
      return false;
    }
    const std::string suffix = lower_suffix(file);
    bool ok = false;
    try {
      ok = load_one(desc, file, i, resizer, suffix, &data);
    } catch (const std::exception& e) {
      // A library's exception (OpenCV, allocation) ends here, naming the file.
      log_error("input file '%s' for %s: %s", file.c_str(), describe_input(desc, i).c_str(), e.what());
      ok = false;
    }
    if (!ok) return false;
    out->push_back(std::move(data));
  }
  if (roi_infer && !any_resizer) {
    log_error("--roi_infer=true but model '%s' has no resizer input", desc.name.c_str());
    return false;
  }
  return true;
}

namespace {

bool load_one(const ModelDesc& desc, const std::string& file, int i, bool resizer, const std::string& suffix,
              InputData* data) {
  const size_t k = static_cast<size_t>(i);
  bool ok;
  const bool frame = open_frame(desc, data->props, i);
  if (is_image_file(file)) {
    ok = load_image(file, i, desc.input_names[k], desc.input_kinds[k], resizer || frame, data);
  } else if (frame) {
    log_error("%s takes a whole frame of the size given: give an image file (jpg/png), or the frame size with "
              "--input_valid_shape",
              describe_input(desc, i).c_str());
    ok = false;
  } else if (resizer) {
    log_error("%s is a resizer input: give the whole frame as an image file (jpg/png), not '%s'",
              describe_input(desc, i).c_str(), file.c_str());
    ok = false;
  } else if (suffix == "bin") {
    ok = load_bin(file, desc, i, data);
  } else if (suffix == "txt") {
    ok = load_txt(file, desc, i, data);
  } else {
    log_error(
        "input file '%s' has an unsupported suffix: use bin or txt (feature data) or "
        "jpg/jpeg/png (images)",
        file.c_str());
    ok = false;
  }
  return ok;
}

}  // namespace

bool random_inputs(const ModelDesc& desc, uint32_t seed, std::vector<InputData>* out) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  out->clear();
  for (size_t k = 0; k < desc.inputs.size(); ++k) {
    if (!check_supported(desc, static_cast<int>(k))) return false;
    if (desc.input_resizer[k]) {
      log_error(
          "%s is a resizer input: perf needs --input_file with an image and --roi_infer, --roi",
          describe_input(desc, static_cast<int>(k)).c_str());
      return false;
    }
    if (desc.input_roi[k] || open_frame(desc, desc.inputs[k], static_cast<int>(k))) {
      log_error("%s belongs to a resizer input: give --input_file with the image for its Y and UV inputs and a txt "
                "file \"left top right bottom\" for its roi",
                describe_input(desc, static_cast<int>(k)).c_str());
      return false;
    }
    InputData data;
    data.props = desc.inputs[k];
    const int32_t type = data.props.tensorType;
    const int esize = element_size(type);
    data.bytes.resize(static_cast<size_t>(tight_byte_size(data.props)));
    if (is_float_type(type)) {
      for (size_t off = 0; off + esize <= data.bytes.size(); off += esize)
        store_element(unit(rng), type, data.bytes.data() + off);
    } else {
      for (uint8_t& b : data.bytes) b = static_cast<uint8_t>(rng() >> 24);
    }
    out->push_back(std::move(data));
  }
  return true;
}

namespace {

// "a,b,c;d,e,f" -> one list of integers per model input; false (message
// printed) when the item count or a number is wrong.
bool parse_per_input(const char* flag, const std::string& text, const ModelDesc& desc,
                     std::vector<std::vector<long long>>* items) {
  const std::vector<std::string> parts = split_list(text, ';');
  if (parts.size() != desc.inputs.size()) {
    std::fprintf(stderr, "ERROR: invalid value for flag '%s': %zu item(s) given, model '%s' has %zu input(s)\n", flag,
                 parts.size(), desc.name.c_str(), desc.inputs.size());
    return false;
  }
  for (size_t k = 0; k < parts.size(); ++k) {
    std::vector<long long> v;
    for (const std::string& x : split_list(parts[k], ',')) {
      char* end = nullptr;
      const long long n = std::strtoll(x.c_str(), &end, 10);
      if (*end != '\0' || n < -1 || n == 0) {
        std::fprintf(stderr, "ERROR: invalid value for flag '%s': '%s' in item %zu is not a positive number\n", flag,
                     x.c_str(), k);
        return false;
      }
      v.push_back(n);
    }
    if (static_cast<int32_t>(v.size()) != desc.inputs[k].validShape.numDimensions) {
      std::fprintf(stderr, "ERROR: invalid value for flag '%s': item %zu has %zu value(s), input[%zu] '%s' has %d dimensions\n",
                   flag, k, v.size(), k, desc.input_names[k].c_str(), desc.inputs[k].validShape.numDimensions);
      return false;
    }
    items->push_back(std::move(v));
  }
  return true;
}

bool check_img_properties(const std::string& text, const ModelDesc& desc) {
  std::vector<std::string> want;
  for (ImageKind k : desc.input_kinds)
    if (k == ImageKind::kPlaneY || k == ImageKind::kPlaneUV) want.push_back(k == ImageKind::kPlaneY ? "Y" : "UV");
  const std::vector<std::string> got = split_list(text, ',');
  if (got != want) {
    std::string w;
    for (const std::string& x : want) w += (w.empty() ? "" : ",") + x;
    std::fprintf(stderr, "ERROR: invalid value for flag 'input_img_properties': '%s'; the image inputs of model '%s' are %s\n",
                 text.c_str(), desc.name.c_str(), w.empty() ? "none" : ("'" + w + "'").c_str());
    return false;
  }
  return true;
}

}  // namespace

bool apply_input_options(const Options& opt, ModelDesc* desc) {
  if (!opt.input_img_properties.empty() && !check_img_properties(opt.input_img_properties, *desc)) return false;
  std::vector<std::vector<long long>> shapes, strides;
  if (!opt.input_valid_shape.empty() && !parse_per_input("input_valid_shape", opt.input_valid_shape, *desc, &shapes))
    return false;
  if (!opt.input_stride.empty() && !parse_per_input("input_stride", opt.input_stride, *desc, &strides)) return false;
  for (size_t k = 0; k < shapes.size(); ++k) {
    hbDNNTensorShape& s = desc->inputs[k].validShape;
    for (size_t d = 0; d < shapes[k].size(); ++d) {
      if (s.dimensionSize[d] != -1 && s.dimensionSize[d] != shapes[k][d]) {
        std::fprintf(stderr, "ERROR: invalid value for flag 'input_valid_shape': input[%zu] '%s' dimension %zu is %d, not %lld\n",
                     k, desc->input_names[k].c_str(), d, s.dimensionSize[d], shapes[k][d]);
        return false;
      }
      s.dimensionSize[d] = static_cast<int32_t>(shapes[k][d]);
    }
  }
  for (size_t k = 0; k < strides.size(); ++k)
    for (size_t d = 0; d < strides[k].size(); ++d) desc->inputs[k].stride[d] = strides[k][d];
  for (size_t k = 0; k < desc->inputs.size(); ++k)
    for (int32_t d = 0; d < desc->inputs[k].validShape.numDimensions; ++d)
      if (desc->inputs[k].validShape.dimensionSize[d] == -1 &&
          !open_frame(*desc, desc->inputs[k], static_cast<int>(k))) {
        log_error("input[%zu] '%s' has a dynamic dimension %d: give its size with --input_valid_shape", k,
                  desc->input_names[k].c_str(), d);
        return false;
      }
  return true;
}

bool parse_rois(const std::string& text, const ModelDesc& desc, std::vector<Roi>* rois) {
  size_t resizers = 0;
  for (bool r : desc.input_resizer) resizers += r ? 1 : 0;
  rois->clear();
  for (const std::string& item : split_list(text, ';')) {
    const std::vector<std::string> v = split_list(item, ',');
    int x[4] = {0, 0, 0, 0};
    bool ok = v.size() == 4;
    for (size_t j = 0; ok && j < 4; ++j) {
      char* end = nullptr;
      const long n = std::strtol(v[j].c_str(), &end, 10);
      ok = *end == '\0' && !v[j].empty() && n >= 0 && n <= 65535;
      x[j] = static_cast<int>(n);
    }
    if (!ok || x[0] > x[2] || x[1] > x[3]) {
      std::fprintf(stderr,
                   "ERROR: invalid value for flag 'roi': '%s' is not \"left,top,right,bottom\" "
                   "with 0 <= left <= right and 0 <= top <= bottom\n",
                   item.c_str());
      return false;
    }
    rois->push_back(Roi{x[0], x[1], x[2], x[3]});
  }
  if (rois->size() != resizers) {
    std::fprintf(stderr,
                 "ERROR: invalid value for flag 'roi': %zu ROI(s) given, model '%s' has %zu "
                 "resizer input(s)\n",
                 rois->size(), desc.name.c_str(), resizers);
    return false;
  }
  return true;
}

}  // namespace openbpu::tools
