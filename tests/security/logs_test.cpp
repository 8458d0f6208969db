// Logs that cannot flood (docs/SECURITY.md): a line a peer can cause is said at most five times
// a second, and the next one says how many were held back.
#include <chrono>

#include "security/daemon_fixture.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using Clock = std::chrono::steady_clock;

namespace {}  // namespace

// 2,000 datagrams, each from a new source port: 2,000 new peers (the oldest forgotten past
// MaxPeers, 1,024), a handful of lines.
TEST_F(DaemonUnderAttack, a_spray_of_new_udp_ports_prints_a_bounded_number_of_lines) {
  auto d = start();
  const auto started = Clock::now();
  for (int i = 0; i < 2000; ++i) {
    UdpPeer sprayer;  // a new socket: a new source port
    sprayer.send_to(gcs_port_, heartbeat(200, 1, static_cast<uint8_t>(i)));
    if (i % 100 == 99) pace(2ms);  // the router's socket buffer takes each batch
  }
  const std::string series = R"(mavswitch_link_received_frames_total{endpoint="gcs",kind="udp-server"})";
  ASSERT_TRUE(wait_until(
      [&] {
        const std::string m = http_request(http_port_, "GET", "/metrics").body;
        const auto at = m.find(series);
        // Most of them: a busy (or sanitized) router lets the kernel drop some of a spray.
        return at != std::string::npos && std::stod(m.substr(at + series.size() + 1)) >= 1000;
      },
      10000ms));
  // A line after the spray says what was held back.
  ASSERT_TRUE(wait_until(
      [&] {
        UdpPeer late;
        late.send_to(gcs_port_, heartbeat(201, 1));
        return count_of(d->err(), "held back") >= 1;
      },
      5000ms))
      << d->err().substr(0, 2000);
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const size_t lines = count_of(d->err(), "new peer");
  std::cout << "[ figures  ] 2,000 new UDP peers in " << seconds << " s: " << lines << " lines\n";
  // Five a second of the daemon's clock, whose seconds need not line up with the test's (a
  // sanitized daemon writes the spray's lines a little after it came): a few windows' worth.
  EXPECT_LE(static_cast<double>(lines), 5 * (seconds + 3));
}
