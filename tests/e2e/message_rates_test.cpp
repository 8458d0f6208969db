// Each link gets the message rates it asks for (rates/), end to end through mavswitchd: a fake
// autopilot that obeys SET_MESSAGE_INTERVAL as ArduPilot and PX4 do, and ground stations that
// ask it different rates through the router.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <thread>

#include "e2e/daemon_process.hpp"
#include "e2e/fake_autopilot.hpp"
#include "e2e/free_ports.hpp"
#include "e2e/http_client.hpp"
#include "e2e/peers.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/message_interval.hpp"
#include "mavswitch/msg/request_data_stream.hpp"
#include "mavswitch/msg/system_time.hpp"
#include "mavswitch/msg/vfr_hud.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using Clock = std::chrono::steady_clock;

namespace {

// The fake autopilot's system and component (1/1). A station waits for its HEARTBEAT, not any: the router's own
// component beats too, and a wish for a system the router has not yet heard is dropped.
constexpr uint8_t kAutopilot = 1;

// A station's heartbeat while the test pumps the autopilot (each millisecond): true at once, then
// every 100 ms. A heartbeat at every pump was 1,000 frames a second from each station, a flood
// a sanitized router took longer than the deadline to get through (7e8078d tripled it for that).
class Beat {
 public:
  bool operator()() {
    const auto now = Clock::now();
    if (now < next_) return false;
    next_ = now + 100ms;
    return true;
  }

 private:
  Clock::time_point next_{};
};

class MessageRates : public ::testing::Test {
 protected:
  // A router with a UDP server for the autopilot and a TCP server for the ground stations.
  void start(const std::string& more = "", const std::string& general = "") {
    const std::string conf =
        scratch_
            .write("rates.conf", "[General]\nTcpServerPort = " + std::to_string(tcp_) + "\n" + general +
                                     "[UdpEndpoint autopilot]\nMode = Server\n"
                                     "Address = 127.0.0.1\nPort = " +
                                     std::to_string(udp_) + "\n" + more)
            .string();
    router_ = std::make_unique<DaemonProcess>(
        std::vector<std::string>{"-c", conf, "--http=127.0.0.1:" + std::to_string(http_)});
    autopilot_ = std::make_unique<FakeAutopilot>(udp_);
  }
  // A ground station connected to `port` (once the router listens).
  std::unique_ptr<TcpPeer> connect(uint16_t port) {
    std::unique_ptr<TcpPeer> peer;
    wait_until([&] {
      try {
        peer = std::make_unique<TcpPeer>(port);
      } catch (const std::exception&) {
      }
      return peer != nullptr;
    });
    if (!peer) throw std::runtime_error("the router does not listen on " + std::to_string(port));
    return peer;
  }
  // A ground station (sys/comp) connected to `port` that has heard the autopilot (and the
  // router it: its heartbeats). Throws when the router does not answer.
  std::unique_ptr<TcpPeer> introduced(uint16_t port, uint8_t sys, uint8_t comp = 190) {
    auto peer = connect(port);
    Beat beat;
    if (!pump_until([&] {
          if (beat()) peer->send(heartbeat(sys, comp));
          return peer->received().count_msgid(0, kAutopilot, kAutopilot) > 0;
        }))
      throw std::runtime_error("the autopilot is not heard through the router: " + router_->err());
    return peer;
  }
  // Pumps the autopilot until `done` or the deadline.
  bool pump_until(const std::function<bool()>& done, std::chrono::milliseconds deadline = 5000ms) {
    return autopilot_->pump_until(done, deadline);
  }
  // ATTITUDE frames each peer gets in `seconds` of pumping, a second per second.
  std::vector<double> rates_of(const std::vector<Peer*>& peers, double seconds) {
    for (Peer* p : peers) {  // what waited in its socket is not this window's
      p->poll();
      p->clear();
    }
    const auto end = Clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
    pump_until([&] { return Clock::now() >= end; }, std::chrono::milliseconds(static_cast<int>(seconds * 1000) + 100));
    std::vector<double> out;
    for (Peer* p : peers) out.push_back(static_cast<double>(p->received().count_msgid(msg::Attitude::kId)) / seconds);
    return out;
  }
  ScratchDir scratch_{"mavswitch-rates"};
  uint16_t udp_ = free_udp_port(), tcp_ = free_tcp_port(), http_ = free_tcp_port(), raw_ = free_tcp_port();
  std::unique_ptr<DaemonProcess> router_;
  std::unique_ptr<FakeAutopilot> autopilot_;
};

}  // namespace

