// SPDX-License-Identifier: Apache-2.0
// Applications (the S100 model zoo's CMake files) add hobot/ and hobot/dnn/
// to the include path and mix bare names with "hobot/..." paths in one
// translation unit; the headers resolve their own includes relative to
// themselves, so both work together.
#include "hb_dnn_status.h"
#include "hb_ucp_status.h"
#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp.h"
#include "hb_ucp_sys.h"
#include "hb_dnn.h"

#include <gtest/gtest.h>

TEST(UcpHeaders, BareNames) {
  hbDNNTensor t{};
  t.properties.quantiType = SCALE;
  EXPECT_EQ(sizeof(t), 200u);
  EXPECT_EQ(HB_DNN_INCOMPATIBLE_MODEL, HB_UCP_MODEL_INCOMPATIBLE);
}
