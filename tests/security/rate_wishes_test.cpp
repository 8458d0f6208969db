// Rate wishes with fair shares (docs/SECURITY.md): one ground station cannot take the wishes
// from the others, switch off their streams, make the autopilot stream at a kilohertz, flood it
// with commands, or grow the router's records without end.
#include <thread>

#include "e2e/fake_autopilot.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "security/daemon_fixture.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using Clock = std::chrono::steady_clock;

namespace {

class RateWishes : public DaemonUnderAttack {
 protected:
  // The router with the fake autopilot on the vehicle's server, heard; `tcp`, a TCP server for
  // ground stations that come and go.
  void start_with_autopilot() {
    router_ = start("", "[TcpServerEndpoint stations]\nAddress = 127.0.0.1\nPort = " + std::to_string(tcp_) + "\n");
    autopilot_ = std::make_unique<FakeAutopilot>(vehicle_port_);
  }
  bool pump_until(const std::function<bool()>& done, std::chrono::milliseconds deadline = 5000ms) {
    return autopilot_->pump_until(done, deadline);
  }
  // A ground station on the UDP server that has heard the autopilot (so routes exist both ways).
  void introduce(UdpPeer& station, uint8_t sys) {
    ASSERT_TRUE(pump_until([&] {
      station.send_to(gcs_port_, heartbeat(sys, 190));
      return station.received().count_msgid(0) > 0;
    })) << router_->err();
  }
  // The number of streams /api/v1/rates lists (each has a "message").
  size_t records() {
    const std::string rates = http_request(http_port_, "GET", "/api/v1/rates").body;
    size_t n = 0;
    for (size_t at = rates.find("\"message\""); at != std::string::npos; at = rates.find("\"message\"", at + 1)) ++n;
    return n;
  }
  std::unique_ptr<DaemonProcess> router_;
  std::unique_ptr<FakeAutopilot> autopilot_;
  const uint16_t tcp_ = free_tcp_port();
};

size_t results(Peer& peer, int result) {
  size_t n = 0;
  for (const auto& a : acks(peer)) n += std::get<2>(a) == result;
  return n;
}

}  // namespace

// One station files 1,100 made-up wishes; past its own 128 they are DENIED. Another station's
// 10 Hz wish is still granted: the autopilot is asked, and its ACCEPTED comes back.
TEST_F(RateWishes, a_station_holding_its_cap_of_wishes_leaves_room_for_another_stations_10hz) {
  start_with_autopilot();
  UdpPeer greedy, honest;
  introduce(greedy, 250);
  introduce(honest, 251);
  for (uint32_t m = 1000; m < 2100; ++m) {
    greedy.send_to(gcs_port_, set_interval(250, 190, m, 100000));
    if (m % 100 == 0) pace(2ms);
  }
  ASSERT_TRUE(pump_until([&] { return results(greedy, 2) >= 1100 - 128; }, 10000ms)) << results(greedy, 2);
  honest.send_to(gcs_port_, set_interval(251, 190, msg::Attitude::kId, 100000));
  ASSERT_TRUE(pump_until([&] { return results(honest, 0) == 1; }, 15000ms)) << router_->err();
  EXPECT_NE(std::find(autopilot_->asked.begin(), autopilot_->asked.end(),
                      std::make_pair(msg::Attitude::kId, int64_t{100000})),
            autopilot_->asked.end());
  std::cout << "[ figures  ] 1,100 wishes from one station: " << results(greedy, 2)
            << " DENIED; another station's 10 Hz: ACCEPTED\n";
}

// Stations connect, wish for 40 streams each, and leave, three times: the records of what the
// autopilot was asked go with the wishes, once it took its defaults again.
TEST_F(RateWishes, records_of_asks_go_when_no_wish_is_left) {
  start_with_autopilot();
  for (uint32_t round = 0; round < 3; ++round) {
    std::unique_ptr<TcpPeer> station;
    ASSERT_TRUE(pump_until([&] {
      if (!station) station = std::make_unique<TcpPeer>(tcp_);
      station->send(heartbeat(240, 190));
      return station->received().count_msgid(0) > 0;
    }));
    for (uint32_t m = 0; m < 40; ++m) station->send(set_interval(240, 190, 3000 + round * 40 + m, 100000));
    ASSERT_TRUE(pump_until([&] { return acks(*station).size() >= 40; }, 10000ms)) << acks(*station).size();
    station->close_now();
  }
  ASSERT_TRUE(pump_until([&] { return records() == 0; }, 20000ms)) << records() << " records left";
  std::cout << "[ figures  ] 3 stations x 40 wishes, come and gone: " << records() << " records left\n";
}