// Two ground stations ask 50 Hz and 5 Hz: each gets its own, the autopilot was asked 50 Hz,
// both hear the autopilot's ACCEPTED. The fast one leaves: the autopilot is asked 5 Hz within a
// second. A third asks "off" and gets none, while the slow one still gets its 5 Hz.
TEST_F(MessageRates, EachGroundStationGetsTheRateItAskedFor) {
  start();
  auto fast_peer = connect(tcp_), slow_peer = connect(tcp_);
  TcpPeer &fast = *fast_peer, &slow = *slow_peer;
  // The router knows the autopilot (its heartbeat) and the ground stations (theirs).
  Beat beat;
  ASSERT_TRUE(pump_until([&] {
    if (beat()) {
      fast.send(heartbeat(255, 190));
      slow.send(heartbeat(254, 190));
    }
    return fast.received().count_msgid(0, kAutopilot, kAutopilot) > 0 &&
           slow.received().count_msgid(0, kAutopilot, kAutopilot) > 0;
  })) << router_->err();
  fast.send(set_interval(255, 190, msg::Attitude::kId, 20000));
  ASSERT_TRUE(pump_until([&] { return !acks(fast).empty(); })) << router_->err();
  slow.send(set_interval(254, 190, msg::Attitude::kId, 200000));
  ASSERT_TRUE(pump_until([&] { return !acks(slow).empty(); })) << router_->err();
  EXPECT_EQ(acks(fast)[0], std::make_tuple(1, 255, 0)) << "from the autopilot, to the asker, ACCEPTED";
  EXPECT_EQ(acks(slow)[0], std::make_tuple(1, 254, 0));
  EXPECT_EQ(autopilot_->asked, (std::vector<std::pair<uint32_t, int64_t>>{{msg::Attitude::kId, 20000}}))
      << "asked once, for the fastest";
  const auto both = rates_of({&fast, &slow}, 3);
  EXPECT_NEAR(both[0], 50, 5);
  EXPECT_NEAR(both[1], 5, 0.5);
  // Visible: the API and `mavswitch status --rates` say what was asked and who wishes what; the
  // slow one's link counts what it was spared.
  const std::string api = http_request(http_, "GET", "/api/v1/rates").body;
  EXPECT_NE(api.find("\"message\": \"ATTITUDE\""), std::string::npos) << api;
  EXPECT_NE(api.find("\"asked_hz\": 50.0"), std::string::npos) << api;
  EXPECT_NE(api.find("\"result\": \"ACCEPTED\""), std::string::npos) << api;
  std::string out;
  ASSERT_EQ(
      run_command(tool_path() + " status --rates --url http://127.0.0.1:" + std::to_string(http_) + " 2>&1", &out), 0)
      << out;
  EXPECT_NE(out.find("ATTITUDE"), std::string::npos) << out;
  EXPECT_NE(out.find("50 Hz"), std::string::npos) << out;
  EXPECT_NE(out.find("5 Hz"), std::string::npos) << out;
  const std::string links = http_request(http_, "GET", "/api/v1/links").body;
  EXPECT_NE(links.find("\"rate_thinned\": "), std::string::npos) << links;

  // GET_MESSAGE_INTERVAL passes to the autopilot; its MESSAGE_INTERVAL (20 ms, to everyone)
  // tells each ground station the rate it gets.
  auto told = [](Peer& peer) {
    int64_t us = 0;
    for (const auto& f : peer.received().frames) {
      if (view_of(f).msgid() == msg::MessageInterval::kId)
        us = msg::MessageInterval::decode(view_of(f).payload()).interval_us;
    }
    return us;
  };
  msg::CommandLong get;
  get.target_system = 1;
  get.target_component = 1;
  get.command = kGetMessageInterval;
  get.param1 = static_cast<float>(msg::Attitude::kId);
  slow.send(frame_of(get, 254, 190));
  ASSERT_TRUE(pump_until([&] { return told(slow) != 0 && told(fast) != 0; })) << router_->err();
  EXPECT_EQ(told(slow), 200000) << "its own rate, not the autopilot's";
  EXPECT_EQ(told(fast), 20000);

  // The autopilot reboots (its SYSTEM_TIME starts again): it is asked again for 50 Hz.
  const size_t before_reboot = autopilot_->asked.size();
  autopilot_->reboot();
  ASSERT_TRUE(pump_until([&] { return autopilot_->asked.size() > before_reboot; }, 3000ms)) << router_->err();
  EXPECT_EQ(autopilot_->asked.back(), std::make_pair(msg::Attitude::kId, int64_t{20000}));

  // The fast one leaves: the autopilot is asked 5 Hz within a second.
  const size_t before_leaving = autopilot_->asked.size();
  fast.close_now();
  const auto left = Clock::now();
  ASSERT_TRUE(pump_until([&] { return autopilot_->asked.size() > before_leaving; }, 1500ms));
  EXPECT_LE(Clock::now() - left, 1000ms);
  EXPECT_EQ(autopilot_->asked.back(), std::make_pair(msg::Attitude::kId, int64_t{200000}));

  // A third asks off: none for it; the slow one keeps its 5 Hz.
  auto quiet_peer = introduced(tcp_, 253);
  TcpPeer& quiet = *quiet_peer;
  quiet.send(set_interval(253, 190, msg::Attitude::kId, -1));
  ASSERT_TRUE(pump_until([&] { return !acks(quiet).empty(); })) << router_->err();
  const auto after = rates_of({&slow, &quiet}, 2);
  EXPECT_NEAR(after[0], 5, 0.5);
  EXPECT_EQ(after[1], 0) << "asked off";
  EXPECT_EQ(autopilot_->asked.back(), std::make_pair(msg::Attitude::kId, int64_t{200000}))
      << "off asks nothing of the autopilot while another wants it";
}

