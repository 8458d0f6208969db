// An endpoint is one configured connection point ([UartEndpoint x], -e host:port, the TCP
// server ...). It owns the links it opens: one (serial, UDP client, TCP client) or many (UDP
// server peers, TCP server clients), and keeps them alive: reconnects, reopens, forgets idle
// peers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/address_range.hpp"
#include "transport/clock.hpp"
#include "transport/link.hpp"
#include "transport/rate_limit.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::transport {

struct ListenerGroup;
class EndpointMaker;

struct EndpointSpec {
  // The kinds of socket transport makes itself, and kMade: endpoints a layer above makes through
  // `maker` (the window's WebSocket clients, the NATS fabric, an in-process component). What is
  // particular to a made kind (its keys, what it needs, how it reads) is its maker's and its
  // own folder's, not tested for anywhere else.
  enum class Kind { kSerial, kUdpServer, kUdpClient, kTcpServer, kTcpClient, kMade };
  Kind kind = Kind::kUdpClient;
  std::string name;

  std::string device;                   // serial
  std::vector<uint32_t> bauds{115200};  // serial: tried in turn until MAVLink arrives
  bool flow_control = false;            // serial: RTS/CTS

  std::string address;  // UDP/TCP: host name or numeric address (no brackets)
  uint16_t port = 0;

  std::shared_ptr<const EndpointMaker> maker;  // kMade: the layer that makes it

  Millis retry_timeout = 5000;             // TCP client: longest wait between reconnects; 0: never
  Millis idle_timeout = 30000;             // UDP server: a peer silent this long is forgotten
  size_t max_peers = 1024;                 // UDP server peers / TCP server clients; oldest idle evicted
  std::vector<AddressRange> allow_from;    // listening endpoints: who may connect (empty: anyone)
  size_t stream_queue_bytes = 256 * 1024;  // output queue of a stream link
  size_t datagram_queue_frames = 512;      // output queue of a message link (UDP, WebSocket)
  bool coalesce = true;                    // UDP: frames queued together share datagrams
  bool gso = true;                         // UDP without coalescing: runs of equal frames in one GSO send
  // Listening endpoints served by several I/O workers: one socket each, sharing the port.
  bool reuse_port = false;
  // Its links live on the first worker, the router's thread (an in-process component: its
  // handlers run there), not on the next worker in turn.
  bool router_thread = false;
  // MessageRates: its peers' requests for message rates go to the router's message rates
  // (rates/), not to the autopilot; false: passed on as they are.
  bool message_rates = true;

  RateLimits rate_in, rate_out;  // RateLimitIn, RateLimitOut: per (source, message)
  // MaxRate: the bytes a second each link may send, paced with priorities (transport/pacer.hpp).
  // kAutoRate: a serial port's baud rate (10 bits a byte), none for the others; 0: none.
  static constexpr int64_t kAutoRate = -1;
  int64_t max_rate = kAutoRate;
  Millis max_delay = 250;  // MaxDelay: status and telemetry older than this are not sent
};

// "udp-server", or what its maker calls it ("websocket", "nats", "component").
const char* kind_name(const EndpointSpec& spec) noexcept;
// Servers (UDP and TCP): they accept peers rather than reach out to one.
inline bool listens(const EndpointSpec& spec) noexcept {
  return spec.kind == EndpointSpec::Kind::kUdpServer || spec.kind == EndpointSpec::Kind::kTcpServer;
}

class Endpoint {
 public:
  Endpoint(EndpointSpec spec, LinkHost& host) : spec_(std::move(spec)), host_(host) {}
  virtual ~Endpoint() = default;
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // Opens what it can. Throws std::runtime_error only for a setup that can never work (a port
  // that cannot be bound); a device or peer that is not there yet is retried in the background.
  virtual void start() = 0;
  virtual void for_each_link(const std::function<void(const Link&)>& f) const = 0;
  // The port a listening endpoint is bound to (its spec may say 0: any); 0 for the others.
  virtual uint16_t local_port() const { return 0; }

