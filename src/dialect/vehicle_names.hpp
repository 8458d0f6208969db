// Names for what a HEARTBEAT says, as a person reads them on the status page: the vehicle
// type, the autopilot, and the flight mode (ArduPilot's per vehicle, PX4's main and sub mode).
// Numbers this table does not know are shown as numbers.
#pragma once

#include <cstdint>
#include <string>

namespace mavswitch::dialect {

std::string vehicle_type_name(uint8_t mav_type);
std::string autopilot_name(uint8_t mav_autopilot);
std::string mode_name(uint8_t mav_autopilot, uint8_t mav_type, uint8_t base_mode, uint32_t custom_mode);
inline bool armed(uint8_t base_mode) { return (base_mode & 0x80) != 0; }  // MAV_MODE_FLAG_SAFETY_ARMED

}  // namespace mavswitch::dialect