// REQUEST_DATA_STREAM (ArduPilot's): a wish for each message of the group; the autopilot is
// asked per message with SET_MESSAGE_INTERVAL.
TEST_F(MessageRates, ARequestForAStreamGroupIsAWishForEachOfItsMessages) {
  start();
  auto gcs_peer = introduced(tcp_, 255);
  TcpPeer& gcs = *gcs_peer;
  msg::RequestDataStream r;
  r.target_system = 1;
  r.target_component = 1;
  r.req_stream_id = 10;  // MAV_DATA_STREAM_EXTRA1: ATTITUDE, SIMSTATE, AHRS2, PID_TUNING
  r.req_message_rate = 10;
  r.start_stop = 1;
  gcs.send(frame_of(r, 255, 190));
  ASSERT_TRUE(pump_until([&] { return autopilot_->asked.size() >= 4; })) << router_->err();
  EXPECT_EQ(autopilot_->asked[0], std::make_pair(msg::Attitude::kId, int64_t{100000}));
  EXPECT_NEAR(rates_of({&gcs}, 2)[0], 10, 1);
  // A message the autopilot does not have: its UNSUPPORTED reaches the asker.
  gcs.send(set_interval(255, 190, 147, 100000));  // BATTERY_STATUS
  ASSERT_TRUE(pump_until([&] { return !acks(gcs).empty(); })) << router_->err();
  EXPECT_EQ(acks(gcs)[0], std::make_tuple(1, 255, 3)) << "MAV_RESULT_UNSUPPORTED, as the autopilot said";
}

