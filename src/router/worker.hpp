// One I/O worker of a Router: a thread with its own event loop and the links it owns. It
// receives, routes (through the shared Routing, with its own RoutingContext) and delivers:
// straight into a link it owns, on the socket of another worker's UDP link (DirectWriter), or,
// for another worker's stream links and components, into that worker's inbound FrameHandover.
// At the end of each loop iteration it publishes what it handed over (one lock per consumer,
// one wake-up per sleeping worker), drains what others handed it, and writes every link that
// has output: one write per link per iteration.
//
// Everything a worker owns (its links, their queues, its handovers' producing and consuming ends,
// its DirectWriter) is touched only on its own thread: MAVSWITCH_ASSERT_OWNER checks it.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "router/direct_writer.hpp"
#include "router/frame_handover.hpp"
#include "router/input_pause.hpp"
#include "router/radio_report.hpp"
#include "router/shared.hpp"
#include "routing/counter.hpp"
#include "routing/routing.hpp"
#include "routing/sequence_tracker.hpp"
#include "transport/event_loop.hpp"
#include "transport/link.hpp"
#include "transport/resolver.hpp"

namespace mavswitch {

class Worker final : public transport::LinkHost {
 public:
  Worker(Shared& shared, size_t index, routing::RoutingContext& context);
  ~Worker();

  // Creates this worker's inbound handovers (one from each other worker, and worker 0's taps'),
  // then, once every worker has them, finds its outbound ones. Before any worker runs.
  void connect(const std::vector<Worker*>& all);
  void connect_outbound();

  size_t index() const noexcept { return index_; }
  std::thread::id thread_id() const noexcept { return thread_id_.load(); }
  void run();  // the loop, until stopped; on the calling thread
  void start_thread();
  void wait_until_running() const { thread_id_.wait(std::thread::id{}); }
  void stop_and_join();

  // An endpoint instance this worker runs: its links follow `policy`. Before it starts.
  void adopt(const transport::Endpoint& endpoint, std::shared_ptr<const routing::LinkPolicy> policy);
  // Its links go down (the routes through them are forgotten); the caller then destroys it.
  void close(transport::Endpoint& endpoint);
  const routing::SequenceTracker* sequences(routing::LinkId id) const;
  // The newest RADIO_STATUS heard on link id; null before the first.
  const RadioReport* radio(routing::LinkId id) const;
  // What other workers wrote to link `id` (one this worker owns) directly; null if none can.
  const DirectTarget* direct_target(routing::LinkId id) const;
  // A link's counters, with the frames other workers wrote to it themselves (DirectWriter).
  transport::LinkCounters counters_of(const transport::Link& link) const;
  uint64_t direct_frames() const noexcept { return direct_.frames_written(); }
  uint64_t handover_drops() const noexcept { return handover_drops_.get(); }
  uint64_t input_pauses() const noexcept { return pause_.pauses(); }
  // Runs f once, on this worker's thread, when the current loop iteration has ended (its
  // writes done). On this worker's thread.
  void at_iteration_end(std::function<void()> f);
  // Link `id` (one this worker owns) thins stream (sysid, compid, msgid) to its peer's wish
  // (transport::Link::wish); from now on every frame to it passes this thread. Its thread.
  void wish(routing::LinkId id, uint8_t sysid, uint8_t compid, uint32_t msgid, int64_t interval_us);
  // One frame to link `id` alone, signed where it signs, not routed. This worker's thread.
  void send_alone(routing::LinkId to, const protocol::FrameView& frame);
  // While a frame is delivered (to a component's handler): the link it came in on, whichever
  // worker routed it; kNoLink otherwise. This worker's thread.
  routing::LinkId source() const;

  // transport::LinkHost
  void link_up(transport::Link& link) override;
  void link_down(transport::Link& link) override;
  void frame_in(transport::Link& link, const protocol::FrameView& frame) override;
  void needs_flush(transport::Link& link) override;
  bool input_paused(int fd) override { return pause_.must_pause(loop_, fd); }
  const protocol::MessageTable& message_table() const override;
  transport::EventLoop& loop() override { return loop_; }
  transport::Resolver& resolver() override { return resolver_; }

