// TCP client: a non-blocking connect, and while the target is down, reconnects with a backoff
// that doubles up to RetryTimeout. An unreachable target never stalls anything else.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "transport/endpoint_kinds.hpp"
#include "transport/event_loop.hpp"
#include "transport/resolver.hpp"
#include "transport/socket_util.hpp"
#include "transport/stream_link.hpp"

namespace mavswitch::transport {
namespace {

constexpr Millis kFirstRetry = 500;

class TcpClientEndpoint final : public Endpoint, private EventLoop::Handler {
 public:
  using Endpoint::Endpoint;
  ~TcpClientEndpoint() override {
    alive_.reset();
    if (connecting_fd_ >= 0) {
      host_.loop().remove(connecting_fd_);
      ::close(connecting_fd_);
    }
    if (retry_timer_) host_.loop().cancel(retry_timer_);
  }

  void start() override { attempt(); }

  void for_each_link(const std::function<void(const Link&)>& f) const override {
    if (link_) f(*link_);
  }

 private:
  void attempt() {
    retry_timer_ = 0;
    std::weak_ptr<int> alive = alive_;
    host_.resolver().resolve(spec_.address, spec_.port, SOCK_STREAM,
                             [this, alive](std::vector<SocketAddress> addrs, std::string error) {
                               if (alive.expired()) return;
                               if (addrs.empty()) {
                                 fail("cannot resolve: " + error);
                                 return;
                               }
                               connect_to(addrs[attempts_++ % addrs.size()]);
                             });
  }

  void connect_to(const SocketAddress& address) {
    target_ = address;
    const int fd = open_socket(address.family(), SOCK_STREAM);
    if (::connect(fd, address.get(), address.size()) < 0 && errno != EINPROGRESS) {
      const std::string err = errno_text();
      ::close(fd);
      fail("connect " + address.to_string() + ": " + err);
      return;
    }
    connecting_fd_ = fd;
    host_.loop().add(fd, EPOLLOUT, this);
  }

  void on_io(uint32_t) override {  // the connect finished, one way or the other
    const int fd = connecting_fd_;
    connecting_fd_ = -1;
    host_.loop().remove(fd);
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      ::close(fd);
      fail("connect " + target_.to_string() + ": " + std::strerror(err));
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    backoff_ = kFirstRetry;
    reported_failure_ = false;
    link_ = std::make_unique<StreamLink>(*this, host_, target_.to_string(), fd, spec_.stream_queue_bytes,
                                         [this](StreamLink& l, const std::string& why) { closed(l, why); });
    log::info("{}: connected", describe());
    host_.link_up(*link_);
  }

  void closed(StreamLink& link, const std::string& why) {
    log::warning("{}: disconnected ({})", describe(), why);
    host_.link_down(link);
    host_.loop().post([dead = std::shared_ptr<StreamLink>(std::move(link_))] {});
    schedule_retry();
  }

  void fail(const std::string& why) {
    // Said once per outage, not on every retry.
    if (!reported_failure_) log::warning("{}: {}; retrying", describe(), why);
    reported_failure_ = true;
    schedule_retry();
  }

  void schedule_retry() {
    if (spec_.retry_timeout <= 0) {
      log::warning("{}: RetryTimeout is 0: not reconnecting", describe());
      return;
    }
    const Millis delay = std::min(backoff_, spec_.retry_timeout);
    backoff_ = std::min(backoff_ * 2, spec_.retry_timeout);
    retry_timer_ = host_.loop().after(delay, [this] { attempt(); });
  }

  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // guards resolver callbacks
  std::unique_ptr<StreamLink> link_;
  SocketAddress target_;
  int connecting_fd_ = -1;
  EventLoop::TimerId retry_timer_ = 0;
  Millis backoff_ = kFirstRetry;
  size_t attempts_ = 0;
  bool reported_failure_ = false;
};

}  // namespace

std::unique_ptr<Endpoint> make_tcp_client_endpoint(EndpointSpec spec, LinkHost& host) {
  return std::make_unique<TcpClientEndpoint>(std::move(spec), host);
}

}  // namespace mavswitch::transport