  const EndpointSpec& spec() const noexcept { return spec_; }
  // "udp-server gcs 0.0.0.0:14550" — for logs and statistics.
  virtual std::string describe() const;
  // Listening endpoints: whether `peer` may connect; refusals are counted.
  bool admits(const SocketAddress& peer);
  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }
  // Clients refused because the process had no file descriptor left for them.
  uint64_t refused_no_fd() const noexcept { return refused_no_fd_.load(std::memory_order_relaxed); }
  // Clients refused because the endpoint was full (MaxClients), where it refuses rather than
  // evicting its longest-silent peer. Any thread.
  virtual uint64_t refused_full() const noexcept { return 0; }
  bool listening() const noexcept { return listens(spec_); }

  // What the endpoint's links counted, those gone included (a client that sent 100 MB of
  // garbage and left still shows), and what the kernel dropped at its sockets. Owner's thread.
  struct Totals {
    LinkCounters counters;
    protocol::ParserStats parser;
    uint64_t links_closed = 0;
    uint64_t kernel_drops = 0;
  };
  // A link going away leaves its counts here (`counters` with what other workers wrote to it).
  void retire(const LinkCounters& counters, const protocol::ParserStats& parser) noexcept {
    retired_.counters += counters;
    retired_.parser += parser;
    ++retired_.links_closed;
  }
  const Totals& retired() const noexcept { return retired_; }
  // Datagrams the kernel dropped at the endpoint's own sockets (UDP; 0 for streams).
  virtual uint64_t kernel_drops() const { return 0; }

  // Listening endpoints served by several workers: the instances (one per worker) share a
  // ListenerGroup, where this one is member `slot` (its worker). Before start().
  void join_group(std::shared_ptr<ListenerGroup> group, size_t slot);
  // Every member of the group is bound now. On this member's worker, once, after start().
  virtual void group_complete() {}

 protected:
  // At the cap, an instance makes room by evicting its own longest-silent peer. One that has
  // none admits the newcomer anyway: a new ground station is never locked out by silent peers
  // on other workers, and the endpoint holds at most MaxPeers + workers - 1 peers.
  bool peer_cap_reached() const noexcept;
  // Count the endpoint's peers (the group's, when several instances serve it).
  void peer_added() noexcept;
  void peer_removed() noexcept;

  EndpointSpec spec_;
  LinkHost& host_;
  std::atomic<uint64_t> refused_{0};  // read by the statistics from another worker
  std::atomic<uint64_t> refused_no_fd_{0};
  std::shared_ptr<ListenerGroup> group_;  // null: this instance serves the endpoint alone
  size_t group_slot_ = 0;
  std::atomic<size_t> peers_{0};  // alone; in a group, the group counts
  Totals retired_;                // the owner's
};

// The instances of one listening endpoint, one per I/O worker, bound to the same port. The
// kernel hands each new peer to one of them by a hash of its address, and the peer lives there
// for good: no instance knows another's peers. What they share is the peer limit and, for
// direct writes, each other's sockets (a worker replies on its own socket of the port).
struct ListenerGroup {
  explicit ListenerGroup(size_t workers) : sockets(workers) {
    // relaxed: construction, before the group is shared.
    for (auto& s : sockets) s.store(-1, std::memory_order_relaxed);
  }
  // Closes the UDP sockets: the group lives as long as its members and every writer's target
  // that names them (DirectWrite::keep_open).
  ~ListenerGroup();
  ListenerGroup(const ListenerGroup&) = delete;
  ListenerGroup& operator=(const ListenerGroup&) = delete;
  std::vector<std::atomic<int>> sockets;  // UDP: each member's, by worker (-1: not bound yet)
  std::atomic<size_t> peers{0};           // over all members: MaxPeers caps the endpoint as a whole
};

// Endpoints of a kind transport does not know (kMade): a layer above, which knows the thread or
// library that drives their links, makes them. Their links are transport::Links all the same, on
// the worker the router places them on.
class EndpointMaker {
 public:
  virtual ~EndpointMaker() = default;
  virtual const char* kind() const noexcept = 0;
  // Where its endpoint is, for describe() ("/mavlink/gcs", a cluster's servers); may be empty.
  virtual std::string where(const EndpointSpec& spec) const = 0;
  virtual std::unique_ptr<Endpoint> make(EndpointSpec spec, LinkHost& host) const = 0;
};

std::unique_ptr<Endpoint> make_endpoint(EndpointSpec spec, LinkHost& host);

}  // namespace mavswitch::transport
