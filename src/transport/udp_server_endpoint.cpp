// UDP server: binds a port; every remote address that sends valid MAVLink becomes its own
// peer link, replies go to each peer, and a peer silent for the idle timeout is forgotten.
// Datagrams from unknown addresses that hold no MAVLink create nothing; at the peer limit the
// longest-silent peer makes room.
//
// With several I/O workers each has a socket on the port (SO_REUSEPORT), and a program in the
// kernel hands each peer's datagrams to one of them by a hash of its address (see
// reuseport_steering.hpp). The instance that hears a new peer places it on the instance that
// holds the fewest of the endpoint's peers (of equals, the one whose worker serves the fewest
// links): itself, or another, and then the program is told to send that peer's datagrams
// there. So the workers share the peers evenly however the hash fell (with the even placement
// a link then never changes worker). Why the endpoint's own peers: a worker's work for a UDP
// link is what the link receives (what is sent to it is written by whichever worker routes it,
// see router/direct_writer.hpp), and one server's peers are alike (a fleet's vehicles). Datagrams
// that were already queued at the first instance are passed on; a peer's first few may thus be
// handled out of order, as UDP allows.
//
// With the adaptive placement (the default) each instance also asks peer_balance.hpp once a
// second whether its peers should move: all to one worker while the router is quiet, some to
// an idle worker when this one is busy. A peer moves as it arrived: its link here goes (what
// it had queued is written first), a new one is made on the other worker and given the sources
// heard on the old one, so that frames targeted at them keep their way, and the kernel is told
// to send its datagrams there; those already queued here are passed on. Its statistics start
// again with the new link.
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
#include "transport/peer_balance.hpp"
#include "transport/reuseport_steering.hpp"
#include "transport/socket_util.hpp"

namespace mavswitch::transport {
namespace {

class UdpServerEndpoint;

class UdpPeerLink final : public Link {
 public:
  UdpPeerLink(UdpServerEndpoint& server, LinkHost& host, const SocketAddress& address);
  void flush() override;
  size_t trim_queues() override { return queue_.trim(); }
  size_t queue_storage() const noexcept override { return queue_.allocated_bytes(); }
  std::optional<DirectWrite> direct_write() const override;
  void datagram(std::span<const uint8_t> d) { received_datagram(d); }
  const SocketAddress& address() const noexcept { return address_; }
  // For the server, which sends every peer's queue at once (flush_peers).
  DatagramQueue::PeerSend pending_send() { return {&queue_, &address_}; }
  void sent(const DatagramQueue::PeerSend& s);
  bool listed = false;  // in the server's list of peers with output
  uint64_t frames_at_balance = 0;  // frames_in when the server last weighed its peers

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
      ::close(fd_);
    }
  }

  void start() override {
    const auto address = SocketAddress::numeric(spec_.address.empty() ? "0.0.0.0" : spec_.address, spec_.port);
    if (!address) throw std::runtime_error(describe() + ": the listening address must be numeric");
    fd_ = open_socket(address->family(), SOCK_DGRAM);
    enlarge_datagram_buffers(fd_);
    bind_socket(fd_, *address, describe(), spec_.reuse_port);
    if (group_ && spec_.reuse_port) {
      // Every member attaches the same program; the group keeps the last one.
      steers_ = steer_by_source(fd_, static_cast<uint32_t>(group_->size), {});
      if (!steers_ && member_ == 0) {
        log::warning("{}: cannot steer datagrams by source ({}); each peer stays on the worker the kernel picks",
                     describe(), errno_text());
      }
    }
    host_.loop().add(fd_, EPOLLIN, this);
    idle_timer_ = host_.loop().every(1000, [this] {
      forget_idle();
      rebalance();
    });
    // One of several workers' sockets on this port: the router says "listening" once for all.
    if (!spec_.reuse_port) log::info("{}: listening", describe());
  }

  void for_each_link(const std::function<void(const Link&)>& f) const override {
    for (const auto& [addr, peer] : peers_) f(*peer);
  }

