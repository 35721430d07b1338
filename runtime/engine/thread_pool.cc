// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/thread_pool.h"

namespace openbpu::rt {

ThreadPool::ThreadPool(int threads, uint64_t spin_ns) : threads_(threads < 1 ? 1 : threads), spin_ns_(spin_ns) {}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::post(int priority, std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (workers_.empty())
      for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { loop(); });
    queue_.push(Item{priority, seq_++, std::move(fn)});
  }
  cv_.notify_one();
}

void ThreadPool::loop() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (!stop_ && queue_.empty()) cv_.poll(lk, spin_ns_);  // briefly, before sleeping
      cv_.cv().wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      fn = std::move(const_cast<Item&>(queue_.top()).fn);
      queue_.pop();
    }
    fn();
  }
}

}  // namespace openbpu::rt
