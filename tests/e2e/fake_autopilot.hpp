// An autopilot (1/1) on a UDP link of a router under test: sends HEARTBEAT and SYSTEM_TIME each
// second and ATTITUDE and VFR_HUD at the interval it was last asked for (default 4 Hz; off when
// asked -1), and answers SET_MESSAGE_INTERVAL with COMMAND_ACK (ACCEPTED, or UNSUPPORTED for a
// message it does not have) and GET_MESSAGE_INTERVAL with MESSAGE_INTERVAL, as ArduPilot and PX4
// do. pump() does what is due; the test calls it while it waits.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "e2e/peers.hpp"

namespace mavswitch::test {

inline constexpr uint16_t kSetMessageInterval = 511, kGetMessageInterval = 510;

class FakeAutopilot {
 public:
  using Clock = std::chrono::steady_clock;
  explicit FakeAutopilot(uint16_t router_port);
  void pump();
  // Pumps until `done` or the deadline; whether it was done.
  bool pump_until(const std::function<bool()>& done, std::chrono::milliseconds deadline = std::chrono::seconds(5));
  // It starts again: its clock from 0, its streams at their defaults.
  void reboot();
  UdpPeer& link() { return link_; }
  // What it was asked, in order: (message, interval µs).
  std::vector<std::pair<uint32_t, int64_t>> asked;
  std::vector<int> asked_by;  // the system each command came from

 private:
  static constexpr int64_t kDefaultUs = 250'000;
  struct Stream {
    int64_t interval_us = kDefaultUs;
    Clock::time_point next{};
    uint32_t sent = 0;
  };
  UdpPeer link_;
  uint16_t router_port_;
  uint8_t seq_ = 0;
  Clock::time_point next_heartbeat_{}, booted_ = Clock::now();
  std::map<uint32_t, Stream> streams_;
};

// SET_MESSAGE_INTERVAL from sys/comp to the autopilot (1/1).
Bytes set_interval(uint8_t sys, uint8_t comp, uint32_t message, float interval_us);
// The COMMAND_ACKs for SET_MESSAGE_INTERVAL a peer got, as (source system, target system, result).
std::vector<std::tuple<int, int, int>> acks(Peer& peer);

}  // namespace mavswitch::test
