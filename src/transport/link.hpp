// A link is one peer frames are routed to and from: a serial port, a UDP client, one UDP
// server peer, one TCP connection. Links report what they receive to a LinkHost (the router
// engine) and queue what they are asked to send, writing it when the loop iteration ends (or
// sooner, when a queue fills).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/frame.hpp"
#include "protocol/message_class.hpp"
#include "protocol/parser.hpp"
#include "transport/clock.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::transport {

class EventLoop;
class Resolver;
class Endpoint;
class Link;
class Pacer;
class RateLimiter;

// What a thread other than a link's own needs to write datagrams to the link's peer itself:
// the socket, the peer, and how frames are packed.
struct DirectWrite {
  int fd = -1;
  // Sockets that share the port, one per worker (a listening endpoint's, by worker): a writer
  // sends on its own, which has the same local address, rather than contending for `fd`. -1:
  // that worker's socket was not bound yet when the link came up.
  std::vector<int> fd_by_writer;
  int fd_for(size_t writer) const noexcept {
    return writer < fd_by_writer.size() && fd_by_writer[writer] >= 0 ? fd_by_writer[writer] : fd;
  }
  // Holds these sockets open while a writer may still use them: an endpoint closed at run time
  // must not have its descriptor numbers reused under a write in flight.
  std::shared_ptr<const void> keep_open;
  SocketAddress to;
  size_t queue_frames = 0;
  bool coalesce = true;
  bool segment = true;
};

struct LinkCounters {
  uint64_t frames_in = 0;
  uint64_t bytes_in = 0;
  uint64_t frames_out = 0;
  uint64_t bytes_out = 0;
  uint64_t dropped_queue_full = 0;  // frames refused because the peer is not keeping up
  uint64_t dropped_down = 0;        // frames for a link that is not connected
  uint64_t rate_limited_in = 0;     // RateLimitIn: frames in faster than allowed
  uint64_t rate_limited_out = 0;    // RateLimitOut
  uint64_t rate_thinned = 0;        // message rates: frames past the rate its peer asked for
  uint64_t superseded = 0;          // MaxRate: telemetry replaced by a newer value while it waited
  uint64_t looped_in = 0;           // frames that came back to the router that sent them (the fabric)
  uint64_t unmapped = 0;            // the fabric's Vehicles: frames of vehicles it does not take, either way
  uint64_t stale = 0;               // the fabric: a router's frames that came after newer ones of its (dropped)
  uint64_t fabric_lost = 0;         // the fabric: a router's frames that never came (gaps in its count)
  // MaxRate: frames dropped by class (control, status, telemetry): their queue full, or too late.
  std::array<uint64_t, protocol::kMessageClasses> paced_drops{};

  LinkCounters& operator+=(const LinkCounters& o) noexcept {
    frames_in += o.frames_in, bytes_in += o.bytes_in, frames_out += o.frames_out, bytes_out += o.bytes_out;
    dropped_queue_full += o.dropped_queue_full, dropped_down += o.dropped_down;
    rate_limited_in += o.rate_limited_in, rate_limited_out += o.rate_limited_out, rate_thinned += o.rate_thinned,
        superseded += o.superseded;
    looped_in += o.looped_in, unmapped += o.unmapped, stale += o.stale, fabric_lost += o.fabric_lost;
    for (size_t c = 0; c < paced_drops.size(); ++c) paced_drops[c] += o.paced_drops[c];
    return *this;
  }
};

// What a link needs from the engine above it: somewhere to say it is up or down, to hand the
// frames it receives and to ask for a flush, and the loop and resolver it runs on. Nothing of
// routing: which links a frame goes to, and where a link lives, are the host's business.
class LinkHost {
 public:
  virtual void link_up(Link& link) = 0;    // the link can now be routed to
  virtual void link_down(Link& link) = 0;  // before it goes away; nothing is routed to it after
  virtual void frame_in(Link& link, const protocol::FrameView& frame) = 0;
  virtual void needs_flush(Link& link) = 0;  // it queued output: flush it at iteration end
  // True while the engine cannot take more input for now (what it would pass on has nowhere
  // to go yet, and taking it would mean dropping it): the reader of `fd` stops, and the engine
  // holds `fd` back in its loop until it can take input again (EventLoop::hold_input), so the
  // rest waits in the kernel's buffers without waking anyone. Checked before each read.
  virtual bool input_paused(int /*fd*/) { return false; }
  virtual const protocol::MessageTable& message_table() const = 0;
  virtual EventLoop& loop() = 0;
  virtual Resolver& resolver() = 0;

 protected:
  ~LinkHost() = default;
};

