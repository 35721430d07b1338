// SPDX-License-Identifier: Apache-2.0
// The UCP generation's libdnn.so forwards every model function to
// libhbucp.so, which owns the runtime (loader, task engine, device), so that
// a task created by hbDNNInferV2 is the one hbUCPSubmitTask schedules. The
// one private entry point libhbucp exports for that returns this table; the
// version guards against mixing libraries of two builds.
#ifndef OPENBPU_RUNTIME_UCP_API_BRIDGE_H_
#define OPENBPU_RUNTIME_UCP_API_BRIDGE_H_

#include <cstdint>

#include "hobot/dnn/hb_dnn.h"

// Exported C entry points (the libraries are built with hidden visibility).
#define OBPU_UCP_API extern "C" __attribute__((visibility("default")))

namespace openbpu::ucp {

// Bumped whenever a member changes (append-only otherwise).
inline constexpr uint32_t kBridgeVersion = 1;

struct DnnApi {
  uint32_t version;
  int32_t (*initialize_from_files)(hbDNNPackedHandle_t*, char const**, int32_t);
  int32_t (*initialize_from_ddr)(hbDNNPackedHandle_t*, const void**, int32_t*, int32_t);
  int32_t (*release)(hbDNNPackedHandle_t);
  int32_t (*get_model_name_list)(char const***, int32_t*, hbDNNPackedHandle_t);
  int32_t (*get_model_handle)(hbDNNHandle_t*, hbDNNPackedHandle_t, char const*);
  int32_t (*get_input_count)(int32_t*, hbDNNHandle_t);
  int32_t (*get_input_name)(char const**, hbDNNHandle_t, int32_t);
  int32_t (*get_input_tensor_properties)(hbDNNTensorProperties*, hbDNNHandle_t, int32_t);
  int32_t (*get_output_count)(int32_t*, hbDNNHandle_t);
  int32_t (*get_output_name)(char const**, hbDNNHandle_t, int32_t);
  int32_t (*get_output_tensor_properties)(hbDNNTensorProperties*, hbDNNHandle_t, int32_t);
  int32_t (*get_input_desc)(char const**, uint32_t*, int32_t*, hbDNNHandle_t, int32_t);
  int32_t (*get_output_desc)(char const**, uint32_t*, int32_t*, hbDNNHandle_t, int32_t);
  int32_t (*get_model_desc)(char const**, uint32_t*, int32_t*, hbDNNHandle_t);
  int32_t (*get_compile_bpu_core_num)(int32_t*, hbDNNHandle_t);
  int32_t (*get_hbm_desc)(char const**, uint32_t*, int32_t*, hbDNNPackedHandle_t, int32_t);
  int32_t (*infer_v2)(hbUCPTaskHandle_t*, hbDNNTensor*, hbDNNTensor const*, hbDNNHandle_t);
  int32_t (*get_task_output_tensor_properties)(hbDNNTensorProperties*, hbUCPTaskHandle_t, int32_t, int32_t);
};

}  // namespace openbpu::ucp

// Exported by libhbucp.so: the table when `version` is kBridgeVersion, else
// NULL (libdnn.so and libhbucp.so of different builds).
OBPU_UCP_API const openbpu::ucp::DnnApi* openbpu_ucp_dnn_api(uint32_t version);

#endif  // OPENBPU_RUNTIME_UCP_API_BRIDGE_H_
