// SPDX-License-Identifier: Apache-2.0
// Profiler: per-node and per-task timing statistics, written as profiler.log
// (vendor layout: two JSON documents separated by "***") and profiler.csv.
#ifndef OPENBPU_RUNTIME_PROFILER_PROFILER_H_
#define OPENBPU_RUNTIME_PROFILER_PROFILER_H_

#include <cstdint>
#include <string>

#include "runtime/core/status.h"

namespace openbpu::rt::profiler {

enum class NodeKind { kBpu, kCpu };

// Cheap check used on hot paths.
bool enabled();

Status start(const std::string& directory);
// Opens a session from HB_DNN_PROFILER_LOG_PATH once (written at exit).
void start_from_env();
void set_running_condition(const std::string& model, int core_id, int frame_count,
                           int thread_num, double run_time_ms, double fps, double avg_latency_ms);
void record_node(const std::string& name, NodeKind kind, uint64_t ns);
// One finished task: pending (submit -> start), running (start -> end) and
// the BPU / CPU time spent in its nodes.
void record_task(uint64_t pending_ns, uint64_t running_ns, uint64_t bpu_ns, uint64_t cpu_ns);
Status stop();

}  // namespace openbpu::rt::profiler

#endif  // OPENBPU_RUNTIME_PROFILER_PROFILER_H_
