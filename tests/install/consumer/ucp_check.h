/* SPDX-License-Identifier: Apache-2.0
 * CHECK(call) for the consumer programs of the UCP generation: a non-zero
 * status prints the call, its code and hbDNNGetErrorDesc, and returns 1. */
#ifndef OPENBPU_TESTS_INSTALL_CONSUMER_UCP_CHECK_H_
#define OPENBPU_TESTS_INSTALL_CONSUMER_UCP_CHECK_H_

#include <stdint.h>
#include <stdio.h>

#include "hobot/dnn/hb_dnn_status.h"

#define CHECK(call)                                                                      \
  do {                                                                                   \
    int32_t rc_ = (call);                                                                \
    if (rc_ != 0) {                                                                      \
      fprintf(stderr, "%s failed: %d (%s)\n", #call, (int)rc_, hbDNNGetErrorDesc(rc_)); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

#endif /* OPENBPU_TESTS_INSTALL_CONSUMER_UCP_CHECK_H_ */
