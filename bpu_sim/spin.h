// SPDX-License-Identifier: Apache-2.0
// Brief polling before a thread sleeps on a condition variable. A wake-up
// through the kernel costs a thread switch, several microseconds on a VM,
// more than a small model's BPU function call takes on the simulator. The
// scheduler's idle core threads (waiting for work), libdnn's idle CPU-pool
// workers and task waits (waiting for the task to end), and the kernels'
// convolution helpers and their caller (OPENBPU_SIM_THREADS) poll a signal
// counter for up to OPENBPU_SPIN_US (docs/environment.md) before they sleep;
// whoever would wake them bumps the counter before notifying
// (PollingCondition). The driver and the runtime use it through
// bpu_driver/spin.h.
#ifndef OPENBPU_BPU_SIM_SPIN_H_
#define OPENBPU_BPU_SIM_SPIN_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace openbpu::sim {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Polls `signals` until it differs from `seen` (true) or spin_ns have
// passed (false; at once when spin_ns is 0). It yields the host core now and
// then, so that a runnable thread (the one that will signal, a CPU operator
// of the same task) is not kept off it.
inline bool spin_for_signal(const std::atomic<uint64_t>& signals, uint64_t seen, uint64_t spin_ns) {
  if (spin_ns == 0) return false;
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(spin_ns);
  for (unsigned i = 1;; ++i) {
    if (signals.load(std::memory_order_acquire) != seen) return true;
    if (i % 32 == 0) {
      if (std::chrono::steady_clock::now() >= end) return false;
      std::this_thread::yield();
    }
    cpu_relax();
  }
}

// A condition variable whose waiters may poll for a notification before they
// sleep: each notification also bumps a counter that the polling watches.
// State changes stay under the waiters' mutex, as with a plain condition
// variable.
class PollingCondition {
 public:
  void notify_one() {
    notifications_.fetch_add(1, std::memory_order_release);
    cv_.notify_one();
  }
  void notify_all() {
    notifications_.fetch_add(1, std::memory_order_release);
    cv_.notify_all();
  }
  // With lk held: polls up to spin_ns with lk released and takes lk again;
  // true when a notification came meanwhile (the caller re-checks its state
  // instead of sleeping), false at once when spin_ns is 0.
  bool poll(std::unique_lock<std::mutex>& lk, uint64_t spin_ns) {
    if (spin_ns == 0) return false;
    const uint64_t seen = notifications_.load(std::memory_order_acquire);
    lk.unlock();
    spin_for_signal(notifications_, seen, spin_ns);
    lk.lock();
    return notifications_.load(std::memory_order_acquire) != seen;
  }
  // Waits (wait, wait_for, wait_until) go to the condition variable itself.
  std::condition_variable& cv() { return cv_; }

 private:
  std::condition_variable cv_;
  std::atomic<uint64_t> notifications_{0};
};

}  // namespace openbpu::sim

#endif  // OPENBPU_BPU_SIM_SPIN_H_
