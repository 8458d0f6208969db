// One I/O worker of a Router: a thread with its own event loop, the links it owns, and the
// queues other workers hand it frames through. It receives, routes (through the shared
// Routing, with its own RoutingContext) and delivers: straight into a link it owns, or into
// the owning worker's inbound FrameRing. At the end of each loop iteration it makes its
// outbound batches visible, drains its inbound rings into its links, and flushes every link
// that has output: one write per link per iteration.
//
// A worker's state (its links, loop, rings' consuming side) is guarded by its `active_` lock,
// which its thread holds whenever it is awake. A worker that publishes a small batch for a peer
// that sleeps does not wake it (a cross-thread wake-up costs more than the writes): it takes the
// peer's lock and drains and flushes for it, on its own thread. The peer is woken instead when
// the batch is large (its writes then run in parallel), when it is awake, and when its frames
// could reach user code that expects its thread (worker 0 with in-process components, or taps
// added for the router thread). Datagram links (UDP) skip all this: a worker writes frames for
// another's UDP link itself, on that link's socket (DirectWriter).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "router/direct_writer.hpp"
#include "router/frame_ring.hpp"
#include "router/local_link.hpp"
#include "routing/counter.hpp"
#include "routing/routing.hpp"
#include "routing/sequence_tracker.hpp"
#include "transport/event_loop.hpp"
#include "transport/link.hpp"
#include "transport/resolver.hpp"

namespace mavswitch {

class Router;

class Worker final : public transport::LinkHost {
 public:
  Worker(Router& router, size_t index, routing::RoutingContext& context);
  ~Worker();

  // Creates this worker's inbound ring from each other worker, then (once every worker has
  // its rings) finds its outbound ones. Before any worker runs.
  void connect(const std::vector<Worker*>& all);
  void connect_outbound();

  size_t index() const noexcept { return index_; }
  std::thread::id thread_id() const noexcept { return thread_id_.load(); }
  void run();  // the loop, until stopped; on the calling thread
  void start_thread();
  void wait_until_running() const { thread_id_.wait(std::thread::id{}); }
  void stop_and_join();

  // Routes a frame that arrived on `from` (a link this worker owns).
  void route(routing::LinkId from, const protocol::FrameView& frame);
  void attach_local(routing::LinkId id, LocalLink& link);
  void detach_local(routing::LinkId id);
  const routing::SequenceTracker* sequences(routing::LinkId id) const;
  // What other workers wrote to link `id` (one this worker owns) directly; null if none can.
  const DirectTarget* direct_target(routing::LinkId id) const;
  uint64_t direct_frames() const noexcept { return direct_.frames_written(); }
  uint64_t ring_drops() const noexcept { return ring_drops_.get(); }
  // Batches another worker drained and wrote for this one while it slept.
  uint64_t served_asleep() const noexcept { return served_asleep_.get(); }
  uint64_t input_pauses() const noexcept { return input_pauses_.get(); }

  // transport::LinkHost
  void link_up(transport::Link& link) override;
  void link_down(transport::Link& link) override;
  size_t wire_links() const noexcept override { return wire_links_.load(std::memory_order_relaxed); }
  double busy() const noexcept override { return busy_.load(std::memory_order_relaxed); }
  std::vector<uint16_t> sources_heard(const transport::Link& link) const override;
  void inherit_sources(transport::Link& link, std::span<const uint16_t> sources) override;
  void frame_in(transport::Link& link, const protocol::FrameView& frame) override;
  void needs_flush(transport::Link& link) override;
  bool input_paused(int fd) override;
  const protocol::MessageTable& message_table() const override;
  transport::EventLoop& loop() override { return loop_; }
  transport::Resolver& resolver() override { return resolver_; }

 private:
  // A destination id for frames handed to worker 0 for the router's taps.
  static constexpr routing::LinkId kTapDestination = routing::kNoLink - 1;
  struct Destination {
    transport::Link* wire = nullptr;
    LocalLink* local = nullptr;
    std::unique_ptr<routing::SequenceTracker> sequences;
    std::unique_ptr<DirectTarget> direct;  // published for the other workers (datagram links)
  };

