#include "transport/event_loop.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "base/fault.hpp"
#include "transport/kernel_calls.hpp"

namespace mavswitch::transport {
namespace {

[[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string(what) + ": " + std::strerror(errno)); }

constexpr uint64_t kWakeRegistration = 0;
constexpr uint64_t kTimerRegistration = ~uint64_t{0};

}  // namespace

EventLoop::EventLoop() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) fail("epoll_create1");
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) fail("eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeRegistration;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) < 0) fail("epoll_ctl");
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd_ < 0) fail("timerfd_create");
  ev.data.u64 = kTimerRegistration;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_, &ev) < 0) fail("epoll_ctl");
}

EventLoop::~EventLoop() {
  ::close(timer_fd_);
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void EventLoop::assert_in_loop_thread(const char* what) const noexcept {
  if (in_loop_thread()) return;
  std::fprintf(stderr, "mavswitch: %s called off the thread that owns its event loop\n", what);
  std::abort();
}

void EventLoop::add(int fd, uint32_t events, Handler* handler) {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::add");
  const uint64_t reg = next_registration_++;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = reg;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) fail("epoll_ctl(ADD)");
  fd_registration_[fd] = {reg, events};
  handlers_[reg] = {fd, handler};
}

// What a held fd is not reported for: readable, and (streams) the peer's end of input, which
// is as level-triggered as readable. Errors and hang-ups are always reported.
constexpr uint32_t kInputEvents = EPOLLIN | EPOLLRDHUP;

void EventLoop::apply(int fd, const Registration& r) {
  epoll_event ev{};
  ev.events = r.held ? r.events & ~kInputEvents : r.events;
  ev.data.u64 = r.id;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) < 0) fail("epoll_ctl(MOD)");
}

void EventLoop::modify(int fd, uint32_t events) {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::modify");
  auto it = fd_registration_.find(fd);
  if (it == fd_registration_.end()) return;
  it->second.events = events;
  apply(fd, it->second);
}

void EventLoop::remove(int fd) {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::remove");
  auto it = fd_registration_.find(fd);
  if (it == fd_registration_.end()) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  handlers_.erase(it->second.id);
  fd_registration_.erase(it);
}

void EventLoop::hold_input(int fd) {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::hold_input");
  auto it = fd_registration_.find(fd);
  if (it == fd_registration_.end() || it->second.held) return;
  it->second.held = true;
  apply(fd, it->second);
  held_.push_back(fd);
}

void EventLoop::release_input() {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::release_input");
  for (const int fd : held_) {
    auto it = fd_registration_.find(fd);  // gone, or the number reused by a new registration
    if (it == fd_registration_.end() || !it->second.held) continue;
    it->second.held = false;
    apply(fd, it->second);
  }
  held_.clear();
}

EventLoop::TimerId EventLoop::after(Millis delay, std::function<void()> callback) {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::after");
  const TimerId id = next_timer_++;
  const Millis due = now_ms() + delay;
  timers_[id] = {due, Timer{0, std::move(callback)}};
  timer_queue_[{due, id}] = id;
  if (due < armed_due_) arm_timer();
  return id;
}

EventLoop::TimerId EventLoop::every(Millis period, std::function<void()> callback) {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::every");
  const TimerId id = next_timer_++;
  const Millis due = now_ms() + period;
  timers_[id] = {due, Timer{period, std::move(callback)}};
  timer_queue_[{due, id}] = id;
  if (due < armed_due_) arm_timer();
  return id;
}

void EventLoop::cancel(TimerId id) {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::cancel");
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  timer_queue_.erase({it->second.first, id});
  timers_.erase(it);
}

bool EventLoop::post(std::function<void()> work) {
  return posted_.put([&](std::vector<std::function<void()>>& waiting) {
    waiting.push_back(std::move(work));
    return true;
  });
  // Closed: `work` was not taken, and is destroyed unrun as it goes out of scope, outside the lock.
}

void EventLoop::wake() {
  const uint64_t one = 1;
  [[maybe_unused]] auto n = kernel::write(wake_fd_, &one, sizeof one);
}

