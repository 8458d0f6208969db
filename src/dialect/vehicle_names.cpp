#include "dialect/vehicle_names.hpp"

#include <map>

namespace mavswitch::dialect {
namespace {

using Names = std::map<uint32_t, const char*>;

std::string named(const Names& names, uint32_t v, const char* what) {
  const auto it = names.find(v);
  return it != names.end() ? it->second : std::string(what) + " " + std::to_string(v);
}

// MAV_TYPE values (common.xml / minimal.xml).
const Names kTypes = {{0, "generic"},
                      {1, "fixed wing"},
                      {2, "quadrotor"},
                      {3, "coaxial"},
                      {4, "helicopter"},
                      {5, "antenna tracker"},
                      {6, "ground station"},
                      {7, "airship"},
                      {8, "balloon"},
                      {9, "rocket"},
                      {10, "ground rover"},
                      {11, "surface boat"},
                      {12, "submarine"},
                      {13, "hexarotor"},
                      {14, "octorotor"},
                      {15, "tricopter"},
                      {16, "flapping wing"},
                      {17, "kite"},
                      {18, "onboard controller"},
                      {19, "VTOL tailsitter"},
                      {20, "VTOL tailsitter"},
                      {21, "VTOL tiltrotor"},
                      {22, "VTOL fixed rotor"},
                      {23, "VTOL tailsitter"},
                      {24, "VTOL tiltwing"},
                      {26, "gimbal"},
                      {27, "ADS-B"},
                      {28, "parafoil"},
                      {29, "dodecarotor"},
                      {30, "camera"},
                      {31, "charging station"},
                      {32, "FLARM"},
                      {33, "servo"},
                      {34, "Open Drone ID"},
                      {35, "decarotor"},
                      {36, "battery"},
                      {37, "parachute"},
                      {38, "log"},
                      {39, "OSD"},
                      {40, "IMU"},
                      {41, "GPS"},
                      {42, "winch"}};

const Names kAutopilots = {{0, "generic"}, {3, "ArduPilot"}, {4, "OpenPilot"},  {8, "none"},
                           {12, "PX4"},    {14, "INAV"},     {18, "Betaflight"}};

// ArduPilot's custom_mode, by firmware.
const Names kCopter = {
    {0, "STABILIZE"}, {1, "ACRO"},        {2, "ALT_HOLD"},      {3, "AUTO"},        {4, "GUIDED"},
    {5, "LOITER"},    {6, "RTL"},         {7, "CIRCLE"},        {9, "LAND"},        {11, "DRIFT"},
    {13, "SPORT"},    {14, "FLIP"},       {15, "AUTOTUNE"},     {16, "POSHOLD"},    {17, "BRAKE"},
    {18, "THROW"},    {19, "AVOID_ADSB"}, {20, "GUIDED_NOGPS"}, {21, "SMART_RTL"},  {22, "FLOWHOLD"},
    {23, "FOLLOW"},   {24, "ZIGZAG"},     {25, "SYSTEMID"},     {26, "AUTOROTATE"}, {27, "AUTO_RTL"}};
const Names kPlane = {{0, "MANUAL"},      {1, "CIRCLE"},  {2, "STABILIZE"}, {3, "TRAINING"},         {4, "ACRO"},
                      {5, "FBWA"},        {6, "FBWB"},    {7, "CRUISE"},    {8, "AUTOTUNE"},         {10, "AUTO"},
                      {11, "RTL"},        {12, "LOITER"}, {13, "TAKEOFF"},  {14, "AVOID_ADSB"},      {15, "GUIDED"},
                      {17, "QSTABILIZE"}, {18, "QHOVER"}, {19, "QLOITER"},  {20, "QLAND"},           {21, "QRTL"},
                      {22, "QAUTOTUNE"},  {23, "QACRO"},  {24, "THERMAL"},  {25, "LOITER_ALT_QLAND"}};
const Names kRover = {{0, "MANUAL"}, {1, "ACRO"},  {3, "STEERING"}, {4, "HOLD"},       {5, "LOITER"}, {6, "FOLLOW"},
                      {7, "SIMPLE"}, {10, "AUTO"}, {11, "RTL"},     {12, "SMART_RTL"}, {15, "GUIDED"}};
const Names kSub = {{0, "STABILIZE"}, {1, "ACRO"},    {2, "ALT_HOLD"}, {3, "AUTO"},   {4, "GUIDED"},
                    {7, "CIRCLE"},    {9, "SURFACE"}, {16, "POSHOLD"}, {19, "MANUAL"}};

// PX4: the main mode in bits 16-23 of custom_mode, an AUTO sub mode in bits 24-31.
const Names kPx4Main = {{1, "MANUAL"}, {2, "ALTCTL"},   {3, "POSCTL"},     {4, "AUTO"},
                        {5, "ACRO"},   {6, "OFFBOARD"}, {7, "STABILIZED"}, {8, "RATTITUDE"}};
const Names kPx4Auto = {{1, "READY"}, {2, "TAKEOFF"}, {3, "LOITER"},        {4, "MISSION"},
                        {5, "RTL"},   {6, "LAND"},    {8, "FOLLOW_TARGET"}, {9, "PRECLAND"}};

const Names* ardupilot_modes(uint8_t type) {
  switch (type) {
    case 1:
    case 19:
    case 20:
    case 21:
    case 22:
    case 23:
    case 24: return &kPlane;
    case 10:
    case 11: return &kRover;
    case 12: return &kSub;
    case 2:
    case 3:
    case 4:
    case 13:
    case 14:
    case 15:
    case 29:
    case 35: return &kCopter;
    default: return nullptr;
  }
}

}  // namespace

std::string vehicle_type_name(uint8_t mav_type) { return named(kTypes, mav_type, "type"); }
std::string autopilot_name(uint8_t mav_autopilot) { return named(kAutopilots, mav_autopilot, "autopilot"); }

std::string mode_name(uint8_t mav_autopilot, uint8_t mav_type, uint8_t base_mode, uint32_t custom_mode) {
  constexpr uint8_t kCustomModeEnabled = 1;  // MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
  if ((base_mode & kCustomModeEnabled) == 0) return "base mode " + std::to_string(base_mode);
  if (mav_autopilot == 3) {
    if (const Names* modes = ardupilot_modes(mav_type)) return named(*modes, custom_mode, "mode");
  }
  if (mav_autopilot == 12) {
    const uint32_t main = (custom_mode >> 16) & 0xFF, sub = (custom_mode >> 24) & 0xFF;
    std::string name = named(kPx4Main, main, "mode");
    if (main == 4 && sub != 0) name += " " + named(kPx4Auto, sub, "sub mode");
    return name;
  }
  return "mode " + std::to_string(custom_mode);
}

}  // namespace mavswitch::dialect
