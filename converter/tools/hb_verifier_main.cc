// SPDX-License-Identifier: Apache-2.0
// hb_verifier -m QUANTI.onnx,MODEL.bin [-i INPUT]... [-c DIGITS] and its
// X3-era form hb_model_verifier -q QUANTI.onnx -b MODEL.bin [-i INPUT] [-d
// DIGITS] (docs/hb_verifier.md): runs the quantized ONNX model with the
// converter's host executor and the .bin with hrt_model_exec on the
// simulator and / or on a board (an hrt_server, hrt_model_exec --remote) on
// the same inputs (images, raw input files, or random data) and compares
// every output pairwise. The numerics contract makes them bit-exact; any
// difference is a mismatch and the exit status is 1.
#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "converter/frontend/onnx/onnx_io.h"
#include "converter/ir/executor.h"
#include "converter/pipeline.h"
#include "converter/tools/infer_input.h"
#include "converter/tools/mapper_log.h"
#include "converter/tools/model_file.h"
#include "converter/tools/model_info.h"
#include "converter/tools/vec_diff.h"
#include "schema/writer.h"

namespace {

using namespace openbpu::cvt;

struct Args {
  std::string quanti, bin;
  std::vector<std::string> inputs;
  int digits = 5;
  bool per_node = false;  // -r
  std::string board, token_file;  // hrt_server HOST:PORT and its token file
  bool sim = true;                // run the .bin on the host simulator
  std::string out_dir = "verifier_output";
};

std::string self_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.find_last_of('/'));
}

// Runs a program, its output into the log; true on exit status 0.
bool run_program(const std::vector<std::string>& argv, MapperLog& log) {
  int fds[2];
  if (::pipe(fds) != 0) return false;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    std::fprintf(stderr, "cannot run %s: %s\n", a[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) log.debug("hrt_model_exec: " + l);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

// The bytes of one model input: an image (converted as hb_mapper infer
// does), a raw file of the input's size, or seeded random data.
bool input_bytes(const Value& gv, const InputParameter* ip, const std::string& file, uint32_t seed,
                 std::vector<uint8_t>* bytes, std::string* err) {
  const int64_t need = gv.byte_size;
  if (file.empty()) {
    std::mt19937 rng(seed);
    bytes->resize(static_cast<size_t>(need));
    if (gv.rt_type == 13) {  // float32 featuremap: N(0, 1)
      std::normal_distribution<float> d(0.0f, 1.0f);
      for (size_t i = 0; i + 4 <= bytes->size(); i += 4) {
        const float v = d(rng);
        std::memcpy(bytes->data() + i, &v, 4);
      }
    } else {
      for (auto& b : *bytes) b = static_cast<uint8_t>(rng() & 0xff);
    }
    return true;
  }
  if (is_image_file(file)) {
    std::vector<float> values;
    if (ip == nullptr) {
      *err = "no input parameters for '" + gv.name + "' to convert the image " + file;
      return false;
    }
    return image_to_train_values(file, *ip, &values, err) && train_values_to_rt_bytes(*ip, values, bytes, err);
  }
  std::ifstream f(file, std::ios::binary);
  if (!f) {
    *err = "cannot open the input file " + file;
    return false;
  }
  bytes->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (static_cast<int64_t>(bytes->size()) != need) {
    *err = file + " has " + std::to_string(bytes->size()) + " bytes; input '" + gv.name + "' takes " +
           std::to_string(need) + " (or give an image)";
    return false;
  }
  return true;
}

struct Mismatch {
  uint64_t total = 0, miss = 0, diff = 0, nan = 0;
  double max_abs = 0;
};

Mismatch compare(const std::vector<float>& a, const std::vector<float>& b, int digits) {
  Mismatch m;
  m.total = std::max(a.size(), b.size());
  m.miss = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  const double tol = std::pow(10.0, -digits);
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      m.nan += std::isnan(a[i]) != std::isnan(b[i]) ? 1 : 0;
      continue;
    }
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    m.max_abs = std::max(m.max_abs, d);
    if (d > tol) ++m.diff;
  }
  return m;
}

