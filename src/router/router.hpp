// mavswitch::Router: a MAVLink routing engine you can embed. Add endpoints, start, run.
//
// The router runs one I/O worker by default (RouterOptions::workers). Several are plain shards:
// each has its own event loop and links; a listening endpoint (UDP or TCP server) has a socket
// on each, sharing the port (SO_REUSEPORT), and each peer or client lives on the worker the
// kernel's hash delivered it to, for good; other endpoints are dealt out in turn. Every worker
// routes what its links receive through the one shared Routing (read without locks) and hands
// each frame straight to its destination link when it owns it, writes it itself when the link
// is another worker's UDP link (on that worker's socket), and otherwise passes it to the owning
// worker's FrameHandover: one wake-up per batch. Worker 0 runs on the thread that calls run(); it
// is "the router's thread" of the API: in-process components, taps, timers and statistics
// live there.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/log.hpp"
#include "protocol/message_table.hpp"
#include "router/radio_report.hpp"
#include "router/shared.hpp"
#include "routing/routing.hpp"
#include "routing/sequence_tracker.hpp"
#include "transport/endpoint.hpp"
#include "transport/event_loop.hpp"

namespace mavswitch {

class Worker;

struct RouterOptions {
  routing::Millis route_timeout = 10'000;  // 0: routes never age out
  routing::Millis dedup_period = 0;        // 0: no de-duplication
  routing::FailoverTiming failover;        // redundant groups (routing/link_group.hpp)
  uint8_t sniffer_sysid = 0;               // 0: no sniffer
  // The dialect frames are validated and routed with; null: the built-in dialect.
  const protocol::MessageTable* message_table = nullptr;
  unsigned workers = 1;  // I/O threads; 0: one per core
};

class Router final {
 public:
  explicit Router(RouterOptions options = {});
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Adds an endpoint whose links all follow `policy`. Before start().
  void add_endpoint(transport::EndpointSpec spec, routing::LinkPolicy policy = {});
  // At run time: opens one more endpoint, or closes one, leaving every other link as it was
  // (frames in flight elsewhere, routes learned elsewhere). From a thread outside the router,
  // or before run(). open_endpoint throws StartError and keeps nothing when it cannot open.
  // A closed endpoint keeps its index (and its spec, for the record); its port is free again
  // when close_endpoint returns.
  size_t open_endpoint(transport::EndpointSpec spec, routing::LinkPolicy policy = {});
  void close_endpoint(size_t i);
  bool endpoint_closed(size_t i) const { return i < closed_.size() && closed_[i]; }
  int group_index(const std::string& name) { return shared_.routing.group_index(name); }

  // Opens every endpoint. One that cannot be opened (a port in use) throws StartError, or, given
  // `on_error`, is reported to it and left closed while the others open.
  struct StartError : std::runtime_error {
    StartError(size_t index, const std::string& what) : std::runtime_error(what), endpoint(index) {}
    size_t endpoint;  // as added, from 0
  };
  using StartErrorFn = std::function<void(const StartError&)>;
  void start(const StartErrorFn& on_error = {});
  void run();   // every worker, until stop(); worker 0 on this thread
  void stop();  // from any thread or a signal-safe context via the loop's eventfd

  // Called with every frame received (after routing), one frame at a time, on the router's
  // thread: telemetry logs. Other workers pass their frames to it on a handover of their own.
  // Taps are added before start().
  using Tap = mavswitch::Tap;
  void add_tap(Tap tap) { shared_.taps.push_back(std::move(tap)); }

  // An in-process component's link (see library/) is known to stand for (sysid, compid) before it
  // sends anything: routed to at once, as a link it was heard on. Router thread (or before run()).
  void pin(routing::LinkId link, uint8_t sysid, uint8_t compid);

  // Message rates (rates/): requests for a message's rate are handed to rates/ (shared.hpp).
  using RateRequests = mavswitch::RateRequests;
  void take_rate_requests(RateRequests requests);  // before run()
  // What link `id`'s peer gets of stream (sysid, compid, msgid) from now on: at most one every
  // interval_us, the newest (transport::Link::wish). Router thread.
  void wish(routing::LinkId id, uint8_t sysid, uint8_t compid, uint32_t msgid, int64_t interval_us);
  // One whole frame to link `id` alone, signed where it signs, not routed (and not learned
  // from): an answer given in another's name. Router thread.
  void send_to(routing::LinkId id, std::span<const uint8_t> frame);

  // An answer's trust boundary. Inside a delivery to a component (the router's thread): whether
  // `frame` came in on the link where its source (system, component) lives, its home
  // (RouteTable::home_link), or on a link of the home's redundant group. One that did not
  // speaks in another's name: counted (spoofed_answers) and said in a throttled line; the
  // caller does not believe it (routing already did whatever it does with it).
  bool from_home(const protocol::FrameView& frame);
  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t spoofed_answers() const noexcept { return spoofed_answers_.load(std::memory_order_relaxed); }

  // True on the router's thread (worker 0, inside run()); false elsewhere, and on every thread
  // while run() is not active.
  bool on_loop_thread() const noexcept { return loop_thread_.load() == std::this_thread::get_id(); }
  bool running() const noexcept { return loop_thread_.load() != std::thread::id{}; }
  // Runs f on the router's thread and waits for it; runs it here when on the router thread
  // already, or while run() is not active. Before run() starts, call it only from the thread
  // that will call run(); a program that starts run() on another thread calls
  // wait_until_running() first.
  // When the router stops before f ran, f does not run at all and Stopped is thrown.
  void run_on_loop(const std::function<void()>& f);
  struct Stopped : std::runtime_error {
    Stopped() : std::runtime_error("the router stopped") {}
  };
  void wait_until_running() const { loop_thread_.wait(std::thread::id{}); }

