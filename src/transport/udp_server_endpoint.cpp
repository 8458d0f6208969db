// UDP server: binds a port; every remote address that sends valid MAVLink becomes its own
// peer link, replies go to each peer, and a peer silent for the idle timeout is forgotten.
// Datagrams from unknown addresses that hold no MAVLink create nothing; at the peer limit the
// longest-silent peer makes room.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "base/log.hpp"
#include "transport/datagram_reader.hpp"
#include "transport/endpoint_kinds.hpp"
#include "transport/event_loop.hpp"
#include "transport/output_queue.hpp"
#include "transport/socket_util.hpp"

namespace mavswitch::transport {
namespace {

class UdpServerEndpoint;

class UdpPeerLink final : public Link {
 public:
  UdpPeerLink(UdpServerEndpoint& server, LinkHost& host, const SocketAddress& address, size_t queue_frames);
  void flush() override;
  void datagram(std::span<const uint8_t> d) { received_datagram(d); }
  const SocketAddress& address() const noexcept { return address_; }

 private:
  bool enqueue(std::span<const uint8_t> frame) override { return queue_.push(frame); }
  UdpServerEndpoint& server_;
  SocketAddress address_;
  DatagramQueue queue_;
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
    if (it == peers_.end()) {
      if (!admits(from) || !holds_mavlink(d)) return;
      if (peer_cap_reached()) evict_oldest_idle();
      auto peer = std::make_unique<UdpPeerLink>(*this, host_, from, spec_.datagram_queue_frames);
      log::info("{}: new peer {}", describe(), peer->peer());
      host_.link_up(*peer);
      it = peers_.emplace(from, std::move(peer)).first;
      peer_added();
    }
    it->second->datagram(d);
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
  bool want_write_ = false;
  EventLoop::TimerId idle_timer_ = 0;
  std::unordered_map<SocketAddress, std::unique_ptr<UdpPeerLink>, SocketAddressHash> peers_;
  std::vector<UdpPeerLink*> blocked_;
  protocol::ParserStats stray_;  // datagrams from unknown addresses that held no MAVLink
};

UdpPeerLink::UdpPeerLink(UdpServerEndpoint& server, LinkHost& host, const SocketAddress& address, size_t queue_frames)
    : Link(server, host, address.to_string()), server_(server), address_(address),
      queue_(queue_frames, server.spec().coalesce, server.spec().gso) {}

void UdpPeerLink::flush() {
  const WriteResult r = queue_.send_to(server_.fd(), &address_, &counters_.frames_out, &counters_.bytes_out);
  note_write_blocked(r == WriteResult::kBlocked);
  if (r == WriteResult::kBlocked) server_.blocked(*this);
}

}  // namespace

std::unique_ptr<Endpoint> make_udp_server_endpoint(EndpointSpec spec, LinkHost& host) {
  return std::make_unique<UdpServerEndpoint>(std::move(spec), host);
}

}  // namespace mavswitch::transport
