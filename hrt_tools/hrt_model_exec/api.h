// SPDX-License-Identifier: Apache-2.0
// The runtime API hrt_model_exec is built on. The tool is built twice from
// the same sources: `hrt_model_exec` on libdnn 1.x (dnn/*.h, .bin models)
// and `hrt_model_exec_ucp` on the UCP generation (hobot/*.h, .hbm models,
// OPENBPU_HRT_UCP). Functions whose behaviour differs between the two live
// in api_dnn.cc / api_ucp.cc; this header gives the shared code the few
// names that differ.
#ifndef OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_API_H_
#define OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_API_H_

#include <cstdint>

#ifdef OPENBPU_HRT_UCP
#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_sys.h"
#else
#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#endif

namespace openbpu::tools {

#ifdef OPENBPU_HRT_UCP
inline constexpr bool kUcp = true;
using PackedHandle = hbDNNPackedHandle_t;
using SysMem = hbUCPSysMem;
inline SysMem& tensor_mem(hbDNNTensor& t) { return t.sysMem; }
inline const SysMem& tensor_mem(const hbDNNTensor& t) { return t.sysMem; }
#else
inline constexpr bool kUcp = false;
using PackedHandle = hbPackedDNNHandle_t;
using SysMem = hbSysMem;
inline SysMem& tensor_mem(hbDNNTensor& t) { return t.sysMem[0]; }
inline const SysMem& tensor_mem(const hbDNNTensor& t) { return t.sysMem[0]; }
#endif

// A region of interest of a resizer input, inclusive coordinates.
struct Roi {
  int32_t left = 0, top = 0, right = 0, bottom = 0;
};

// How an image file feeds a model input.
enum class ImageKind {
  kNone,     // not an image input: .bin / .txt only
  kNV12,     // one NV12 tensor (Y then UV), gen A
  kY,        // gray
  kRGB,
  kBGR,
  kYUV444,
  kPlaneY,   // the Y plane of an NV12 image (gen B: inputs <name>_y)
  kPlaneUV,  // the interleaved UV plane of an NV12 image (gen B: <name>_uv)
};

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_MODEL_EXEC_API_H_
