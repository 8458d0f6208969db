// Debian's libnats 3.4.1 never gives up a handshake whose server sends INFO and then no PONG: its
// read of the answer loops on the expired time-out, spinning a core and growing a buffer by a
// byte a turn, and the thread in it (a connect job, or libnats' reconnect thread) never returns,
// so SIGTERM cannot stop the daemon. (Upstream fixed the loop after 3.4.1.) This guard ends such
// a handshake from outside: while one is under way (between begin() and end()), the endpoint's
// loop calls look() every kLook; it finds the process's stream sockets that were not there when
// the handshake began and are connected to one of the servers' ports, and shuts down one that
// has been connected for longer than a handshake may take, or every one at once when the
// endpoint is stopping. libnats' read then sees a closed connection and fails the attempt.
//
// What it chose not to do: patch or replace libnats, or read the handshake itself; it needs no
// hook into libnats, at the cost of a scan of /proc/self/fd ten times a second while a handshake
// runs (none otherwise), on the endpoint's worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace mavswitch::fabric {

class HandshakeGuard {
 public:
  // The handshake may take this long from the socket's connection.
  static constexpr std::chrono::milliseconds kHandshake{4000};
  static constexpr std::chrono::milliseconds kLook{100};

  // urls: the servers ("nats://host:port", "tls://host", "host:port"; 4222 when no port).
  explicit HandshakeGuard(const std::vector<std::string>& urls);

  // A handshake starts (a connect, or libnats reconnecting) / is over. Any thread.
  void begin();
  void end();
  // Cuts what has been handshaking too long (`all`: everything new, the endpoint is going).
  // Returns whether a handshake is still under way (to look again in kLook). One thread at a
  // time: the endpoint's loop, or the endpoint going.
  bool look(bool all);

 private:
  std::set<uint16_t> ports_;
  mutable std::mutex mutex_;
  bool active_ = false;        // under mutex_
  std::set<uint64_t> before_;  // under mutex_: the sockets (inodes) there when it began
  // look()'s: sockets seen connected to a server since, and when first seen.
  std::vector<std::pair<uint64_t, std::chrono::steady_clock::time_point>> seen_;
};

}  // namespace mavswitch::fabric
