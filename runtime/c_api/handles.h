// SPDX-License-Identifier: Apache-2.0
// Handle validation for the C API: every handle a caller passes is looked up
// in a registry before it is dereferenced, so stale or foreign pointers give
// an error code instead of a crash.
//
// Handles are not addresses: each pack, model and task gets a value from a
// process-wide counter when it is registered, and no value is ever given out
// twice, so a stale handle stays invalid even when a pack, model or task
// loaded later lives at the released one's address. Both API generations
// (dnn/hb_dnn.h, hobot/dnn/hb_dnn.h) share this registry and its counter, so
// a model handle is never a pack or task handle either.
#ifndef OPENBPU_RUNTIME_C_API_HANDLES_H_
#define OPENBPU_RUNTIME_C_API_HANDLES_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

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

  // Registers a loaded pack and its models; returns the pack's handle.
  void* add_pack(std::unique_ptr<Pack> pack) {
    PackEntry e{PackPin(std::move(pack)), {}};
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& m : e.pack->models) {
      e.models.push_back(next_value());
      models_[e.models.back()] = ModelPin(e.pack, m.get());
    }
    const uintptr_t h = next_value();
    packs_[h] = std::move(e);
    return to_handle(h);
  }
  PackPin pack(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = packs_.find(to_value(h));
    return it == packs_.end() ? nullptr : it->second.pack;
  }
  // hbDNNGetModelHandle: false when `pack_handle` is not a live pack;
  // otherwise *model is the handle of its model named `name` (NULL if none).
  bool find_model(void* pack_handle, const char* name, void** model) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = packs_.find(to_value(pack_handle));
    if (it == packs_.end()) return false;
    *model = nullptr;
    const auto& models = it->second.pack->models;
    for (size_t i = 0; i < models.size(); ++i)
      if (models[i]->name == name) *model = to_handle(it->second.models[i]);
    return true;
  }
  // hbDNNRelease: unregisters the pack unless tasks still count against it
  // (Pack::close); kNotFound, kRunning or kReleased. The pack is destroyed
  // when the last pin goes (at once when no call uses it), outside the lock.
  enum class Release { kNotFound, kRunning, kReleased };
  Release release_pack(void* h, int* live_tasks, bool* log_refusal) {
    PackEntry owned;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = packs_.find(to_value(h));
      if (it == packs_.end()) return Release::kNotFound;
      *live_tasks = it->second.pack->close(log_refusal);
      if (*live_tasks > 0) return Release::kRunning;
      for (uintptr_t m : it->second.models) models_.erase(m);
      owned = std::move(it->second);
      packs_.erase(it);
    }
    return Release::kReleased;
  }
  ModelPin model(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = models_.find(to_value(h));
    return it == models_.end() ? nullptr : it->second;
  }

  // Registers a new task; returns its handle.
  void* add_task(const std::shared_ptr<Task>& t) {
    std::lock_guard<std::mutex> lk(mu_);
    const uintptr_t h = next_value();
    tasks_[h] = t;
    return to_handle(h);
  }
  std::shared_ptr<Task> task(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = tasks_.find(to_value(h));
    return it == tasks_.end() ? nullptr : it->second;
  }
  std::shared_ptr<Task> take_task(void* h) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = tasks_.find(to_value(h));
    if (it == tasks_.end()) return nullptr;
    auto t = std::move(it->second);
    tasks_.erase(it);
    return t;
  }

 private:
  // Handle values: kTag plus a counter. The tag keeps them away from small
  // integers and from user-space addresses (non-canonical on x86-64; on
  // AArch64 the top byte is ignored and the rest is a page-zero address), so
  // a caller dereferencing a handle faults at once.
  static constexpr uintptr_t kTag = uintptr_t{0x0B9D} << 48;
  struct PackEntry {
    PackPin pack;
    std::vector<uintptr_t> models;  // handle values of pack->models, in order
  };
  uintptr_t next_value() { return kTag + ++counter_; }  // under mu_
  static void* to_handle(uintptr_t v) { return reinterpret_cast<void*>(v); }
  static uintptr_t to_value(void* h) { return reinterpret_cast<uintptr_t>(h); }

  std::mutex mu_;
  uint64_t counter_ = 0;
  std::unordered_map<uintptr_t, PackEntry> packs_;
  std::unordered_map<uintptr_t, ModelPin> models_;  // aliasing pins into the pack
  std::unordered_map<uintptr_t, std::shared_ptr<Task>> tasks_;
};

}  // namespace openbpu::rt::capi

#endif  // OPENBPU_RUNTIME_C_API_HANDLES_H_
