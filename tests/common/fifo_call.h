// SPDX-License-Identifier: Apache-2.0
// Runs a call that is given a FIFO and must not block on it (header only):
// if it has not returned within a deadline, the FIFO is opened for writing
// and closed, so that a blocked open/read returns and the test ends with a
// failure instead of hanging.
#ifndef OPENBPU_TESTS_COMMON_FIFO_CALL_H_
#define OPENBPU_TESTS_COMMON_FIFO_CALL_H_

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace openbpu::testing {

// Runs fn on a thread; true when it blocked past `deadline` (then unblocked).
inline bool blocked_on_fifo(const std::string& fifo, const std::function<void()>& fn,
                            std::chrono::milliseconds deadline = std::chrono::seconds(3)) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    fn();
    done = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  while (!done.load() && std::chrono::steady_clock::now() - t0 < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const bool blocked = !done.load();
  if (blocked) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  t.join();
  return blocked;
}

}  // namespace openbpu::testing

#endif  // OPENBPU_TESTS_COMMON_FIFO_CALL_H_
