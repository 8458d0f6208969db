// UDP server: binds a port; every remote address that sends valid MAVLink becomes its own
// peer link, replies go to each peer, and a peer silent for the idle timeout is forgotten.
// Datagrams from unknown addresses that hold no MAVLink create nothing; at the peer limit the
// longest-silent peer makes room.
//
// With several I/O workers each has a socket on the port (SO_REUSEPORT), and the kernel hands
// each peer's datagrams to one of them by a hash of its address. The instance that hears a new
// peer places it on the instance whose worker serves the fewest links (of every endpoint):
// itself, or another, for which it opens a socket connected to the peer (the kernel then gives
// that socket the peer's datagrams, and replies leave from the same port). So the workers share
// the links evenly however the hash fell, and a link never changes worker once placed. Datagrams that reach an instance other
// than their peer's (sent before its socket was connected) are passed on to it; those of a
// peer's first moments may therefore be handled out of order, as UDP allows.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "transport/datagram_reader.hpp"
#include "transport/endpoint_kinds.hpp"
#include "transport/event_loop.hpp"
#include "transport/output_queue.hpp"
#include "transport/socket_util.hpp"

namespace mavswitch::transport {
namespace {

class UdpServerEndpoint;

// A socket handed from one worker to another inside a posted task: closed if the task never
// runs (the router stopped first).
struct HandedSocket {
  explicit HandedSocket(int f) : fd(f) {}
  ~HandedSocket() {
    if (fd >= 0) ::close(fd);
  }
  HandedSocket(const HandedSocket&) = delete;
  HandedSocket& operator=(const HandedSocket&) = delete;
  int release() noexcept { return std::exchange(fd, -1); }
  int fd;
};

class UdpPeerLink final : public Link, private EventLoop::Handler {
 public:
  // Served through the server's shared socket, or through `own_fd`, a socket connected to the
  // peer, when another worker placed it here.
  UdpPeerLink(UdpServerEndpoint& server, LinkHost& host, const SocketAddress& address, size_t queue_frames,
              int own_fd = -1);
  ~UdpPeerLink() override { close_socket(); }
  void flush() override;
  void datagram(std::span<const uint8_t> d) { received_datagram(d); }
  const SocketAddress& address() const noexcept { return address_; }
  bool has_own_socket() const noexcept { return own_fd_ >= 0; }
  void close_socket() noexcept;

 private:
  bool enqueue(std::span<const uint8_t> frame) override { return queue_.push(frame); }
  void on_io(uint32_t events) override;
  UdpServerEndpoint& server_;
  SocketAddress address_;
  DatagramQueue queue_;
  int own_fd_ = -1;
};

class UdpServerEndpoint final : public Endpoint, private EventLoop::Handler {
 public:
  using Endpoint::Endpoint;
  ~UdpServerEndpoint() override {
    if (idle_timer_) host_.loop().cancel(idle_timer_);
    peers_.clear();
    if (fd_ >= 0) {
      host_.loop().remove(fd_);
      ::close(fd_);
    }
  }

  void start() override {
    const auto address = SocketAddress::numeric(spec_.address.empty() ? "0.0.0.0" : spec_.address, spec_.port);
    if (!address) throw std::runtime_error(describe() + ": the listening address must be numeric");
    fd_ = open_socket(address->family(), SOCK_DGRAM);
    enlarge_datagram_buffers(fd_);
    bind_socket(fd_, *address, describe(), spec_.reuse_port);
    local_ = *SocketAddress::numeric(spec_.address.empty() ? "0.0.0.0" : spec_.address, transport::local_port(fd_));
    host_.loop().add(fd_, EPOLLIN, this);
    idle_timer_ = host_.loop().every(1000, [this] { forget_idle(); });
    // One of several workers' sockets on this port: the router says "listening" once for all.
    if (!spec_.reuse_port) log::info("{}: listening", describe());
  }

  void for_each_link(const std::function<void(const Link&)>& f) const override {
    for (const auto& [addr, peer] : peers_) f(*peer);
  }

  uint16_t local_port() const override { return fd_ >= 0 ? transport::local_port(fd_) : 0; }
  int fd() const noexcept { return fd_; }
  void blocked(UdpPeerLink& peer) {
    if (std::find(blocked_.begin(), blocked_.end(), &peer) == blocked_.end()) blocked_.push_back(&peer);
    if (!want_write_) {
      want_write_ = true;
      host_.loop().modify(fd_, EPOLLIN | EPOLLOUT);
    }
  }

 private:
  void on_io(uint32_t events) override {
    if (events & EPOLLIN) {
      read_datagrams(fd_, host_, [this](std::span<const uint8_t> d, const SocketAddress& from) { datagram(d, from); });
    }
    if (events & EPOLLOUT) {
      want_write_ = false;
      host_.loop().modify(fd_, EPOLLIN);
      auto waiting = std::move(blocked_);
      blocked_.clear();
      for (UdpPeerLink* p : waiting) p->flush();
    }
  }

