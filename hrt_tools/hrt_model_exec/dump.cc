// SPDX-License-Identifier: Apache-2.0
#include "dump.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "log.h"
#include "numeric.h"
#include "openbpu/openbpu.h"

namespace openbpu::tools {

namespace {

// Tensor names can hold '/' (ONNX paths) and other characters that do not
// belong in a file name.
std::string file_safe(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (c == '/' || c == '\\' || c == ':' || c == ' ' || static_cast<unsigned char>(c) < 32)
      c = '_';
  return s;
}

std::string dump_file(const DumpConfig& cfg, const char* kind, int index, const std::string& name,
                      const char* ext) {
  std::string f = std::string("model_infer_") + kind + "_" + std::to_string(index) + "_" +
                  file_safe(name) + "." + ext;
  return cfg.dir.empty() ? f : cfg.dir + "/" + f;
}

bool write_bytes(const std::string& path, const void* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    log_error("cannot write dump file '%s': %s", path.c_str(), std::strerror(errno));
    return false;
  }
  const bool ok = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !ok) {
    log_error("cannot write dump file '%s'", path.c_str());
    return false;
  }
  return true;
}

// One element as text: integers exactly, floats with `precision` decimals.
void format_element(const uint8_t* p, int32_t type, int precision, std::string* out) {
  char buf[512];
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S64: {
      int64_t v;
      std::memcpy(&v, p, sizeof(v));
      std::snprintf(buf, sizeof(buf), "%" PRId64, v);
      break;
    }
    case HB_DNN_TENSOR_TYPE_U64: {
      uint64_t v;
      std::memcpy(&v, p, sizeof(v));
      std::snprintf(buf, sizeof(buf), "%" PRIu64, v);
      break;
    }
    default:
      if (is_float_type(type)) {
        std::snprintf(buf, sizeof(buf), "%.*f", precision, load_element(p, type));
      } else {
        std::snprintf(buf, sizeof(buf), "%.0f", load_element(p, type));
      }
  }
  *out += buf;
}

// Writes `count` elements of `esize` bytes from `data` as text; a line holds
// the elements of one index of axis txt_axis - 1 (the product of the dims
// from txt_axis on), so the default axis 4 of a 4-D tensor gives one number
// per line and axis 0 the whole tensor on one line.
bool write_txt(const std::string& path, const uint8_t* data, int64_t count, int32_t type,
               const hbDNNTensorShape& shape, const DumpConfig& cfg) {
  const int n = shape.numDimensions;
  const int axis = std::min(cfg.txt_axis, n);
  int64_t per_line = 1;
  for (int k = axis; k < n; ++k) per_line *= std::max(shape.dimensionSize[k], 1);
  const int esize = element_size(type);
  std::string text;
  text.reserve(static_cast<size_t>(count) * 12);
  for (int64_t e = 0; e < count; ++e) {
    format_element(data + e * esize, type, cfg.precision, &text);
    text += ((e + 1) % per_line == 0 || e + 1 == count) ? '\n' : ' ';
  }
  return write_bytes(path, text.data(), text.size());
}

// Visits the valid elements of a tensor in row-major order of validShape:
// fn(multi-index, byte offset in the tensor's memory).
template <class Fn>
bool for_each_valid(const hbDNNTensor& t, const std::string& what, Fn fn) {
  const hbDNNTensorProperties& p = t.properties;
  const int n = p.validShape.numDimensions;
  const int esize = element_size(p.tensorType);
  if (n <= 0 || n > HB_DNN_TENSOR_MAX_DIMENSIONS || esize == 0) {
    log_error("%s: cannot read %s data with valid shape %s", what.c_str(),
              data_type_name(p.tensorType), shape_str(p.validShape).c_str());
    return false;
  }
  const std::vector<int64_t> st = byte_strides(p);
  int64_t last = 0;
  for (int k = 0; k < n; ++k) {
    if (p.validShape.dimensionSize[k] <= 0) return true;  // empty tensor
    last += (p.validShape.dimensionSize[k] - 1) * st[k];
  }
  if (last < 0 || last + esize > static_cast<int64_t>(tensor_mem(t).memSize)) {
    // Inconsistent properties must not make the tool read past the buffer.
    log_error("%s: valid shape %s with stride does not fit its %llu-byte buffer", what.c_str(),
              shape_str(p.validShape).c_str(), static_cast<unsigned long long>(tensor_mem(t).memSize));
    return false;
  }
  const uint8_t* base = static_cast<const uint8_t*>(tensor_mem(t).virAddr);
  std::vector<int> idx(n, 0);
  const int64_t total = element_count(p.validShape);
  for (int64_t e = 0; e < total; ++e) {
    int64_t off = 0;
    for (int k = 0; k < n; ++k) off += idx[k] * st[k];
    fn(idx, base + off);
    for (int k = n - 1; k >= 0; --k) {
      if (++idx[k] < p.validShape.dimensionSize[k]) break;
      idx[k] = 0;
    }
  }
  return true;
}

