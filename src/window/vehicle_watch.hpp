// Each vehicle's latest state, for /metrics to alert on ("vehicle silent", "battery low"): the
// systems whose autopilot sends HEARTBEAT (component 1, autopilot not MAV_AUTOPILOT_INVALID: not
// ground stations or peripherals), when each was last heard, whether it is armed, and its battery
// remaining from SYS_STATUS. Subscriptions of the router's own component (it shares it with the
// message rates: one component, one delivery of each broadcast) to those two messages only (a
// few frames a second a vehicle); at most 256 vehicles, kept while the router runs.
// It also keeps what every component's last HEARTBEAT said, for the systems the window lists
// (at most one entry per system and component: 65,536), and each system's last STATUSTEXT lines.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "library/component.hpp"
#include "routing/types.hpp"
#include "window/status_text_history.hpp"

namespace mavswitch::window {

class VehicleWatch {
 public:
  // Listens on `component` (the router's own), which it never sends from; it must outlive this.
  VehicleWatch(Router& router, Component& component);
  // The per-vehicle Prometheus families. The router's thread.
  std::string metrics(routing::Millis now) const;
  // What a component's last HEARTBEAT said, and when (the router's clock).
  struct Heartbeat {
    uint32_t custom_mode = 0;
    uint8_t type = 0, autopilot = 0, base_mode = 0, system_status = 0;
    routing::Millis at = 0;
    routing::Millis armed_at = 0;  // when it was first heard armed since it last was not; 0: disarmed
  };
  // Every component heard sending one, keyed system << 8 | component. The router's thread.
  std::map<uint16_t, Heartbeat> heartbeats() const;
  // Each system's last STATUSTEXT lines, oldest first, for the systems that sent any. The
  // router's thread.
  std::vector<std::pair<uint8_t, std::deque<StatusTextHistory::Line>>> status_texts() const;

 private:
  struct Vehicle {
    routing::Millis heard = 0;  // its last HEARTBEAT; 0: not a vehicle (yet)
    bool armed = false;
    int8_t battery = -1;  // percent; -1: not said
  };

  Router& router_;
  std::vector<Subscription> subscriptions_;
  std::array<Vehicle, 256> vehicles_{};       // the router's thread's
  std::map<uint16_t, Heartbeat> heartbeats_;  // the router's thread's
  StatusTextHistory status_texts_;            // the router's thread's
};

}  // namespace mavswitch::window
