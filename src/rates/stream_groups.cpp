#include "rates/stream_groups.hpp"

#include <array>

namespace mavswitch::rates {
namespace {

// MAV_DATA_STREAM_RAW_SENSORS: RAW_IMU, SCALED_IMU2, SCALED_IMU3, SCALED_PRESSURE,
// SCALED_PRESSURE2, SCALED_PRESSURE3.
constexpr std::array<uint32_t, 6> kRawSensors = {27, 116, 129, 29, 137, 143};
// EXTENDED_STATUS: SYS_STATUS, POWER_STATUS, MEMINFO, MISSION_CURRENT, GPS_RAW_INT, GPS_RTK,
// GPS2_RAW, GPS2_RTK, NAV_CONTROLLER_OUTPUT, FENCE_STATUS, POSITION_TARGET_GLOBAL_INT.
constexpr std::array<uint32_t, 11> kExtendedStatus = {1, 125, 152, 42, 24, 127, 124, 128, 62, 162, 87};
// RC_CHANNELS: SERVO_OUTPUT_RAW, RC_CHANNELS, RC_CHANNELS_RAW.
constexpr std::array<uint32_t, 3> kRcChannels = {36, 65, 35};
// RAW_CONTROLLER: nothing on a copter (a rover's SERVO_OUT has no message of its own now).
// POSITION: GLOBAL_POSITION_INT, LOCAL_POSITION_NED.
constexpr std::array<uint32_t, 2> kPosition = {33, 32};
// EXTRA1: ATTITUDE, SIMSTATE, AHRS2, PID_TUNING.
constexpr std::array<uint32_t, 4> kExtra1 = {30, 164, 178, 194};
// EXTRA2: VFR_HUD.
constexpr std::array<uint32_t, 1> kExtra2 = {74};
// EXTRA3: AHRS, SYSTEM_TIME, RANGEFINDER, DISTANCE_SENSOR, BATTERY_STATUS, MAG_CAL_REPORT,
// MAG_CAL_PROGRESS, EKF_STATUS_REPORT, VIBRATION, RPM, ESC_TELEMETRY_1_TO_4.
constexpr std::array<uint32_t, 11> kExtra3 = {163, 2, 173, 132, 147, 192, 191, 193, 241, 226, 11030};

constexpr auto kAll = [] {
  std::array<uint32_t, kRawSensors.size() + kExtendedStatus.size() + kRcChannels.size() + kPosition.size() +
                           kExtra1.size() + kExtra2.size() + kExtra3.size()>
      all{};
  size_t n = 0;
  for (auto group :
       {std::span<const uint32_t>(kRawSensors), std::span<const uint32_t>(kExtendedStatus),
        std::span<const uint32_t>(kRcChannels), std::span<const uint32_t>(kPosition),
        std::span<const uint32_t>(kExtra1), std::span<const uint32_t>(kExtra2), std::span<const uint32_t>(kExtra3)}) {
    for (const uint32_t id : group) all[n++] = id;
  }
  return all;
}();

}  // namespace

std::span<const uint32_t> stream_group(uint8_t stream) noexcept {
  switch (stream) {  // MAV_DATA_STREAM
    case 0: return kAll;
    case 1: return kRawSensors;
    case 2: return kExtendedStatus;
    case 3: return kRcChannels;
    case 6: return kPosition;
    case 10: return kExtra1;
    case 11: return kExtra2;
    case 12: return kExtra3;
    default: return {};
  }
}

}  // namespace mavswitch::rates
