// SPDX-License-Identifier: Apache-2.0
#include "runtime/profiler/profiler.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "runtime/core/env.h"
#include "runtime/core/log.h"

namespace openbpu::rt::profiler {

namespace {

struct Stat {
  uint64_t count = 0;
  double sum_ms = 0, min_ms = 0, max_ms = 0;
  void add(double ms) {
    if (count == 0 || ms < min_ms) min_ms = ms;
    if (count == 0 || ms > max_ms) max_ms = ms;
    sum_ms += ms;
    ++count;
  }
  nlohmann::ordered_json json() const {
    nlohmann::ordered_json j;
    j["avg_time"] = count ? sum_ms / static_cast<double>(count) : 0.0;
    j["max_time"] = max_ms;
    j["min_time"] = min_ms;
    return j;
  }
};

struct Session {
  std::string dir;
  bool from_env = false;
  bool have_condition = false;
  nlohmann::ordered_json condition;
  std::map<std::string, Stat> nodes;
  std::map<std::string, NodeKind> kinds;
  Stat bpu_total, cpu_total, pending, running;
};

std::atomic<bool> g_enabled{false};
std::mutex g_mu;
Session* g_session = nullptr;

double ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

Status write_files(const Session& s) {
  nlohmann::ordered_json first;
  if (s.have_condition) {
    first = s.condition;
  } else {
    first["perf_result"] = {{"FPS", 0.0}, {"average_latency", s.running.count ? s.running.sum_ms / s.running.count : 0.0}};
    first["running_condition"] = {{"core_id", 0}, {"frame_count", s.running.count}, {"model_name", ""},
                                  {"run_time", 0.0}, {"thread_num", 1}};
  }
  nlohmann::ordered_json second;
  second["chip_latency"]["BPU_inference_time_cost"] = s.bpu_total.json();
  second["chip_latency"]["CPU_inference_time_cost"] = s.cpu_total.json();
  nlohmann::ordered_json nodes = nlohmann::ordered_json::object();
  for (const auto& [name, st] : s.nodes) nodes[name] = st.json();
  second["model_latency"] = nodes;
  second["task_latency"]["TaskPendingTime"] = s.pending.json();
  second["task_latency"]["TaskRunningTime"] = s.running.json();

  const std::string log_path = s.dir + "/profiler.log";
  const std::string csv_path = s.dir + "/profiler.csv";
  FILE* f = std::fopen(log_path.c_str(), "w");
  if (f == nullptr) return error(kCanNotOpenFile, "cannot write " + log_path);
  const std::string text = first.dump(4) + "\n***\n" + second.dump(4) + "\n";
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);

  f = std::fopen(csv_path.c_str(), "w");
  if (f == nullptr) return error(kCanNotOpenFile, "cannot write " + csv_path);
  std::fprintf(f, "node,type,count,avg_time(ms),max_time(ms),min_time(ms)\n");
  auto row = [&](const std::string& name, const char* type, const Stat& st) {
    std::fprintf(f, "%s,%s,%llu,%.6f,%.6f,%.6f\n", name.c_str(), type,
                 static_cast<unsigned long long>(st.count),
                 st.count ? st.sum_ms / static_cast<double>(st.count) : 0.0, st.max_ms, st.min_ms);
  };
  for (const auto& [name, st] : s.nodes)
    row(name, s.kinds.at(name) == NodeKind::kBpu ? "BPU" : "CPU", st);
  row("BPU_inference_time_cost", "chip", s.bpu_total);
  row("CPU_inference_time_cost", "chip", s.cpu_total);
  row("TaskPendingTime", "task", s.pending);
  row("TaskRunningTime", "task", s.running);
  std::fclose(f);
  return Status::Ok();
}

void write_at_exit() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_session != nullptr && g_session->from_env) {
    write_files(*g_session);
    g_enabled.store(false);
  }
}

}  // namespace

bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

Status start(const std::string& directory) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (directory.empty()) return error(kInvalidArgument, "profiler directory is empty");
  delete g_session;
  g_session = new Session();
  g_session->dir = directory;
  g_enabled.store(true);
  return Status::Ok();
}

void start_from_env() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string& dir = env().profiler_log_path;  // HB_DNN_PROFILER_LOG_PATH
    if (dir.empty()) return;
    std::lock_guard<std::mutex> lk(g_mu);
    if (g_session != nullptr) return;
    g_session = new Session();
    g_session->dir = dir;
    g_session->from_env = true;
    g_enabled.store(true);
    std::atexit(write_at_exit);
  });
}

void set_running_condition(const std::string& model, int core_id, int frame_count, int thread_num,
                           double run_time_ms, double fps, double avg_latency_ms) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_session == nullptr) return;
  nlohmann::ordered_json j;
  j["perf_result"] = {{"FPS", fps}, {"average_latency", avg_latency_ms}};
  j["running_condition"] = {{"core_id", core_id}, {"frame_count", frame_count}, {"model_name", model},
                            {"run_time", run_time_ms}, {"thread_num", thread_num}};
  g_session->condition = j;
  g_session->have_condition = true;
}

void record_node(const std::string& name, NodeKind kind, uint64_t ns) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_session == nullptr) return;
  g_session->nodes[name].add(ms(ns));
  g_session->kinds[name] = kind;
}

void record_task(uint64_t pending_ns, uint64_t running_ns, uint64_t bpu_ns, uint64_t cpu_ns) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_session == nullptr) return;
  g_session->pending.add(ms(pending_ns));
  g_session->running.add(ms(running_ns));
  g_session->bpu_total.add(ms(bpu_ns));
  g_session->cpu_total.add(ms(cpu_ns));
}

Status stop() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_session == nullptr) return error(kApiUseError, "no profiler session is open");
  const Status st = write_files(*g_session);
  delete g_session;
  g_session = nullptr;
  g_enabled.store(false);
  return st;
}

}  // namespace openbpu::rt::profiler
