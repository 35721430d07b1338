// SPDX-License-Identifier: Apache-2.0
// Command line of hrt_model_exec: the vendor tool parses gflags, so we accept
// what gflags accepts (--flag=value, --flag value, -flag, bare booleans,
// --noflag, last occurrence wins, stray positional tokens ignored) and report
// errors with gflags' wording. Option names and defaults follow TOOLS.md 1.2
// (gen A) plus the gen-B extras of 1.3 that apply to .bin models.
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_OPTIONS_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_OPTIONS_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace openbpu::tools {

enum class Mode { kNone, kModelInfo, kInfer, kPerf };

struct Options {
  Mode mode = Mode::kNone;
  // TOOLS.md 1.2, in the documented order.
  std::string model_file;
  std::string model_name;
  int core_id = 0;
  std::string input_file;
  bool roi_infer = false;
  std::string roi;
  int frame_count = 1;  // 200 in perf unless given (see frame_count_given)
  std::string dump_intermediate = "0";
  bool enable_dump = false;
  int dump_precision = 9;
  bool hybrid_dequantize_process = false;
  std::string dump_format = "bin";
  int dump_txt_axis = 4;
  bool enable_cls_post_process = false;
  int perf_time = 0;
  int thread_num = 1;
  std::string profile_path;
  // TOOLS.md 1.3 (gen B) extras.
  std::string dump_path;
  bool dequantize_process = false;
  bool remove_padding_process = false;
  std::string input_img_properties;
  std::string input_valid_shape;
  std::string input_stride;
  // Remote run on an hrt_server (docs/hrt_server.md).
  std::string remote;      // HOST:PORT
  std::string token_file;  // access token (chmod 600)

  std::set<std::string> given;  // names of the flags found on the command line
  bool has(const char* flag) const { return given.count(flag) != 0; }
};

enum class ParseResult { kRun, kHelp, kVersion, kError };

// Parses argv into *opt. On kError a one-line message naming the flag has
// been printed. kRun means the options are complete and consistent for the
// selected mode (checks that need the model, such as core_id against the
// model's BPU core count, come later).
ParseResult parse_options(int argc, char** argv, Options* opt);

void print_usage();

// The options given on the command line as (name, value) text, in the
// table's order, without the file/path and remote options (model_file,
// input_file, dump_path, profile_path, remote, token_file): what a remote
// run passes to the server's hrt_model_exec.
std::vector<std::pair<std::string, std::string>> passed_options(const Options& opt);

// Splits "a,b,,c" into {"a","b","c"} (empty items dropped, spaces trimmed).
std::vector<std::string> split_list(const std::string& s, char sep);

// Whether --model_file names an .hbm model (the UCP generation's).
bool has_hbm_model(const Options& opt);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_OPTIONS_H_
