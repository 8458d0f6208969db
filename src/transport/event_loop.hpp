// A small epoll reactor: file descriptors with a handler each, timers, work posted from other
// threads, and an end-of-iteration hook (where batched writes go out). No business logic.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/handover.hpp"
#include "transport/clock.hpp"

namespace mavswitch::transport {

class EventLoop {
 public:
  class Handler {
   public:
    virtual void on_io(uint32_t events) = 0;

   protected:
    ~Handler() = default;
  };
  using TimerId = uint64_t;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Registers fd for `events` (EPOLLIN, EPOLLOUT...). A handler removed while events are being
  // dispatched gets none of the events still pending for it.
  void add(int fd, uint32_t events, Handler* handler);
  void modify(int fd, uint32_t events);
  void remove(int fd);

  // Input held back: fd stops being reported readable (its other interests, such as writable,
  // stay) until release_input(), so data left in its kernel buffer on purpose does not wake
  // the loop again and again. Level-triggered: once released, what waits is reported at once.
  void hold_input(int fd);
  bool holding_input() const noexcept { return !held_.empty(); }
  void release_input();

  // Timers, on the loop's thread.
  TimerId after(Millis delay, std::function<void()> callback);
  TimerId every(Millis period, std::function<void()> callback);
  void cancel(TimerId id);
  size_t timer_count() const noexcept { return timers_.size(); }  // timers set and not yet done

  // Runs `callback` after each batch of I/O events (once per wake-up).
  void on_iteration_end(std::function<void()> callback) { iteration_end_ = std::move(callback); }
  // Runs `before` just before the loop sleeps in epoll_wait and `after` as soon as it wakes:
  // everything else the loop does happens between an `after` and the next `before`.
  void on_sleep(std::function<void()> before, std::function<void()> after) {
    before_sleep_ = std::move(before);
    after_wake_ = std::move(after);
  }

  // Thread-safe: runs `work` on the loop's thread soon. Work the loop will not run (posted after
  // run() returned, or still queued when it did) is destroyed there and then, unrun: a caller
  // waiting on it learns so from what its destructor does, without watching the loop. Returns
  // whether the loop took it (false: it has stopped for good).
  bool post(std::function<void()> work);
  // Thread-safe: makes the loop run one more iteration soon (another thread queued it work it
  // drains at iteration end).
  void wake();

  // The time this wake-up began: one clock read per batch of events, not one per frame.
  Millis now() const noexcept { return now_; }
  // Time spent between wake-ups and sleeps so far: the thread's busy share over a period is
  // its difference over that period. Any thread.
  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t busy_us() const noexcept { return busy_us_.load(std::memory_order_relaxed); }

  void run();   // until stop()
  void stop();  // thread-safe

  // Who owns the loop and everything registered on it (its links, their queues, its timers):
  // the thread inside run(), or, while no thread runs it, the one setting it up or tearing it
  // down. Every entry point with that rule checks it with MAVSWITCH_ASSERT_OWNER.
  bool in_loop_thread() const noexcept {
    // relaxed: compared only with the calling thread's own id, and a thread always sees its own store.
    const std::thread::id owner = owner_.load(std::memory_order_relaxed);
    return owner == std::thread::id{} || owner == std::this_thread::get_id();
  }
  // The thread inside run() is this one (strictly: false while no thread runs it). What may be
  // called from anywhere acts at once only then, and posts otherwise.
  bool running_here() const noexcept { return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id(); }
  // Aborts, naming `what`, when called off the owner's thread (see in_loop_thread()).
  void assert_in_loop_thread(const char* what) const noexcept;

 private:
  struct Timer {
    Millis period;  // 0: one-shot
    std::function<void()> callback;
  };
  void run_timers();
  void run_posted();
  void arm_timer();
  static constexpr Millis kNever = INT64_MAX;

  int epoll_fd_ = -1;
  int wake_fd_ = -1;           // eventfd for post() and stop()
  int timer_fd_ = -1;          // due when the earliest timer is
  Millis armed_due_ = kNever;  // what timer_fd_ is set to
  struct Registration {
    uint64_t id;
    uint32_t events;  // as asked for; while held, without the input events
    bool held = false;
  };
  void apply(int fd, const Registration& r);

  std::atomic<std::thread::id> owner_{};  // the thread inside run(); none while not running
  uint64_t next_registration_ = 1;
  std::unordered_map<int, Registration> fd_registration_;
  std::vector<int> held_;
  std::unordered_map<uint64_t, std::pair<int, Handler*>> handlers_;
  std::map<std::pair<Millis, TimerId>, TimerId> timer_queue_;
  std::unordered_map<TimerId, std::pair<Millis, Timer>> timers_;
  TimerId next_timer_ = 1;
  std::function<void()> iteration_end_;
  std::function<void()> before_sleep_, after_wake_;
  // Closed while run() is not running; rings (writes wake_fd_) once per batch.
  Handover<std::vector<std::function<void()>>> posted_{[this] { wake(); }};
  std::vector<std::function<void()>> running_;  // the batch being run
  bool stop_requested_ = false;
  Millis now_ = now_ms();
  std::atomic<uint64_t> busy_us_{0};  // written by the owner only
};

}  // namespace mavswitch::transport

// Checked builds (Debug, and the sanitizer builds CI runs) abort when an owner-only entry point
// is called from another thread; release builds compile the check out of the frame path.
#ifdef MAVSWITCH_CHECK_OWNERS
#define MAVSWITCH_ASSERT_OWNER(loop, what) (loop).assert_in_loop_thread(what)
#else
#define MAVSWITCH_ASSERT_OWNER(loop, what) static_cast<void>(0)
#endif
