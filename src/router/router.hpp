// mavswitch::Router: a MAVLink routing engine you can embed. Add endpoints, start, run.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "protocol/message_table.hpp"
#include "router/local_link.hpp"
#include "routing/routing.hpp"
#include "routing/sequence_tracker.hpp"
#include "transport/endpoint.hpp"
#include "transport/event_loop.hpp"
#include "transport/resolver.hpp"

namespace mavswitch {

struct RouterOptions {
  routing::Millis route_timeout = 10'000;  // 0: routes never age out
  routing::Millis dedup_period = 0;        // 0: no de-duplication
  uint8_t sniffer_sysid = 0;               // 0: no sniffer
  // The dialect frames are validated and routed with; null: the built-in dialect.
  const protocol::MessageTable* message_table = nullptr;
};

class Router final : private transport::LinkHost {
 public:
  explicit Router(RouterOptions options = {});
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Adds an endpoint whose links all follow `policy`. Before start().
  transport::Endpoint& add_endpoint(transport::EndpointSpec spec, routing::LinkPolicy policy = {});
  int group_index(const std::string& name) { return routing_.group_index(name); }

  // Opens every endpoint; throws std::runtime_error for one that can never work (a port in use).
  void start();
  void run();   // the event loop, until stop()
  void stop();  // from any thread or a signal-safe context via the loop's eventfd

  // Called with every frame received (after routing): telemetry logs, local subscribers.
  using Tap = std::function<void(const protocol::FrameView& frame)>;
  void add_tap(Tap tap) { taps_.push_back(std::move(tap)); }

  // In-process components (see api/): a local link is routed to like any other, and the
  // frames it sends are routed as if they had arrived on it. Router thread (or before run()).
  routing::LinkId attach_local(LocalLink& link, uint8_t sysid, uint8_t compid, routing::LinkPolicy policy = {});
  void detach_local(routing::LinkId id);
  void route_local(routing::LinkId from, const protocol::FrameView& frame);

  // True on the thread inside run(); false elsewhere, and on every thread while run() is not active.
  bool on_loop_thread() const noexcept { return loop_thread_.load() == std::this_thread::get_id(); }
  bool running() const noexcept { return loop_thread_.load() != std::thread::id{}; }
  // Runs f on the router's thread and waits for it; runs it here when on the router thread
  // already, or while run() is not active. Before run() starts, call it only from the thread
  // that will call run(); a program that starts run() on another thread calls
  // wait_until_running() first.
  void run_on_loop(const std::function<void()>& f);
  void wait_until_running() const { loop_thread_.wait(std::thread::id{}); }

  transport::EventLoop& event_loop() { return loop_; }
  // The clock our signatures carry (10 µs units since 2015): never goes backwards, even across
  // restarts when the last value is restored from where the daemon persisted it.
  uint64_t signing_clock() const noexcept { return signing_last_; }
  void restore_signing_clock(uint64_t last) noexcept { signing_last_ = std::max(signing_last_, last); }

  // The message table frames are validated with.
  const protocol::MessageTable& routing_table() const { return *table_; }
  const routing::Routing& routing() const { return routing_; }
  const std::vector<std::unique_ptr<transport::Endpoint>>& endpoints() const { return endpoints_; }
  const routing::LinkPolicy& endpoint_policy(size_t endpoint_index) const { return policies_[endpoint_index]; }
  const routing::SequenceTracker* sequences(const transport::Link& link) const;

 private:
  // transport::LinkHost
  void link_up(transport::Link& link) override;
  void link_down(transport::Link& link) override;
  void frame_in(transport::Link& link, const protocol::FrameView& frame) override;
  void needs_flush(transport::Link& link) override;
  const protocol::MessageTable& message_table() const override { return *table_; }
  transport::EventLoop& loop() override { return loop_; }
  transport::Resolver& resolver() override { return resolver_; }

  void flush_pending();

  const protocol::MessageTable* table_;
  transport::EventLoop loop_;
  transport::Resolver resolver_;
  routing::Routing routing_;
  std::vector<routing::LinkPolicy> policies_;  // per endpoint
  // What a link id delivers to: a wire link or a local one (both null: free).
  struct Destination {
    transport::Link* wire = nullptr;
    LocalLink* local = nullptr;
  };
  void deliver(routing::LinkId to, const protocol::FrameView& frame);

  std::vector<Destination> links_;  // by link id
  std::atomic<std::thread::id> loop_thread_{};
  uint64_t signing_last_ = 0;
  uint64_t next_signing_timestamp() noexcept;
  std::vector<std::unique_ptr<routing::SequenceTracker>> sequences_;  // by link id
  std::vector<transport::Link*> to_flush_;
  std::vector<Tap> taps_;
  std::vector<std::unique_ptr<transport::Endpoint>> endpoints_;  // last: destroyed first
};

}  // namespace mavswitch
