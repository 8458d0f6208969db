// The endpoints whose link is not yet a transport link of the router's workers: [NatsEndpoint]
// (the fabric; it moves to transport/handoff as the WebSocket clients did). Opened at start, and
// reconciled on SIGHUP as the router's endpoints are: a section gone or changed closes its
// endpoint, a new one opens, the others are not touched.
// Any thread; changes one at a time (a lock), never on the router's thread (they wait for it).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "fabric/nats_endpoint.hpp"
#include "router/router.hpp"
#include "window/router_report.hpp"

namespace mavswitch::daemon {

class ForeignEndpoints {
 public:
  explicit ForeignEndpoints(Router& router) : router_(router) {}
  ~ForeignEndpoints();
  ForeignEndpoints(const ForeignEndpoints&) = delete;
  ForeignEndpoints& operator=(const ForeignEndpoints&) = delete;

  // Opens what the configuration has and closes what it no longer has: counts of what changed,
  // and one message per endpoint that could not open (said as an error line too).
  struct Changes {
    size_t added = 0, removed = 0, changed = 0;
    std::vector<std::string> failed;
  };
  // `at_start`: groups may still be made (policy_of).
  Changes reconcile(std::vector<EndpointConfig>& fabrics, bool at_start);
  // One more (the API's POST): throws std::runtime_error (or ConfigError) when it cannot open;
  // the caller has checked that the name is free. Not at start: groups must exist.
  void add(EndpointConfig& e);
  // Closes the one of this name (the API's DELETE); false when there is none.
  bool remove(const std::string& name);
  bool has(const std::string& name) const;
  // Their links, as the router's own are reported.
  std::vector<EndpointSnapshot> snapshot() const;
  size_t size() const;

 private:
  struct Open {
    std::shared_ptr<NatsEndpoint> endpoint;
    std::string keys;  // as configured: a reload compares them
  };
  // Opening and closing wait for the router's loop: done outside mutex_, which the router's
  // thread may take (the statistics), one change at a time (change_mutex_).
  std::shared_ptr<NatsEndpoint> make_fabric(EndpointConfig& e, bool at_start);
  Router& router_;
  std::mutex change_mutex_;
  mutable std::mutex mutex_;
  std::map<std::string, Open> fabrics_;  // by name, lower-cased; under mutex_
};

}  // namespace mavswitch::daemon
