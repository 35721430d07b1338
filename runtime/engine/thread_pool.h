// SPDX-License-Identifier: Apache-2.0
// CPU worker pool for CPU segments: a fixed set of threads taking jobs in
// (priority desc, submission order) order. Threads start on first use.
#ifndef OPENBPU_RUNTIME_ENGINE_THREAD_POOL_H_
#define OPENBPU_RUNTIME_ENGINE_THREAD_POOL_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "bpu_driver/spin.h"

namespace openbpu::rt {

class ThreadPool {
 public:
  // spin_ns: how long an idle worker polls for work before it sleeps
  // (bpu_driver/spin.h).
  explicit ThreadPool(int threads, uint64_t spin_ns = 0);
  ~ThreadPool();
  void post(int priority, std::function<void()> fn);

 private:
  struct Item {
    int priority;
    uint64_t seq;
    std::function<void()> fn;
    bool operator<(const Item& o) const {
      return priority != o.priority ? priority < o.priority : seq > o.seq;
    }
  };
  void loop();
  int threads_;
  std::mutex mu_;
  drv::PollingCondition cv_;
  uint64_t spin_ns_;
  std::priority_queue<Item> queue_;
  uint64_t seq_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace openbpu::rt

#endif  // OPENBPU_RUNTIME_ENGINE_THREAD_POOL_H_
