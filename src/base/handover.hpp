// The one bounded handover between threads: producers add to the batch waiting under one lock;
// the first addition to an empty batch rings the consumer (once per batch, outside the lock);
// the consumer takes the whole batch at once by swapping it with an emptied one, so storage is
// reused and nothing is allocated per item in steady state. What a batch may hold is the
// producer's rule, applied under the lock as it adds (refuse the new, or drop the oldest:
// counted either way). A consumer without a loop of its own may wait for a batch (wait_take).
//
// Chose not to build: a lock-free ring per pair. A put takes the lock once (a worker's frames
// for another worker once per loop iteration, router/frame_handover.hpp; a library's send or a
// queued subscription's frame once per frame), uncontended but for the consumer's swap, and a
// batch grows only as far as it is used (1,000 idle WebSocket clients cost a few KB each, not a
// fixed ring each).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>

namespace mavswitch {

// Batch: default-constructible, swappable, with empty() and clear() (which keeps its storage).
template <class Batch>
class Handover {
 public:
  using Ring = std::function<void()>;
  // `ring` tells the consumer that a batch waits: it must only signal (post, write an eventfd,
  // wake a thread), and runs on the producer's thread without the lock.
  explicit Handover(Ring ring = {}) : ring_(std::move(ring)) {}
  Handover(const Handover&) = delete;
  Handover& operator=(const Handover&) = delete;

  // A producer (any thread): add(batch) adds to the batch waiting, under the lock, and returns
  // whether it added anything. False, and nothing added, once closed.
  template <class Add>
  bool put(Add&& add) {
    bool first = false;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return false;
      first = waiting_.empty();
      if (!add(waiting_) || waiting_.empty()) return false;
      if (first && waiters_ > 0) woken_.notify_one();
    }
    if (first && ring_) ring_();
    return true;
  }

  // The consumer: what waits, in `out` (emptied first: its storage serves the next batch).
  // `taken(out)` runs under the lock as it is taken, for what must change with it.
  void take(Batch& out) {
    take(out, [](const Batch&) {});
  }
  template <class Taken>
  void take(Batch& out, Taken&& taken) {
    out.clear();
    std::lock_guard lock(mutex_);
    std::swap(out, waiting_);
    taken(std::as_const(out));
  }

  // The consumer without a loop: take(), waiting up to `timeout` for something to take. False
  // when nothing came (or the handover closed).
  bool wait_take(Batch& out, std::chrono::milliseconds timeout) {
    out.clear();
    std::unique_lock lock(mutex_);
    ++waiters_;
    woken_.wait_for(lock, timeout, [&] { return closed_ || !waiting_.empty(); });
    --waiters_;
    std::swap(out, waiting_);
    return !out.empty();
  }

  // A look under the lock at what waits (sizes, for back-pressure and statistics).
  template <class Look>
  auto look(Look&& f) const {
    std::lock_guard lock(mutex_);
    return f(std::as_const(waiting_));
  }

  // Either side: nothing is added from now on. What waited is handed back, to be destroyed
  // outside the lock (it may hold work whose guards ring).
  Batch close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    woken_.notify_all();
    return std::exchange(waiting_, Batch{});
  }
  // Either side: open again after close() (a loop that runs again).
  void reopen() {
    std::lock_guard lock(mutex_);
    closed_ = false;
  }
  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }

 private:
  const Ring ring_;
  mutable std::mutex mutex_;
  std::condition_variable woken_;  // for wait_take only
  Batch waiting_;                  // under mutex_
  int waiters_ = 0;                // under mutex_
  bool closed_ = false;            // under mutex_
};

}  // namespace mavswitch
