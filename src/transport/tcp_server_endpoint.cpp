// TCP server: many clients, each its own link. A client that sends garbage or leaves
// mid-frame affects only itself; when the client limit is reached the longest-silent client
// makes room for the new one.
//
// Out of file descriptors (EMFILE, ENFILE), accept() fails while the socket stays readable: a
// loop that retried at once would spin. The waiting clients are refused instead (accepted on a
// descriptor held in reserve for that, and closed), accepting rests a moment, and the error is
// said once per interval with the count.
//
// With several I/O workers each has a listening socket on the port (SO_REUSEPORT): the kernel
// hands each new connection to one of them by a hash, and the client lives on that worker until
// it goes.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/log.hpp"
#include "transport/endpoint_kinds.hpp"
#include "transport/event_loop.hpp"
#include "transport/socket_util.hpp"
#include "transport/stream_link.hpp"

namespace mavswitch::transport {
namespace {

class TcpServerEndpoint final : public Endpoint, private EventLoop::Handler {
 public:
  using Endpoint::Endpoint;
  ~TcpServerEndpoint() override {
    clients_.clear();  // each closes its own socket
    if (rest_timer_ != 0) host_.loop().cancel(rest_timer_);
    if (reserve_fd_ >= 0) ::close(reserve_fd_);
    if (fd_ >= 0) {
      host_.loop().remove(fd_);
      ::close(fd_);
    }
  }

  void start() override {
    const std::string addr = spec_.address.empty() ? "::" : spec_.address;
    auto address = SocketAddress::numeric(addr, spec_.port);
    if (!address) throw std::runtime_error(describe() + ": the listening address must be numeric");
    try {
      fd_ = open_socket(address->family(), SOCK_STREAM);
      bind_socket(fd_, *address, describe(), spec_.reuse_port);
    } catch (const std::runtime_error&) {
      if (!spec_.address.empty()) throw;
      address = SocketAddress::numeric("0.0.0.0", spec_.port);  // no IPv6 on this host
      fd_ = open_socket(AF_INET, SOCK_STREAM);
      bind_socket(fd_, *address, describe(), spec_.reuse_port);
    }
    if (::listen(fd_, SOMAXCONN) < 0) throw std::runtime_error(describe() + ": listen: " + errno_text());
    host_.loop().add(fd_, EPOLLIN, this);
    reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    // One of several workers' sockets on this port: the router says "listening" once for all.
    if (!spec_.reuse_port) log::info("{}: listening", describe());
  }

  void for_each_link(const std::function<void(const Link&)>& f) const override {
    for (const auto& c : clients_) f(*c);
  }
  uint16_t local_port() const override { return fd_ >= 0 ? transport::local_port(fd_) : 0; }

 private:
  void on_io(uint32_t) override {
    for (;;) {
      sockaddr_storage ss;
      socklen_t len = sizeof ss;
      const int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) {
          out_of_descriptors(errno);
          return;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) log::warning("{}: accept: {}", describe(), errno_text());
        return;
      }
      const SocketAddress peer(reinterpret_cast<sockaddr*>(&ss), len);
      if (!admits(peer)) {
        log::debug("{}: refused {} (not in AllowFrom)", describe(), peer.to_string());
        ::close(fd);
        continue;
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      adopt(fd, peer);
    }
  }

  void out_of_descriptors(int err) {
    uint64_t refused = 0;
    if (reserve_fd_ >= 0) {
      ::close(reserve_fd_);
      for (int k = 0; k < kRefusedPerTurn; ++k) {  // bounded: the backlog may refill as fast
        const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) break;
        ::close(fd);
        ++refused;
      }
      reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    // relaxed: a count for statistics; nothing else is published through it.
    refused_no_fd_.fetch_add(refused, std::memory_order_relaxed);
    const Millis now = host_.loop().now();
    if (last_said_ == 0 || now - last_said_ >= kSayEvery) {
      last_said_ = now;
      log::error(
          "{}: accept: {}: refusing new clients ({} so far); raise the descriptor limit (LimitNOFILE, ulimit -n)",
          describe(), std::strerror(err), refused_no_fd());
    }
    host_.loop().modify(fd_, 0);  // rest: no readiness until the timer
    rest_timer_ = host_.loop().after(kRest, [this] {
      rest_timer_ = 0;
      host_.loop().modify(fd_, EPOLLIN);
    });
  }

  void adopt(int fd, const SocketAddress& peer) {
    if (peer_cap_reached()) evict_oldest_idle();
    auto link = std::make_unique<StreamLink>(*this, host_, peer.to_string(), fd, spec_.stream_queue_bytes,
                                             [this](StreamLink& l, const std::string& why) { closed(l, why); });
    peer_lines_.line(log::Level::kInfo, "{}: client {} connected", describe(), link->peer());
    host_.link_up(*link);
    clients_.push_back(std::move(link));
    peer_added();
  }

  void evict_oldest_idle() {
    auto oldest = std::min_element(clients_.begin(), clients_.end(),
                                   [](const auto& a, const auto& b) { return a->last_rx() < b->last_rx(); });
    if (oldest != clients_.end()) (*oldest)->close("evicted: client limit reached");
  }

  void closed(StreamLink& link, const std::string& why) {
    peer_lines_.line(log::Level::kInfo, "{}: client {} gone ({})", describe(), link.peer(), why);
    host_.link_down(link);
    auto it = std::find_if(clients_.begin(), clients_.end(), [&](const auto& c) { return c.get() == &link; });
    if (it == clients_.end()) return;
    // Destroyed on a later turn of the loop: we may be inside its own callback now.
    host_.loop().post([dead = std::shared_ptr<StreamLink>(std::move(*it))] {});
    clients_.erase(it);
    peer_removed();
  }

  static constexpr Millis kRest = 100;         // accepting rests this long when out of descriptors
  static constexpr Millis kSayEvery = 10'000;  // and says so at most this often
  static constexpr int kRefusedPerTurn = 64;
  int fd_ = -1;
  int reserve_fd_ = -1;  // closed to accept a client only to refuse it
  EventLoop::TimerId rest_timer_ = 0;
  Millis last_said_ = 0;
  std::vector<std::unique_ptr<StreamLink>> clients_;
  log::Throttle peer_lines_;  // clients come and go as they please: a connect loop floods nothing
};

}  // namespace

std::unique_ptr<Endpoint> make_tcp_server_endpoint(EndpointSpec spec, LinkHost& host) {
  return std::make_unique<TcpServerEndpoint>(std::move(spec), host);
}

}  // namespace mavswitch::transport
