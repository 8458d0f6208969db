#include "daemon/signals.hpp"

#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>

namespace mavswitch::daemon {

Signals::Signals(transport::EventLoop& loop, std::function<void()> on_stop, std::function<void()> on_stats,
                 std::function<void()> on_reload)
    : loop_(loop), on_stop_(std::move(on_stop)), on_stats_(std::move(on_stats)), on_reload_(std::move(on_reload)) {
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  fd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("signalfd failed");
  loop_.add(fd_, EPOLLIN, this);
}

Signals::~Signals() {
  loop_.remove(fd_);
  ::close(fd_);
}

void Signals::on_io(uint32_t) {
  signalfd_siginfo info;
  while (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (info.ssi_signo == SIGUSR1)
      on_stats_();
    else if (info.ssi_signo == SIGHUP)
      on_reload_();
    else
      on_stop_();
  }
}

}  // namespace mavswitch::daemon
