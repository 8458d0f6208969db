// A libnats connection driven from an EventLoop (fabric/nats_poller.hpp), against a server of a
// few lines on loopback that says INFO and answers the handshake's PING.
#include <arpa/inet.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "fabric/nats_poller.hpp"
#include "support/loopback_listener.hpp"
#include "transport/event_loop.hpp"

using namespace mavswitch;

namespace {

// Accepts one client, says INFO, answers its PING with PONG, then reads until it closes.
class HandshakeServer {
 public:
  HandshakeServer() {
    listener_ = test::loopback_listener(port_, 1);
    if (listener_ < 0) throw std::runtime_error("cannot listen");
    thread_ = std::thread([this] { serve(); });
  }
  ~HandshakeServer() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

 private:
  // Waits up to 50 ms for `fd` to be readable; false when the server is told to stop first.
  bool readable(int fd) {
    for (int rounds = 0; rounds < 400 && !stop_; ++rounds) {  // 20 s at most
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) return true;
    }
    return false;
  }
  void serve() {
    if (!readable(listener_)) return;
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    const std::string info = R"(INFO {"server_id":"t","version":"2.9.0","max_payload":1048576,"proto":1})"
                             "\r\n";
    (void)!::send(fd, info.data(), info.size(), MSG_NOSIGNAL);
    std::string in;
    bool ponged = false;
    char buf[1024];
    while (readable(fd)) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      in.append(buf, size_t(n));
      if (!ponged && in.find("PING\r\n") != std::string::npos) {
        (void)!::send(fd, "PONG\r\n", 6, MSG_NOSIGNAL);
        ponged = true;
      }
    }
    ::close(fd);
  }

  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A drive on a loop running on its own thread, connected to a HandshakeServer: the handshake's
// reads run on the loop's thread (the poller's on_io) while the test's waits. `connection` is
// null when it cannot connect.
struct ConnectedDrive {
  ConnectedDrive() {
    natsOptions* options = nullptr;
    if (natsOptions_Create(&options) != NATS_OK) return;
    natsOptions_SetURL(options, server.url().c_str());
    natsOptions_SetAllowReconnect(options, false);
    natsOptions_SetTimeout(options, 10'000);
    drive->install(options);
    if (natsConnection_Connect(&connection, options) != NATS_OK) connection = nullptr;
    natsOptions_Destroy(options);
  }
  ~ConnectedDrive() { stop(); }
  void stop() {
    if (!runner.joinable()) return;
    loop.stop();
    runner.join();
  }

  HandshakeServer server;
  transport::EventLoop loop;
  std::shared_ptr<fabric::NatsDrive> drive = std::make_shared<fabric::NatsDrive>(
      loop, "test", [] { return size_t{0}; }, [] {});
  std::thread runner{[this] { loop.run(); }};
  natsConnection* connection = nullptr;
};

}  // namespace

// Found by running the end-to-end tests under LeakSanitizer: a fabric endpoint destroyed with its
// router (after the workers' loops stopped) kept its connection's poller and drive for ever.
// libnats' detach was posted to a loop that would run nothing again, so the poller never let go
// of itself, and it held the drive.
TEST(NatsDrive, a_connection_destroyed_after_its_loop_stopped_lets_its_poller_and_drive_go) {
  ConnectedDrive c;
  ASSERT_NE(c.connection, nullptr) << nats_GetLastError(nullptr);
  const std::weak_ptr<fabric::NatsDrive> watched = c.drive;
  c.stop();
  // As NatsEndpoint's destructor does, here after the loop is gone.
  c.drive->forget(c.connection);
  natsConnection_Destroy(c.connection);
  c.drive->forget_all();
  c.drive.reset();
  EXPECT_TRUE(watched.expired()) << "the poller still holds the drive: neither is ever freed";
}

// The same, when libnats' detach is posted in the loop's last iteration: the loop destroys it
// unrun as it stops, and the poller must let go of itself then too.
TEST(NatsDrive, a_detach_the_stopping_loop_never_runs_lets_its_poller_and_drive_go) {
  ConnectedDrive c;
  ASSERT_NE(c.connection, nullptr) << nats_GetLastError(nullptr);
  const std::weak_ptr<fabric::NatsDrive> watched = c.drive;
  // The loop takes its posted work a batch at a time: the stop and the job after it run in one
  // batch, so what that job posts (libnats' detach, from another thread) is queued behind the
  // last batch the loop runs.
  std::atomic<bool> closed{false};
  c.loop.post([&] {
    c.loop.stop();
    c.loop.post([&] {
      c.drive->forget(c.connection);  // as NatsEndpoint's destructor does, on the loop's thread
      std::thread closer([&] { natsConnection_Destroy(c.connection); });
      closer.join();
      closed = true;
    });
  });
  c.runner.join();
  ASSERT_TRUE(closed) << "the connection was not destroyed in the loop's last batch";
  c.drive->forget_all();
  c.drive.reset();
  EXPECT_TRUE(watched.expired()) << "the poller still holds the drive: neither is ever freed";
}
