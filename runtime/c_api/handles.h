// SPDX-License-Identifier: Apache-2.0
// Handle validation for the C API: every handle a caller passes is looked up
// in a registry before it is dereferenced, so stale or foreign pointers give
// an error code instead of a crash.
#ifndef OPENBPU_RUNTIME_C_API_HANDLES_H_
#define OPENBPU_RUNTIME_C_API_HANDLES_H_

#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/engine/engine.h"
#include "runtime/loader/model.h"

namespace openbpu::rt::capi {

// A model or pack looked up from a handle, pinned: the pack is freed after
// the last pin is dropped, so a release racing a call (or a task) never frees
// what the call reads. Every C API call holds its pin until it returns.
using ModelPin = std::shared_ptr<Model>;
using PackPin = std::shared_ptr<Pack>;

class Registry {
 public:
  static Registry& get() {
    static Registry* r = new Registry();  // never destroyed (used at exit)
    return *r;
  }

  void add_pack(std::unique_ptr<Pack> pack) {
    PackPin shared(std::move(pack));
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& m : shared->models) models_[m.get()] = shared;
    packs_[shared.get()] = shared;
  }
  PackPin pack(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = packs_.find(static_cast<Pack*>(h));
    return it == packs_.end() ? nullptr : it->second;
  }
  // hbDNNRelease: unregisters the pack unless tasks still count against it
  // (Pack::close); kNotFound, kRunning or kReleased. The pack is destroyed
  // when the last pin goes (at once when no call uses it), outside the lock.
  enum class Release { kNotFound, kRunning, kReleased };
  Release release_pack(void* h, int* live_tasks, bool* log_refusal) {
    PackPin owned;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = packs_.find(static_cast<Pack*>(h));
      if (it == packs_.end()) return Release::kNotFound;
      *live_tasks = it->second->close(log_refusal);
      if (*live_tasks > 0) return Release::kRunning;
      for (auto& m : it->second->models) models_.erase(m.get());
      owned = std::move(it->second);
      packs_.erase(it);
    }
    return Release::kReleased;
  }
  ModelPin model(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = models_.find(static_cast<Model*>(h));
    return it == models_.end() ? nullptr : ModelPin(it->second, it->first);
  }

  void add_task(const std::shared_ptr<Task>& t) {
    std::lock_guard<std::mutex> lk(mu_);
    tasks_[t.get()] = t;
  }
  std::shared_ptr<Task> task(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = tasks_.find(static_cast<Task*>(h));
    return it == tasks_.end() ? nullptr : it->second;
  }
  std::shared_ptr<Task> take_task(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = tasks_.find(static_cast<Task*>(h));
    if (it == tasks_.end()) return nullptr;
    auto t = std::move(it->second);
    tasks_.erase(it);
    return t;
  }

 private:
  std::mutex mu_;
  std::unordered_map<Pack*, PackPin> packs_;
  std::unordered_map<Model*, PackPin> models_;  // a model's pack
  std::unordered_map<Task*, std::shared_ptr<Task>> tasks_;
};

}  // namespace openbpu::rt::capi

#endif  // OPENBPU_RUNTIME_C_API_HANDLES_H_
