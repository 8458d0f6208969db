#include "window/vehicle_watch.hpp"

#include <fmt/format.h>

#include <chrono>

#include "fabric/vehicle_map.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/statustext.hpp"
#include "mavswitch/msg/sys_status.hpp"
#include "window/history.hpp"

namespace mavswitch::window {
namespace {

constexpr uint8_t kAutopilotComponent = 1;  // MAV_COMP_ID_AUTOPILOT1
constexpr uint8_t kAutopilotInvalid = 8;    // MAV_AUTOPILOT_INVALID: ground stations, peripherals
constexpr uint8_t kArmed = 128;             // MAV_MODE_FLAG_SAFETY_ARMED

}  // namespace

VehicleWatch::VehicleWatch(Router& router, Component& component) : router_(router) {
  subscriptions_.push_back(
      component.subscribe<msg::Heartbeat>([this](const msg::Heartbeat& hb, const protocol::FrameView& f) {
        const routing::Millis now = router_.event_loop().now();
        Heartbeat& said = heartbeats_[static_cast<uint16_t>(f.sysid() << 8 | f.compid())];
        // Armed since: the first armed HEARTBEAT after a disarmed one (or the first heard).
        const routing::Millis armed_at = (hb.base_mode & kArmed) == 0 ? 0 : said.armed_at != 0 ? said.armed_at : now;
        said = {hb.custom_mode, hb.type, hb.autopilot, hb.base_mode, hb.system_status, now, armed_at};
        if (f.compid() != kAutopilotComponent || hb.autopilot == kAutopilotInvalid) return;
        Vehicle& v = vehicles_[f.sysid()];
        v.heard = router_.event_loop().now();
        v.armed = (hb.base_mode & kArmed) != 0;
      }));
  subscriptions_.push_back(
      component.subscribe<msg::SysStatus>([this](const msg::SysStatus& s, const protocol::FrameView& f) {
        if (f.compid() == kAutopilotComponent) vehicles_[f.sysid()].battery = s.battery_remaining;
      }));
  subscriptions_.push_back(
      component.subscribe<msg::Statustext>([this](const msg::Statustext& m, const protocol::FrameView& f) {
        status_texts_.add(f.sysid(), f.compid(), m, unix_now_ms());
      }));
}

std::vector<std::pair<uint8_t, std::deque<StatusTextHistory::Line>>> VehicleWatch::status_texts() const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleWatch::status_texts");
  std::vector<std::pair<uint8_t, std::deque<StatusTextHistory::Line>>> all;
  for (unsigned sys = 0; sys < 256; ++sys) {
    if (!status_texts_.lines(uint8_t(sys)).empty()) all.emplace_back(uint8_t(sys), status_texts_.lines(uint8_t(sys)));
  }
  return all;
}

std::map<uint16_t, VehicleWatch::Heartbeat> VehicleWatch::heartbeats() const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleWatch::heartbeats");
  return heartbeats_;
}

std::string VehicleWatch::metrics(routing::Millis now) const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleWatch::metrics");
  std::string heard, armed, battery;
  const std::map<uint8_t, std::string> names = fabric::fleet_names();  // checked names: letters, digits, '-', '_'
  for (unsigned sys = 0; sys < vehicles_.size(); ++sys) {
    const Vehicle& v = vehicles_[sys];
    if (v.heard == 0) continue;
    const auto named = names.find(uint8_t(sys));
    const std::string labels = named != names.end() && !named->second.empty()
                                   ? fmt::format("system=\"{}\",vehicle=\"{}\"", sys, named->second)
                                   : fmt::format("system=\"{}\"", sys);
    heard += fmt::format("mavswitch_vehicle_last_heard_seconds{{{}}} {:.3f}\n", labels,
                         double(std::max<routing::Millis>(0, now - v.heard)) / 1000);
    armed += fmt::format("mavswitch_vehicle_armed{{{}}} {}\n", labels, v.armed ? 1 : 0);
    if (v.battery >= 0)
      battery += fmt::format("mavswitch_vehicle_battery_remaining_percent{{{}}} {}\n", labels, v.battery);
  }
  return "# HELP mavswitch_vehicle_last_heard_seconds Seconds since the vehicle's last HEARTBEAT.\n"
         "# TYPE mavswitch_vehicle_last_heard_seconds gauge\n" +
         heard +
         "# HELP mavswitch_vehicle_armed Whether the vehicle's last HEARTBEAT said armed (1) or not (0).\n"
         "# TYPE mavswitch_vehicle_armed gauge\n" +
         armed +
         "# HELP mavswitch_vehicle_battery_remaining_percent The vehicle's battery remaining, from SYS_STATUS.\n"
         "# TYPE mavswitch_vehicle_battery_remaining_percent gauge\n" +
         battery;
}

}  // namespace mavswitch::window
