// SPDX-License-Identifier: Apache-2.0
// The polling before a thread sleeps (bpu_sim/spin.h) for the driver's and
// the runtime's threads: the runtime reaches bpu_sim only through the
// driver.
#ifndef OPENBPU_BPU_DRIVER_SPIN_H_
#define OPENBPU_BPU_DRIVER_SPIN_H_

#include "bpu_sim/spin.h"

namespace openbpu::drv {
using sim::PollingCondition;
}  // namespace openbpu::drv

#endif  // OPENBPU_BPU_DRIVER_SPIN_H_