// Index of the per-channel parameter for an element.
int channel_of(const std::vector<int>& idx, int len, int axis) {
  if (len <= 1 || axis < 0 || axis >= static_cast<int>(idx.size())) return 0;
  return idx[axis] < len ? idx[axis] : 0;
}

}  // namespace

bool make_dirs(const std::string& dir, bool* existed) {
  struct stat st;
  *existed = false;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      log_error("'%s' exists and is not a directory", dir.c_str());
      return false;
    }
    *existed = true;
    return true;
  }
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      log_error("cannot create directory '%s': %s", part.c_str(), std::strerror(errno));
      return false;
    }
  }
  return true;
}

bool prepare_dump_dir(const DumpConfig& cfg) {
  bool existed = false;
  return cfg.dir.empty() || make_dirs(cfg.dir, &existed);
}

bool dump_input(const DumpConfig& cfg, int index, const std::string& name, const InputData& data) {
  return write_bytes(dump_file(cfg, "input", index, name, "bin"), data.bytes.data(),
                     data.bytes.size());
}

bool output_to_float(const hbDNNTensor& t, std::vector<float>* values) {
  const hbDNNTensorProperties& p = t.properties;
  const int32_t type = p.tensorType;
  values->clear();
  values->reserve(static_cast<size_t>(element_count(p.validShape)));
  const bool integer = !is_float_type(type);
  const int channels = quant_channels(p);
  return for_each_valid(t, "output", [&](const std::vector<int>& idx, const uint8_t* e) {
    const double q = load_element(e, type);
    double v = q;
    if (integer && channels > 0) {
      // Same arithmetic as libdnn's Dequantize operator: (q - zp) * scale
      // in double, rounded once to float (SHIFT: scale 2^-shift).
      double scale = 1.0, zp = 0.0;
      quant_params(p, channel_of(idx, channels, p.quantizeAxis), &scale, &zp);
      v = (q - zp) * scale;
    }
    values->push_back(static_cast<float>(v));
  });
}

bool dump_output(const DumpConfig& cfg, int index, const std::string& name, const hbDNNTensor& t) {
  const hbDNNTensorProperties& p = t.properties;
  const bool txt = cfg.format == "txt";
  const std::string path = dump_file(cfg, "output", index, name, txt ? "txt" : "bin");
  if (cfg.dequantize) {
    std::vector<float> v;
    if (!output_to_float(t, &v)) return false;
    const auto* bytes = reinterpret_cast<const uint8_t*>(v.data());
    if (!txt) return write_bytes(path, bytes, v.size() * sizeof(float));
    return write_txt(path, bytes, static_cast<int64_t>(v.size()), HB_DNN_TENSOR_TYPE_F32,
                     p.validShape, cfg);
  }
  const int esize = element_size(p.tensorType);
  if (cfg.remove_padding) {
    std::vector<uint8_t> raw;
    const bool ok = for_each_valid(t, "output", [&](const std::vector<int>&, const uint8_t* e) {
      raw.insert(raw.end(), e, e + esize);
    });
    if (!ok) return false;
    if (!txt) return write_bytes(path, raw.data(), raw.size());
    return write_txt(path, raw.data(), static_cast<int64_t>(raw.size()) / esize, p.tensorType,
                     p.validShape, cfg);
  }
  // Raw output as produced: the aligned layout, padding included.
  const auto* base = static_cast<const uint8_t*>(tensor_mem(t).virAddr);
  const size_t size = std::min<size_t>(tensor_mem(t).memSize, static_cast<size_t>(p.alignedByteSize));
  if (!txt) return write_bytes(path, base, size);
  if (esize == 0) {
    log_error("output[%d] '%s': no txt dump for %s", index, name.c_str(),
              data_type_name(p.tensorType));
    return false;
  }
  const int64_t count = static_cast<int64_t>(size) / esize;
  hbDNNTensorShape shape = raw_shape(p);
  if (element_count(shape) != count) {  // layout not described by the shape: flat
    shape.numDimensions = 1;
    shape.dimensionSize[0] = static_cast<int32_t>(count);
  }
  return write_txt(path, base, count, p.tensorType, shape, cfg);
}