// The .bin output i as hrt_model_exec dumped it (float32 valid data).
bool bin_output(const std::string& dir, size_t i, std::vector<float>* out, std::string* err) {
  const std::string prefix = "model_infer_output_" + std::to_string(i) + "_";
  DIR* d = ::opendir(dir.c_str());
  std::string found;
  while (d != nullptr) {
    const dirent* e = ::readdir(d);
    if (e == nullptr) break;
    const std::string n = e->d_name;
    if (n.compare(0, prefix.size(), prefix) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".bin") == 0) found = n;
  }
  if (d) ::closedir(d);
  if (found.empty()) {
    *err = "hrt_model_exec wrote no output " + std::to_string(i);
    return false;
  }
  return read_floats(dir + "/" + found, out, err);
}

// Logs one comparison of two sources (Quanti.onnx, Sim, Arm) in the seed's
// lines; true when it passed.
bool report(MapperLog& log, const std::string& left, const std::string& right, const std::string& what,
            const Mismatch& mm) {
  const uint64_t bad = mm.miss + mm.diff + mm.nan;
  log.info("compare source: " + left + " VS " + right + ", " + what);
  if (bad == 0) {
    log.info(left + " and " + right + " result Strict check PASSED");
    return true;
  }
  log.info("mismatch line num: " + std::to_string(bad));
  log.info("****************************");
  log.info("mismatch.line_miss num: " + std::to_string(mm.miss));
  log.info("mismatch.line_diff num: " + std::to_string(mm.diff));
  log.info("mismatch.line_nan num: " + std::to_string(mm.nan));
  log.info("****************************");
  log.info("total line num: " + std::to_string(mm.total));
  log.info("mismatch rate: " + std::to_string(static_cast<double>(bad) / static_cast<double>(mm.total)));
  log.info("max abs error: " + std::to_string(mm.max_abs));
  log.error(left + " and " + right + " result Strict check FAILED");
  return false;
}

// -r: every layer hrt_model_exec --dump_intermediate=3 wrote (a CPU operator,
// a layer inside a BPU subgraph or a whole subgraph, layer_mapping.txt)
// against the quantized model's float value of the same ONNX tensor. Values
// inside a BPU subgraph and integer subgraph outputs (before their
// Dequantize) have no float value in the quantized model.
bool compare_layers(const std::string& dir, const std::map<std::string, Value>& values, int digits, MapperLog& log,
                    bool* pass) {
  std::ifstream f(dir + "/layer_mapping.txt");
  std::string line;
  if (!f || !std::getline(f, line)) return log.error("hrt_model_exec wrote no " + dir + "/layer_mapping.txt"), false;
  int compared = 0, skipped = 0;
  while (std::getline(f, line)) {
    std::vector<std::string> col;
    std::istringstream ls(line);
    for (std::string c; std::getline(ls, c, '\t');) col.push_back(c);
    if (col.size() < 10) return log.error("layer_mapping.txt: bad line '" + line + "'"), false;
    const auto it = values.find(col[9]);
    if (it == values.end() || it->second.native || it->second.elem_type != kFloat || !it->second.data) {
      ++skipped;
      continue;
    }
    std::vector<float> q(it->second.data->size() / 4), sim;
    std::memcpy(q.data(), it->second.data->data(), q.size() * 4);
    std::string err;
    if (!read_floats(dir + "/" + col[0], &sim, &err)) return log.error(err), false;
    *pass = report(log, "Quanti.onnx", "Sim", "node '" + col[8] + "' (" + col[2] + ", tensor '" + col[9] + "')",
                   compare(q, sim, digits)) &&
            *pass;
    ++compared;
  }
  log.info("per-node comparison: " + std::to_string(compared) + " layer(s) compared, " + std::to_string(skipped) +
           " without a float value in the quantized model (values inside BPU subgraphs, integer subgraph outputs)");
  return true;
}

// The outputs of one run of the model (float32 valid data per output).
struct Result {
  std::string source;  // Quanti.onnx, Sim (host simulator) or Arm (the board)
  std::vector<std::vector<float>> outputs;
};

