// What each attack of the security suite runs against: mavswitchd with a vehicle's and a ground
// station's UDP servers, the HTTP window on its own port, and a token in a file of mode 600 when
// the test asks for one. The daemon is a child process; every wait is bounded.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>

#include "e2e/daemon_process.hpp"
#include "e2e/http_client.hpp"
#include "e2e/peers.hpp"
#include "support/test_support.hpp"

namespace mavswitch::test {

inline constexpr const char* kToken = "a-security-test-token-32-chars-x";

class DaemonUnderAttack : public ::testing::Test {
 protected:
  void SetUp() override {
    token_file_ = scratch_.write("token", std::string(kToken) + "\n").string();
    ::chmod(token_file_.c_str(), 0600);
  }
  // `http_keys` go in [Http]; `more`, whole sections, after the two endpoints.
  std::unique_ptr<DaemonProcess> start(const std::string& http_keys = "", const std::string& more = "",
                                       const std::string& vehicle_keys = "", const std::string& gcs_keys = "") {
    const std::string conf =
        scratch_
            .write("main.conf", "[General]\nTcpServerPort = 0\n[Http]\n" + http_keys +
                                    "[UdpEndpoint vehicle]\nMode = Server\nAddress = 127.0.0.1\nPort = " +
                                    std::to_string(vehicle_port_) + "\n" + vehicle_keys +
                                    "[UdpEndpoint gcs]\nMode = Server\nAddress = 127.0.0.1\nPort = " +
                                    std::to_string(gcs_port_) + "\n" + gcs_keys + more)
            .string();
    auto d = std::make_unique<DaemonProcess>(
        std::vector<std::string>{"-c", conf, "--http=127.0.0.1:" + std::to_string(http_port_)});
    EXPECT_TRUE(wait_until([&] { return http_request(http_port_, "GET", "/api/v1").status == 200; }, 5000ms))
        << d->err();
    return d;
  }
  std::string token_keys() const { return "TokenFile = " + token_file_ + "\n"; }
  // The vehicle (1/1) and the ground station (255/190) are heard, so routes exist both ways.
  void connect_peers() { ASSERT_TRUE(introduce(vehicle_, vehicle_port_, gcs_, gcs_port_)); }
  // The daemon's resident memory, in bytes (0 when it cannot be read).
  static size_t rss_of(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
    return 0;
  }
  // The status code of a raw HTTP answer ("HTTP/1.1 421 ..."), 0 for none.
  static int status_of(const std::string& reply) { return reply.size() > 12 ? std::atoi(reply.c_str() + 9) : 0; }

  ScratchDir scratch_{"mavswitch-security"};
  std::string token_file_;
  const uint16_t vehicle_port_ = free_udp_port(), gcs_port_ = free_udp_port(), http_port_ = free_tcp_port();
  UdpPeer vehicle_, gcs_;
};

}  // namespace mavswitch::test
