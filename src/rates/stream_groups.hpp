// ArduPilot's REQUEST_DATA_STREAM groups: the messages each MAV_DATA_STREAM stands for, as
// ArduPilot's GCS_MAVLink sends them (its STREAM_*_msgs lists), by MAVLink message id. A
// request for a group is a wish for each of its messages (message_rates.hpp).
#pragma once

#include <cstdint>
#include <span>

namespace mavswitch::rates {

// The messages of MAV_DATA_STREAM `stream` (0: all of them); empty for one ArduPilot has not.
std::span<const uint32_t> stream_group(uint8_t stream) noexcept;

}  // namespace mavswitch::rates
