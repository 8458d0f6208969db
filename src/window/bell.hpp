// How other threads reach the window's thread: they ring for a session (its link has frames,
// its answer came), or post a job to run there (what the router's thread gathered for a
// request, to be rendered and answered). One lws_cancel_service wakes the window for all that
// came since it last looked, and it touches only the sessions listed, not every one. Once the
// window stopped, a ring wakes nothing and a posted job is destroyed unrun.
#pragma once

#include <libwebsockets.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace mavswitch::window {

// One session's place on the bell's list: listed at most once until the window's thread takes
// the list. Shared with whatever wakes the session (its link, a job), which may outlive it.
struct Wake {
  lws* wsi = nullptr;  // the window's thread's
  std::atomic<bool> listed{false};
};

struct Bell {
  std::mutex mutex;
  lws_context* context = nullptr;            // under mutex; null while the window is not serving
  bool stopped = false;                      // under mutex: jobs posted from now on are dropped
  std::vector<std::shared_ptr<Wake>> ready;  // under mutex
  std::vector<std::function<void()>> jobs;   // under mutex
  void ring(const std::shared_ptr<Wake>& wake) {
    if (wake->listed.exchange(true)) return;  // listed already: one look for many rings
    std::lock_guard lock(mutex);
    ready.push_back(wake);
    if (ready.size() + jobs.size() == 1 && context != nullptr) lws_cancel_service(context);  // one wake for all
  }
  // Any thread: `job` runs on the window's thread. Dropped (destroyed here) once it stopped.
  void post(std::function<void()> job) {
    std::unique_lock lock(mutex);
    if (stopped) {
      lock.unlock();
      job = nullptr;  // destroyed outside the lock: its guards may ring
      return;
    }
    jobs.push_back(std::move(job));
    if (ready.size() + jobs.size() == 1 && context != nullptr) lws_cancel_service(context);
  }
  // The window's thread: the sessions listed since the last take, in `out` (emptied first), and
  // the jobs posted, in `due`.
  void take(std::vector<std::shared_ptr<Wake>>& out, std::vector<std::function<void()>>& due) {
    out.clear();
    due.clear();
    std::lock_guard lock(mutex);
    out.swap(ready);
    due.swap(jobs);
  }
  // The window stops: what is posted from now on is dropped, and what waits is handed back to
  // be destroyed outside the lock.
  std::vector<std::function<void()>> stop() {
    std::lock_guard lock(mutex);
    context = nullptr;
    stopped = true;
    return std::move(jobs);
  }
};

}  // namespace mavswitch::window
