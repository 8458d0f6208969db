// Serial links on pseudo-terminals: frames both ways, and a device that disappears and
// comes back (the router reopens it by itself; nothing else notices).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
namespace fs = std::filesystem;

namespace {

// A stable device path (like /dev/serial/by-id/...) pointing at the current pty.
fs::path device_link() {
  return fs::temp_directory_path() / ("mavswitch-serial-" + std::to_string(::getpid()) + "-" +
                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

void point(const fs::path& link, const std::string& target) {
  fs::remove(link);
  fs::create_symlink(target, link);
}

// Sends heartbeats from the autopilot until the GCS hears one (the router may still be opening).
bool autopilot_reaches(PtyPeer& autopilot, UdpPeer& gcs) {
  return wait_until(
      [&] {
        autopilot.send(heartbeat(1, 1));
        return gcs.wait_frames(1, 50ms);
      },
      5000ms);
}

}  // namespace

TEST(Serial, FramesFlowBothWays) {
  PtyPeer autopilot;
  const fs::path dev = device_link();
  point(dev, autopilot.slave_path());
  const uint16_t udp_port = free_udp_port();
  RouterThread rt;
  auto spec = serial(dev.string());
  spec.bauds = {57600, 115200};
  rt.router.add_endpoint(spec);
  rt.router.add_endpoint(udp_server(udp_port));
  rt.start();
  UdpPeer gcs;
  gcs.send_to(udp_port, heartbeat(255, 190));
  ASSERT_TRUE(autopilot_reaches(autopilot, gcs));
  for (uint32_t i = 0; i < 300; ++i) autopilot.send(attitude(1, 1, i, static_cast<uint8_t>(i)));
  ASSERT_TRUE(wait_until([&] { return gcs.received().count_msgid(msg::Attitude::kId) == 300; }))
      << gcs.received().count_msgid(msg::Attitude::kId) << " attitudes; router: " << [&] {
           std::string s;
           rt.router.for_each_link(0, [&](const Router::LinkReport& r) {
             const transport::Link& l = r.link;
             s += std::to_string(l.counters().frames_in) + " frames in, " + std::to_string(l.counters().bytes_in) +
                  " B, crc " + std::to_string(l.parser_stats().crc_failures) + ", skipped " +
                  std::to_string(l.parser_stats().bytes_skipped);
           });
           return s;
         }();
  gcs.send(command_long(255, 190, 1, 1));
  ASSERT_TRUE(wait_until([&] { return autopilot.received().count_msgid(msg::CommandLong::kId) == 1; }));
  rt.router.settle();
  // Every link kind counts what it sent, in frames as in bytes: the serial link the frames the
  // autopilot got, the ground station's UDP link the ones it got.
  EXPECT_EQ(rt.link_counters(0).frames_out, autopilot.received().frames.size());
  EXPECT_EQ(rt.link_counters(1).frames_out, gcs.received().frames.size());
  fs::remove(dev);
}

TEST(Serial, DeviceThatDisappearsComesBackByItself) {
  auto autopilot = std::make_unique<PtyPeer>();
  const fs::path dev = device_link();
  point(dev, autopilot->slave_path());
  const uint16_t udp_port = free_udp_port();
  RouterThread rt;
  rt.router.add_endpoint(serial(dev.string()));
  rt.router.add_endpoint(udp_server(udp_port));
  rt.start();
  UdpPeer gcs;
  gcs.send_to(udp_port, heartbeat(255, 190));
  ASSERT_TRUE(autopilot_reaches(*autopilot, gcs));

  // Unplugged: the pty goes away, and so does the device path for a while.
  autopilot->close_master();
  autopilot.reset();
  fs::remove(dev);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 0; }));
  // Meanwhile the rest of the router works.
  UdpPeer other;
  other.send_to(udp_port, heartbeat(7, 1));
  ASSERT_TRUE(wait_until([&] { return gcs.received().frames.size() >= 2; }));

  // Plugged back in.
  autopilot = std::make_unique<PtyPeer>();
  point(dev, autopilot->slave_path());
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }, 5000ms));
  gcs.clear();
  ASSERT_TRUE(autopilot_reaches(*autopilot, gcs));
  gcs.send(command_long(255, 190, 1, 1));
  ASSERT_TRUE(wait_until([&] { return autopilot->received().count_msgid(msg::CommandLong::kId) >= 1; }));
  fs::remove(dev);
}

TEST(Serial, MissingDeviceAtStartIsRetriedNotFatal) {
  const fs::path dev = device_link();
  fs::remove(dev);
  RouterThread rt;
  rt.router.add_endpoint(serial(dev.string()));
  EXPECT_NO_THROW(rt.start());
  PtyPeer autopilot;
  point(dev, autopilot.slave_path());
  EXPECT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }, 5000ms));
  fs::remove(dev);
}
