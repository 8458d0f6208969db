// UDP server: binds a port; every remote address that sends valid MAVLink becomes its own
// peer link, replies go to each peer, and a peer silent for the idle timeout is forgotten.
// Datagrams from unknown addresses that hold no MAVLink create nothing; at the peer limit the
// longest-silent peer makes room.
//
// With several I/O workers each has a socket on the port (SO_REUSEPORT). The kernel hands a
// remote address's datagrams to one of them by a hash of the address, always the same one
// while the sockets stay, so each peer is a link on one worker for good and no instance needs
// to know another's peers. What is sent to a peer is written by whichever worker routed it, on
// that worker's own socket of the port (router/direct_writer.hpp).
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
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

// What a member drops at most when its group becomes whole (a socket's buffer, 4 MB, of 64-byte
// datagrams); past it, a flood that never stops is left to be read.
constexpr size_t kMaxEarlyDatagrams = 65536;

class UdpServerEndpoint;

class UdpPeerLink final : public Link {
 public:
  UdpPeerLink(UdpServerEndpoint& server, LinkHost& host, const SocketAddress& address);
  void flush() override;
  size_t trim_queues() override { return queue_.trim(); }
  size_t queue_storage() const noexcept override { return queue_.allocated_bytes(); }
  size_t queued_bytes() const noexcept override { return queue_.queued_bytes(); }
  std::optional<DirectWrite> direct_write() const override;
  void datagram(std::span<const uint8_t> d) { received_datagram(d); }
  const SocketAddress& address() const noexcept { return address_; }
  // For the server, which sends every peer's queue at once (flush_peers).
  DatagramQueue::PeerSend pending_send() { return {&queue_, &address_}; }
  void sent(const DatagramQueue::PeerSend& s);
  bool listed = false;  // in the server's list of peers with output

