// Mission lists as files: QGroundControl's .plan (JSON: mission, geoFence, rallyPoints) and the
// "QGC WPL 110" text Mission Planner and QGroundControl both read. A .plan is written as
// QGroundControl writes one: each mission item a SimpleItem with its command, frame and params
// [param1..4, lat, lon, alt] (NaN as null); fence items as polygons (vertex items grouped by the
// count in their param1), circles and the breach return point; rally items as points. For an
// ArduPilot vehicle, whose item 0 is home, that item is `plannedHomePosition`, not an item
// (and is put back as item 0 for an upload). WPL is the list as the vehicle holds it.
//
// Chose not to build: QGroundControl's complex items (surveys, corridor scans: a .plan with one
// is refused, naming it; QGroundControl turns them into simple items when it uploads them).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/mission_exchange.hpp"

namespace mavswitch::services {

struct Plan {
  std::optional<std::vector<MissionItem>> mission, fence, rally;  // the ones the file has
  std::optional<std::array<double, 3>> home;                      // lat, lon, alt (plannedHomePosition)
};

// What the vehicle is, for the .plan's own fields: MAV_AUTOPILOT and MAV_TYPE.
struct PlanVehicle {
  uint8_t autopilot = 0, type = 0;
  bool home_first() const noexcept { return autopilot == 3; }  // MAV_AUTOPILOT_ARDUPILOTMEGA
};

// The .plan of the lists read (a list not read is written empty).
std::string plan_json(const Plan& plan, const PlanVehicle& vehicle);
// The lists a .plan holds, as the vehicle would hold them (home first for ArduPilot); nothing,
// with *error naming what is wrong, for a file that is not one.
std::optional<Plan> parse_plan(std::string_view text, const PlanVehicle& vehicle, std::string* error);

std::string wpl_text(const std::vector<MissionItem>& items);
std::optional<std::vector<MissionItem>> parse_wpl(std::string_view text, std::string* error);

}  // namespace mavswitch::services
