// Debian's libnats 3.4.1 never gives up a handshake whose server sends INFO and then no PONG: its
// read of the answer loops on the expired time-out, spinning a core and growing a buffer by a
// byte a turn, and the thread in it (the keeper, or libnats' reconnect thread) never returns, so
// SIGTERM cannot stop the daemon. (Upstream fixed the loop after 3.4.1.) This guard ends such a
// handshake from outside: while one is under way (between begin() and end()), every 100 ms it
// looks at the process's stream sockets that were not there when it began and are connected to
// one of the servers' ports, and shuts down one that has been connected for longer than a
// handshake may take, or at once when the endpoint is stopping. libnats' read then sees a closed
// connection and fails the attempt as it should.
//
// What it chose not to do: patch or replace libnats, or read the handshake itself; it needs no
// hook into libnats, at the cost of a scan of /proc/self/fd while a handshake runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace mavswitch::daemon {

class HandshakeGuard {
 public:
  // The handshake may take this long from the socket's connection.
  static constexpr std::chrono::milliseconds kHandshake{4000};

  // urls: the servers ("nats://host:port", "tls://host", "host:port"; 4222 when no port).
  // stopping: whether to give every handshake up now (any thread may be asked).
  HandshakeGuard(const std::vector<std::string>& urls, std::function<bool()> stopping);
  ~HandshakeGuard();
  HandshakeGuard(const HandshakeGuard&) = delete;
  HandshakeGuard& operator=(const HandshakeGuard&) = delete;

  // A handshake starts (a connect, or libnats reconnecting) / is over. Any thread.
  void begin();
  void end();
  // Wakes the guard to look at once (the endpoint is stopping).
  void wake();

 private:
  void watch();
  void cut_slow_handshakes(std::chrono::steady_clock::time_point now, bool all);

  std::set<uint16_t> ports_;
  std::function<bool()> stopping_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool active_ = false;        // under mutex_
  bool quit_ = false;          // under mutex_
  std::set<uint64_t> before_;  // under mutex_: the sockets (inodes) there when it began
  // The guard thread's: sockets seen connected to a server since, and when first seen.
  std::vector<std::pair<uint64_t, std::chrono::steady_clock::time_point>> seen_;
  std::thread thread_;
};

}  // namespace mavswitch::daemon
