// SPDX-License-Identifier: Apache-2.0
// The UCP-generation headers compile as C++ the way S100 applications use
// them: the unqualified SCALE/NONE, hbDNNQuantiType::NONE and
// hbDNNDataType::HB_DNN_TENSOR_TYPE_MAX, void* handles, bare-name includes
// next to "hobot/..." ones (abi_bare_names.cc), the 64-bit backend masks.
#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"

namespace {

TEST(UcpHeaders, VendorQuirks) {
  static_assert(std::is_same<hbDNNHandle_t, void*>::value, "handles are void*");
  static_assert(std::is_same<hbDNNPackedHandle_t, void*>::value, "handles are void*");
  static_assert(std::is_same<hbUCPTaskHandle_t, void*>::value, "handles are void*");
  static_assert(sizeof(hbDNNTensor) == 200 && offsetof(hbDNNTensor, properties) == 24, "S100 layout");
  static_assert(offsetof(hbDNNTensorProperties, stride) == 96, "S100 layout");
  hbDNNQuantiType t = SCALE;
  EXPECT_EQ(t, 1);
  EXPECT_EQ(hbDNNQuantiType::NONE, 0);
  EXPECT_EQ(hbDNNDataType::HB_DNN_TENSOR_TYPE_MAX, 14);
  EXPECT_EQ(HB_UCP_VPU_CORE_2, uint64_t{1} << 32);  // 64-bit masks, no int overflow
  static_assert(std::is_same<decltype(HB_UCP_BPU_CORE_ANY), unsigned long long>::value, "ULL masks");
}

TEST(UcpHeaders, SchedParamMacro) {
  hbUCPSchedParam p;
  p.priority = 200;
  p.customId = 9;
  p.backend = HB_UCP_BPU_CORE_0;
  p.deviceId = 3;
  HB_UCP_INITIALIZE_SCHED_PARAM(&p);
  EXPECT_EQ(p.priority, HB_UCP_PRIORITY_LOWEST);
  EXPECT_EQ(p.customId, 0);
  EXPECT_EQ(p.backend, HB_UCP_CORE_ANY);
  EXPECT_EQ(p.deviceId, 0u);
}

// The declared signatures equal the vendor's (checked unevaluated, so this
// test needs no library).
#define OBPU_SIG(fn, type) static_assert(std::is_same<decltype(&fn), type>::value, #fn)
OBPU_SIG(hbDNNInferV2, int32_t (*)(hbUCPTaskHandle_t*, hbDNNTensor*, hbDNNTensor const*, hbDNNHandle_t));
OBPU_SIG(hbUCPSubmitTask, int32_t (*)(hbUCPTaskHandle_t, hbUCPSchedParam*));
OBPU_SIG(hbUCPWaitTaskDone, int32_t (*)(hbUCPTaskHandle_t, int32_t));
OBPU_SIG(hbUCPSetTaskDoneCb, int32_t (*)(hbUCPTaskHandle_t, hbUCPTaskDoneCb, void*));
OBPU_SIG(hbUCPReleaseTask, int32_t (*)(hbUCPTaskHandle_t));
OBPU_SIG(hbUCPGetVersion, const char* (*)());
OBPU_SIG(hbUCPGetSocName, const char* (*)());
OBPU_SIG(hbUCPMalloc, int32_t (*)(hbUCPSysMem*, uint64_t, int32_t));
OBPU_SIG(hbUCPMallocCached, int32_t (*)(hbUCPSysMem*, uint64_t, int32_t));
OBPU_SIG(hbUCPMemFlush, int32_t (*)(hbUCPSysMem const*, int32_t));
OBPU_SIG(hbUCPFree, int32_t (*)(hbUCPSysMem*));
OBPU_SIG(hbUCPGetErrorDesc, char const* (*)(int32_t));
OBPU_SIG(hbDNNGetErrorDesc, char const* (*)(int32_t));
OBPU_SIG(hbDNNGetVersion, char const* (*)());
OBPU_SIG(hbDNNInitializeFromFiles, int32_t (*)(hbDNNPackedHandle_t*, char const**, int32_t));
OBPU_SIG(hbDNNInitializeFromDDR, int32_t (*)(hbDNNPackedHandle_t*, const void**, int32_t*, int32_t));
OBPU_SIG(hbDNNRelease, int32_t (*)(hbDNNPackedHandle_t));
OBPU_SIG(hbDNNGetModelNameList, int32_t (*)(char const***, int32_t*, hbDNNPackedHandle_t));
OBPU_SIG(hbDNNGetModelHandle, int32_t (*)(hbDNNHandle_t*, hbDNNPackedHandle_t, char const*));
OBPU_SIG(hbDNNGetInputCount, int32_t (*)(int32_t*, hbDNNHandle_t));
OBPU_SIG(hbDNNGetInputName, int32_t (*)(char const**, hbDNNHandle_t, int32_t));
OBPU_SIG(hbDNNGetInputTensorProperties, int32_t (*)(hbDNNTensorProperties*, hbDNNHandle_t, int32_t));
OBPU_SIG(hbDNNGetOutputCount, int32_t (*)(int32_t*, hbDNNHandle_t));
OBPU_SIG(hbDNNGetOutputName, int32_t (*)(char const**, hbDNNHandle_t, int32_t));
OBPU_SIG(hbDNNGetOutputTensorProperties, int32_t (*)(hbDNNTensorProperties*, hbDNNHandle_t, int32_t));
OBPU_SIG(hbDNNGetInputDesc, int32_t (*)(char const**, uint32_t*, int32_t*, hbDNNHandle_t, int32_t));
OBPU_SIG(hbDNNGetOutputDesc, int32_t (*)(char const**, uint32_t*, int32_t*, hbDNNHandle_t, int32_t));
OBPU_SIG(hbDNNGetModelDesc, int32_t (*)(char const**, uint32_t*, int32_t*, hbDNNHandle_t));
OBPU_SIG(hbDNNGetCompileBpuCoreNum, int32_t (*)(int32_t*, hbDNNHandle_t));
OBPU_SIG(hbDNNGetHBMDesc, int32_t (*)(char const**, uint32_t*, int32_t*, hbDNNPackedHandle_t, int32_t));
OBPU_SIG(hbDNNGetTaskOutputTensorProperties,
         int32_t (*)(hbDNNTensorProperties*, hbUCPTaskHandle_t, int32_t, int32_t));
#undef OBPU_SIG

}  // namespace
