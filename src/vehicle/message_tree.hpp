// GET /v1/mavlink: the router's component's newest frames (library/newest_frames.hpp), decoded and
// written as mavlink2rest's tree when read, on the window's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "library/newest_frames.hpp"
#include "vehicle/message_json.hpp"

namespace mavswitch::vehicle {

using WallClock = std::chrono::system_clock;

// The router loop's clock read beside the wall's: a slot's times (loop milliseconds) as wall time.
struct WallTimes {
  transport::Millis loop_now = 0;
  WallClock::time_point wall_now;
  static WallTimes now() { return {transport::now_ms(), WallClock::now()}; }
  WallClock::time_point of(transport::Millis t) const { return wall_now - std::chrono::milliseconds(loop_now - t); }
};

// GET /v1/mavlink's tree ({"vehicles":{"1":{"id":1,"components":{...}}}}) of the component's
// newest frames (library/newest_frames.hpp), decoded now, as of `at`.
std::string render_tree(const std::vector<NewestFrames::Slot>& slots, const MessageJson& json, const WallTimes& at);

// ISO-8601 in local time with its offset and nanoseconds, as mavlink2rest writes times:
// "2026-12-04T10:01:02.123456789+00:00".
std::string iso_time(WallClock::time_point t);

}  // namespace mavswitch::vehicle
