#include "library/command_exchange.hpp"

#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"

namespace mavswitch {
namespace {

constexpr uint8_t kInProgress = 5;  // MAV_RESULT_IN_PROGRESS

}  // namespace

std::vector<Exchange::Listen> CommandExchange::listens() const { return {{msg::CommandAck::kId, true}}; }

Exchange::Step CommandExchange::heard(const protocol::FrameView& frame, Component&) {
  const auto ack = msg::CommandAck::decode(frame.payload());
  if (ack.command != command_.command) return Step::kIgnored;
  outcome_.result = ack.result;
  outcome_.progress = ack.progress;
  outcome_.result_param2 = ack.result_param2;
  if (ack.result != kInProgress) {
    outcome_.acknowledged = true;
    return Step::kDone;
  }
  // Under way: no more resends (the component would start it again), only the final ack, for
  // kProgressMs from the first IN_PROGRESS: a component that says "in progress" for ever does
  // not hold the command (and its caller) open.
  if (in_progress_) return Step::kIgnored;
  in_progress_ = true;
  return Step::kProgress;
}

bool CommandExchange::silent(Component& from) {
  if (in_progress_) return false;  // kProgressMs passed without the final ack
  send_again(from);
  return true;
}

void CommandExchange::send_again(Component& from) {
  const auto confirmation = static_cast<uint8_t>(outcome_.attempts++);  // 0 first, then one more each time
  send(from, command_, confirmation);  // last: its answer may come (and end this) inside
}

void CommandExchange::send(Component& from, const Command& c, uint8_t confirmation) {
  msg::CommandLong m;
  m.target_system = c.system;
  m.target_component = c.component;
  m.command = c.command;
  m.confirmation = confirmation;
  m.param1 = c.params[0], m.param2 = c.params[1], m.param3 = c.params[2];
  m.param4 = c.params[3], m.param5 = c.params[4], m.param6 = c.params[5];
  m.param7 = c.params[6];
  from.send(m);
}

}  // namespace mavswitch