// Per-layer outputs come from obpuInferWithLayerOutputs, an OpenBPU
// extension of both libdnn 1.x (.bin) and the UCP runtime (.hbm).
namespace {

struct LayerDumpState {
  const DumpConfig* cfg = nullptr;
  int level = 0;
  std::string dir;
  std::vector<std::string> order;  // files in execution order
  std::string mapping;             // layer_mapping.txt
  std::map<std::string, int> used; // file names taken
  bool ok = true;
};

// Whether a value is described in the BPU's NHWC order: libdnn 1.x reports
// BPU values in their layout; the UCP runtime describes every value in the
// ONNX order by its strides.
bool nhwc_value(const obpuLayerOutput& l) {
#ifdef OPENBPU_HRT_UCP
  (void)l;
  return false;
#else
  return l.onBpu && l.properties.tensorLayout == HB_DNN_LAYOUT_NHWC && l.properties.validShape.numDimensions == 4;
#endif
}

// Valid float values in ONNX element order (BPU NHWC 4-D values as NCHW)
// and their ONNX shape.
bool layer_floats(const obpuLayerOutput& l, std::vector<float>* v, hbDNNTensorShape* shape) {
  hbDNNTensor t{};
  t.properties = l.properties;
  tensor_mem(t).virAddr = const_cast<void*>(l.data);
  tensor_mem(t).memSize = static_cast<uint32_t>(std::max<int64_t>(l.properties.alignedByteSize, 0));
  if (!output_to_float(t, v)) return false;
  const hbDNNTensorShape& s = l.properties.validShape;
  *shape = s;
  if (!nhwc_value(l)) return true;
  const int64_t n = s.dimensionSize[0], h = s.dimensionSize[1], w = s.dimensionSize[2], c = s.dimensionSize[3];
  *shape = hbDNNTensorShape{{s.dimensionSize[0], s.dimensionSize[3], s.dimensionSize[1], s.dimensionSize[2]}, 4};
  std::vector<float> nchw(v->size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k)
          nchw[static_cast<size_t>(((b * c + k) * h + y) * w + x)] = (*v)[static_cast<size_t>(((b * h + y) * w + x) * c + k)];
  v->swap(nchw);
  return true;
}

// Whether raw_shape(p) lists the data in memory order (dense row-major): the
// aligned shape of libdnn 1.x always does; a UCP value's strides may be
// padded or permuted.
bool memory_order(const hbDNNTensorProperties& p) {
  if (!kUcp) return true;
  const std::vector<int64_t> st = byte_strides(p);
  int64_t dense = element_size(p.tensorType);
  for (int i = p.validShape.numDimensions - 1; i >= 0; --i) {
    if (st[static_cast<size_t>(i)] != dense) return false;
    dense *= p.validShape.dimensionSize[i];
  }
  return true;
}

bool write_layer(LayerDumpState& st, const obpuLayerOutput& l) {
  std::string base = l.name;
  const int dup = st.used[base]++;
  if (dup > 0) base += "_dup" + std::to_string(dup);
  const std::string path = st.dir + "/" + base;
  const hbDNNTensorProperties& p = l.properties;
  bool ok = true;
  if (st.level == 3) {
    std::vector<float> v;
    hbDNNTensorShape shape{};
    ok = layer_floats(l, &v, &shape) && write_bytes(path + ".bin", v.data(), v.size() * sizeof(float)) &&
         write_txt(path + ".txt", reinterpret_cast<const uint8_t*>(v.data()), static_cast<int64_t>(v.size()),
                   HB_DNN_TENSOR_TYPE_F32, shape, *st.cfg);
  } else {
    const auto* data = static_cast<const uint8_t*>(l.data);
    const size_t size = static_cast<size_t>(std::max<int64_t>(p.alignedByteSize, 0));
    ok = write_bytes(path + ".bin", data, size);
    const int esize = element_size(p.tensorType);
    if (ok && st.level == 2 && esize > 0) {
      // The numbers in memory order, shaped when the shape describes that order.
      hbDNNTensorShape shape = raw_shape(p);
      const int64_t count = static_cast<int64_t>(size) / esize;
      if (element_count(shape) != count || !memory_order(p)) shape = hbDNNTensorShape{{static_cast<int32_t>(count)}, 1};
      ok = write_txt(path + ".txt", data, count, p.tensorType, shape, *st.cfg);
    }
  }
  st.order.push_back(base + ".bin");
  char line[160];
  std::snprintf(line, sizeof(line), "\t%s\t%d\t%d\t%d\t%s\t%s\t", l.onBpu ? "BPU" : "CPU", l.segmentIndex,
                l.firstInstruction, l.instructionCount, data_type_name(p.tensorType),
                shape_str(p.validShape).c_str());
  st.mapping += base + ".bin\t" + l.opType + line + l.nodes + "\t" + l.tensorName + "\n";
  return ok;
}

int32_t on_layer(obpuLayerOutput const* l, void* user) {
  auto* st = static_cast<LayerDumpState*>(user);
  if (!write_layer(*st, *l)) st->ok = false;
  return st->ok ? 0 : 1;
}

}  // namespace

