// What the fleet fabric's end-to-end tests share: a site (a mavswitchd router with a UDP server
// for its local peer and a [NatsEndpoint fabric]) and the fixture that skips without nats-server.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "e2e/daemon_process.hpp"
#include "e2e/http_client.hpp"
#include "e2e/nats_cluster.hpp"
#include "e2e/peers.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "support/test_support.hpp"

namespace mavswitch::test {

// One machine: a router with a UDP server for its local peer and a [NatsEndpoint fabric], with
// as many I/O workers as the other daemon tests.
struct Site {
  Site(ScratchDir& dir, const std::string& name, const std::string& nats_keys, const std::string& http = "0")
      : port(free_udp_port()) {
    const std::string conf = dir.write(name + ".conf",
                                       "[General]\nTcpServerPort = 0\n[UdpEndpoint local]\nMode = Server\n"
                                       "Address = 127.0.0.1\nPort = " +
                                           std::to_string(port) + "\n[NatsEndpoint fabric]\n" + nats_keys)
                                 .string();
    router = std::make_unique<DaemonProcess>(std::vector<std::string>{"-c", conf, "--http=" + http});
  }
  void send(const Bytes& f) { peer.send_to(port, f); }
  // What the local peer got, "system:message#sequence" each, for failure messages.
  std::string trace() {
    std::string t;
    for (const auto& f : peer.received().frames)
      t += std::to_string(view_of(f).sysid()) + ":" + std::to_string(view_of(f).msgid()) + "#" +
           std::to_string(view_of(f).seq()) + " ";
    return t;
  }
  // The numbers (time_boot_ms) of the ATTITUDE frames from sys/comp the local peer got, in order.
  std::vector<uint32_t> attitude_numbers(uint8_t sys, uint8_t comp) {
    std::vector<uint32_t> got;
    for (const auto& f : peer.received().frames) {
      const protocol::FrameView v = view_of(f);
      if (v.sysid() != sys || v.compid() != comp || v.msgid() != msg::Attitude::kId) continue;
      uint32_t t = 0;
      for (int i = 3; i >= 0; --i) t = t << 8 | v.payload_byte(i);
      got.push_back(t);
    }
    return got;
  }
  // Frames the local peer got from `sys` with message `msgid`.
  size_t heard(uint8_t sys, uint32_t msgid) {
    size_t n = 0;
    for (const auto& f : peer.received().frames) n += view_of(f).sysid() == sys && view_of(f).msgid() == msgid;
    return n;
  }
  uint16_t port;
  UdpPeer peer;
  std::unique_ptr<DaemonProcess> router;
};

// A count of the fabric link in a router's /api/v1/links (HTTP on `http`): one of its drops by
// cause ("link_down"), or a field ("sequence_lost", "queued_bytes"); 0 when not there.
inline uint64_t fabric_count(uint16_t http, const std::string& field) {
  const std::string links = http_request(http, "GET", "/api/v1/links").body;
  std::smatch m;
  const std::regex in_dropped(R"("dropped": \{[^}]*")" + field + R"(": (\d+)[^}]*\},\s*"endpoint": "fabric")");
  const std::regex plain(R"("endpoint": "fabric",[^}]*")" + field + R"(": (\d+))");
  return std::regex_search(links, m, in_dropped) || std::regex_search(links, m, plain) ? std::stoull(m[1]) : 0;
}

class Fabric : public ::testing::Test {
 protected:
  void SetUp() override {
    if (NatsCluster::server_program().empty())
      GTEST_SKIP() << "nats-server (Debian's nats-server package) not installed";
  }
  // Until each site's peer has heard each of `sources` (their HEARTBEATs sent meanwhile).
  bool all_heard(std::vector<std::pair<Site*, uint8_t>> senders, std::vector<std::pair<Site*, uint8_t>> hearers) {
    return wait_until(
        [&] {
          for (auto& [site, sys] : senders) site->send(heartbeat(sys, sys == 255 ? 190 : 1));
          for (auto& [site, sys] : hearers) {
            if (site->heard(sys, msg::Heartbeat::kId) == 0) return false;
          }
          return true;
        },
        10000ms);
  }
  ScratchDir scratch_{"mavswitch-nats"};
};

}  // namespace mavswitch::test