void EventLoop::stop() {
  post([this] { stop_requested_ = true; });
}

void EventLoop::run_posted() {
  uint64_t count;
  [[maybe_unused]] auto n = kernel::read(wake_fd_, &count, sizeof count);
  posted_.take(running_);
  for (auto& w : running_) {
    try {
      w();
    } catch (...) {  // the boundary: one job fails, the loop and its links go on
      fault::caught("a job on an I/O worker");
    }
  }
  running_.clear();  // what the jobs held goes now, not with the next batch (the storage stays)
}

void EventLoop::run_timers() {
  while (!timer_queue_.empty() && timer_queue_.begin()->first.first <= now_) {
    const TimerId id = timer_queue_.begin()->second;
    timer_queue_.erase(timer_queue_.begin());
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;
    Timer timer = it->second.second;  // the callback may cancel or add timers
    if (timer.period > 0) {
      const Millis due = now_ + timer.period;
      it->second.first = due;
      timer_queue_[{due, id}] = id;
    } else {
      timers_.erase(it);
    }
    try {
      timer.callback();
    } catch (...) {
      fault::caught("a timer on an I/O worker");
    }
  }
}

// The timerfd is set to the earliest due timer only when that changes (about once per period
// of the busiest timer), so sleeping in epoll_wait sets up no kernel timer of its own per
// wake-up. A cancelled head leaves the fd set early: it then wakes the loop once for nothing.
void EventLoop::arm_timer() {
  const Millis head = timer_queue_.empty() ? kNever : timer_queue_.begin()->first.first;
  if (head == armed_due_) return;
  armed_due_ = head;
  itimerspec when{};  // all zero: disarm
  if (head != kNever) {
    when.it_value.tv_sec = static_cast<time_t>(head / 1000);
    when.it_value.tv_nsec = static_cast<long>(head % 1000) * 1'000'000;
    if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) when.it_value.tv_nsec = 1;  // zero would disarm
  }
  if (timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &when, nullptr) < 0) fail("timerfd_settime");
}

void EventLoop::run() {
  MAVSWITCH_ASSERT_OWNER(*this, "EventLoop::run (a second thread)");
  // relaxed: compared only with the calling thread's own id, and a thread always sees its own store.
  owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  posted_.reopen();
  stop_requested_ = false;
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  int64_t woke_us = now_us();
  while (!stop_requested_) {
    arm_timer();
    if (before_sleep_) before_sleep_();
    // Busy: from a wake-up to the next sleep (one clock read a batch, for the statistics).
    // relaxed: written only by the loop's thread; readers want a recent value.
    busy_us_.store(busy_us_.load(std::memory_order_relaxed) + static_cast<uint64_t>(now_us() - woke_us),
                   std::memory_order_relaxed);
    const int n = kernel::epoll_wait(epoll_fd_, events, kMaxEvents, -1);
    if (after_wake_) after_wake_();
    if (n < 0 && errno != EINTR) fail("epoll_wait");
    woke_us = now_us();
    now_ = woke_us / 1000;
    for (int i = 0; i < n; ++i) {
      const uint64_t reg = events[i].data.u64;
      if (reg == kWakeRegistration) {
        run_posted();
        continue;
      }
      if (reg == kTimerRegistration) {
        uint64_t expirations;
        [[maybe_unused]] auto got = kernel::read(timer_fd_, &expirations, sizeof expirations);
        armed_due_ = kNever;  // fired: set it again for whatever is due next
        continue;             // the timers run below, with every other wake-up's
      }
      auto it = handlers_.find(reg);  // gone if removed by an earlier event of this batch
      if (it != handlers_.end()) it->second.second->on_io(events[i].events);
    }
    run_timers();
    if (iteration_end_) iteration_end_();
  }
  running_.clear();
  posted_.close().clear();  // destroyed unrun, outside the lock: their destructors may post elsewhere
  // relaxed: compared only with the calling thread's own id, and a thread always sees its own store.
  owner_.store(std::thread::id{}, std::memory_order_relaxed);
}

}  // namespace mavswitch::transport
