// MAVLink over WebSocket ([WebSocketEndpoint NAME]): a path on the HTTP server where each
// connected client (a browser ground station) is one link of the router, routed, filtered and
// signed by the endpoint's keys like every other link. Raw MAVLink frames travel in binary
// messages (several frames may share one message either way).
//
// Threads: the window's thread (window/http_server) reads and writes every client; each is a
// ForeignLink, so the router's thread routes it and a bounded queue (kMaxQueuedFrames) lies
// between them. A client costs its queue and libwebsockets' few hundred bytes, not a thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "router/router.hpp"
#include "window/foreign_link.hpp"

namespace mavswitch::daemon {

class WebSocketEndpoint {
 public:
  static constexpr size_t kMaxQueuedFrames = 512;

  WebSocketEndpoint(Router& router, std::string name, std::string path,
                    std::shared_ptr<const routing::LinkPolicy> policy, size_t max_clients);
  ~WebSocketEndpoint();

  const std::string& name() const noexcept { return name_; }
  const std::string& path() const noexcept { return path_; }
  // The window's thread. Whether one more client fits (no: refused, counted).
  bool has_room();
  // A new client's link, attached to the router; null when the endpoint is full or the
  // router has stopped. `wake` as ForeignLink's.
  std::shared_ptr<ForeignLink> open(const std::string& peer, std::function<void()> wake);
  // The client went: its link detaches, its counts stay in totals().
  void close(const std::shared_ptr<ForeignLink>& client);
  // The endpoint goes (a reload removed it): every client's link detaches and no new one comes;
  // the HTTP server hangs up on them when it next looks (ForeignLink::closed()).
  void close_all();
  // Any thread.
  std::vector<ForeignLinkReport> clients() const;
  ForeignLinkReport totals() const;  // every client's counts, those gone included
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  Router& router_;
  const std::string name_, path_;
  const std::shared_ptr<const routing::LinkPolicy> policy_;
  const size_t max_clients_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<ForeignLink>> clients_;  // under mutex_
  bool closing_ = false;                               // under mutex_
  ForeignLinkReport gone_;                             // under mutex_
  std::atomic<uint64_t> refused_{0};
};

}  // namespace mavswitch::daemon
