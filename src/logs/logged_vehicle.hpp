// The vehicle the logs follow, one rule for the telemetry and the flight log: LogSystemId's, or
// else the first autopilot heard (a component 1 HEARTBEAT whose autopilot is not
// MAV_AUTOPILOT_INVALID, which ground stations and peripherals send). Reads two payload bytes,
// no decode: the telemetry log asks it of every frame.
#pragma once

#include <cstdint>
#include <optional>

#include "protocol/frame.hpp"

namespace mavswitch::logs {

struct VehicleHeartbeat {
  uint8_t autopilot;  // MAV_AUTOPILOT
  bool armed;
};

class LoggedVehicle {
 public:
  explicit LoggedVehicle(std::optional<uint8_t> system_id) : system_id_(system_id) {}
  // The vehicle's HEARTBEAT, or nothing for any other frame (the first autopilot's chooses it).
  std::optional<VehicleHeartbeat> heartbeat(const protocol::FrameView& f) {
    constexpr uint32_t kHeartbeatId = 0;
    constexpr int kAutopilot = 5, kBaseMode = 6;            // payload offsets (custom_mode is first on the wire)
    constexpr uint8_t kAutopilotInvalid = 8, kArmed = 128;  // MAV_MODE_FLAG_SAFETY_ARMED
    if (f.msgid() != kHeartbeatId || !f.verified() || f.compid() != 1) return std::nullopt;
    const uint8_t autopilot = f.payload_byte(kAutopilot);
    if (system_id_ ? f.sysid() != *system_id_ : autopilot == kAutopilotInvalid) return std::nullopt;
    system_id_ = f.sysid();
    return VehicleHeartbeat{autopilot, (f.payload_byte(kBaseMode) & kArmed) != 0};
  }
  std::optional<uint8_t> system_id() const noexcept { return system_id_; }

 private:
  std::optional<uint8_t> system_id_;
};

}  // namespace mavswitch::logs
