// SPDX-License-Identifier: Apache-2.0
// Profiling: per-task pending and running time and per-node (BPU subgraph,
// CPU operator, input preprocess, output layout conversion) min/avg/max in
// profiler.log (two JSON documents separated by "***") and profiler.csv.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "openbpu/openbpu.h"
#include "tests/common/test_models.h"
#include "tests/scheduling/sched_util.h"

namespace openbpu::sched_test {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void expect_stat(const nlohmann::json& j, const std::string& what) {
  ASSERT_TRUE(j.contains("avg_time") && j.contains("max_time") && j.contains("min_time")) << what;
  const double mn = j["min_time"], av = j["avg_time"], mx = j["max_time"];
  EXPECT_GE(mn, 0.0) << what;
  EXPECT_LE(mn, av * (1 + 1e-9) + 1e-12) << what;
  EXPECT_LE(av, mx * (1 + 1e-9) + 1e-12) << what;
}

TEST(SchedProfiler, PerTaskAndPerNodeStatistics) {
  setenv("HB_MAX_TASK_NUM", "1", 1);  // tasks queue in the engine: pending time
  char tmpl[] = "/tmp/obpu_sched_prof_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  testing::TinyCnn tiny;
  testing::Nv12Classifier cls;
  testing::TrivialBpu odd;
  odd.c = 5;  // channels padded to 8 in the model's layout
  const Loaded a = load_model(tiny.build(), "tiny_cnn");
  const Loaded b = load_model(cls.build(), "nv12_classifier");
  const Loaded c = load_model(odd.build(), "trivial_bpu");
  ASSERT_EQ(a.rc, 0);
  ASSERT_EQ(b.rc, 0);
  ASSERT_EQ(c.rc, 0);
  ASSERT_EQ(obpuProfilerStart(dir.c_str()), 0);

  constexpr int kRounds = 6;
  int tasks = 0;
  for (int r = 0; r < kRounds; ++r) {
    Io ia(a.handle), ib(b.handle), ic(c.handle);
    ia.fill_inputs(1);
    ib.fill_inputs(2);
    // An nv12 image with padded rows and a tight int8 tensor are staged
    // ("Preprocess"); a tight output is unpadded after the BPU
    // ("<model>_output_layout_convert").
    hbDNNTensor padded = ib.in[0];
    padded.properties.alignedShape.dimensionSize[3] = cls.w + 16;
    hbSysAllocCachedMem(&padded.sysMem[0], static_cast<uint32_t>((cls.w + 16) * cls.h * 3 / 2));
    std::memset(padded.sysMem[0].virAddr, 0x40, (cls.w + 16) * cls.h * 3 / 2);
    ic.in[0].properties.alignedShape = ic.in[0].properties.validShape;
    ic.out[0].properties.alignedShape = ic.out[0].properties.validShape;
    ic.fill_inputs(3);
    std::vector<hbDNNTaskHandle_t> ts(3, nullptr);
    ASSERT_EQ(infer(&ts[0], a.handle, ia, ctrl(0)), 0);
    hbDNNTensor* outp = ib.out.data();
    hbDNNInferCtrlParam p = ctrl(0);
    ASSERT_EQ(hbDNNInfer(&ts[1], &outp, &padded, b.handle, &p), 0);
    ASSERT_EQ(infer(&ts[2], c.handle, ic, ctrl(0)), 0);
    for (auto t : ts) {
      EXPECT_EQ(hbDNNWaitTaskDone(t, 0), 0);
      EXPECT_EQ(hbDNNReleaseTask(t), 0);
      ++tasks;
    }
    hbSysFreeMem(&padded.sysMem[0]);
    // The trivial model copies its input.
    const auto* in = static_cast<const int8_t*>(ic.in[0].sysMem[0].virAddr);
    const auto* out = static_cast<const int8_t*>(ic.out[0].sysMem[0].virAddr);
    EXPECT_EQ(std::vector<int8_t>(in, in + 5), std::vector<int8_t>(out, out + 5));
  }
  ASSERT_EQ(obpuProfilerSetRunningCondition("tiny_cnn", 0, tasks, 1, 12.5, 480.0, 2.0), 0);
  ASSERT_EQ(obpuProfilerStop(), 0);

  const std::string log = read_file(dir + "/profiler.log");
  const size_t sep = log.find("\n***\n");
  ASSERT_NE(sep, std::string::npos) << log;
  const nlohmann::json first = nlohmann::json::parse(log.substr(0, sep));
  const nlohmann::json second = nlohmann::json::parse(log.substr(sep + 5));
  EXPECT_EQ(first["perf_result"]["FPS"], 480.0);
  EXPECT_EQ(first["running_condition"]["frame_count"], tasks);
  EXPECT_EQ(first["running_condition"]["thread_num"], 1);
  expect_stat(second["chip_latency"]["BPU_inference_time_cost"], "BPU chip");
  expect_stat(second["chip_latency"]["CPU_inference_time_cost"], "CPU chip");
  expect_stat(second["task_latency"]["TaskPendingTime"], "pending");
  expect_stat(second["task_latency"]["TaskRunningTime"], "running");
  // With one task processed at a time, later tasks waited.
  EXPECT_GT(static_cast<double>(second["task_latency"]["TaskPendingTime"]["max_time"]), 0.0);
  EXPECT_GT(static_cast<double>(second["task_latency"]["TaskRunningTime"]["min_time"]), 0.0);
  const auto& nodes = second["model_latency"];
  for (const char* n : {"Quantize_data", "BPU_TINY_subgraph_0", "Dequantize_conv2_out", "BPU_CLS_subgraph_0",
                        "Dequantize_fc", "Softmax_prob", "Preprocess", "BPU_TRIVIAL_subgraph_0",
                        "trivial_bpu_output_layout_convert"}) {
    ASSERT_TRUE(nodes.contains(n)) << n << " in " << nodes.dump();
    expect_stat(nodes[n], n);
  }

  // profiler.csv: one row per node, chip total and task statistic, with counts.
  std::istringstream csv(read_file(dir + "/profiler.csv"));
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_EQ(line, "node,type,count,avg_time(ms),max_time(ms),min_time(ms)");
  std::map<std::string, std::pair<std::string, long>> rows;
  while (std::getline(csv, line)) {
    std::istringstream ls(line);
    std::string name, type, count;
    std::getline(ls, name, ',');
    std::getline(ls, type, ',');
    std::getline(ls, count, ',');
    rows[name] = {type, std::stol(count)};
  }
  EXPECT_EQ(rows["TaskPendingTime"], std::make_pair(std::string("task"), static_cast<long>(tasks)));
  EXPECT_EQ(rows["TaskRunningTime"], std::make_pair(std::string("task"), static_cast<long>(tasks)));
  EXPECT_EQ(rows["BPU_TINY_subgraph_0"], std::make_pair(std::string("BPU"), static_cast<long>(kRounds)));
  EXPECT_EQ(rows["Softmax_prob"], std::make_pair(std::string("CPU"), static_cast<long>(kRounds)));
  EXPECT_EQ(rows["Preprocess"].second, 2L * kRounds);
  EXPECT_EQ(rows["BPU_inference_time_cost"].first, "chip");
  EXPECT_EQ(hbDNNRelease(a.pack), 0);
  EXPECT_EQ(hbDNNRelease(b.pack), 0);
  EXPECT_EQ(hbDNNRelease(c.pack), 0);
  std::remove((dir + "/profiler.log").c_str());
  std::remove((dir + "/profiler.csv").c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace openbpu::sched_test
