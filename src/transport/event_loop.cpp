#include "transport/event_loop.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace mavswitch::transport {
namespace {

[[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string(what) + ": " + std::strerror(errno)); }

constexpr uint64_t kWakeRegistration = 0;

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
}

EventLoop::~EventLoop() {
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void EventLoop::add(int fd, uint32_t events, Handler* handler) {
  const uint64_t reg = next_registration_++;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = reg;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) fail("epoll_ctl(ADD)");
  fd_registration_[fd] = reg;
  handlers_[reg] = {fd, handler};
}

void EventLoop::modify(int fd, uint32_t events) {
  auto it = fd_registration_.find(fd);
  if (it == fd_registration_.end()) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = it->second;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) < 0) fail("epoll_ctl(MOD)");
}

void EventLoop::remove(int fd) {
  auto it = fd_registration_.find(fd);
  if (it == fd_registration_.end()) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  handlers_.erase(it->second);
  fd_registration_.erase(it);
}

EventLoop::TimerId EventLoop::after(Millis delay, std::function<void()> callback) {
  const TimerId id = next_timer_++;
  const Millis due = now_ms() + delay;
  timers_[id] = {due, Timer{0, std::move(callback)}};
  timer_queue_[{due, id}] = id;
  return id;
}

EventLoop::TimerId EventLoop::every(Millis period, std::function<void()> callback) {
  const TimerId id = next_timer_++;
  const Millis due = now_ms() + period;
  timers_[id] = {due, Timer{period, std::move(callback)}};
  timer_queue_[{due, id}] = id;
  return id;
}

void EventLoop::cancel(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  timer_queue_.erase({it->second.first, id});
  timers_.erase(it);
}

void EventLoop::post(std::function<void()> work) {
  {
    std::lock_guard lock(posted_mutex_);
    posted_.push_back(std::move(work));
  }
  wake();
}

void EventLoop::wake() {
  const uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void EventLoop::stop() {
  post([this] { stop_requested_ = true; });
}

void EventLoop::run_posted() {
  uint64_t count;
  [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof count);
  std::vector<std::function<void()>> work;
  {
    std::lock_guard lock(posted_mutex_);
    work.swap(posted_);
  }
  for (auto& w : work) w();
}

void EventLoop::run_timers() {
  const Millis now = now_ms();
  while (!timer_queue_.empty() && timer_queue_.begin()->first.first <= now) {
    const TimerId id = timer_queue_.begin()->second;
    timer_queue_.erase(timer_queue_.begin());
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;
    Timer timer = it->second.second;  // the callback may cancel or add timers
    if (timer.period > 0) {
      const Millis due = now + timer.period;
      it->second.first = due;
      timer_queue_[{due, id}] = id;
    } else {
      timers_.erase(it);
    }
    timer.callback();
  }
}

void EventLoop::run() {
  running_ = true;
  stop_requested_ = false;
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  while (!stop_requested_) {
    int timeout = -1;
    if (!timer_queue_.empty()) {
      const Millis wait = timer_queue_.begin()->first.first - now_ms();
      timeout = wait < 0 ? 0 : static_cast<int>(wait);
    }
    const int n = epoll_wait(epoll_fd_, events, kMaxEvents, timeout);
    if (n < 0 && errno != EINTR) fail("epoll_wait");
    now_ = now_ms();
    for (int i = 0; i < n; ++i) {
      const uint64_t reg = events[i].data.u64;
      if (reg == kWakeRegistration) {
        run_posted();
        continue;
      }
      auto it = handlers_.find(reg);  // gone if removed by an earlier event of this batch
      if (it != handlers_.end()) it->second.second->on_io(events[i].events);
    }
    run_timers();
    if (iteration_end_) iteration_end_();
  }
  running_ = false;
}

}  // namespace mavswitch::transport
