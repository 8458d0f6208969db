// What a NATS endpoint shares with threads that are not its worker's: the blocking-work thread,
// where connecting (and keeping FleetState's stream) runs as jobs, and libnats' own threads,
// whose callbacks say a connection was lost, found again or closed. Shared (a shared_ptr) so
// that a job queued when the endpoint goes still finds it, and kept alive by itself (`self`)
// until libnats has said "closed" of every connection made with its options.
//
// The rule that keeps the worker's loop safe: once `stopping` is set (the endpoint is going),
// nothing here posts to the loop any more, and the endpoint does not finish going while a job
// is running (`running`: it waits, ending a handshake at once), so no job touches a loop that is
// gone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "config/config.hpp"
#include "fabric/nats_handshake_guard.hpp"
#include "transport/event_loop.hpp"

struct __natsConnection;
struct __natsOptions;

namespace mavswitch::fabric {

class NatsDrive;

struct NatsSession : std::enable_shared_from_this<NatsSession> {
  // A connection refused (no server up, credentials refused), or one libnats gave up on, is
  // tried again this long after.
  static constexpr int64_t kRetryMs = 2000;

  NatsSession(std::string endpoint_name, const config::NatsSettings& its_settings, transport::EventLoop& its_loop)
      : name(std::move(endpoint_name)), settings(its_settings), loop(its_loop) {}
  ~NatsSession();

  // Builds the options: servers, credentials, callbacks, and the drive. Posted to the loop:
  // `on_closed` when libnats gave a connection up, `arm_guard` as a handshake begins (the guard
  // is to look). Throws std::runtime_error.
  void set_options(std::shared_ptr<NatsDrive> drive, std::function<void()> on_closed, std::function<void()> arm_guard);

  // What a job learned, for the loop.
  struct Outcome {
    __natsConnection* made = nullptr;  // connected (the job was asked to connect)
    bool fleet_kept = true;            // FleetState's stream is kept (or not asked for)
  };
  // The blocking-work thread: connects (`connect_first`) and keeps FleetState's stream (when
  // asked for, and connected); `done` is posted to the loop with what it learned, unless the
  // endpoint is going (then a connection made is closed here). Does nothing once stopping.
  void job(bool connect_first, std::function<void(Outcome)> done);
  // Posts to the loop, unless stopping; the task runs only while the endpoint is there.
  void post(std::function<void()> task);
  bool live() const;  // not stopping
  // The loop, first thing in a job's `done`: takes what it made; false once stopping (stop()
  // took it).
  bool take(__natsConnection* made);
  // The endpoint is going: no more posts. Waits for a job running (ending its handshake) and
  // returns what it connected that the loop did not take (to close).
  __natsConnection* stop();
  // After the endpoint closed its connections: kept alive until libnats has said "closed" of
  // every connection made.
  void outlive_callbacks();

  void note(const std::string& what, bool trouble);  // says what changed (see troubled)
  std::string url_list() const;
  std::string connected_to() const;  // empty while not connected

  const std::string name;
  const config::NatsSettings settings;
  transport::EventLoop& loop;
  __natsOptions* options = nullptr;
  __natsOptions* admin_options = nullptr;  // FleetState's: a connection of its own, briefly
  std::unique_ptr<HandshakeGuard> guard;   // ends a handshake libnats would never give up
  std::atomic<uint64_t> reconnects{0};

 private:
  void post_locked(std::function<void()> task);
  __natsOptions* base_options(const std::string& label) const;  // throws std::runtime_error
  __natsConnection* connect();
  bool keep_fleet_state();
  bool keep_fleet_stream(__natsConnection* connection);

  std::function<void()> on_closed_, arm_guard_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  bool stopping_ = false;              // under mutex_
  bool running_ = false;               // under mutex_: a job is under way
  __natsConnection* made_ = nullptr;   // under mutex_: posted to the loop, not taken yet
  std::string server_;                 // under mutex_: connected to, empty when not
  std::string said_;                   // under mutex_: the last state said
  bool troubled_ = false;              // under mutex_: trouble said since the last success
  uint64_t connections_made_ = 0;      // under mutex_
  uint64_t closed_calls_ = 0;          // under mutex_: libnats' closed callbacks run
  std::shared_ptr<NatsSession> self_;  // under mutex_: while libnats may still call back
};

}  // namespace mavswitch::fabric