  Destination& slot(routing::LinkId id);
  void route_here(routing::LinkId from, const protocol::FrameView& frame);
  [[gnu::noinline]] void route_deferred();
  void deliver(routing::LinkId to, const protocol::FrameView& frame);
  [[gnu::noinline]] void deliver_signed(routing::LinkId to, const routing::Routing::SendInfo& dest,
                                        const protocol::FrameView& frame);
  // Queues the frame once for each other worker that owns some of its destinations.
  void hand_to_owners(const protocol::FrameView& frame);
  // To the link itself when this worker owns it or may write to it, else into the owner's ring.
  void send(const routing::Routing::SendInfo& dest, routing::LinkId to, const protocol::FrameView& frame,
            std::span<const uint8_t> bytes);
  void hand_to_link(routing::LinkId to, const protocol::FrameView& frame, std::span<const uint8_t> bytes);
  void tap(const protocol::FrameView& frame);
  void end_iteration();
  static constexpr transport::Millis kTrimPeriod = 1000;
  static constexpr size_t kReturnToSystem = size_t{1} << 20;  // bytes freed by one trim
  void trim_queues();
  void exchange_batches();  // publish outbound rings, serve or wake idle consumers, drain inbound
  // `peer` was armed (asleep, or about to sleep) when we published `batch_bytes` for it:
  // serve it or wake it.
  void hand_over(Worker& peer, size_t batch_bytes);
  void drain_inbound();
  void flush_pending();
  // Direct writes sent: no target read so far is used again; free the retired ones no worker holds.
  void end_direct_writes();
  // Whether a ring to another worker is too full to take more input (see input_paused()).
  bool must_pause();
  // Input held back: release it once there is room, else ask to be woken when there is.
  void resume_input_when_room();

  Router& router_;
  size_t index_;
  routing::RoutingContext& context_;
  transport::EventLoop loop_;
  transport::Resolver resolver_;
  std::vector<Destination> links_;  // by link id; only links this worker owns are set
  std::vector<transport::Link*> to_flush_;
  std::vector<std::unique_ptr<FrameRing>> inbound_;  // by producing worker (null: self)
  std::vector<FrameRing*> outbound_;                 // by consuming worker (null: self)
  std::vector<Worker*> peers_;
  DirectWriter direct_;
  // Targets of this worker's links that went down, with the epoch each waits for.
  std::vector<std::pair<uint64_t, std::unique_ptr<DirectTarget>>> retired_;
  // A frame a component sent from a handler while this worker was routing another (delivering
  // to that component): routed once the decision in progress is done, which it would otherwise
  // disturb (the delivery marks and the destination lists belong to one decision at a time).
  struct Deferred {
    routing::LinkId from;
    protocol::FrameView shape;  // its size, id and flags (its bytes pointer is stale)
    std::vector<uint8_t> bytes;
  };
  std::deque<Deferred> deferred_;
  bool deciding_ = false;
  bool routing_deferred_ = false;
  // While one frame is routed: its destinations on other workers, by owner, and which owners.
  std::vector<std::vector<routing::LinkId>> remote_;
  std::vector<uint32_t> remote_owners_;
  // About to sleep: a producer that publishes serves or wakes it. Set first by run().
  std::atomic<bool> armed_{false};
  std::mutex active_;     // held by whoever runs this worker's code (see above)
  bool stopped_ = true;   // under active_: its loop is not running
  size_t local_links_ = 0;  // under active_: in-process components attached here (worker 0)
  std::atomic<size_t> wire_links_{0};  // links up on this worker (read by other workers placing peers)
  // busy(): the thread's CPU time over the last measured period, as a share of that period.
  void measure_busy();
  std::atomic<double> busy_{0};
  transport::Millis busy_measured_at_ = 0;
  int64_t busy_cpu_ns_ = 0;
  routing::Counter ring_drops_;
  // Since when must_pause() has said yes (kNotPaused: it has not): see input_paused().
  static constexpr transport::Millis kNotPaused = -1;
  transport::Millis paused_since_ = kNotPaused;
  transport::EventLoop::TimerId pause_timer_ = 0;  // wakes the loop when a pause runs out
  routing::Counter input_pauses_;
  routing::Counter served_asleep_;
  std::atomic<std::thread::id> thread_id_{};
  std::thread thread_;
};

}  // namespace mavswitch
