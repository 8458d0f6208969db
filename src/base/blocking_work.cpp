#include "base/blocking_work.hpp"

#include <pthread.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

namespace mavswitch::blocking_work {
namespace {

struct Queue {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::function<void()>> jobs;  // under mutex
  std::thread::id thread;                  // set once, under mutex
  bool started = false;                    // under mutex

  void serve() {
    pthread_setname_np(pthread_self(), "mavswitch-work");  // as top -H shows it
    std::unique_lock lock(mutex);
    for (;;) {
      ready.wait(lock, [this] { return !jobs.empty(); });
      std::function<void()> job = std::move(jobs.front());
      jobs.pop_front();
      lock.unlock();
      job();
      job = nullptr;  // what it holds goes here, not under the lock
      lock.lock();
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
  {
    std::lock_guard lock(q.mutex);
    q.jobs.push_back(std::move(job));
    if (!q.started) {
      q.started = true;
      std::thread t([&q] { q.serve(); });
      q.thread = t.get_id();
      t.detach();
    }
  }
  q.ready.notify_one();
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