  uint16_t local_port() const override { return fd_ >= 0 ? transport::local_port(fd_) : 0; }
  int fd() const noexcept { return fd_; }
  // The sockets of every member of the group, by worker (empty when alone).
  std::vector<int> member_fds() const {
    std::vector<int> fds;
    if (group_) {
      for (size_t i = 0; i < group_->members.size(); ++i) fds.push_back(member(i).fd());
    }
    return fds;
  }
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
    if (group_ && pass_on(d, from)) return;
    if (!holds_mavlink(d)) return;
    if (peer_cap_reached()) evict_oldest_idle();
    if (!group_) {
      peer_added();
    } else if (const size_t home = claim(from); home == kTaken) {
      pass_on(d, from);  // another worker heard it first, a moment ago
      return;
    } else if (home != member_) {
      hand_over(home, d, from);
      return;
    }
    welcome(from, d);
  }

  static constexpr size_t kTaken = SIZE_MAX;
  UdpServerEndpoint& member(size_t i) const { return static_cast<UdpServerEndpoint&>(*group_->members[i]); }

  // Chooses the member a new peer lives on, notes it and counts it there; kTaken when another
  // member noted the peer first. The member with the fewest peers (of equals, the one whose
  // worker serves the fewest links), unless this one is within 1/32 of the endpoint's peers of
  // it: small setups are shared exactly, and a large fleet, which the hash already spreads
  // about evenly, lists few peers in the kernel's program (each one costs every datagram a
  // comparison). Under the lock, so peers arriving on several workers at once are still shared
  // evenly.
  size_t claim(const SocketAddress& from) {
    const std::lock_guard lock(group_->homes_mutex);
    size_t best = member_;
    if (steers_ && group_->steered.size() < kMaxPlacedSources) {  // past that, peers stay where they land
      auto fewer = [](const Endpoint& a, const Endpoint& b) {
        return a.homed() != b.homed() ? a.homed() < b.homed() : a.worker_links() < b.worker_links();
      };
      for (size_t i = 0; i < group_->members.size(); ++i) {
        if (fewer(*group_->members[i], *group_->members[best])) best = i;
      }
      const Endpoint& least = *group_->members[best];
      const size_t slack = group_->homes.size() / 32;
      const bool even_here = homed() == least.homed() ? !fewer(least, *this) : homed() <= least.homed() + slack;
      if (even_here) best = member_;
    }
    if (!group_->homes.try_emplace(from, ListenerGroup::Home{best, false}).second) return kTaken;
    member(best).homed_.fetch_add(1, std::memory_order_relaxed);
    peer_added();
    return best;
  }

  // Gives a new peer, with its first datagram, to member `home`, then has the kernel send the
  // peer's datagrams there. In that order: a datagram that member then receives itself is
  // handled after the task that makes the peer's link.
  void hand_over(size_t home, std::span<const uint8_t> first, const SocketAddress& from) {
    UdpServerEndpoint& target = member(home);
    target.host_.loop().post([&target, from, bytes = std::vector<uint8_t>(first.begin(), first.end())] {
      target.welcome(from, bytes);
    });
    const std::lock_guard lock(group_->homes_mutex);
    const auto h = group_->homes.find(from);
    if (h == group_->homes.end() || h->second.member != home) return;  // gone already
    group_->steered.push_back({steering_key(from), static_cast<uint32_t>(home)});
    if (steer_by_source(fd_, static_cast<uint32_t>(group_->size), group_->steered)) {
      h->second.steered = true;
      return;
    }
    group_->steered.pop_back();
    log::warning("{}: cannot steer peer {} to its worker ({}); its datagrams are passed on to it", describe(),
                 from.to_string(), errno_text());
  }

  // A datagram from a peer that lives on another member (or is about to live on this one:
  // its link is on the way in a posted task): handed to it, in its thread, in turn.
  bool pass_on(std::span<const uint8_t> d, const SocketAddress& from) {
    size_t home = 0;
    {
      const std::lock_guard lock(group_->homes_mutex);
      const auto h = group_->homes.find(from);
      if (h == group_->homes.end()) return false;
      home = h->second.member;
    }
    passed_on_.fetch_add(1, std::memory_order_relaxed);
    UdpServerEndpoint& target = member(home);
    target.host_.loop().post([&target, from, bytes = std::vector<uint8_t>(d.begin(), d.end())] {
      if (const auto it = target.peers_.find(from); it != target.peers_.end()) it->second->datagram(bytes);
    });
    return true;
  }

  // A new peer's link, on the member it was placed on (counted already), in its thread. A peer
  // that moved here from another member comes with no datagram but with the sources heard there.
  void welcome(const SocketAddress& from, std::span<const uint8_t> first, std::span<const uint16_t> sources = {}) {
    auto peer = std::make_unique<UdpPeerLink>(*this, host_, from);
    if (sources.empty()) log::info("{}: new peer {}", describe(), peer->peer());
    host_.link_up(*peer);
    host_.inherit_sources(*peer, sources);
    UdpPeerLink& link = *peers_.emplace(from, std::move(peer)).first->second;
    if (!first.empty()) link.datagram(first);
  }

  // Once a second: whether this instance's peers should live elsewhere (see the top).
  void rebalance() {
    if (!group_ || !steers_ || spec_.placement != EndpointSpec::Placement::kAdaptive) return;
    std::vector<PeerLoad> loads;
    std::vector<const SocketAddress*> addresses;
    for (auto& [address, peer] : peers_) {
      const uint64_t frames = peer->counters().frames_in;
      loads.push_back({addresses.size(), frames - peer->frames_at_balance});
      addresses.push_back(&address);
      peer->frames_at_balance = frames;
    }
    const Millis now = now_ms();
    if (loads.empty() || now < group_->settled_at.load(std::memory_order_relaxed)) return;
    const std::vector<double> busy = group_busy();
    const std::vector<PeerMove> moves = plan_peer_moves(busy, member_, loads);
    if (moves.empty()) return;
    group_->settled_at.store(now + kSettle, std::memory_order_relaxed);
    flush_peers();  // what the movers have queued leaves from here
    std::vector<std::pair<SocketAddress, size_t>> movers;
    for (const PeerMove& m : moves) movers.emplace_back(*addresses[m.peer], m.to);
    if (!move(movers)) return;
    log::info("{}: {} peers moved from worker {} to worker {} (workers busy: {:.2f})", describe(), movers.size(),
              member_, movers.front().second, fmt::join(busy, ", "));
  }
  static constexpr Millis kSettle = 2000;

  // Hands peers that live here to other members: each one's link here goes, one is made there
  // with the sources heard here, and then the kernel is told (datagrams it already queued here
  // are passed on: the home says where by then). False, and nothing moved, when the kernel's
  // program could not list them all.
  bool move(const std::vector<std::pair<SocketAddress, size_t>>& movers) {
    {
      const std::lock_guard lock(group_->homes_mutex);
      if (group_->steered.size() + movers.size() > kMaxPlacedSources) return false;
    }
    for (const auto& [from, to] : movers) {
      const auto it = peers_.find(from);
      if (it == peers_.end() || to == member_) continue;
      std::vector<uint16_t> sources = host_.sources_heard(*it->second);
      drop_link(it);
      homed_.fetch_sub(1, std::memory_order_relaxed);
      UdpServerEndpoint& target = member(to);
      target.homed_.fetch_add(1, std::memory_order_relaxed);
      target.host_.loop().post(
          [&target, address = from, sources = std::move(sources)] { target.welcome(address, {}, sources); });
      moved_.fetch_add(1, std::memory_order_relaxed);
    }
    const std::lock_guard lock(group_->homes_mutex);
    auto& steered = group_->steered;
    for (const auto& [from, to] : movers) {
      const auto h = group_->homes.find(from);
      if (h == group_->homes.end()) continue;
      const uint32_t key = steering_key(from);
      if (h->second.steered) {
        std::erase_if(steered, [&](const PlacedSource& p) { return p.key == key && p.socket == h->second.member; });
      }
      h->second.member = to;
      h->second.steered = hashed_socket(key, static_cast<uint32_t>(group_->size)) != to;
      if (h->second.steered) steered.push_back({key, static_cast<uint32_t>(to)});
    }
    if (!steer_by_source(fd_, static_cast<uint32_t>(group_->size), steered)) {
      log::warning("{}: cannot steer {} moved peers to their worker ({}); their datagrams are passed on", describe(),
                   movers.size(), errno_text());
    }
    return true;
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
    log::info("{}: peer {} forgotten ({})", describe(), it->second->peer(), why);
    if (group_) {
      forget_home(it->first);
      homed_.fetch_sub(1, std::memory_order_relaxed);
    }
    drop_link(it);
    peer_removed();
  }

  // The link goes (nothing is routed to it after), the object at the end of this iteration.
  void drop_link(PeerMap::iterator it) {
    host_.link_down(*it->second);
    blocked_.erase(std::remove(blocked_.begin(), blocked_.end(), it->second.get()), blocked_.end());
    with_output_.erase(std::remove(with_output_.begin(), with_output_.end(), it->second.get()), with_output_.end());
    host_.loop().post([dead = std::shared_ptr<UdpPeerLink>(std::move(it->second))] {});
    peers_.erase(it);
  }

  // A peer that goes is no longer steered: its next datagram, wherever the hash sends it, makes
  // it a new peer rather than being passed on to a link that is gone.
  void forget_home(const SocketAddress& from) {
    const std::lock_guard lock(group_->homes_mutex);
    const auto h = group_->homes.find(from);
    if (h == group_->homes.end()) return;
    if (h->second.steered) {
      const uint32_t key = steering_key(from);
      auto& steered = group_->steered;
      const auto s = std::find_if(steered.begin(), steered.end(), [&](const PlacedSource& p) {
        return p.key == key && p.socket == h->second.member;
      });
      if (s != steered.end()) steered.erase(s);
      steer_by_source(fd_, static_cast<uint32_t>(group_->size), steered);
    }
    group_->homes.erase(h);
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
  bool steers_ = false;  // several workers, and the kernel took the steering program
  bool want_write_ = false;
  EventLoop::TimerId idle_timer_ = 0;
  PeerMap peers_;
  std::vector<UdpPeerLink*> blocked_;
  std::vector<UdpPeerLink*> with_output_;  // peers with frames queued since the last flush
  std::vector<DatagramQueue::PeerSend> sends_;
  protocol::ParserStats stray_;  // datagrams from unknown addresses that held no MAVLink
};

UdpPeerLink::UdpPeerLink(UdpServerEndpoint& server, LinkHost& host, const SocketAddress& address)
    : Link(server, host, address.to_string()), server_(server), address_(address),
      queue_(server.spec().datagram_queue_frames, server.spec().coalesce, server.spec().gso) {}

// Every worker's socket on the port has the same local address, so a reply may leave from any
// of them: another worker sends on its own (they live as long as the endpoint).
std::optional<DirectWrite> UdpPeerLink::direct_write() const {
  const EndpointSpec& spec = server_.spec();
  return DirectWrite{server_.fd(), server_.member_fds(), address_, spec.datagram_queue_frames, spec.coalesce, spec.gso};
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
