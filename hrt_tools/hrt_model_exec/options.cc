// SPDX-License-Identifier: Apache-2.0
#include "options.h"

#include <strings.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api.h"
#include "log.h"
#include "openbpu/version.h"

namespace openbpu::tools {

bool has_hbm_model(const Options& opt) {
  for (const std::string& f : split_list(opt.model_file, ',')) {
    const size_t dot = f.rfind('.');
    if (dot != std::string::npos && f.compare(dot, std::string::npos, ".hbm") == 0) return true;
  }
  return false;
}

namespace {

enum class Type { kString, kInt, kBool };

struct Flag {
  const char* name;
  Type type;
  const char* def;    // default as shown by --help
  const char* modes;  // modes that use the flag
  const char* help;
  std::string Options::*str = nullptr;
  int Options::*num = nullptr;
  bool Options::*flag = nullptr;
};

Flag S(const char* n, const char* d, const char* m, const char* h, std::string Options::*p) {
  Flag f{n, Type::kString, d, m, h};
  f.str = p;
  return f;
}
Flag I(const char* n, const char* d, const char* m, const char* h, int Options::*p) {
  Flag f{n, Type::kInt, d, m, h};
  f.num = p;
  return f;
}
Flag B(const char* n, const char* d, const char* m, const char* h, bool Options::*p) {
  Flag f{n, Type::kBool, d, m, h};
  f.flag = p;
  return f;
}

// The 17 gen-A options in the order of the vendor documentation, then the
// gen-B additions.
const std::vector<Flag>& flags() {
  static const std::vector<Flag> table = {
      S("model_file", "\"\"", "all", "Model files, comma separated (required).",
        &Options::model_file),
      S("model_name", "\"\"", "all",
        "Model to use when the file(s) hold several;\n"
        "model_info prints all models without it.",
        &Options::model_name),
      I("core_id", "0", "infer,perf", "BPU core: 0 any core, 1 core0, 2 core1.", &Options::core_id),
      S("input_file", "\"\"", "infer,perf",
        "Input files, comma separated, one per model\n"
        "input in input order: image (jpg/jpeg/png/\n"
        "JPG/JPEG/PNG) or feature (bin/txt).",
        &Options::input_file),
      B("roi_infer", "false", "infer,perf", "Resizer-input inference on --roi regions.",
        &Options::roi_infer),
      S("roi", "\"\"", "infer,perf",
        "ROIs of the resizer inputs, ';' separated:\n"
        "\"left,top,right,bottom;...\"",
        &Options::roi),
      I("frame_count", "1/200", "infer,perf",
        "Frames to run: infer default 1, perf 200\n"
        "(perf: used when perf_time is 0).",
        &Options::frame_count),
      S("dump_intermediate", "0", "infer,perf",
        "Per-layer dumps (infer only): 0 off,\n"
        "1 raw .bin, 2 .bin + .txt, 3 float .bin + .txt.",
        &Options::dump_intermediate),
      B("enable_dump", "false", "infer", "Dump model inputs and outputs.", &Options::enable_dump),
      I("dump_precision", "9", "infer", "Decimal digits of floats in txt dumps.",
        &Options::dump_precision),
      B("hybrid_dequantize_process", "false", "infer",
        "With enable_dump: outputs as float32 valid\n"
        "data (integer outputs dequantized).",
        &Options::hybrid_dequantize_process),
      S("dump_format", "bin", "infer", "Dump file format: bin or txt.", &Options::dump_format),
      I("dump_txt_axis", "4", "infer",
        "txt dumps: line break axis, [0, n] for\n"
        "n-D data (4 on 4-D: a number per line).",
        &Options::dump_txt_axis),
      B("enable_cls_post_process", "false", "infer", "Print the top-5 classes of output 0.",
        &Options::enable_cls_post_process),
      I("perf_time", "0", "perf",
        "Run time in minutes (not 0: frame_count is\n"
        "ignored).",
        &Options::perf_time),
      I("thread_num", "1", "perf", "Submitting threads, [1, 8] (more: 8).", &Options::thread_num),
      S("profile_path", "\"\"", "perf",
        "Directory for profiler.log and profiler.csv\n"
        "(off when empty).",
        &Options::profile_path),
      S("dump_path", "\"\"", "infer", "Directory of dump files (default: cwd).",
        &Options::dump_path),
      B("dequantize_process", "false", "infer", "Same as hybrid_dequantize_process.",
        &Options::dequantize_process),
      B("remove_padding_process", "false", "infer",
        "With enable_dump: outputs as valid\n"
        "(unpadded) data of their own type.",
        &Options::remove_padding_process),
      S("input_img_properties", "\"\"", "infer,perf",
        kUcp ? "Y or UV per NV12 plane input, comma\n"
               "separated (checked against the model)."
             : "hbm models only (rejected).",
        &Options::input_img_properties),
      S("input_valid_shape", "\"\"", "infer,perf",
        kUcp ? "Valid shapes of dynamic inputs, ';'\n"
               "between inputs: \"1,300,300,1;1,150,150,2\"."
             : "hbm models only (rejected).",
        &Options::input_valid_shape),
      S("input_stride", "\"\"", "infer,perf",
        kUcp ? "Strides of inputs, ';' between inputs:\n"
               "\"96000,320,1,1;48000,320,2,1\" (default:\n"
               "the minimal 32-byte aligned ones)."
             : "hbm models only (rejected).",
        &Options::input_stride),
      S("remote", "\"\"", "all",
        "Run on an hrt_server at HOST:PORT: the files are\n"
        "uploaded, the output and dumps come back.",
        &Options::remote),
      S("token_file", "\"\"", "all", "Access token of --remote (chmod 600).",
        &Options::token_file),
  };
  return table;
}

const Flag* find_flag(const std::string& name) {
  for (const Flag& f : flags())
    if (name == f.name) return &f;
  return nullptr;
}

// gflags' parser accepts these spellings for booleans.
bool parse_bool(const std::string& v, bool* out) {
  static const char* kTrue[] = {"true", "t", "yes", "y", "1"};
  static const char* kFalse[] = {"false", "f", "no", "n", "0"};
  for (const char* s : kTrue)
    if (strcasecmp(v.c_str(), s) == 0) return *out = true, true;
  for (const char* s : kFalse)
    if (strcasecmp(v.c_str(), s) == 0) return *out = false, true;
  return false;
}

bool parse_int(const std::string& v, int* out) {
  if (v.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || x < INT_MIN || x > INT_MAX) return false;
  *out = static_cast<int>(x);
  return true;
}

const char* type_name(Type t) {
  switch (t) {
    case Type::kString: return "string";
    case Type::kInt: return "int32";
    case Type::kBool: return "bool";
  }
  return "?";
}

bool set_flag(const Flag& f, const std::string& value, Options* opt) {
  switch (f.type) {
    case Type::kString: opt->*(f.str) = value; return true;
    case Type::kInt:
      if (parse_int(value, &(opt->*(f.num)))) return true;
      break;
    case Type::kBool:
      if (parse_bool(value, &(opt->*(f.flag)))) return true;
      break;
  }
  std::fprintf(stderr, "ERROR: illegal value '%s' specified for %s flag '%s'\n", value.c_str(),
               type_name(f.type), f.name);
  return false;
}

bool bad_value(const char* flag, const std::string& why) {
  std::fprintf(stderr, "ERROR: invalid value for flag '%s': %s\n", flag, why.c_str());
  return false;
}

// Checks that do not need the model.
bool validate(Options* opt) {
  if (opt->model_file.empty() || split_list(opt->model_file, ',').empty()) {
    std::fprintf(stderr, "ERROR: flag 'model_file' is required (--model_file=<file.bin>[,...])\n");
    return false;
  }
  if (opt->core_id < 0) return bad_value("core_id", "must be 0 (any core), 1 (core0) or 2 (core1)");
  if (!opt->has("frame_count") && opt->mode == Mode::kPerf) opt->frame_count = 200;
  if (opt->frame_count < 1) return bad_value("frame_count", "must be at least 1");
  if (opt->perf_time < 0) return bad_value("perf_time", "must not be negative (minutes)");
  if (opt->thread_num < 1) return bad_value("thread_num", "must be in [1, 8]");
  if (opt->thread_num > 8) {
    log_warn("thread_num %d is larger than 8, 8 threads are used", opt->thread_num);
    opt->thread_num = 8;
  }
  if (opt->dump_format != "bin" && opt->dump_format != "txt")
    return bad_value("dump_format", "'" + opt->dump_format + "' is neither bin nor txt");
  if (opt->dump_precision < 0 || opt->dump_precision > 30)
    return bad_value("dump_precision", "must be in [0, 30]");
  if (opt->dump_txt_axis < 0) return bad_value("dump_txt_axis", "must not be negative");
  const std::string& di = opt->dump_intermediate;
  if (di != "0" && di != "1" && di != "2" && di != "3")
    return bad_value("dump_intermediate", "'" + di + "' is not one of 0, 1, 2, 3");
  if (di != "0" && opt->mode == Mode::kPerf)
    return bad_value("dump_intermediate", "per-layer dumps are written by infer (run infer with the same "
                                          "--input_file); perf measures undisturbed runs");
  if (di != "0" && opt->roi_infer)
    return bad_value("dump_intermediate", "per-layer dumps are not available with roi_infer");
  // hrt_model_exec hands .hbm models to hrt_model_exec_ucp (main.cc), which
  // checks these options against the model.
  const bool hbm = kUcp || has_hbm_model(*opt);
  if (!hbm && !opt->input_img_properties.empty())
    return bad_value("input_img_properties",
                     "hbm-only option: .bin models take an NV12 image as one tensor");
  if (!hbm && !opt->input_valid_shape.empty())
    return bad_value("input_valid_shape", "hbm-only option: .bin models have static input shapes");
  if (!hbm && !opt->input_stride.empty())
    return bad_value("input_stride", "hbm-only option: .bin models have static input strides");
  if (opt->mode == Mode::kInfer && split_list(opt->input_file, ',').empty()) {
    std::fprintf(stderr,
                 "ERROR: flag 'input_file' is required by infer (one file per model input, comma "
                 "separated)\n");
    return false;
  }
  if (!opt->roi.empty() && !opt->roi_infer) log_warn("--roi is ignored without --roi_infer=true");
  if (opt->dequantize_process) opt->hybrid_dequantize_process = true;
  if (!opt->remote.empty() && opt->token_file.empty()) {
    std::fprintf(stderr, "ERROR: flag 'remote' needs --token_file (the server's access token)\n");
    return false;
  }
  if (opt->remote.empty() && !opt->token_file.empty())
    log_warn("--token_file is ignored without --remote");
  return true;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> passed_options(const Options& opt) {
  static const char* kLocal[] = {"model_file", "input_file", "dump_path", "profile_path", "remote", "token_file"};
  std::vector<std::pair<std::string, std::string>> out;
  for (const Flag& f : flags()) {
    if (!opt.has(f.name)) continue;
    bool local = false;
    for (const char* l : kLocal) local = local || std::strcmp(l, f.name) == 0;
    if (local) continue;
    switch (f.type) {
      case Type::kString: out.emplace_back(f.name, opt.*(f.str)); break;
      case Type::kInt: out.emplace_back(f.name, std::to_string(opt.*(f.num))); break;
      case Type::kBool: out.emplace_back(f.name, opt.*(f.flag) ? "true" : "false"); break;
    }
  }
  return out;
}

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    const size_t b = item.find_first_not_of(" \t");
    const size_t e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
    start = end + 1;
  }
  return out;
}

void print_usage() {
  std::printf(
      "hrt_model_exec (OpenBPU %s): model information, inference and performance on the BPU\n"
      "\n"
      "Usage: hrt_model_exec <model_info|infer|perf> [--option=value | --option value ...]\n"
      "       hrt_model_exec -v | --version\n"
      "       hrt_model_exec -h | --help\n"
      "\n"
      "Modes:\n"
      "  model_info  print the inputs and outputs of the model(s)\n"
      "  infer       run the model on --input_file; print the time, dump or classify results\n"
      "  perf        measure latency and frame rate (random input unless --input_file)\n"
      "\n"
      "Options (a bare bool option means true; the last occurrence of an option wins):\n"
      "  %-27s %-7s %-8s %-11s %s\n",
      OPENBPU_VERSION_STRING, "option", "type", "default", "modes", "meaning");
  for (const Flag& f : flags()) {
    std::string help = f.help;
    std::string first = help.substr(0, help.find('\n'));
    std::printf("  --%-25s %-7s %-8s %-11s %s\n", f.name, type_name(f.type), f.def, f.modes,
                first.c_str());
    size_t pos = help.find('\n');
    while (pos != std::string::npos) {
      const size_t next = help.find('\n', pos + 1);
      std::printf("  %-56s %s\n", "", help.substr(pos + 1, next - pos - 1).c_str());
      pos = next;
    }
  }
  std::printf(
      "\n"
      "Examples:\n"
      "  hrt_model_exec model_info --model_file=model.bin\n"
      "  hrt_model_exec infer --model_file=model.bin --input_file=image.jpg --enable_dump\n"
      "  hrt_model_exec perf --model_file=model.bin --thread_num=2 --profile_path=.\n");
}

ParseResult parse_options(int argc, char** argv, Options* opt) {
  if (argc <= 1) return ParseResult::kHelp;
  bool mode_seen = false;
  std::string mode_token;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;  // gflags: everything after "--" is positional
    if (arg.size() < 2 || arg[0] != '-') {
      // The first positional token is the mode; the vendor tool silently
      // ignores any other one (e.g. "--model_file=a.bin b.bin").
      if (!mode_seen) mode_token = arg, mode_seen = true;
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = body, value;
    const size_t eq = body.find('=');
    const bool has_value = eq != std::string::npos;
    if (has_value) name = body.substr(0, eq), value = body.substr(eq + 1);
    if (name == "h" || name == "help") return ParseResult::kHelp;
    if (name == "v" || name == "version") return ParseResult::kVersion;
    const Flag* f = find_flag(name);
    if (f == nullptr && !has_value && name.size() > 2 && name.compare(0, 2, "no") == 0) {
      const Flag* neg = find_flag(name.substr(2));
      if (neg != nullptr && neg->type == Type::kBool) {
        opt->*(neg->flag) = false;
        opt->given.insert(neg->name);
        continue;
      }
    }
    if (f == nullptr) {
      std::fprintf(stderr, "ERROR: unknown command line flag '%s'\n", name.c_str());
      return ParseResult::kError;
    }
    if (!has_value) {
      if (f->type == Type::kBool) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        std::fprintf(stderr, "ERROR: flag '%s' is missing its argument\n", f->name);
        return ParseResult::kError;
      }
    }
    if (!set_flag(*f, value, opt)) return ParseResult::kError;
    opt->given.insert(f->name);
  }
  if (!mode_seen) {
    std::fprintf(stderr, "ERROR: no mode given: use model_info, infer or perf (see --help)\n");
    return ParseResult::kError;
  }
  if (mode_token == "model_info") {
    opt->mode = Mode::kModelInfo;
  } else if (mode_token == "infer") {
    opt->mode = Mode::kInfer;
  } else if (mode_token == "perf") {
    opt->mode = Mode::kPerf;
  } else {
    std::fprintf(stderr, "ERROR: unknown mode '%s': use model_info, infer or perf\n",
                 mode_token.c_str());
    return ParseResult::kError;
  }
  return validate(opt) ? ParseResult::kRun : ParseResult::kError;
}

}  // namespace openbpu::tools
