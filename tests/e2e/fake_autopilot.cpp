#include "e2e/fake_autopilot.hpp"

#include <thread>

#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/message_interval.hpp"
#include "mavswitch/msg/system_time.hpp"
#include "mavswitch/msg/vfr_hud.hpp"

namespace mavswitch::test {

FakeAutopilot::FakeAutopilot(uint16_t router_port)
    : router_port_(router_port), streams_{{msg::Attitude::kId, {}}, {msg::VfrHud::kId, {}}} {}

void FakeAutopilot::pump() {
  const auto now = Clock::now();
  if (now >= next_heartbeat_) {
    link_.send_to(router_port_, heartbeat(1, 1, seq_++));
    msg::SystemTime t;
    t.time_boot_ms =
        static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now - booted_).count() + 60'000);
    link_.send_to(router_port_, frame_of(t, 1, 1, seq_++));
    next_heartbeat_ = now + std::chrono::seconds(1);
  }
  for (auto& [id, s] : streams_) {
    if (s.interval_us < 0 || now < s.next) continue;
    if (id == msg::Attitude::kId) link_.send_to(router_port_, attitude(1, 1, ++s.sent, seq_++));
    if (id == msg::VfrHud::kId) link_.send_to(router_port_, frame_of(msg::VfrHud{}, 1, 1, seq_++));
    s.next = std::max(s.next + std::chrono::microseconds(s.interval_us), now);
  }
  link_.poll();
  for (const auto& f : link_.received().frames) {
    const protocol::FrameView v = view_of(f);
    if (v.msgid() != msg::CommandLong::kId) continue;
    const auto c = msg::CommandLong::decode(v.payload());
    if (c.command == kGetMessageInterval && c.target_system == 1) {  // answered by MESSAGE_INTERVAL, to all
      msg::MessageInterval m;
      m.message_id = static_cast<uint16_t>(c.param1);
      const auto it = streams_.find(m.message_id);
      m.interval_us = it == streams_.end() ? 0 : static_cast<int32_t>(it->second.interval_us);
      link_.send_to(router_port_, frame_of(m, 1, 1, seq_++));
      continue;
    }
    if (c.command != kSetMessageInterval || c.target_system != 1) continue;
    asked.push_back({static_cast<uint32_t>(c.param1), static_cast<int64_t>(c.param2)});
    asked_by.push_back(v.sysid());
    msg::CommandAck ack;
    ack.command = kSetMessageInterval;
    ack.target_system = v.sysid();
    ack.target_component = v.compid();
    const auto it = streams_.find(static_cast<uint32_t>(c.param1));
    ack.result = it == streams_.end() ? 3 : 0;  // MAV_RESULT_UNSUPPORTED, ACCEPTED
    if (it != streams_.end()) it->second.interval_us = c.param2 == 0 ? kDefaultUs : static_cast<int64_t>(c.param2);
    link_.send_to(router_port_, frame_of(ack, 1, 1, seq_++));
  }
  link_.clear();
}

bool FakeAutopilot::pump_until(const std::function<bool()>& done, std::chrono::milliseconds deadline) {
  const auto end = Clock::now() + deadline;
  while (Clock::now() < end) {
    pump();
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

void FakeAutopilot::reboot() {
  booted_ = Clock::now() + std::chrono::seconds(60);  // its SYSTEM_TIME starts again near 0
  next_heartbeat_ = {};
  for (auto& [id, s] : streams_) s.interval_us = kDefaultUs;
}

Bytes set_interval(uint8_t sys, uint8_t comp, uint32_t message, float interval_us) {
  msg::CommandLong c;
  c.target_system = 1;
  c.target_component = 1;
  c.command = kSetMessageInterval;
  c.param1 = static_cast<float>(message);
  c.param2 = interval_us;
  return frame_of(c, sys, comp);
}

// The COMMAND_ACKs for SET_MESSAGE_INTERVAL a peer got, as (source system, target system, result).
std::vector<std::tuple<int, int, int>> acks(Peer& peer) {
  std::vector<std::tuple<int, int, int>> out;
  for (const auto& f : peer.received().frames) {
    const protocol::FrameView v = view_of(f);
    if (v.msgid() != msg::CommandAck::kId) continue;
    const auto a = msg::CommandAck::decode(v.payload());
    if (a.command == kSetMessageInterval) out.emplace_back(v.sysid(), a.target_system, a.result);
  }
  return out;
}

}  // namespace mavswitch::test