  // The router thread's loop (worker 0): timers and posted work for the API and the daemon.
  transport::EventLoop& event_loop();
  size_t worker_count() const noexcept { return workers_.size(); }

  // The clock our signatures carry (10 µs units since 2015): never goes backwards, even across
  // restarts when the last value is restored from where the daemon persisted it.
  // relaxed: a value read to persist; it publishes nothing.
  uint64_t signing_clock() const noexcept { return shared_.signing_last.load(std::memory_order_relaxed); }
  void restore_signing_clock(uint64_t last) noexcept;

  // The message table frames are validated with.
  const protocol::MessageTable& routing_table() const { return shared_.table; }
  const routing::Routing& routing() const { return shared_.routing; }

  // Endpoints as added (an endpoint served by several workers counts once), closed ones too.
  // The list changes only on the router's thread (open_endpoint, close_endpoint): a thread
  // outside the router reads it there (run_on_loop) while endpoints may come and go.
  size_t endpoint_count() const noexcept { return specs_.size(); }
  const transport::EndpointSpec& endpoint_spec(size_t i) const { return specs_[i]; }
  const routing::LinkPolicy& endpoint_policy(size_t i) const { return *policies_[i]; }
  std::string endpoint_description(size_t i);
  uint64_t endpoint_refused(size_t i);  // peers refused by AllowFrom, every worker
  // TCP clients refused while the process was out of file descriptors, every worker.
  uint64_t endpoint_refused_no_fd(size_t i);
  uint64_t endpoint_refused_full(size_t i);  // clients refused at MaxClients
  // Why endpoint i could not be opened at start; empty when it was.
  std::string endpoint_error(size_t i) const { return i < start_errors_.size() ? start_errors_[i] : std::string(); }
  // One link as statistics see it.
  struct LinkReport {
    const transport::Link& link;
    // The link's own counters, plus the frames other workers wrote to it themselves.
    transport::LinkCounters counters;
    const routing::SequenceTracker* sequences;  // what arrived on it, by source
    const RadioReport* radio;                   // the newest RADIO_STATUS on it; null before one
    size_t queue_storage;                       // bytes its output queue holds allocated (given back when quiet)
    size_t queued;                              // bytes waiting in it and in its pacer
    size_t worker;                              // the worker that owns it
  };
  // Calls f for each link of endpoint i, on the thread that owns the link, and waits. From the
  // router's thread or a thread outside the router (then the walk itself runs on the router's).
  using LinkVisitor = std::function<void(const LinkReport&)>;
  void for_each_link(size_t endpoint_index, const LinkVisitor& f);
  // Returns once every worker has ended two loop iterations that began after the call: what
  // had reached the router's sockets by then has been read, routed, handed between workers and
  // written out (tests check "nothing else arrived" with it). Not on a worker's thread.
  void settle();
  // What endpoint i's links counted, those gone included, and the kernel's drops at its
  // sockets. From the router's thread or a thread outside the router.
  transport::Endpoint::Totals endpoint_totals(size_t endpoint_index);
  // How many of the endpoint's links each worker holds (index: worker).
  std::vector<size_t> links_by_worker(size_t endpoint_index);
  // Each worker's busy time so far, in microseconds (by worker). Any thread.
  std::vector<uint64_t> worker_busy_us() const;
  // Frames one worker could not hand to another because that one's queue was full.
  uint64_t cross_worker_drops() const;
  // Frames a worker wrote itself to datagram links another worker owns.
  uint64_t cross_worker_direct() const;
  // Times a worker stopped reading because its queue to another worker was half full (the
  // input waited in the kernel's buffers meanwhile).
  uint64_t input_pauses() const;
  // What a link is called in a log line ("radio1 127.0.0.1:14560"), kept from its link_up for
  // messages said on any thread.
  std::string link_name(routing::LinkId id) const { return shared_.links.name(id); }

 private:
  struct Instance {
    size_t spec_index;
    size_t worker;
    std::unique_ptr<transport::Endpoint> endpoint;  // made, opened and closed on `worker`
    bool opened = false;
  };
  void start_endpoint(size_t i);
  // Opens what start_endpoint made of endpoint i, or, when one cannot open, closes them all.
  void open_instances(size_t first);
  void close_instances(size_t endpoint_index);
  void run_on_worker(size_t worker, const std::function<void()>& f);
  uint64_t sum_over_workers(uint64_t (Worker::*count)() const noexcept) const;
  uint64_t sum_over_instances(size_t endpoint_index, uint64_t (transport::Endpoint::*count)() const noexcept);
  void sum_totals(size_t endpoint_index, transport::Endpoint::Totals& sum);

  Shared shared_;  // what the workers read: routing, link records, taps, rate requests
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<transport::EndpointSpec> specs_;
  std::vector<std::shared_ptr<const routing::LinkPolicy>> policies_;  // per endpoint
  std::vector<std::string> start_errors_;                             // per endpoint
  std::vector<char> closed_;                                          // per endpoint
  size_t next_worker_ = 0;  // where the next endpoint that is not listening goes
  std::atomic<std::thread::id> loop_thread_{};
  const std::thread::id built_on_ = std::this_thread::get_id();  // may call run_on_loop() before run()
  std::atomic<bool> has_run_{false};
  std::atomic<uint64_t> spoofed_answers_{0};
  log::Throttle spoof_lines_;
  std::vector<Instance> instances_;  // last: endpoints close before the workers go
};

}  // namespace mavswitch