 private:
  bool enqueue(std::span<const uint8_t> frame) override;
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
      if (!group_) ::close(fd_);  // else the group's, closed when no writer can use it
    }
  }

  void start() override {
    const auto address = SocketAddress::numeric(spec_.address.empty() ? "0.0.0.0" : spec_.address, spec_.port);
    if (!address) throw std::runtime_error(describe() + ": the listening address must be numeric");
    fd_ = open_socket(address->family(), SOCK_DGRAM);
    enlarge_datagram_buffers(fd_);
    if (group_) group_->sockets[group_slot_].store(fd_, std::memory_order_release);
    bind_socket(fd_, *address, describe(), spec_.reuse_port);
    if (!group_) host_.loop().add(fd_, EPOLLIN, this);  // a group's member reads once it is whole
    // One of several workers' sockets on this port: the router says "listening" once for all.
    if (!spec_.reuse_port) log::info("{}: listening", describe());
  }

  // The kernel hands a datagram to a member by a hash over the members bound so far: what came
  // while the workers were binding went by a smaller group, and taking it would give its peer a
  // link here and, from now on, another on the member the whole group hashes it to. It is
  // dropped (a peer that streams sends again); from here on a peer stays where it lands.
  void group_complete() override {
    uint8_t sink[1];
    size_t dropped = 0;
    while (dropped < kMaxEarlyDatagrams && ::recv(fd_, sink, sizeof sink, MSG_DONTWAIT | MSG_TRUNC) >= 0) ++dropped;
    if (dropped > 0)
      log::info("{}: {} datagrams that came while the workers bound the port dropped", describe(), dropped);
    host_.loop().add(fd_, EPOLLIN, this);
  }

  void for_each_link(const std::function<void(const Link&)>& f) const override {
    for (const auto& [addr, peer] : peers_) f(*peer);
  }
  uint64_t kernel_drops() const override { return socket_drops(fd_); }

  uint16_t local_port() const override { return fd_ >= 0 ? transport::local_port(fd_) : 0; }
  int fd() const noexcept { return fd_; }
  // The sockets of every member of the group, by worker (empty when alone).
  std::vector<int> member_fds() const {
    std::vector<int> fds;
    if (group_) {
      for (const auto& s : group_->sockets) fds.push_back(s.load(std::memory_order_acquire));
    }
    return fds;
  }
  const std::shared_ptr<ListenerGroup>& group() const noexcept { return group_; }
  void has_output(UdpPeerLink& peer) {
    if (peer.listed) return;
    peer.listed = true;
    with_output_.push_back(&peer);
  }
  // Every peer's queued datagrams, in as few sendmmsg calls as they fill (one per 64), rather
  // than one call per peer: a fleet's vehicles, each hearing the others, are many peers.
  void flush_peers() {
    if (with_output_.empty()) return;
    sends_.clear();
    for (UdpPeerLink* p : with_output_) sends_.push_back(p->pending_send());
    DatagramQueue::send_all(fd_, sends_);
    for (size_t i = 0; i < with_output_.size(); ++i) {  // sent() lists nobody
      with_output_[i]->listed = false;
      with_output_[i]->sent(sends_[i]);
    }
    with_output_.clear();
  }
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
      for (UdpPeerLink* p : blocked_) has_output(*p);
      blocked_.clear();
      flush_peers();
    }
  }

  void datagram(std::span<const uint8_t> d, const SocketAddress& from) {
    auto it = peers_.find(from);
    if (it != peers_.end()) {
      it->second->datagram(d);
      return;
    }
    if (!admits(from)) return;
    if (!holds_mavlink(d)) return;
    if (peer_cap_reached()) evict_oldest_idle();
    peer_added();
    auto peer = std::make_unique<UdpPeerLink>(*this, host_, from);
    peer_lines_.line(log::Level::kInfo, "{}: new peer {}", describe(), peer->peer());
    host_.link_up(*peer);
    peers_.emplace(from, std::move(peer)).first->second->datagram(d);
    if (idle_timer_ == 0) watch_idle(spec_.idle_timeout);
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

  using PeerMap = std::unordered_map<SocketAddress, std::unique_ptr<UdpPeerLink>, SocketAddressHash>;

  void remove(PeerMap::iterator it, const char* why) {
    peer_lines_.line(log::Level::kInfo, "{}: peer {} forgotten ({})", describe(), it->second->peer(), why);
    // The link goes now (nothing is routed to it after), the object at the end of this iteration.
    host_.link_down(*it->second);
    blocked_.erase(std::remove(blocked_.begin(), blocked_.end(), it->second.get()), blocked_.end());
    with_output_.erase(std::remove(with_output_.begin(), with_output_.end(), it->second.get()), with_output_.end());
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

  // One timer, due when the longest-silent peer's IdleTimeout ends (a sweep every second let
  // peers linger up to a second past it), at most every kIdleSweepGap: a thousand peers falling
  // silent at different moments cost ten sweeps a second, not a thousand.
  static constexpr Millis kIdleSweepGap = 100;
  void watch_idle(Millis in) {
    if (spec_.idle_timeout <= 0) return;
    idle_timer_ = host_.loop().after(std::max(in, kIdleSweepGap), [this] { forget_idle(); });
  }

  void forget_idle() {
    idle_timer_ = 0;
    const Millis now = now_ms();
    Millis next_due = std::numeric_limits<Millis>::max();
    for (auto it = peers_.begin(); it != peers_.end();) {
      auto next = std::next(it);
      const Millis due = it->second->last_rx() + spec_.idle_timeout;
      if (due <= now)
        remove(it, "idle");
      else
        next_due = std::min(next_due, due);
      it = next;
    }
    if (!peers_.empty()) watch_idle(next_due - now);
  }

  int fd_ = -1;
  bool want_write_ = false;
  EventLoop::TimerId idle_timer_ = 0;
  PeerMap peers_;
  std::vector<UdpPeerLink*> blocked_;
  std::vector<UdpPeerLink*> with_output_;  // peers with frames queued since the last flush
  std::vector<DatagramQueue::PeerSend> sends_;
  protocol::ParserStats stray_;  // datagrams from unknown addresses that held no MAVLink
  log::Throttle peer_lines_;     // peers come and go as a peer pleases: a spray of ports floods nothing
};

UdpPeerLink::UdpPeerLink(UdpServerEndpoint& server, LinkHost& host, const SocketAddress& address)
    : Link(server, host, address.to_string()),
      server_(server),
      address_(address),
      queue_(server.spec().datagram_queue_frames, server.spec().coalesce, server.spec().gso) {}

// Every worker's socket on the port has the same local address, so a reply may leave from any
// of them: another worker sends on its own (the group keeps them open while a writer may).
std::optional<DirectWrite> UdpPeerLink::direct_write() const {
  const EndpointSpec& spec = server_.spec();
  return DirectWrite{server_.fd(), server_.member_fds(),       server_.group(),
                     address_,     spec.datagram_queue_frames, spec.coalesce,
                     spec.gso};
}

bool UdpPeerLink::enqueue(std::span<const uint8_t> frame) {
  if (!queue_.push(frame)) return false;
  server_.has_output(*this);
  return true;
}

// The first peer flushed this iteration sends every peer's output; the others find theirs sent.
void UdpPeerLink::flush() { server_.flush_peers(); }

void UdpPeerLink::sent(const DatagramQueue::PeerSend& s) {
  counters_.frames_out += s.frames;
  counters_.bytes_out += s.bytes;
  note_write_blocked(s.result == WriteResult::kBlocked);
  if (s.result == WriteResult::kBlocked) server_.blocked(*this);
}

}  // namespace

std::unique_ptr<Endpoint> make_udp_server_endpoint(EndpointSpec spec, LinkHost& host) {
  return std::make_unique<UdpServerEndpoint>(std::move(spec), host);
}

}  // namespace mavswitch::transport
