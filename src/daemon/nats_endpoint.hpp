// [NatsEndpoint NAME]: the fleet fabric. Routers on many machines join one NATS cluster; to the
// routing core the cluster is one link, "the fabric" (a ForeignLink: libnats reads and writes
// on its own threads, the router's thread routes). Frames cross byte for byte, one message each.
//
// Subjects (PREFIX = Prefix, "mavlink" by default):
//   PREFIX.from.SYS.COMP.MSG  a frame without a target, from source SYS/COMP (MSG: its name in
//                             the dialect, or its id), e.g. mavlink.from.1.1.HEARTBEAT
//   PREFIX.to.SYS.COMP.MSG    a frame for target system SYS (component COMP, 0: all)
// A router subscribes to PREFIX.to.SYS.> for each system heard on its other links (learned as
// their frames go out), and to what Subscribe asks of the rest (by default from.>: everything
// broadcast; a vehicle on a metered link takes from.255.> for the ground stations only). No
// echo: the server never sends a router its own messages, and routing never sends a frame back
// to the link it came from, so three or more routers on one cluster make no loops.
//
// What it chose not to build (yet): driving libnats from the worker's event loop (its own
// threads hand frames over, as a WebSocket client's do) and JetStream state for late joiners.
#pragma once

#include <atomic>
#include <bitset>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config.hpp"
#include "daemon/foreign_link.hpp"

struct __natsConnection;
struct __natsOptions;
struct __natsSubscription;

namespace mavswitch::daemon {

class NatsEndpoint {
 public:
  NatsEndpoint(Router& router, const EndpointConfig& config, std::shared_ptr<const routing::LinkPolicy> policy);
  ~NatsEndpoint();
  NatsEndpoint(const NatsEndpoint&) = delete;
  NatsEndpoint& operator=(const NatsEndpoint&) = delete;

  // Attaches the link and connects; a cluster not reachable yet (or refusing the credentials)
  // is one error line and retried in the background. Throws std::runtime_error for settings
  // that cannot work (a credentials file that does not load).
  void start();
  const std::string& name() const noexcept { return name_; }
  std::string description() const;
  ForeignLinkReport report() const;
  uint64_t reconnects() const noexcept { return reconnects_.load(std::memory_order_relaxed); }
  std::string server() const;  // the URL connected to; empty while not connected

  // The subject a frame goes out on (exposed for tests).
  static std::string subject_of(const std::string& prefix, std::span<const uint8_t> frame,
                                const protocol::MessageTable& table);

 private:
  class FabricLink;
  // Connects with options_ (any server of the list) and subscribes to every subject wanted; false
  // when none took it (said once). The keeper thread's: blocking, never the router's thread.
  bool connect();
  // The keeper thread: connects, and again every kRetry while that fails or after libnats gives
  // a connection up; while connected, libnats itself moves to another server of the list.
  void keep_connected();
  std::string url_list() const;
  // FleetState: makes (or updates) the JetStream stream of the latest state on the current
  // connection; false (said once) when the cluster has no JetStream, or is not ready yet. The
  // keeper thread's.
  bool keep_fleet_state();
  void subscribe(const std::string& subject);  // on the current connection, any thread
  std::vector<std::string> subjects() const;   // what it subscribes to: Subscribe and interest
  void on_message(const void* data, int size);
  void note(const std::string& what, bool trouble);                          // says what changed (see troubled_)
  bool publish(const std::string& subject, std::span<const uint8_t> frame);  // false: not sent (counted)

  Router& router_;
  const std::string name_;
  const NatsSettings settings_;
  std::shared_ptr<const routing::LinkPolicy> policy_;
  std::shared_ptr<FabricLink> link_;
  __natsOptions* options_ = nullptr;
  // The connection and its subscriptions: replaced by the keeper, published on by the writer.
  mutable std::mutex connection_mutex_;
  __natsConnection* connection_ = nullptr;          // under connection_mutex_
  std::vector<__natsSubscription*> subscriptions_;  // under connection_mutex_
  std::set<std::string> subscribed_;                // under connection_mutex_: their subjects
  mutable std::mutex mutex_;
  std::bitset<256> interest_;  // under mutex_: systems whose frames it published
  std::string said_;           // under mutex_: the last state said
  bool troubled_ = false;      // under mutex_: trouble said since the last success
  bool closed_ = false;        // under mutex_: no connection (yet, or libnats gave it up)
  bool stopping_ = false;      // under mutex_
  std::condition_variable keeper_wake_;
  std::thread keeper_;
  std::atomic<uint64_t> reconnects_{0};
};

// Opens a NatsEndpoint for each section; one that cannot start is an error line naming its
// section, and the router routes on without it.
std::vector<std::unique_ptr<NatsEndpoint>> open_fabrics(Router& router, std::vector<EndpointConfig>& sections);

}  // namespace mavswitch::daemon
