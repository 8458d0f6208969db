// Signals as loop events (signalfd): SIGINT/SIGTERM stop the router cleanly, SIGUSR1 asks for
// statistics, SIGHUP for the configuration to be read again. SIGPIPE is ignored: a peer that
// vanished is a write error on its own link. Made before any other thread starts, so that every
// thread inherits the mask and the signals reach the loop only.
#pragma once

#include <functional>

#include "transport/event_loop.hpp"

namespace mavswitch::daemon {

class Signals final : private transport::EventLoop::Handler {
 public:
  Signals(transport::EventLoop& loop, std::function<void()> on_stop, std::function<void()> on_stats,
          std::function<void()> on_reload);
  ~Signals();

 private:
  void on_io(uint32_t events) override;
  transport::EventLoop& loop_;
  int fd_;
  std::function<void()> on_stop_, on_stats_, on_reload_;
};

}  // namespace mavswitch::daemon
