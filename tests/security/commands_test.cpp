// Who may command (docs/SECURITY.md): an endpoint that may not (Commands = deny) forwards no
// command, counted; signing keys named in the configuration change on a reload, links kept.
#include <sys/stat.h>

#include <csignal>
#include <fstream>

#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "protocol/signing.hpp"
#include "security/daemon_fixture.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

namespace {

std::string stats_of(uint16_t port) { return http_request(port, "GET", "/api/v1/stats").body; }

// "command_denied": N in /api/v1/stats, or -1.
long denied_in(const std::string& stats) {
  const auto at = stats.find("\"command_denied\": ");
  return at == std::string::npos ? -1 : std::stol(stats.substr(at + 18));
}

Bytes signed_frame(const Bytes& frame, const protocol::SigningKey& key) {
  Bytes out(protocol::kMaxFrameLen);
  out.resize(protocol::sign_frame(view_of(frame), key, 0, protocol::signing_timestamp_now(), out));
  return out;
}

// The time_boot_ms of the first ATTITUDE a peer got (0: none).
uint32_t attitude_time(Peer& peer) {
  for (const auto& f : peer.received().frames)
    if (view_of(f).msgid() == msg::Attitude::kId) return msg::Attitude::decode(view_of(f).payload()).time_boot_ms;
  return 0;
}

void write_key(const std::string& path, uint8_t fill) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << std::string(32, static_cast<char>(fill));
  }
  ::chmod(path.c_str(), 0600);
}

}  // namespace

// A cloud viewer's link sends 10,000 commands (COMMAND_LONG, SET_MODE's kin, PARAM_SET): none
// reaches the vehicle, each is counted, and what it may send (its HEARTBEAT) still passes.
TEST_F(DaemonUnderAttack, a_viewer_endpoint_forwards_no_commands) {
  auto d = start("", "", "", "Commands = deny\n");
  connect_peers();
  for (int batch = 0; batch < 100; ++batch) {
    for (int i = 0; i < 100; ++i) gcs_.send_to(gcs_port_, command_long(255, 190, 1, 1, static_cast<uint8_t>(i)));
    pace(5ms);  // the router's socket buffer takes each batch
  }
  vehicle_.clear();
  gcs_.send_to(gcs_port_, heartbeat(255, 190));
  // All of them, but what the kernel may drop from a burst on a busy (or sanitized) router.
  ASSERT_TRUE(wait_until([&] { return denied_in(stats_of(http_port_)) >= 9'500; }, 10000ms)) << stats_of(http_port_);
  ASSERT_TRUE(wait_until([&] { return vehicle_.received().count_msgid(0) > 0; })) << "a viewer is still heard";
  EXPECT_EQ(vehicle_.received().count_msgid(msg::CommandLong::kId), 0u);
  std::cout << "[ figures  ] a Commands = deny link sent 10,000 COMMAND_LONG: 0 forwarded, "
            << denied_in(stats_of(http_port_)) << " counted as command_denied\n";
}

// The vehicle's link verifies signatures with the key in a file. The file changes and the
// daemon reloads (SIGHUP): frames signed with the new key pass, the old key's are refused, and
// the vehicle's link is the same link (no restart, no new peer).
TEST_F(DaemonUnderAttack, a_signing_key_changed_on_reload_takes_effect_without_a_restart) {
  const std::string key_file = (scratch_ / "vehicle.key").string();
  write_key(key_file, 0x11);
  protocol::SigningKey old_key, new_key;
  old_key.fill(0x11);
  new_key.fill(0x22);
  auto d = start("", "", "SigningKeyFile = " + key_file + "\nSigning = verify\n");
  ASSERT_TRUE(wait_until([&] {
    vehicle_.send_to(vehicle_port_, signed_frame(heartbeat(1, 1), old_key));
    gcs_.send_to(gcs_port_, heartbeat(255, 190));
    return gcs_.wait_frames(1, 50ms);
  }));
  write_key(key_file, 0x22);
  d->signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return d->err().find("a new signing key") != std::string::npos; })) << d->err();
  gcs_.clear();
  vehicle_.send_to(vehicle_port_, signed_frame(attitude(1, 1, 1), old_key));
  vehicle_.send_to(vehicle_port_, signed_frame(attitude(1, 1, 2), new_key));
  ASSERT_TRUE(wait_until([&] { return gcs_.received().count_msgid(msg::Attitude::kId) >= 1; })) << d->err();
  ASSERT_EQ(gcs_.received().count_msgid(msg::Attitude::kId), 1u) << "only the new key's frame";
  EXPECT_EQ(attitude_time(gcs_), 2u);
  EXPECT_NE(d->err().find("0 changed, 1 new signing keys"), std::string::npos) << d->err();
  size_t peers = 0;
  for (size_t at = d->err().find("new peer"); at != std::string::npos; at = d->err().find("new peer", at + 1)) ++peers;
  EXPECT_EQ(peers, 2u) << "the vehicle and the ground station, once each: " << d->err();
}