// A 57,600-baud radio (a link with that budget: MaxRate = 57600 baud) asks ATTITUDE and VFR_HUD at
// 4 Hz, then a companion asks 50 Hz. Passed through, the last ask wins and the radio carries
// 50 Hz; with message rates it keeps its 4 Hz. The radio's bytes a second, both ways.
TEST_F(MessageRates, ARadioKeepsItsRateWhenACompanionAsksForMore) {
  double bytes_per_second[2] = {0, 0};
  for (const bool rates : {false, true}) {
    udp_ = free_udp_port(), tcp_ = free_tcp_port(), http_ = free_tcp_port(), raw_ = free_tcp_port();
    router_.reset();
    start("[TcpServerEndpoint radio]\nAddress = 127.0.0.1\nPort = " + std::to_string(raw_) + "\nMaxRate = 57600 baud\n",
          std::string("MessageRates = ") + (rates ? "true" : "false") + "\n");
    auto radio_peer = connect(raw_), companion_peer = connect(tcp_);
    TcpPeer &radio = *radio_peer, &companion = *companion_peer;
    Beat beat;
    ASSERT_TRUE(pump_until([&] {
      if (beat()) {
        radio.send(heartbeat(255, 190));
        companion.send(heartbeat(1, 191));
      }
      return radio.received().count_msgid(0, kAutopilot, kAutopilot) > 0 &&
             companion.received().count_msgid(0, kAutopilot, kAutopilot) > 0;
    })) << router_->err();
    for (const uint32_t m : {msg::Attitude::kId, msg::VfrHud::kId}) radio.send(set_interval(255, 190, m, 250000));
    ASSERT_TRUE(pump_until([&] { return acks(radio).size() >= 2; })) << router_->err();
    for (const uint32_t m : {msg::Attitude::kId, msg::VfrHud::kId}) companion.send(set_interval(1, 191, m, 20000));
    ASSERT_TRUE(pump_until([&] { return acks(companion).size() >= 2; })) << router_->err();
    const auto hz = rates_of({&radio, &companion}, 3);  // ATTITUDE a second: radio, companion
    size_t bytes = 0;
    for (const auto& f : radio.received().frames) bytes += f.size();
    bytes_per_second[rates] = static_cast<double>(bytes) / 3;
    std::cout << "[ figures  ] " << (rates ? "with message rates" : "passed through") << ": the radio " << hz[0]
              << " ATTITUDE/s and " << bytes_per_second[rates] << " B/s, the companion " << hz[1] << " ATTITUDE/s\n";
    // Counts, not bytes, decide: on a busy machine the fake autopilot sends less than 50 Hz.
    if (rates) {
      EXPECT_NEAR(hz[0], 4, 1) << "the radio keeps its 4 Hz";
      EXPECT_GT(hz[1], 3 * hz[0]) << "the companion gets more than the radio";
    } else {
      EXPECT_GT(hz[0], 0.8 * hz[1]) << "passed through, the companion's ask wins for the radio too";
    }
  }
  EXPECT_LT(bytes_per_second[1] * 3, bytes_per_second[0]);
  std::cout << "[ figures  ] 57,600-baud radio asking 4 Hz beside a 50 Hz companion: " << bytes_per_second[0]
            << " B/s passed through (the last ask wins), " << bytes_per_second[1] << " B/s with message rates\n";
}

// MessageRates = false on an endpoint: its commands pass to the autopilot as they are (today's
// behaviour), answered by the autopilot itself.
TEST_F(MessageRates, OffForAnEndpointPassesItsRequestsThrough) {
  start("[TcpServerEndpoint raw]\nAddress = 127.0.0.1\nPort = " + std::to_string(raw_) + "\nMessageRates = false\n");
  auto gcs_peer = introduced(raw_, 255);
  TcpPeer& gcs = *gcs_peer;
  gcs.send(set_interval(255, 190, msg::Attitude::kId, 100000));
  ASSERT_TRUE(pump_until([&] { return !acks(gcs).empty(); })) << router_->err();
  ASSERT_EQ(autopilot_->asked.size(), 1u);
  EXPECT_EQ(autopilot_->asked[0], std::make_pair(msg::Attitude::kId, int64_t{100000}));
  EXPECT_EQ(autopilot_->asked_by[0], 255) << "the ground station's own command, not the router's";
  EXPECT_NEAR(rates_of({&gcs}, 2)[0], 10, 1);
}

// A peer inventing messages cannot grow the router's table: past its own 128 streams with
// wishes a new one is DENIED at once, and the rest goes on (the first stream still thinned, the
// router running).
TEST_F(MessageRates, AFloodOfInventedStreamsIsRefusedPastTheBound) {
  start();
  auto gcs_peer = introduced(tcp_, 255);
  TcpPeer& gcs = *gcs_peer;
  gcs.send(set_interval(255, 190, msg::Attitude::kId, 100000));
  for (uint32_t m = 1000; m < 2100; ++m) gcs.send(set_interval(255, 190, m, 100000));
  auto denied = [&] {
    size_t n = 0;
    for (const auto& a : acks(gcs)) n += std::get<2>(a) == 2;  // MAV_RESULT_DENIED
    return n;
  };
  ASSERT_TRUE(pump_until([&] { return denied() >= 1101 - 128; }, 20000ms)) << denied() << " " << router_->err();
  EXPECT_NE(router_->err().find("a link may wish for 128 streams"), std::string::npos) << router_->err();
  EXPECT_TRUE(router_->running());
  EXPECT_NEAR(rates_of({&gcs}, 2)[0], 10, 1) << "the first wish still holds";
}
