// MAVLink over WebSocket ([WebSocketEndpoint NAME]): a path on the HTTP server where each
// connected client (a browser ground station) is one link of the router, routed, filtered and
// signed by the endpoint's keys like every other link. Raw MAVLink frames travel in binary
// messages (several frames may share one message either way).
//
// Threads: civetweb reads each client on a thread of its own and hands the bytes over (bounded,
// 64 KiB waiting at most; the rest is dropped and counted); the router's thread parses and routes
// them (a LocalLink, posted once per batch). What the router sends the client waits in its own
// bounded queue (512 frames) for the client's writer thread: a slow browser fills only its own
// queue, and the router never waits for a socket.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/parser.hpp"
#include "router/local_link.hpp"
#include "router/router.hpp"

struct mg_connection;

namespace mavswitch::daemon {

// One client's counters, as the statistics show a link's.
struct WebSocketClientReport {
  std::string name;  // "ws-gcs 127.0.0.1:50412"
  transport::LinkCounters counters;
  protocol::ParserStats parser;
  size_t queued_bytes = 0;
};

class WebSocketClient;

class WebSocketEndpoint {
 public:
  static constexpr size_t kMaxQueuedFrames = 512;
  static constexpr size_t kMaxPendingInput = 64 * 1024;

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
  std::vector<WebSocketClientReport> clients() const;
  // Every client's counts, those gone included.
  WebSocketClientReport totals() const;
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<WebSocketClient> client_of(const mg_connection* conn, bool forget);
  Router& router_;
  const std::string name_, path_;
  const std::shared_ptr<const routing::LinkPolicy> policy_;
  const size_t max_clients_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<WebSocketClient>> clients_;  // under mutex_
  WebSocketClientReport gone_;                             // under mutex_
  std::atomic<uint64_t> refused_{0};
};

}  // namespace mavswitch::daemon
