#include "rest/vehicle_commands.hpp"

#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"

namespace mavswitch::rest {
namespace {

constexpr uint8_t kInProgress = 5;  // MAV_RESULT_IN_PROGRESS

}  // namespace

VehicleCommands::VehicleCommands(Router& router, Component& component) : router_(router), component_(component) {
  acks_ = component_.subscribe<msg::CommandAck>(
      [this](const msg::CommandAck& ack, const protocol::FrameView& f) {
        const Key key{f.sysid(), f.compid(), ack.command};
        const auto it = in_flight_.find(key);
        if (it == in_flight_.end()) return;
        InFlight& c = it->second;
        c.outcome.result = ack.result;
        c.outcome.progress = ack.progress;
        c.outcome.result_param2 = ack.result_param2;
        if (ack.result != kInProgress) {
          c.outcome.how = Outcome::How::kAcknowledged;
          finish(key);
          return;
        }
        // Under way: no more resends (the component would start it again), only the final ack,
        // for kProgressMs from the first IN_PROGRESS: a component that says "in progress" for
        // ever does not hold the command (and its caller) open.
        if (c.in_progress) return;
        c.in_progress = true;
        router_.event_loop().cancel(c.timer);
        c.timer = router_.event_loop().after(kProgressMs, [this, key] {
          in_flight_.at(key).timer = 0;
          finish(key);
        });
      },
      {.addressed_to_me = true, .from_home = true});
}

VehicleCommands::~VehicleCommands() {
  router_.run_on_loop([&] {
    acks_.reset();
    for (auto& [key, c] : in_flight_) router_.event_loop().cancel(c.timer);
    in_flight_.clear();
  });
}

void VehicleCommands::send(const Command& command, std::function<void(const Outcome&)> done) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleCommands::send");
  const Key key{command.system, command.component, command.command};
  if (in_flight_.contains(key)) {
    done(Outcome{.how = Outcome::How::kBusy});
    return;
  }
  in_flight_[key] = InFlight{command, std::move(done), {}, 0, false};
  transmit(key);
}

void VehicleCommands::transmit(const Key& key) {
  InFlight& c = in_flight_.at(key);
  msg::CommandLong m;
  m.target_system = c.command.system;
  m.target_component = c.command.component;
  m.command = c.command.command;
  m.confirmation = static_cast<uint8_t>(c.outcome.attempts);  // 0 first, then one more each time
  m.param1 = c.command.params[0], m.param2 = c.command.params[1], m.param3 = c.command.params[2];
  m.param4 = c.command.params[3], m.param5 = c.command.params[4], m.param6 = c.command.params[5];
  m.param7 = c.command.params[6];
  ++c.outcome.attempts;
  component_.send(m);
  c.timer = router_.event_loop().after(kRetryMs, [this, key] {
    InFlight& again = in_flight_.at(key);
    again.timer = 0;
    if (again.outcome.attempts >= kTries)
      finish(key);
    else
      transmit(key);
  });
}

void VehicleCommands::finish(const Key& key) {
  const auto it = in_flight_.find(key);
  InFlight c = std::move(it->second);
  in_flight_.erase(it);
  if (c.timer != 0) router_.event_loop().cancel(c.timer);
  c.done(c.outcome);
}

}  // namespace mavswitch::rest
