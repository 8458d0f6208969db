#include "fabric/nats_poller.hpp"

#include <fcntl.h>
#include <nats/nats.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

#include "base/log.hpp"

namespace mavswitch::fabric {

// One connection's socket on the link's loop. Its fields are that thread's; libnats'
// callbacks reach them through act(). It owns itself (self_) from the first attach until libnats
// detaches the connection: libnats holds only a raw pointer to it.
class NatsPoller final : public transport::EventLoop::Handler {
 public:
  NatsPoller(std::shared_ptr<NatsDrive> drive, natsConnection* nc) : drive_(std::move(drive)), nc_(nc) {}
  ~NatsPoller() {
    if (fd_ >= 0) ::close(fd_);  // only when the loop is gone with work for it still posted
  }
  NatsPoller(const NatsPoller&) = delete;
  NatsPoller& operator=(const NatsPoller&) = delete;

  static natsStatus attach(void** user, void* loop, natsConnection* nc, natsSock socket) {
    auto* p = static_cast<NatsPoller*>(*user);
    if (p == nullptr) {
      auto fresh = std::make_shared<NatsPoller>(static_cast<NatsDrive*>(loop)->shared_from_this(), nc);
      fresh->self_ = fresh;
      p = fresh.get();
      *user = p;
    }
    const int mine = fcntl(socket, F_DUPFD_CLOEXEC, 0);
    if (mine < 0) return NATS_SYS_ERROR;
    p->act([p, mine] { p->watch(mine); });
    return NATS_OK;
  }
  static natsStatus read(void* user, bool add) {
    auto* p = static_cast<NatsPoller*>(user);
    if (!add) p->act([p] { p->unwatch(); });  // adding is attaching: watched for input from then on
    return NATS_OK;
  }
  static natsStatus write(void* user, bool add) {
    auto* p = static_cast<NatsPoller*>(user);
    p->act([p, add] { p->want_write(add); });
    return NATS_OK;
  }
  static natsStatus detach(void* user) {
    auto* p = static_cast<NatsPoller*>(user);
    // The poller lets go of itself when the act is done with: run, refused by a loop that has
    // stopped for good, or destroyed unrun by a loop that stopped with it queued. Otherwise it
    // and its drive would hold each other forever. Its socket, if still watched, is forget()'s.
    std::shared_ptr<void> let_go(nullptr, [p](void*) { p->self_.reset(); });
    p->act([p, let_go] {
      p->unwatch();
      p->nc_ = nullptr;
    });
    return NATS_OK;
  }

  // The loop's thread.
  void forget() {
    nc_ = nullptr;
    unwatch();
  }

  void on_io(uint32_t events) override {
    if (nc_ == nullptr) return;
    const auto hold = self_;  // a read that ends the connection detaches it
    if (events & EPOLLOUT) natsConnection_ProcessWriteEvent(nc_);
    if (nc_ != nullptr && (events & (EPOLLIN | EPOLLERR | EPOLLHUP))) {
      int waiting = 0;
      if (::ioctl(fd_, FIONREAD, &waiting) != 0) waiting = 0;
      natsConnection_ProcessReadEvent(nc_);
      if (drive_->after_read_() > 0) {
        unfinished_ = 0;
        drive_->said_oversized_ = false;
        // relaxed: a count read only to space out retries; it orders nothing.
        drive_->oversized_in_row.store(0, std::memory_order_relaxed);
      } else if (waiting > kControlLine) {  // PING, PONG, +OK: not part of a message
        unfinished_ += std::min<size_t>(size_t(waiting), kReadSize);
        if (unfinished_ > NatsDrive::kMaxPayload && fd_ >= 0) refuse_oversized();
      }
    }
  }

 private:
  // Runs f on the loop's thread: now when called there and nothing posted earlier is still
  // due (so the order libnats asked in holds), else posted behind what is. A loop that has
  // stopped for good never runs it: f is destroyed unrun, and what it holds goes with it.
  template <class F>
  void act(F f) {
    transport::EventLoop& loop = drive_->loop_;
    if (loop.running_here() && posted_.load(std::memory_order_acquire) == 0) {
      f();
      return;
    }
    posted_.fetch_add(1, std::memory_order_acq_rel);
    if (!loop.post([self = self_, f = std::move(f)] {
          self->posted_.fetch_sub(1, std::memory_order_acq_rel);
          f();
        }))
      posted_.fetch_sub(1, std::memory_order_acq_rel);
  }

