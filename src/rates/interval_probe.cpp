#include "rates/interval_probe.hpp"

#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/message_interval.hpp"

namespace mavswitch::rates {
namespace {

constexpr uint8_t kAccepted = 0, kInProgress = 5;  // MAV_RESULT

}  // namespace

std::vector<Exchange::Listen> IntervalProbe::listens() const {
  // MESSAGE_INTERVAL names no target: every link hears it.
  return {{msg::MessageInterval::kId, false}, {msg::CommandAck::kId, true}};
}

Exchange::Step IntervalProbe::heard(const protocol::FrameView& frame, Component&) {
  if (frame.msgid() == msg::MessageInterval::kId) {
    const auto m = msg::MessageInterval::decode(frame.payload());
    if (m.message_id != message_) return Step::kIgnored;
    interval_us_ = m.interval_us;
    return Step::kDone;
  }
  const auto ack = msg::CommandAck::decode(frame.payload());
  if (ack.command != kGetMessageInterval || ack.result == kAccepted || ack.result == kInProgress)
    return Step::kIgnored;  // accepted: its MESSAGE_INTERVAL comes too
  return Step::kDone;
}

}  // namespace mavswitch::rates