  void datagram(std::span<const uint8_t> d, const SocketAddress& from) {
    auto it = peers_.find(from);
    if (it != peers_.end()) {
      it->second->datagram(d);
      return;
    }
    if (!admits(from)) return;
    if (group_ && pass_on(d, from)) return;
    if (!holds_mavlink(d)) return;
    if (peer_cap_reached()) evict_oldest_idle();
    if (!group_) {
      peer_added();
    } else if (const size_t home = claim(from); home == kTaken) {
      pass_on(d, from);  // another worker heard it first, a moment ago
      return;
    } else if (home != member_) {
      if (place_on(home, d, from)) return;
      keep_here(from, home);  // no socket could be had for it there
    }
    auto peer = std::make_unique<UdpPeerLink>(*this, host_, from, spec_.datagram_queue_frames);
    log::info("{}: new peer {}", describe(), peer->peer());
    host_.link_up(*peer);
    if (group_) placing_.fetch_sub(1, std::memory_order_relaxed);
    it = peers_.emplace(from, std::move(peer)).first;
    it->second->datagram(d);
  }

  static constexpr size_t kTaken = SIZE_MAX;
  UdpServerEndpoint& member(size_t i) const { return static_cast<UdpServerEndpoint&>(*group_->members[i]); }

  // Chooses the member a new peer lives on (the least loaded; this one when it is among them),
  // notes it and counts it there; kTaken when another member noted the peer first. Under the
  // lock, so peers arriving on several workers at once are still shared evenly. (A link counts
  // twice for a moment, once up and before its placing is uncounted: never too few.)
  size_t claim(const SocketAddress& from) {
    const std::lock_guard lock(group_->homes_mutex);
    size_t best = member_;
    for (size_t i = 0; i < group_->members.size(); ++i) {
      if (group_->members[i]->load() < group_->members[best]->load()) best = i;
    }
    if (!group_->homes.try_emplace(from, best).second) return kTaken;
    member(best).placing_.fetch_add(1, std::memory_order_relaxed);
    peer_added(best);
    return best;
  }

  void keep_here(const SocketAddress& from, size_t instead_of) {
    const std::lock_guard lock(group_->homes_mutex);
    group_->homes[from] = member_;
    member(instead_of).placing_.fetch_sub(1, std::memory_order_relaxed);
    placing_.fetch_add(1, std::memory_order_relaxed);
    peer_removed(instead_of);
    peer_added();
  }

  // A datagram from a peer that lives on another member (or is about to live on this one:
  // its link is on the way in a posted task): handed to it, in its thread, in turn.
  bool pass_on(std::span<const uint8_t> d, const SocketAddress& from) {
    size_t home = 0;
    {
      const std::lock_guard lock(group_->homes_mutex);
      const auto h = group_->homes.find(from);
      if (h == group_->homes.end()) return false;
      home = h->second;
    }
    UdpServerEndpoint& target = member(home);
    target.host_.loop().post([&target, from, bytes = std::vector<uint8_t>(d.begin(), d.end())] {
      if (const auto it = target.peers_.find(from); it != target.peers_.end()) it->second->datagram(bytes);
    });
    return true;
  }

  // Gives `from` a socket of its own and hands it, with the peer's first datagrams, to member
  // `home`. What the socket caught from others before it was connected goes where it belongs.
  bool place_on(size_t home, std::span<const uint8_t> first, const SocketAddress& from) {
    auto socket = std::make_shared<HandedSocket>(open_peer_socket(local_, from));
    if (socket->fd < 0) {
      log::warning("{}: cannot open a socket for peer {} on another worker ({}); it stays on this one", describe(),
                   from.to_string(), errno_text());
      return false;
    }
    std::vector<std::vector<uint8_t>> own{std::vector<uint8_t>(first.begin(), first.end())};
    std::vector<std::pair<SocketAddress, std::vector<uint8_t>>> others;
    uint8_t buffer[2048];
    for (int i = 0; i < 4096; ++i) {  // bounded: once connected, only the peer adds to it
      sockaddr_storage ss;
      socklen_t len = sizeof ss;
      const ssize_t n = ::recvfrom(socket->fd, buffer, sizeof buffer, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&ss), &len);
      if (n < 0) break;
      const SocketAddress src(reinterpret_cast<sockaddr*>(&ss), len);
      std::vector<uint8_t> bytes(buffer, buffer + n);
      if (src == from) {
        own.push_back(std::move(bytes));
      } else {
        others.emplace_back(src, std::move(bytes));
      }
    }
    UdpServerEndpoint& target = member(home);
    target.host_.loop().post([&target, socket, from, own = std::move(own)] { target.adopt(socket->release(), from, own); });
    for (const auto& [src, bytes] : others) datagram(bytes, src);
    return true;
  }

