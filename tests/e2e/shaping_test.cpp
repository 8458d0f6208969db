// Links that are slow, costly or doubled, end to end on loopback: a budgeted link keeps
// commands fast while telemetry floods it, rate limits hold at the receiver while protocol
// transfers complete, and redundant links deliver once, fail over and fail back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <regex>
#include <set>

#include <csignal>

#include "e2e/daemon_process.hpp"
#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/global_position_int.hpp"
#include "mavswitch/msg/mission_ack.hpp"
#include "mavswitch/msg/mission_count.hpp"
#include "mavswitch/msg/mission_item_int.hpp"
#include "mavswitch/msg/mission_request_int.hpp"
#include "mavswitch/msg/param_request_list.hpp"
#include "mavswitch/msg/param_value.hpp"
#include "mavswitch/msg/vfr_hud.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using Clock = std::chrono::steady_clock;
using Kind = transport::EndpointSpec::Kind;

namespace {

// Every frame a peer received since the last call, as views (valid until the next call).
std::vector<protocol::FrameView> take(Peer& peer, size_t& seen) {
  const auto& frames = peer.received().frames;
  std::vector<protocol::FrameView> out;
  for (; seen < frames.size(); ++seen) out.push_back(view_of(frames[seen]));
  return out;
}

Bytes command_ack(uint16_t command, uint8_t seq) {
  msg::CommandAck a;
  a.command = command;
  a.target_system = 255;
  a.target_component = 190;
  return frame_of(a, 1, 1, seq);
}

// A TCP client that reads no faster than a 57,600-baud radio: 5,760 bytes a second.
class SlowReader {
 public:
  explicit SlowReader(uint16_t port) : peer_(port), parser_(dialect::builtin::message_table()) {}
  TcpPeer& peer() { return peer_; }
  // Reads what the radio would have carried by now; calls f for each whole frame.
  template <class F>
  void read(Clock::time_point t0, F f) {
    const auto allowed = static_cast<size_t>(5.76 * double(ms_since(t0)));
    uint8_t buf[4096];
    while (read_ < allowed) {
      const ssize_t n = ::read(peer_.fd(), buf, std::min(sizeof buf, allowed - read_));
      if (n <= 0) return;
      read_ += static_cast<size_t>(n);
      parser_.feed({buf, static_cast<size_t>(n)}, f);
    }
  }

 private:
  TcpPeer peer_;
  protocol::FrameParser parser_;
  size_t read_ = 0;
};

}  // namespace

// 50 kB/s of telemetry offered to a link of 5.76 kB/s: a command from the far side gets its
// answer within 250 ms every time (without the budget it would wait behind a 256 KiB queue),
// and the telemetry that arrives is the newest, never older than MaxDelay.
TEST(SlowLink, CommandsStayFastAndTelemetryFreshBehindABudget) {
  RouterThread rt;
  const uint16_t vehicle_port = free_udp_port(), radio_port = free_tcp_port();
  rt.router.add_endpoint(udp_server(vehicle_port));
  auto radio = tcp_server(radio_port);
  radio.max_rate = 5760;  // MaxRate = 57600baud
  radio.max_delay = 250;
  rt.router.add_endpoint(radio);
  rt.start();

  UdpPeer vehicle;
  vehicle.send_to(vehicle_port, heartbeat(1, 1));
  SlowReader gcs(radio_port);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(1) == 1; }));
  gcs.peer().send(heartbeat(255, 190));

  const auto t0 = Clock::now();
  std::map<uint16_t, int64_t> asked;  // command param (as an id) -> when sent
  std::vector<int64_t> round_trips, ages;
  size_t telemetry = 0, vehicle_seen = 0;
  uint8_t seq = 0;
  for (int tick = 0; tick < 800 && ms_since(t0) < 4000; ++tick) {  // 5 ms ticks for 4 s
    const auto now = static_cast<uint32_t>(ms_since(t0));
    for (uint8_t comp = 1; comp <= 6; ++comp) vehicle.send_to(vehicle_port, attitude(1, comp, now, seq++));
    if (tick % 200 == 0) vehicle.send_to(vehicle_port, heartbeat(1, 1, seq++));
    // A command every 200 ms, none in the last 400 ms so that each one's answer (bound 250 ms)
    // can arrive before the loop ends, however slowly the ticks run (TSan).
    if (tick % 40 == 20 && ms_since(t0) < 3600) {
      const auto id = static_cast<uint16_t>(asked.size() + 1);
      asked[id] = ms_since(t0);
      gcs.peer().send(command_long(255, 190, 1, 1, uint8_t(id)));
    }
    for (const auto& f : take(vehicle, vehicle_seen)) {  // the vehicle answers at once
      if (f.msgid() == msg::CommandLong::kId) vehicle.send_to(vehicle_port, command_ack(f.seq(), seq++));
    }
    gcs.read(t0, [&](const protocol::FrameView& f) {
      if (f.msgid() == msg::CommandAck::kId) {
        const auto ack = msg::CommandAck::decode(f.payload());
        if (asked.count(ack.command)) round_trips.push_back(ms_since(t0) - asked[ack.command]);
      } else if (f.msgid() == msg::Attitude::kId) {
        ++telemetry;
        ages.push_back(ms_since(t0) - int64_t(msg::Attitude::decode(f.payload()).time_boot_ms));
      }
    });
    pace(5ms);
  }
  std::sort(ages.begin(), ages.end());
  if (!round_trips.empty() && !ages.empty()) {
    std::printf("command round trips: max %lld ms over %zu; telemetry age p99 %lld ms, %zu frames\n",
                static_cast<long long>(*std::max_element(round_trips.begin(), round_trips.end())), round_trips.size(),
                static_cast<long long>(ages[ages.size() * 99 / 100]), ages.size());
  }
  ASSERT_GE(asked.size(), 15u);
  EXPECT_EQ(round_trips.size(), asked.size()) << "every command answered";
  EXPECT_LE(*std::max_element(round_trips.begin(), round_trips.end()), 250) << "the stated bound";
  ASSERT_GT(telemetry, 200u) << "telemetry flows, decimated";
  EXPECT_LE(ages[ages.size() * 99 / 100], 350) << "MaxDelay 250 ms, plus the radio's own buffer";
  const auto c = rt.link_counters(1);
  EXPECT_GT(c.superseded, 1000u) << "older values replaced while they waited";
}

