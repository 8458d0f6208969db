// MAVLink over WebSocket ([WebSocketEndpoint NAME]): a path on the HTTP server where each
// connected client (a browser ground station) is one link of the router, routed, filtered and
// signed by the endpoint's keys like every other link. Raw MAVLink frames travel in binary
// messages (several frames may share one message either way).
//
// Threads: each client is a ForeignLink: civetweb reads it on a thread of its own, the router's
// thread routes it, and a writer thread of its own drains its bounded queue (512 frames).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "router/router.hpp"
#include "window/foreign_link.hpp"

struct mg_connection;

namespace mavswitch::daemon {

class WebSocketClient;

class WebSocketEndpoint {
 public:
  static constexpr size_t kMaxQueuedFrames = 512;

  WebSocketEndpoint(Router& router, std::string name, std::string path,
                    std::shared_ptr<const routing::LinkPolicy> policy, size_t max_clients);
  ~WebSocketEndpoint();

  const std::string& name() const noexcept { return name_; }
  const std::string& path() const noexcept { return path_; }
  // civetweb's handlers (its threads): a new client, its messages, its end. opened() refuses
  // one past MaxClients (false).
  bool opened(mg_connection* conn, const std::string& peer);
  void received(mg_connection* conn, std::span<const uint8_t> message);
  void closed(const mg_connection* conn);
  std::vector<ForeignLinkReport> clients() const;
  // Every client's counts, those gone included.
  ForeignLinkReport totals() const;
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<WebSocketClient> client_of(const mg_connection* conn, bool forget);
  Router& router_;
  const std::string name_, path_;
  const std::shared_ptr<const routing::LinkPolicy> policy_;
  const size_t max_clients_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<WebSocketClient>> clients_;  // under mutex_
  ForeignLinkReport gone_;                                 // under mutex_
  std::atomic<uint64_t> refused_{0};
};

}  // namespace mavswitch::daemon