// The .bin through hrt_model_exec infer on the host simulator (-r: with its
// per-layer dumps), or on the board's hrt_server (--remote; the dumps come
// back into the same folder).
bool run_bin(const Args& a, const std::string& input_list, bool board, size_t outputs, Result* res, MapperLog& log) {
  const std::string dir = a.out_dir + (board ? "/arm" : "/sim");
  std::vector<std::string> cmd = {self_dir() + "/hrt_model_exec", "infer", "--model_file=" + a.bin,
                                  "--input_file=" + input_list, "--enable_dump=true",
                                  "--hybrid_dequantize_process=true", "--dump_path=" + dir};
  if (board) cmd.insert(cmd.end(), {"--remote=" + a.board, "--token_file=" + a.token_file});
  if (a.per_node && !board) cmd.push_back("--dump_intermediate=3");
  if (!run_program(cmd, log)) {
    log.error("hrt_model_exec failed on " + a.bin + (board ? " on the board " + a.board : "") +
              " (details in hb_verifier.log)");
    return false;
  }
  std::string err;
  res->outputs.resize(outputs);
  for (size_t i = 0; i < outputs; ++i)
    if (!bin_output(dir, i, &res->outputs[i], &err)) return log.error(err), false;
  return true;
}

int verify(const Args& a, MapperLog& log) {
  std::string err;
  LoadedFile lf;
  if (!load_model_file(a.bin, &lf, &err)) return log.error(err), 1;
  if (openbpu::model::is_packed(lf.file)) return log.error("pack model is not supported"), 1;
  const auto& m = *lf.file.models[0];
  for (const auto& r : m.removed_nodes)
    if (r->op_type != "Dequantize") {
      log.error("node '" + r->name + "' (" + r->op_type + ") was removed from the .bin: only models whose removed "
                "nodes are Dequantize nodes can be compared with the quantized ONNX model");
      return 1;
    }
  Graph g;
  if (!onnxio::load_model(a.quanti, &g, &err)) return log.error(err), 1;
  std::vector<InputParameter> params;
  if (!input_parameters_from_metadata(m, &params, &err)) log.warn(err + "; image inputs cannot be converted");
  if (!a.inputs.empty() && a.inputs.size() != g.inputs.size())
    return log.error(std::to_string(a.inputs.size()) + " input file(s) for " + std::to_string(g.inputs.size()) +
                     " model input(s)"), 1;
  ::mkdir(a.out_dir.c_str(), 0755);
  std::map<std::string, Value> feed;
  std::string input_list;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& gv = *g.value(g.inputs[i]);
    const InputParameter* ip = nullptr;
    for (const auto& p : params)
      if (p.name == gv.name) ip = &p;
    std::vector<uint8_t> bytes;
    if (!input_bytes(gv, ip, a.inputs.empty() ? "" : a.inputs[i], static_cast<uint32_t>(1000 + i), &bytes, &err))
      return log.error(err), 1;
    const std::string path = a.out_dir + "/input_" + std::to_string(i) + ".bin";
    if (!write_file(path, bytes)) return log.error("cannot write " + path), 1;
    input_list += (i ? "," : "") + path;
    Value v = gv;
    v.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    feed[gv.name] = v;
  }
  FloatExecutor exec;
  std::map<std::string, Value> outs;
  if (!exec.prepare(g, &err) || !exec.run(feed, &outs, &err, nullptr, a.per_node))
    return log.error("quantized model: " + err), 1;
  std::vector<Result> results(1);
  results[0].source = "Quanti.onnx";
  for (const std::string& o : g.outputs) {
    const Value& q = outs[o];
    std::vector<float> v(static_cast<size_t>(q.data->size() / 4));
    std::memcpy(v.data(), q.data->data(), v.size() * 4);
    results[0].outputs.push_back(std::move(v));
  }
  for (const bool board : {false, true}) {
    if (board ? a.board.empty() : !a.sim) continue;
    results.emplace_back();
    results.back().source = board ? "Arm" : "Sim";
    if (!run_bin(a, input_list, board, g.outputs.size(), &results.back(), log)) return 1;
  }
  bool pass = true;
  if (a.per_node && !compare_layers(a.out_dir + "/sim/intermediate", outs, a.digits, log, &pass)) return 1;
  for (size_t l = 0; l < results.size(); ++l)
    for (size_t r = l + 1; r < results.size(); ++r)
      for (size_t i = 0; i < g.outputs.size(); ++i)
        pass = report(log, results[l].source, results[r].source, "output " + std::to_string(i) + " '" + g.outputs[i] + "'",
                      compare(results[l].outputs[i], results[r].outputs[i], a.digits)) &&
               pass;
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string self = argv[0];
  const bool x3_cli = self.size() >= 17 && self.compare(self.size() - 17, 17, "hb_model_verifier") == 0;
  CLI::App app{"hb_verifier: check that the .bin (simulator, board) computes what the quantized ONNX model computes",
               x3_cli ? "hb_model_verifier" : "hb_verifier"};
  app.set_version_flag("--version", std::string(kMapperVersion));
  Args a;
  std::string models;
  bool run_sim = false;
  if (x3_cli) {
    app.add_option("-q,--quanti_model", a.quanti, "the quantized ONNX model")->required();
    app.add_option("-b,--bin_model", a.bin, "the .bin model")->required();
    app.add_option("-a,--arm-board-ip", a.board, "HOST:PORT of the board's hrt_server (the .bin also runs there)");
    app.add_option("-i,--input-img", a.inputs, "input image or raw .bin (default: random data)");
    app.add_option("-d,--compare_digits", a.digits, "decimal places compared")->capture_default_str();
  } else {
    app.add_option("-m,--model", models, "QUANTI.onnx,MODEL.bin")->required();
    app.add_option("-b,--board-ip", a.board, "HOST:PORT of the board's hrt_server (the .bin runs there)");
    app.add_option("-i,--input,--input-img", a.inputs, "input image or raw .bin per model input (default: random)");
    app.add_flag("-s,--run-sim", run_sim, "with -b: also run the .bin on the x86 simulator (without -b: always)");
    app.add_flag("-r,--dump-all-nodes-results", a.per_node,
                 "also compare every layer hrt_model_exec --dump_intermediate writes with the quantized model");
    app.add_option("-c,--compare_digits", a.digits, "decimal places compared")->capture_default_str();
  }
  app.add_option("--token_file", a.token_file, "the hrt_server's access token file (chmod 600), required with a board");
  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<MapperLog> log(make_mapper_log("hb_verifier.log"));
  if (!a.board.empty()) {
    // A board is an hrt_server (docs/hrt_server.md), not an ssh login.
    const size_t colon = a.board.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == a.board.size())
      return log->error("board '" + a.board + "': give HOST:PORT of the board's hrt_server"), 1;
    if (a.token_file.empty()) return log->error("board '" + a.board + "': --token_file is required"), 1;
    // hb_verifier runs the simulator only with -s; hb_model_verifier always.
    a.sim = x3_cli || run_sim;
    if (a.per_node && !a.sim) return log->error("-r compares the simulator's layers: add -s to the board run"), 1;
  } else if (!a.token_file.empty()) {
    return log->error("--token_file is given without a board address"), 1;
  }
  if (!models.empty()) {
    for (std::string p; !models.empty();) {
      const size_t c = models.find(',');
      p = models.substr(0, c);
      models = c == std::string::npos ? "" : models.substr(c + 1);
      if (p.size() > 5 && p.compare(p.size() - 5, 5, ".onnx") == 0) a.quanti = p;
      else if (has_model_suffix(p)) a.bin = p;
      else return log->error("-m: '" + p + "' is neither a .onnx nor a .bin model"), 1;
    }
    if (a.quanti.empty() || a.bin.empty()) return log->error("-m needs QUANTI.onnx,MODEL.bin"), 1;
  }
  if (a.digits < 0 || a.digits > 15) return log->error("compare digits must be in [0, 15]"), 1;
  log->info("Start verifying " + a.quanti + " and " + a.bin);
  return verify(a, *log);
}
