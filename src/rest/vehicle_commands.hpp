// Commands to a vehicle's component by MAVLink's command protocol, for POST
// /v1/vehicles/{sys}/{comp}/command: a COMMAND_LONG from the router's own component, sent again
// with `confirmation` counted up until a COMMAND_ACK comes (kTries, kRetryMs apart); an
// IN_PROGRESS ack stops the resends and waits for the final one (kProgressMs after the first
// IN_PROGRESS, however many more come). One command of an id to a component at a time, as the protocol asks; a second
// is refused rather than queued. The router's thread only.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "api/component.hpp"
#include "routing/types.hpp"
#include "transport/event_loop.hpp"

namespace mavswitch::rest {

class VehicleCommands {
 public:
  static constexpr int kTries = 5;
  static constexpr routing::Millis kRetryMs = 1000;
  static constexpr routing::Millis kProgressMs = 10'000;

  struct Command {
    uint8_t system = 0, component = 0;
    uint16_t command = 0;
    std::array<float, 7> params{};
  };
  struct Outcome {
    enum class How { kAcknowledged, kNoAnswer, kBusy } how = How::kNoAnswer;
    uint8_t result = 0;  // MAV_RESULT
    uint8_t progress = 0;
    int32_t result_param2 = 0;
    int attempts = 0;
  };

  // `component` (the router's own) must outlive this.
  VehicleCommands(Router& router, Component& component);
  ~VehicleCommands();
  // The router's thread: sends `command`; `done` is called once, on the router's thread.
  void send(const Command& command, std::function<void(const Outcome&)> done);

 private:
  using Key = std::tuple<uint8_t, uint8_t, uint16_t>;  // system, component, command
  struct InFlight {
    Command command;
    std::function<void(const Outcome&)> done;
    Outcome outcome;
    transport::EventLoop::TimerId timer = 0;
    bool in_progress = false;  // an IN_PROGRESS came: the final ack is awaited, kProgressMs at most
  };
  void transmit(const Key& key);
  void finish(const Key& key);
  Router& router_;
  Component& component_;
  std::map<Key, InFlight> in_flight_;
  Subscription acks_;
};

}  // namespace mavswitch::rest