 private:
  // Link `id`'s record when this worker owns it; null otherwise (the record may be another
  // worker's to write).
  LinkRecord* own(routing::LinkId id) const noexcept {
    return id < owned_.size() && owned_[id] != nullptr ? &shared_.links.at(id) : nullptr;
  }
  void route_here(routing::LinkId from, const protocol::FrameView& frame);
  [[gnu::noinline]] void route_deferred();
  [[gnu::noinline]] void take_rate_request(routing::LinkId from, const protocol::FrameView& frame);
  [[gnu::noinline]] void route_traced(routing::LinkId from, const protocol::FrameView& frame);
  // The routing decision's callback: where a frame for link `to` goes (signed when routing says
  // the link signs; then by the link's record: this worker, a direct write, or the owner's
  // handover).
  void deliver(routing::LinkId to, const protocol::FrameView& frame);
  [[gnu::noinline]] void deliver_signed(routing::LinkId to, const protocol::FrameView& frame);
  void send(routing::LinkId to, const protocol::FrameView& frame, std::span<const uint8_t> bytes);
  // Into a link or component this worker owns.
  void write_here(routing::LinkId to, const protocol::FrameView& frame, std::span<const uint8_t> bytes);
  // The one way a frame crosses to another worker: a record in that worker's handover, for the
  // links `to` it owns. A full one drops it (counted).
  void hand_over(size_t owner, std::span<const routing::LinkId> to, const protocol::FrameView& frame,
                 std::span<const uint8_t> bytes);
  void hand_over_gathered(const protocol::FrameView& frame);
  void tap(const protocol::FrameView& frame);
  void end_iteration();
  void exchange_batches();  // publish outbound handovers (they wake sleeping consumers), drain inbound
  void drain_inbound();
  void flush_pending();
  // Direct writes sent: no target read so far is used again; free the retired ones no worker holds.
  void end_direct_writes();
  static constexpr transport::Millis kTrimPeriod = 1000;
  static constexpr size_t kReturnToSystem = size_t{1} << 20;  // bytes freed by one trim
  void trim_queues();

  Shared& shared_;
  size_t index_;
  routing::RoutingContext& context_;
  transport::EventLoop loop_;
  transport::Resolver resolver_;
  // The links this worker owns, by id (null: not its own). Only what says "mine": the rest of
  // what is known of a link is its record (shared_.links).
  std::vector<transport::Link*> owned_;
  // The routing policy of each endpoint instance this worker runs (few: a map).
  std::unordered_map<const transport::Endpoint*, std::shared_ptr<const routing::LinkPolicy>> policies_;
  std::vector<transport::Link*> to_flush_;
  std::vector<std::unique_ptr<FrameHandover>> inbound_;  // by producing worker (null: self)
  std::vector<FrameHandover*> outbound_;                 // by consuming worker (null: self)
  // Taps run on worker 0: every other worker passes it the frames it received, on a handover
  // of their own (records without destinations). Worker 0 holds them, by producer.
  std::vector<std::unique_ptr<FrameHandover>> tap_inbound_;
  FrameHandover* tap_outbound_ = nullptr;
  std::vector<Worker*> workers_;  // every worker of the router, by index (this one too)
  InputPause pause_;
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
  routing::LinkId source_ = routing::kNoLink;  // see source()
  bool deciding_ = false;
  bool routing_deferred_ = false;
  // While one frame is routed: its destinations on other workers, by owner, and which owners.
  std::vector<std::vector<routing::LinkId>> remote_;
  std::vector<uint32_t> remote_owners_;
  // About to sleep: a producer whose publish rings it wakes it. Cleared as it wakes.
  std::atomic<bool> armed_{false};
  routing::Counter handover_drops_;
  std::vector<std::function<void()>> at_end_;  // see at_iteration_end()
  std::atomic<std::thread::id> thread_id_{};
  std::thread thread_;
};

}  // namespace mavswitch