// RateLimitOut = ATTITUDE:10, GLOBAL_POSITION_INT:5, *:2 on the ground station's link while
// the vehicle streams each at 50 Hz: the rates measured there are within 10%, and a full
// parameter download and a mission upload through the same link lose nothing.
TEST(RateLimits, RatesHoldAtTheReceiverAndProtocolsCompleteWhole) {
  RouterThread rt;
  const uint16_t vehicle_port = free_udp_port(), gcs_port = free_udp_port();
  rt.router.add_endpoint(udp_server(vehicle_port));
  auto gcs_spec = udp_server(gcs_port);
  gcs_spec.rate_out.add(msg::Attitude::kId, 10);
  gcs_spec.rate_out.add(msg::GlobalPositionInt::kId, 5);
  gcs_spec.rate_out.others = 2;
  rt.router.add_endpoint(gcs_spec);
  rt.start();
  UdpPeer vehicle, gcs;
  vehicle.send_to(vehicle_port, heartbeat(1, 1));
  gcs.send_to(gcs_port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1 && rt.link_count(1) == 1; }));

  constexpr uint16_t kParams = 400, kItems = 60;
  msg::ParamRequestList request;
  request.target_system = 1;
  request.target_component = 1;
  gcs.send(frame_of(request, 255, 190));
  msg::MissionCount count;
  count.target_system = 1;
  count.target_component = 1;
  count.count = kItems;
  gcs.send(frame_of(count, 255, 190));

  const auto t0 = Clock::now();
  std::map<uint32_t, std::vector<int64_t>> arrivals;  // msgid -> when
  std::set<uint16_t> params, items;
  bool mission_acked = false;
  uint16_t next_param = 0;
  size_t vehicle_seen = 0, gcs_seen = 0;
  uint8_t seq = 0;
  for (int tick = 0; tick < 250 && ms_since(t0) < 5000; ++tick) {  // 20 ms ticks for 5 s
    const auto now = static_cast<uint32_t>(ms_since(t0));
    vehicle.send_to(vehicle_port, attitude(1, 1, now, seq++));
    msg::GlobalPositionInt pos;
    pos.time_boot_ms = now;
    vehicle.send_to(vehicle_port, frame_of(pos, 1, 1, seq++));
    msg::VfrHud hud;
    hud.alt = float(now);
    vehicle.send_to(vehicle_port, frame_of(hud, 1, 1, seq++));
    for (int k = 0; k < 20 && next_param < kParams; ++k, ++next_param) {  // the download, in bursts
      msg::ParamValue p;
      p.param_index = next_param;
      p.param_count = kParams;
      vehicle.send_to(vehicle_port, frame_of(p, 1, 1, seq++));
    }
    for (const auto& f : take(vehicle, vehicle_seen)) {  // the vehicle's side of the upload
      if (f.msgid() == msg::MissionCount::kId || f.msgid() == msg::MissionItemInt::kId) {
        const uint16_t got = f.msgid() == msg::MissionCount::kId ? 0 : msg::MissionItemInt::decode(f.payload()).seq + 1;
        if (got < kItems) {
          msg::MissionRequestInt r;
          r.target_system = 255;
          r.target_component = 190;
          r.seq = got;
          vehicle.send_to(vehicle_port, frame_of(r, 1, 1, seq++));
        } else {
          msg::MissionAck a;
          a.target_system = 255;
          a.target_component = 190;
          vehicle.send_to(vehicle_port, frame_of(a, 1, 1, seq++));
        }
      }
    }
    for (const auto& f : take(gcs, gcs_seen)) {
      arrivals[f.msgid()].push_back(ms_since(t0));
      if (f.msgid() == msg::ParamValue::kId) params.insert(msg::ParamValue::decode(f.payload()).param_index);
      if (f.msgid() == msg::MissionAck::kId) mission_acked = true;
      if (f.msgid() == msg::MissionRequestInt::kId) {
        msg::MissionItemInt item;
        item.target_system = 1;
        item.target_component = 1;
        item.seq = msg::MissionRequestInt::decode(f.payload()).seq;
        items.insert(item.seq);
        gcs.send(frame_of(item, 255, 190));
      }
    }
    pace(20ms);
  }
  auto rate = [&](uint32_t id) {
    const auto& t = arrivals[id];
    return t.size() < 2 ? 0.0 : double(t.size() - 1) * 1000.0 / double(t.back() - t.front());
  };
  EXPECT_NEAR(rate(msg::Attitude::kId), 10.0, 1.0);
  EXPECT_NEAR(rate(msg::GlobalPositionInt::kId), 5.0, 0.5);
  EXPECT_NEAR(rate(msg::VfrHud::kId), 2.0, 0.2);
  EXPECT_EQ(params.size(), kParams) << "every parameter, none thinned";
  EXPECT_EQ(items.size(), kItems);
  EXPECT_TRUE(mission_acked);
  EXPECT_GT(rt.link_counters(1).rate_limited_out, 300u);
}

