// SPDX-License-Identifier: Apache-2.0
// Handle validation for the C API: every handle a caller passes is looked up
// in a registry before it is dereferenced, so stale or foreign pointers give
// an error code instead of a crash.
#ifndef OPENBPU_RUNTIME_C_API_HANDLES_H_
#define OPENBPU_RUNTIME_C_API_HANDLES_H_

#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "runtime/engine/engine.h"
#include "runtime/loader/model.h"

namespace openbpu::rt::capi {

class Registry {
 public:
  static Registry& get() {
    static Registry* r = new Registry();  // never destroyed (used at exit)
    return *r;
  }

  void add_pack(std::unique_ptr<Pack> pack) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& m : pack->models) models_.insert(m.get());
    Pack* raw = pack.get();
    packs_[raw] = std::move(pack);
  }
  Pack* pack(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = packs_.find(static_cast<Pack*>(h));
    return it == packs_.end() ? nullptr : it->second.get();
  }
  // Removes and returns the pack (the caller destroys it outside the lock).
  std::unique_ptr<Pack> take_pack(Pack* p) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = packs_.find(p);
    if (it == packs_.end()) return nullptr;
    for (auto& m : p->models) models_.erase(m.get());
    auto owned = std::move(it->second);
    packs_.erase(it);
    return owned;
  }
  Model* model(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = models_.find(static_cast<Model*>(h));
    return it == models_.end() ? nullptr : *it;
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
  std::unordered_map<Pack*, std::unique_ptr<Pack>> packs_;
  std::unordered_set<Model*> models_;
  std::unordered_map<Task*, std::shared_ptr<Task>> tasks_;
};

}  // namespace openbpu::rt::capi

#endif  // OPENBPU_RUNTIME_C_API_HANDLES_H_
