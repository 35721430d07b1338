// SPDX-License-Identifier: Apache-2.0
// libdnn 1.x calls the C++ tests share (header only; the including test
// links dnn and gtest): loading one model from memory with the log captured,
// and one inference of a float model with freshly allocated buffers.
#ifndef OPENBPU_TESTS_COMMON_DNN_CALLS_H_
#define OPENBPU_TESTS_COMMON_DNN_CALLS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"

namespace openbpu::testing {

struct LoadOutcome {
  int32_t rc = 0;
  std::string log;                  // stderr during the load
  hbPackedDNNHandle_t pack = nullptr;  // the caller releases it
};

// hbDNNInitializeFromDDR of one file; a failed load must leave the handle NULL.
inline LoadOutcome load_from_ddr(const std::vector<uint8_t>& bytes) {
  LoadOutcome o;
  o.pack = reinterpret_cast<hbPackedDNNHandle_t>(uintptr_t{1});
  const void* data[1] = {bytes.data()};
  int32_t len[1] = {static_cast<int32_t>(bytes.size())};
  ::testing::internal::CaptureStderr();
  o.rc = hbDNNInitializeFromDDR(&o.pack, data, len, 1);
  o.log = ::testing::internal::GetCapturedStderr();
  if (o.rc == HB_DNN_SUCCESS)
    EXPECT_NE(o.pack, nullptr);
  else
    EXPECT_EQ(o.pack, nullptr) << "a failed load must leave the handle NULL";
  return o;
}

// One inference of a model with one float input and one float output at
// `priority` (waiting while the engine's live-task limit is reached);
// returns the task's status, *output the output tensor's floats.
inline int32_t infer_once(hbDNNHandle_t h, const std::vector<float>& input, int priority,
                          std::vector<float>* output) {
  hbDNNTensor in{}, out{};
  EXPECT_EQ(hbDNNGetInputTensorProperties(&in.properties, h, 0), 0);
  EXPECT_EQ(hbDNNGetOutputTensorProperties(&out.properties, h, 0), 0);
  EXPECT_EQ(hbSysAllocCachedMem(&in.sysMem[0], static_cast<uint32_t>(in.properties.alignedByteSize)), 0);
  EXPECT_EQ(hbSysAllocCachedMem(&out.sysMem[0], static_cast<uint32_t>(out.properties.alignedByteSize)), 0);
  std::memcpy(in.sysMem[0].virAddr, input.data(), input.size() * sizeof(float));
  hbSysFlushMem(&in.sysMem[0], HB_SYS_MEM_CACHE_CLEAN);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  param.priority = priority;
  hbDNNTensor* outp = &out;
  int32_t rc;
  while ((rc = hbDNNInfer(&task, &outp, &in, h, &param)) == HB_DNN_TASK_NUM_EXCEED_LIMIT) std::this_thread::yield();
  if (rc == 0) {
    rc = hbDNNWaitTaskDone(task, 0);
    EXPECT_EQ(hbDNNReleaseTask(task), 0);
  }
  hbSysFlushMem(&out.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE);
  const float* p = static_cast<const float*>(out.sysMem[0].virAddr);
  output->assign(p, p + out.properties.alignedByteSize / 4);
  hbSysFreeMem(&in.sysMem[0]);
  hbSysFreeMem(&out.sysMem[0]);
  return rc;
}

}  // namespace openbpu::testing

#endif  // OPENBPU_TESTS_COMMON_DNN_CALLS_H_