// The same through mavswitchd's configuration: the keys act (rates, budget, group, priority),
// and the statistics say what they did.
TEST(DaemonShaping, TheConfigurationKeysAct) {
  ScratchDir scratch("mavswitchd-shaping");
  const uint16_t radio1 = free_udp_port(), radio2 = free_udp_port(), gcs_port = free_udp_port();
  auto server = [](const char* name, uint16_t port, const std::string& more) {
    return std::string("[UdpEndpoint ") + name +
           "]\nMode = Server\nAddress = 127.0.0.1\nPort = " + std::to_string(port) + "\n" + more;
  };
  const auto conf =
      scratch.write("shaping.conf", "[General]\nTcpServerPort = 0\nFailoverTimeout = 300\n" +
                                        server("radio1", radio1, "Group = radio\nPriority = 1\n") +
                                        server("radio2", radio2, "Group = radio\nPriority = 2\n") +
                                        server("gcs", gcs_port, "RateLimitOut = ATTITUDE:5\nMaxRate = 20kB/s\n"));
  DaemonProcess d({"-c", conf.string()});
  UdpPeer v1, v2, gcs;
  uint8_t hello = 200;  // a new frame each time: a repeated one would be a duplicate
  ASSERT_TRUE(wait_until(
      [&] {
        gcs.send_to(gcs_port, heartbeat(255, 190));
        v1.send_to(radio1, heartbeat(1, 1, hello++));
        return gcs.wait_frames(1, 50ms);
      },
      10s))
      << d.err();  // the daemon may take seconds to start under a sanitizer
  gcs.clear();
  const auto t0 = Clock::now();
  for (int i = 1; i <= 100 && ms_since(t0) < 2000; ++i) {  // 100 Hz for a second, on both radios
    const auto f = attitude(1, 1, uint32_t(i), uint8_t(i));
    v1.send_to(radio1, f);
    v2.send_to(radio2, f);
    if (i % 25 == 0) gcs.send_to(gcs_port, heartbeat(255, 190, uint8_t(i)));  // to the vehicle: the group
    pace(10ms);
  }
  ASSERT_TRUE(wait_until([&] { return gcs.received().count_msgid(msg::Attitude::kId) >= 5; })) << d.err();
  EXPECT_LE(gcs.received().count_msgid(msg::Attitude::kId), 8u) << "5 a second, once each";
  EXPECT_GE(v1.received().count_msgid(0), 1u) << "the primary carries the group's traffic";
  EXPECT_EQ(v2.received().count_msgid(0), 0u) << "and only the primary";
  // Statistics until the last frames are counted (they may still be on their way).
  ASSERT_TRUE(wait_until([&] {
    d.signal(SIGUSR1);
    return wait_until([&] { return d.out().find("duplicates removed 100") != std::string::npos; }, 300ms);
  })) << "every frame of the secondary removed: "
      << d.out();
  EXPECT_NE(d.out().find("group radio: traffic on radio1"), std::string::npos) << d.out();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(d.out(), m, std::regex("shaped: rate-limited in 0, out ([0-9]+)"))) << d.out();
  EXPECT_GE(std::stoi(m[1]), 90) << d.out();
}
