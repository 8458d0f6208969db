// How other threads reach the window's thread: they ring for a session (its link has frames,
// its answer came), or post a job to run there (what the router's thread gathered for a
// request, to be rendered and answered). Both wait in one Handover (base/handover.hpp): one
// lws_cancel_service wakes the window for all that came since it last looked, and it touches
// only the sessions listed, not every one. Once the window stopped, a ring wakes nothing and a
// posted job is destroyed unrun.
#pragma once

#include <libwebsockets.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/handover.hpp"

namespace mavswitch::window {

// One session's place on the bell's list: listed at most once until the window's thread takes
// the list. Shared with whatever wakes the session (its link, a job), which may outlive it.
struct Wake {
  lws* wsi = nullptr;  // the window's thread's
  std::atomic<bool> listed{false};
};

class Bell {
 public:
  // What waits for the window's thread: the sessions listed, and the jobs posted.
  struct Batch {
    std::vector<std::shared_ptr<Wake>> ready;
    std::vector<std::function<void()>> jobs;
    bool empty() const noexcept { return ready.empty() && jobs.empty(); }
    void clear() noexcept { ready.clear(), jobs.clear(); }
  };

  // Any thread: the session of `wake` has work.
  void ring(const std::shared_ptr<Wake>& wake) {
    if (wake->listed.exchange(true)) return;  // listed already: one look for many rings
    waiting_.put([&](Batch& b) {
      b.ready.push_back(wake);
      return true;
    });
  }
  // Any thread: `job` runs on the window's thread. Dropped (destroyed here, outside the lock:
  // its guards may ring) once the window stopped.
  void post(std::function<void()> job) {
    waiting_.put([&](Batch& b) {
      b.jobs.push_back(std::move(job));
      return true;
    });
  }
  // The window's thread: what waits, in `out` (emptied first).
  void take(Batch& out) { waiting_.take(out); }

  // The window serves `context` from now on: woken at once if anything came before.
  void start(lws_context* context) {
    {
      std::lock_guard lock(context_mutex_);
      context_ = context;
    }
    if (!waiting_.look([](const Batch& b) { return b.empty(); })) wake();
  }
  // The window stops: what is posted from now on is dropped, and what waits is destroyed here,
  // outside the lock.
  void stop() {
    {
      std::lock_guard lock(context_mutex_);
      context_ = nullptr;
    }
    waiting_.close();
  }

 private:
  // Under its own lock: the context is destroyed once stop() returned, never while woken.
  void wake() {
    std::lock_guard lock(context_mutex_);
    if (context_ != nullptr) lws_cancel_service(context_);
  }
  std::mutex context_mutex_;
  lws_context* context_ = nullptr;  // under context_mutex_; null while the window is not serving
  Handover<Batch> waiting_{[this] { wake(); }};
};

}  // namespace mavswitch::window