bool dump_layers(const DumpConfig& cfg, int level, hbDNNHandle_t model, const std::vector<hbDNNTensor>& inputs,
                 std::vector<hbDNNTensor>* outputs) {
  LayerDumpState st;
  st.cfg = &cfg;
  st.level = level;
  st.dir = (cfg.dir.empty() ? std::string(".") : cfg.dir) + "/intermediate";
  bool existed = false;
  if (!make_dirs(st.dir, &existed)) return false;
  st.mapping = "file\top_type\ton\tsegment\tfirst_instruction\tinstruction_count\tdata_type\tvalid_shape\tnodes\ttensor\n";
  hbDNNTensor* out = outputs->data();
  const int32_t rc = obpuInferWithLayerOutputs(&out, inputs.data(), model, on_layer, &st);
  if (rc != 0 || !st.ok) {
    log_error("per-layer dump failed: %s", rc != 0 ? hbDNNGetErrorDesc(rc) : "cannot write the files");
    return false;
  }
  std::string order;
  for (const std::string& f : st.order) order += f + "\n";
  if (!write_bytes(st.dir + "/layer_mapping.txt", st.mapping.data(), st.mapping.size()) ||
      !write_bytes(st.dir + "/execution_order.txt", order.data(), order.size()))
    return false;
  log_info("dump_intermediate=%d: %zu layer outputs written to %s (layer_mapping.txt tells what computed each)",
           level, st.order.size(), st.dir.c_str());
  return true;
}

bool print_top5(const hbDNNTensor& t, const std::string& name) {
  std::vector<float> v;
  if (!output_to_float(t, &v)) return false;
  const int32_t batch = std::max(t.properties.validShape.dimensionSize[0], 1);
  const size_t classes = v.size() / static_cast<size_t>(batch);
  if (classes == 0) {
    log_error("output[0] '%s' is empty: no classification result", name.c_str());
    return false;
  }
  std::vector<size_t> order(classes);
  for (size_t i = 0; i < classes; ++i) order[i] = i;
  const size_t top = std::min<size_t>(5, classes);
  // NaN ranks last so that the order stays a strict weak ordering.
  auto key = [&](size_t i) { return std::isnan(v[i]) ? -INFINITY : v[i]; };
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
      [&](size_t a, size_t b) { return key(a) > key(b) || (key(a) == key(b) && a < b); });
  std::printf("Top %zu classes of output[0] '%s':\n", top, name.c_str());
  for (size_t k = 0; k < top; ++k)
    std::printf("class result: [id]%zu, [score]%.6f\n", order[k], static_cast<double>(v[order[k]]));
  return true;
}

}  // namespace openbpu::tools
