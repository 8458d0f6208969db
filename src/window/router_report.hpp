// What the router is doing, as the operator's window shows it: a snapshot taken on the
// router's thread (the walk over each worker's links runs on that worker), then written as JSON
// for the API or as Prometheus' text exposition. Nothing here runs per frame.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/json_text.hpp"
#include "rates/message_rates.hpp"
#include "router/router.hpp"
#include "window/vehicle_watch.hpp"

namespace mavswitch::window {

struct LinkSnapshot {
  std::string name;  // "radio 127.0.0.1:14550"
  std::string peer;
  size_t worker = 0;
  transport::LinkCounters counters;
  protocol::ParserStats parser;
  uint64_t sequence_lost = 0;        // frames missing from its sources' sequence numbers
  size_t queue_storage = 0;          // bytes its output queue holds allocated
  size_t queued = 0;                 // bytes waiting in it: the queue's fill
  std::optional<RadioReport> radio;  // the newest RADIO_STATUS on it, if one came
  int64_t radio_age_ms = 0;          // since it came
};

struct EndpointSnapshot {
  size_t index = 0;
  transport::EndpointSpec spec;  // as configured
  std::string name, kind, description;
  transport::Endpoint::Totals totals;  // its links, those gone included
  uint64_t sequence_lost = 0;          // of its links now up
  std::vector<LinkSnapshot> links;
};

struct RouterSnapshot {
  routing::Millis at_ms = 0;  // when it was taken, by the routing clock (transport::now_ms)
  routing::RoutingStats routing;
  std::vector<EndpointSnapshot> endpoints;  // the open ones
  size_t routes = 0;                        // (system, component) pairs known
  size_t workers = 0;
  std::vector<uint64_t> worker_busy_us;  // by worker
  uint64_t cross_worker_drops = 0;
  uint64_t spoofed_answers = 0;  // answers that came from another link than their source's home
  uint64_t faults = 0;           // exceptions the boundaries caught (base/fault.hpp)
};

// On the router's thread (the window gathers it there: answer_later.hpp).
RouterSnapshot snapshot_on_router(Router& router);

// Frames a link did not send, by cause as /stats and /metrics name them: the link's own drops,
// then what its parser threw away.
std::vector<std::pair<const char*, uint64_t>> drops_of(const transport::LinkCounters& c);
// Frames the routing rules dropped, by cause.
std::vector<std::pair<const char*, uint64_t>> drops_of(const routing::RoutingStats& r);

// The API's documents. pretty: indented for people (the API); the event stream sends them on one line.
// Every link up, with its counters and queue.
std::string links_json(const RouterSnapshot& s, bool pretty = true);
// The endpoints' configuration.
std::string endpoints_json(const RouterSnapshot& s);
// The routing decisions and each endpoint's totals.
std::string stats_json(const RouterSnapshot& s);
// {"enabled": true, "rates": [{"system", "component", "message", "message_id", "asked_us",
// "asked_hz", "answered", "result", "wishes": [{"link", "interval_us", "hz"}]}]}: what each
// component was asked per message, and each link's wish (rates/). Intervals: microseconds, 0
// the component's default, -1 off.
std::string rates_json(Router& router, const std::vector<rates::MessageRates::Rate>& rates, bool enabled);
// Every system and component the routes know, with what its last HEARTBEAT said (`heartbeats`:
// VehicleWatch's, keyed system << 8 | component) and, for the router's own components (`own`),
// "name": what it is.
std::string systems_json(Router& router, const std::map<uint16_t, VehicleWatch::Heartbeat>& heartbeats,
                         const std::map<uint16_t, std::string>& own, bool pretty = true);

// Prometheus text format 0.0.4 (router_metrics.cpp): per endpoint, and per link too when asked (a server with
// thousands of peers would otherwise make thousands of series).
std::string metrics_text(const RouterSnapshot& s, bool per_link);

}  // namespace mavswitch::window