  void watch(int mine) {
    unwatch();
    if (nc_ == nullptr || drive_->gone_) {  // a connection made as its endpoint went
      ::close(mine);
      return;
    }
    fd_ = mine;
    drive_->loop_.add(fd_, EPOLLIN, this);
    drive_->pollers_[nc_] = self_;
    if (wants_write_) drive_->wants_write_();
  }

  // The server is sending a message past the maximum payload: the connection is closed (the
  // keeper makes another), said once per endpoint until a message gets through again.
  void refuse_oversized() {
    if (!drive_->said_oversized_)
      log::error("nats {}: the server sent a message too large (over {} KiB); closing the connection", drive_->name_,
                 NatsDrive::kMaxPayload / 1024);
    drive_->said_oversized_ = true;
    // relaxed: a count read only to space out retries; it orders nothing.
    drive_->oversized_in_row.fetch_add(1, std::memory_order_relaxed);
    unfinished_ = 0;
    natsConnection_Close(nc_);  // detaches: nc_ is null after
  }

  void unwatch() {
    if (fd_ < 0) return;
    drive_->loop_.remove(fd_);
    ::close(fd_);
    fd_ = -1;
    writable_watched_ = false;
  }

  // libnats has bytes to write (publishes, subscriptions, pings): they go in one write when the
  // iteration ends (the link's flush); what the socket does not take then waits for it to be
  // writable.
  void want_write(bool add) {
    wants_write_ = add;
    if (add && fd_ >= 0) {
      drive_->wants_write_();
    } else if (!add && writable_watched_) {
      drive_->loop_.modify(fd_, EPOLLIN);
      writable_watched_ = false;
    }
  }

 public:
  void flush() {
    if (nc_ == nullptr || fd_ < 0 || !wants_write_ || writable_watched_) return;
    natsConnection_ProcessWriteEvent(nc_);  // all written: it takes the want back (write(false))
    if (wants_write_ && fd_ >= 0 && !writable_watched_) {
      drive_->loop_.modify(fd_, EPOLLIN | EPOLLOUT);
      writable_watched_ = true;
    }
  }

 private:
  std::shared_ptr<NatsDrive> drive_;
  std::shared_ptr<NatsPoller> self_;
  std::atomic<int> posted_{0};  // acts posted and not yet run
  natsConnection* nc_;          // null once detached or forgotten
  int fd_ = -1;                 // our duplicate of the connection's socket, watched
  bool wants_write_ = false;
  bool writable_watched_ = false;
  size_t unfinished_ = 0;  // bytes read since the last message finished
  static constexpr int kControlLine = 16;
  static constexpr size_t kReadSize = 32 * 1024;  // libnats' read buffer (ioBufSize's default)
};

NatsDrive::~NatsDrive() = default;

void NatsDrive::install(natsOptions* options) {
  // SendAsap: no flusher thread; a publish asks for a write, and the write comes at iteration end.
  if (natsOptions_SetEventLoop(options, this, NatsPoller::attach, NatsPoller::read, NatsPoller::write,
                               NatsPoller::detach) != NATS_OK ||
      natsOptions_SetSendAsap(options, true) != NATS_OK)
    throw std::runtime_error("cannot drive libnats from the router's loop");
}

void NatsDrive::forget(natsConnection* connection) {
  const auto it = pollers_.find(connection);
  if (it == pollers_.end()) return;
  it->second->forget();
  pollers_.erase(it);
}

void NatsDrive::flush() {
  if (pollers_.empty()) return;
  // A write that fails ends the connection, and libnats' detach may change the map: a copy,
  // whose storage is kept (once per iteration, no allocation).
  for (const auto& [nc, p] : pollers_) flushing_.push_back(p);
  for (const auto& p : flushing_) p->flush();
  flushing_.clear();
}

void NatsDrive::forget_all() {
  for (auto& [nc, p] : pollers_) p->forget();
  pollers_.clear();
  gone_ = true;
}

}  // namespace mavswitch::fabric
