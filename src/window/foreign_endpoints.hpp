// The endpoints whose links are not sockets of the router's own: [WebSocketEndpoint] (clients of
// the HTTP server) and [NatsEndpoint] (the fabric). Opened at start, and reconciled on SIGHUP as
// the router's endpoints are: a section gone or changed closes its endpoint (a WebSocket
// endpoint's clients are disconnected), a new one opens, the others are not touched.
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
#include "window/websocket_link.hpp"

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
  // `websockets_served`: whether an HTTP server is there to serve WebSocket endpoints;
  // `at_start`: groups may still be made (policy_of).
  Changes reconcile(std::vector<EndpointConfig>& websockets, std::vector<EndpointConfig>& fabrics,
                    bool websockets_served, bool at_start);
  // One more (the API's POST): throws std::runtime_error (or ConfigError) when it cannot open;
  // the caller has checked that the name is free. Not at start: groups must exist.
  void add(EndpointConfig& e, bool websocket);
  // Closes the one of this name (the API's DELETE); false when there is none.
  bool remove(const std::string& name);
  bool has(const std::string& name) const;
  // The WebSocket endpoints: (name, path) of each.
  std::vector<std::pair<std::string, std::string>> websocket_paths() const;
  // The WebSocket endpoint at this path, or null.
  std::shared_ptr<WebSocketEndpoint> websocket_at(const std::string& path) const;
  // Called after a WebSocket endpoint closed its clients, so that the HTTP server hangs up on
  // them (HttpServer::wake).
  void on_clients_closed(std::function<void()> wake);
  // Their links, as the router's own are reported.
  std::vector<EndpointSnapshot> snapshot() const;
  size_t size() const;

 private:
  template <typename T>
  struct Open {
    std::shared_ptr<T> endpoint;
    std::string keys;  // as configured: a reload compares them
  };
  // Opening and closing wait for the router's loop: done outside mutex_, which the router's
  // thread may take (the statistics), one change at a time (change_mutex_).
  template <typename T, typename Make, typename Close>
  void reconcile_kind(std::map<std::string, Open<T>>& open, std::vector<EndpointConfig>& wanted, const Make& make,
                      const Close& close, Changes& changes);
  std::shared_ptr<WebSocketEndpoint> make_websocket(EndpointConfig& e, bool at_start);
  std::shared_ptr<NatsEndpoint> make_fabric(EndpointConfig& e, bool at_start);
  void close_websocket(WebSocketEndpoint& w);
  Router& router_;
  std::mutex change_mutex_;
  mutable std::mutex mutex_;
  std::map<std::string, Open<WebSocketEndpoint>> websockets_;  // by name, lower-cased; under mutex_
  std::map<std::string, Open<NatsEndpoint>> fabrics_;          // under mutex_
  std::function<void()> wake_;                                 // under mutex_
};

}  // namespace mavswitch::daemon