  // On the member a peer was placed on, in its thread: the peer's link, with its own socket.
  void adopt(int fd, const SocketAddress& from, const std::vector<std::vector<uint8_t>>& datagrams) {
    auto peer = std::make_unique<UdpPeerLink>(*this, host_, from, spec_.datagram_queue_frames, fd);
    log::info("{}: new peer {}", describe(), peer->peer());
    host_.link_up(*peer);
    placing_.fetch_sub(1, std::memory_order_relaxed);
    auto it = peers_.emplace(from, std::move(peer)).first;
    for (const auto& d : datagrams) it->second->datagram(d);
  }

  bool holds_mavlink(std::span<const uint8_t> d) {
    protocol::FrameParser probe(host_.message_table());
    bool any = false;
    auto sink = [&](const protocol::FrameView&) { any = true; };
    probe.feed(d, sink);
    probe.finish(sink);
    stray_ += probe.stats();
    return any;
  }

  void remove(std::unordered_map<SocketAddress, std::unique_ptr<UdpPeerLink>, SocketAddressHash>::iterator it,
              const char* why) {
    log::info("{}: peer {} forgotten ({})", describe(), it->second->peer(), why);
    if (group_) {
      // Unlisted and closed together: its next datagram, on a shared socket, makes it a new
      // peer rather than being passed on to a link that is gone.
      const std::lock_guard lock(group_->homes_mutex);
      it->second->close_socket();
      group_->homes.erase(it->first);
    }
    host_.link_down(*it->second);
    blocked_.erase(std::remove(blocked_.begin(), blocked_.end(), it->second.get()), blocked_.end());
    host_.loop().post([dead = std::shared_ptr<UdpPeerLink>(std::move(it->second))] {});
    peers_.erase(it);
    peer_removed();
  }

  void evict_oldest_idle() {
    auto oldest = std::min_element(peers_.begin(), peers_.end(), [](const auto& a, const auto& b) {
      return a.second->last_rx() < b.second->last_rx();
    });
    if (oldest != peers_.end()) remove(oldest, "peer limit reached");
  }

  void forget_idle() {
    const Millis cutoff = now_ms() - spec_.idle_timeout;
    for (auto it = peers_.begin(); it != peers_.end();) {
      auto next = std::next(it);
      if (spec_.idle_timeout > 0 && it->second->last_rx() < cutoff) remove(it, "idle");
      it = next;
    }
  }

  int fd_ = -1;
  SocketAddress local_;        // the address the socket is bound to, port included
  bool want_write_ = false;
  EventLoop::TimerId idle_timer_ = 0;
  std::unordered_map<SocketAddress, std::unique_ptr<UdpPeerLink>, SocketAddressHash> peers_;
  std::vector<UdpPeerLink*> blocked_;
  protocol::ParserStats stray_;  // datagrams from unknown addresses that held no MAVLink
};

UdpPeerLink::UdpPeerLink(UdpServerEndpoint& server, LinkHost& host, const SocketAddress& address, size_t queue_frames,
                         int own_fd)
    : Link(server, host, address.to_string()), server_(server), address_(address),
      queue_(queue_frames, server.spec().coalesce, server.spec().gso), own_fd_(own_fd) {
  if (own_fd_ >= 0) host_.loop().add(own_fd_, EPOLLIN, this);
}

void UdpPeerLink::close_socket() noexcept {
  if (own_fd_ < 0) return;
  host_.loop().remove(own_fd_);
  ::close(own_fd_);
  own_fd_ = -1;
}

void UdpPeerLink::flush() {
  if (own_fd_ >= 0) {
    const WriteResult r = queue_.send_to(own_fd_, nullptr, &counters_.frames_out, &counters_.bytes_out);
    const bool blocked = r == WriteResult::kBlocked;
    if (note_write_blocked(blocked)) host_.loop().modify(own_fd_, EPOLLIN | (blocked ? EPOLLOUT : 0u));
    return;
  }
  const WriteResult r = queue_.send_to(server_.fd(), &address_, &counters_.frames_out, &counters_.bytes_out);
  note_write_blocked(r == WriteResult::kBlocked);
  if (r == WriteResult::kBlocked) server_.blocked(*this);
}

void UdpPeerLink::on_io(uint32_t events) {
  // A connected socket also reports the peer's ICMP errors (port unreachable): reading
  // collects the error, which would otherwise be reported again and again.
  if (events & (EPOLLIN | EPOLLERR)) {
    read_datagrams(own_fd_, host_, [this](std::span<const uint8_t> d, const SocketAddress&) { received_datagram(d); });
  }
  if (events & EPOLLOUT) flush();
}

}  // namespace

std::unique_ptr<Endpoint> make_udp_server_endpoint(EndpointSpec spec, LinkHost& host) {
  return std::make_unique<UdpServerEndpoint>(std::move(spec), host);
}

}  // namespace mavswitch::transport