class Link {
 public:
  Link(Endpoint& endpoint, LinkHost& host, std::string peer);
  virtual ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Queues one whole frame; false when it was dropped (queue full, or not connected).
  bool send(std::span<const uint8_t> frame);
  // The same for a routed frame (`bytes`: it as sent, signed or not), through the link's rate
  // limits and budget when it has any.
  bool send(const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
    return viewed_ ? send_viewed(frame, bytes) : send(bytes);  // one test on the common path
  }
  // Rate limits or a budget: frames to it must come through send(frame, bytes) on its own
  // thread, never written by another (DirectWrite).
  bool shaped() const noexcept { return shaping_ != nullptr; }
  size_t paced_bytes() const noexcept;  // waiting in its pacer (MaxRate) for the budget
  // Sets the budget (bytes a second; 0: none) where the endpoint leaves it to the link kind.
  void pace(uint64_t bytes_per_second);
  // Frames of stream (sysid, compid, msgid) to it at most one every interval_us from now on,
  // the newest passing (StreamWishes::kOff: none; 0: all, as before). Its own thread.
  void wish(uint8_t sysid, uint8_t compid, uint32_t msgid, int64_t interval_us);
  // Writes what is queued; called by the host once per loop iteration after needs_flush(), and
  // by send() when the queue is full.
  virtual void flush() = 0;
  // Gives back output storage a burst left that the link has not needed since (see
  // QuietShrink); called by the host about once a second. Returns the bytes given back.
  virtual size_t trim_queues() { return 0; }
  virtual size_t queue_storage() const noexcept { return 0; }  // bytes its output queue holds allocated
  virtual size_t queued_bytes() const noexcept { return 0; }   // bytes waiting in it to be sent
  // A datagram link may be written by other threads directly (see DirectWrite): then frames
  // from several threads need no hand-over, and ordering between them is not owed (UDP). A
  // byte stream has none: its bytes have one writer.
  virtual std::optional<DirectWrite> direct_write() const { return std::nullopt; }

  Endpoint& endpoint() const noexcept { return endpoint_; }
  const std::string& peer() const noexcept { return peer_; }  // "127.0.0.1:5760", "/dev/ttyACM0"
  const LinkCounters& counters() const noexcept { return counters_; }
  const protocol::ParserStats& parser_stats() const noexcept { return parser_.stats(); }
  Millis last_rx() const noexcept { return last_rx_; }
  // What lies between the sources of its frames and us, chosen by the link kind; the router reads
  // sequence gaps and RADIO_STATUS by it.
  // kWire: a serial line, a socket, a WebSocket. A gap in a source's numbers is frames lost on the
  //   way; a RADIO_STATUS describes the radio on this link.
  // kFabric: other routers, many vehicles (NATS). A gap may be a stream the sending router thinned
  //   or one the receiver did not take: the fabric counts its own loss (its routers' counts); a
  //   RADIO_STATUS describes a radio behind another router: not this link.
  // kInProcess: frames made in this process (a component, the HTTP API's POSTs at sequence 0):
  //   nothing between their source and us can lose one.
  enum class Path : uint8_t { kWire, kFabric, kInProcess };
  Path path() const noexcept { return path_; }

  static constexpr uint32_t kNoId = 0xFFFFFFFF;
  uint32_t id = kNoId;         // set by the host in link_up, kNoId again after link_down
  bool flush_pending = false;  // owned by the host

 protected:
  virtual bool enqueue(std::span<const uint8_t> frame) = 0;
  // A link kind that calls take_views() (an in-process component) is handed routed frames as
  // views, at once: no queue, no second look at the header. Others never are.
  virtual bool take(const protocol::FrameView& /*frame*/, std::span<const uint8_t> /*bytes*/) { return false; }
  void take_views() noexcept { takes_views_ = viewed_ = true; }
  // Subclasses report each write: a link whose last write the kernel refused for want of
  // room is not written again for a full queue until its socket says it is writable. True when
  // that changed (time to start or stop waiting for writable).
  bool note_write_blocked(bool blocked) noexcept {
    const bool changed = blocked != write_blocked_;
    write_blocked_ = blocked;
    return changed;
  }
  // Parses received bytes and hands each frame to the host; `end` means no more bytes for now.
  void received(std::span<const uint8_t> bytes, bool end_of_burst);
  void received_datagram(std::span<const uint8_t> datagram);
  // One whole frame checked already (a component's own, probed as it was sent): handed on as
  // the parser hands a frame, without its CRC computed a second time.
  void received_frame(const protocol::FrameView& frame);
  // The stream ended (closed, an error): a candidate still carried is a false start with frames
  // behind it, or a truncated last frame; either way it is settled now.
  void received_end();

  LinkHost& host_;
  LinkCounters counters_;
  Path path_ = Path::kWire;  // set by the link kind

 private:
  [[gnu::noinline]] bool send_when_full(std::span<const uint8_t> frame);
  [[gnu::noinline]] bool send_viewed(const protocol::FrameView& frame, std::span<const uint8_t> bytes);
  bool send_shaped(const protocol::FrameView& frame, std::span<const uint8_t> bytes);
  void release_paced();
  void watch_false_start();
  void frame_parsed(const protocol::FrameView& f);

  struct Shaping;  // rate limiters and pacer: only links that have them pay for them
  std::unique_ptr<Shaping> shaping_;
  Endpoint& endpoint_;
  std::string peer_;
  protocol::FrameParser parser_;
  Millis last_rx_ = 0;
  uint64_t resync_timer_ = 0;  // armed while the parser is stalled on a likely false start
  bool write_blocked_ = false;
  bool takes_views_ = false;  // take_views()
  bool viewed_ = false;       // shaped, or takes views: routed frames go through send_viewed()
};

}  // namespace mavswitch::transport
