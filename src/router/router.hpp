// mavswitch::Router: a MAVLink routing engine you can embed. Add endpoints, start, run.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "protocol/message_table.hpp"
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
  using Tap = std::function<void(const protocol::FrameView& frame, const transport::Link& from)>;
  void add_tap(Tap tap) { taps_.push_back(std::move(tap)); }

  transport::EventLoop& event_loop() { return loop_; }
  const routing::Routing& routing() const { return routing_; }
  const std::vector<std::unique_ptr<transport::Endpoint>>& endpoints() const { return endpoints_; }
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
  std::vector<transport::Link*> links_;        // by link id (null: free)
  std::vector<std::unique_ptr<routing::SequenceTracker>> sequences_;  // by link id
  std::vector<transport::Link*> to_flush_;
  std::vector<Tap> taps_;
  std::vector<std::unique_ptr<transport::Endpoint>> endpoints_;  // last: destroyed first
};

}  // namespace mavswitch
