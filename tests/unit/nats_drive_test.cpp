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

}  // namespace

// Found by running the end-to-end tests under LeakSanitizer: a fabric endpoint destroyed with its
// router (after the workers' loops stopped) kept its connection's poller and drive for ever.
// libnats' detach was posted to a loop that would run nothing again, so the poller never let go
// of itself, and it held the drive.
TEST(NatsDrive, a_connection_destroyed_after_its_loop_stopped_lets_its_poller_and_drive_go) {
  HandshakeServer server;
  transport::EventLoop loop;
  auto drive = std::make_shared<fabric::NatsDrive>(
      loop, "test", [] { return size_t{0}; }, [] {});
  const std::weak_ptr<fabric::NatsDrive> watched = drive;
  std::thread runner([&] { loop.run(); });

  natsOptions* options = nullptr;
  ASSERT_EQ(natsOptions_Create(&options), NATS_OK);
  natsOptions_SetURL(options, server.url().c_str());
  natsOptions_SetAllowReconnect(options, false);
  natsOptions_SetTimeout(options, 10'000);
  drive->install(options);
  natsConnection* connection = nullptr;
  // The handshake's reads run on the loop's thread (the poller's on_io); this thread waits.
  ASSERT_EQ(natsConnection_Connect(&connection, options), NATS_OK) << nats_GetLastError(nullptr);
  natsOptions_Destroy(options);

  loop.stop();
  runner.join();
  // As NatsEndpoint's destructor does, here after the loop is gone.
  drive->forget(connection);
  natsConnection_Destroy(connection);
  drive->forget_all();
  drive.reset();
  EXPECT_TRUE(watched.expired()) << "the poller still holds the drive: neither is ever freed";
}
