#include "base/blocking_work.hpp"

#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "base/handover.hpp"

namespace mavswitch::blocking_work {
namespace {

struct Queue {
  Handover<std::vector<std::function<void()>>> jobs;  // the thread waits on it (wait_take)
  std::mutex mutex;
  std::thread::id thread;  // set once, under mutex
  bool started = false;    // under mutex

  void serve() {
    pthread_setname_np(pthread_self(), "mavswitch-work");  // as top -H shows it
    std::vector<std::function<void()>> batch;
    for (;;) {
      if (!jobs.wait_take(batch, std::chrono::hours(1))) continue;
      for (auto& job : batch) {
        job();
        job = nullptr;  // what it holds goes now, before the next job runs
      }
    }
  }
};

// Never destroyed: the thread may outlive every static destructor.
Queue& queue() {
  static Queue* const q = new Queue;
  return *q;
}

}  // namespace

void run(std::function<void()> job) {
  Queue& q = queue();
  q.jobs.put([&](std::vector<std::function<void()>>& waiting) {
    waiting.push_back(std::move(job));
    return true;
  });
  std::lock_guard lock(q.mutex);
  if (!q.started) {
    q.started = true;
    std::thread t([&q] { q.serve(); });
    q.thread = t.get_id();
    t.detach();
  }
}

bool on_thread() noexcept {
  Queue& q = queue();
  std::lock_guard lock(q.mutex);
  return q.started && q.thread == std::this_thread::get_id();
}

void assert_on_thread(const char* what) noexcept {
  if (on_thread()) return;
  std::fprintf(stderr, "mavswitch: %s called off the blocking-work thread\n", what);
  std::abort();
}

}  // namespace mavswitch::blocking_work