// One station asks ATTITUDE off. The autopilot is not asked to stop (it is asked its default):
// a station that asked nothing keeps getting ATTITUDE; the one that asked off gets none.
TEST_F(RateWishes, an_off_wish_thins_only_the_station_that_asked) {
  start_with_autopilot();
  UdpPeer quiet, passive;
  introduce(quiet, 250);
  introduce(passive, 251);
  quiet.send_to(gcs_port_, set_interval(250, 190, msg::Attitude::kId, -1));
  ASSERT_TRUE(pump_until([&] { return !acks(quiet).empty(); })) << router_->err();
  quiet.clear();
  passive.clear();
  pump_until([] { return false; }, 2000ms);  // two seconds of the autopilot's streams
  EXPECT_EQ(quiet.received().count_msgid(msg::Attitude::kId), 0u) << "asked off";
  EXPECT_GE(passive.received().count_msgid(msg::Attitude::kId), 6u) << "its default 4 Hz";
  for (const auto& [message, interval] : autopilot_->asked) EXPECT_NE(interval, -1) << "never asked to stop";
}

// One station asks ATTITUDE every 5 s, slower than the autopilot's default (4 Hz, which it
// says when asked): the autopilot is asked its default, the station that asked nothing keeps
// it, and the slow one gets its own rate.
TEST_F(RateWishes, a_slow_wish_thins_only_the_station_that_asked) {
  start_with_autopilot();
  UdpPeer slow, passive;
  introduce(slow, 250);
  introduce(passive, 251);
  slow.send_to(gcs_port_, set_interval(250, 190, msg::Attitude::kId, 5'000'000));
  ASSERT_TRUE(pump_until([&] { return !acks(slow).empty(); })) << router_->err();
  slow.clear();
  passive.clear();
  pump_until([] { return false; }, 2000ms);  // two seconds of the autopilot's streams
  EXPECT_LE(slow.received().count_msgid(msg::Attitude::kId), 1u) << "its 5 s";
  EXPECT_GE(passive.received().count_msgid(msg::Attitude::kId), 6u) << "the default 4 Hz";
  ASSERT_FALSE(autopilot_->asked.empty());
  EXPECT_EQ(autopilot_->asked.back(), std::make_pair(msg::Attitude::kId, int64_t{0})) << "asked its default";
}

// A 1 µs wish is asked as MaxStreamRate allows (100 Hz by default), not a kilohertz.
TEST_F(RateWishes, a_microsecond_wish_is_clamped_to_max_stream_rate) {
  start_with_autopilot();
  UdpPeer station;
  introduce(station, 250);
  station.send_to(gcs_port_, set_interval(250, 190, msg::Attitude::kId, 1));
  ASSERT_TRUE(pump_until([&] { return !autopilot_->asked.empty(); })) << router_->err();
  EXPECT_EQ(autopilot_->asked.front(), std::make_pair(msg::Attitude::kId, int64_t{10000}));
}

// 10,000 requests a second, each a different interval: the autopilot gets at most one command
// per 20 ms, each for the wishes as they stand, the last for the last wish.
TEST_F(RateWishes, a_request_flood_reaches_the_autopilot_paced) {
  start_with_autopilot();
  UdpPeer station;
  introduce(station, 250);
  const auto started = Clock::now();
  for (int i = 0; i < 10'000; ++i) {
    station.send_to(gcs_port_, set_interval(250, 190, msg::Attitude::kId, static_cast<float>(20000 + i)));
    if (i % 100 == 99) {
      autopilot_->pump();
      pace(10ms);  // 10,000 a second
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  ASSERT_TRUE(pump_until([&] { return !autopilot_->asked.empty() && autopilot_->asked.back().second == 20000 + 9'999; },
                         15000ms))
      << autopilot_->asked.size();
  const double per_second = static_cast<double>(autopilot_->asked.size()) / seconds;
  std::cout << "[ figures  ] 10,000 requests in " << seconds << " s: " << autopilot_->asked.size()
            << " commands reached the autopilot (" << per_second << "/s)\n";
  EXPECT_LE(per_second, 60) << "one per 20 ms at most, and a few for the last";
}
