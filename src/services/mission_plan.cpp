#include "services/mission_plan.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_text.hpp"

namespace mavswitch::services {
namespace {

using Json = nlohmann::ordered_json;

constexpr uint16_t kWaypoint = 16, kFenceReturn = 5000, kPolygonInclusion = 5001, kPolygonExclusion = 5002,
                   kCircleInclusion = 5003, kCircleExclusion = 5004, kRallyPoint = 5100;
constexpr size_t kMaxItems = 65535;  // MISSION_COUNT's count is 16 bits

double scale_of(uint8_t frame) {
  switch (frame_scale(frame)) {
    case FrameScale::kGlobal: return 1e7;
    case FrameScale::kLocal: return 1e4;
    case FrameScale::kNone: return 1;
  }
  return 1;
}
double unscaled(int32_t v, uint8_t frame) { return double(v) / scale_of(frame); }
int32_t scaled(double v, uint8_t frame) {
  const double s = std::round(v * scale_of(frame));
  return std::isfinite(s) ? static_cast<int32_t>(std::clamp(s, -2147483648.0, 2147483647.0)) : 0;
}
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }  // NaN as QGroundControl writes it

Json simple_item(const MissionItem& i, size_t index) {
  Json params = Json::array();
  for (const float p : i.params) params.push_back(number(p));
  params.push_back(number(unscaled(i.x, i.frame)));
  params.push_back(number(unscaled(i.y, i.frame)));
  params.push_back(number(i.z));
  return {{"autoContinue", i.autocontinue}, {"command", i.command}, {"doJumpId", index + 1}, {"frame", i.frame},
          {"params", std::move(params)},    {"type", "SimpleItem"}};
}

Json lat_lon(const MissionItem& i) { return Json::array({unscaled(i.x, i.frame), unscaled(i.y, i.frame)}); }

Json fence_json(const std::vector<MissionItem>& items) {
  Json polygons = Json::array(), circles = Json::array(), fence = Json::object();
  for (size_t k = 0; k < items.size();) {
    const MissionItem& i = items[k];
    if (i.command == kPolygonInclusion || i.command == kPolygonExclusion) {
      const size_t n = std::max<size_t>(1, static_cast<size_t>(std::max(0.f, i.params[0])));
      Json vertices = Json::array();
      for (size_t v = 0; v < n && k < items.size() && items[k].command == i.command; ++v, ++k)
        vertices.push_back(lat_lon(items[k]));
      polygons.push_back(
          {{"inclusion", i.command == kPolygonInclusion}, {"polygon", std::move(vertices)}, {"version", 1}});
      continue;
    }
    if (i.command == kCircleInclusion || i.command == kCircleExclusion)
      circles.push_back({{"circle", {{"center", lat_lon(i)}, {"radius", i.params[0]}}},
                         {"inclusion", i.command == kCircleInclusion},
                         {"version", 1}});
    if (i.command == kFenceReturn)
      fence["breachReturn"] = Json::array({unscaled(i.x, i.frame), unscaled(i.y, i.frame), i.z});
    ++k;
  }
  fence["circles"] = std::move(circles);
  fence["polygons"] = std::move(polygons);
  fence["version"] = 2;
  return fence;
}

// Reads a JSON number (null: NaN).
bool read_number(const Json& j, double* out) {
  if (j.is_null()) return *out = NAN, true;
  if (!j.is_number()) return false;
  *out = j.get<double>();
  return true;
}

bool read_point(const Json& j, size_t at_least, std::array<double, 3>* out) {
  if (!j.is_array() || j.size() < at_least || j.size() > 3) return false;
  *out = {0, 0, 0};
  for (size_t k = 0; k < j.size(); ++k)
    if (!j[k].is_number())
      return false;
    else
      (*out)[k] = j[k].get<double>();
  return true;
}

MissionItem global_item(uint16_t command, const std::array<double, 3>& p, uint8_t frame, float param1 = 0) {
  MissionItem i;
  i.command = command, i.frame = frame;
  i.params = {param1, 0, 0, 0};
  i.x = scaled(p[0], frame), i.y = scaled(p[1], frame), i.z = static_cast<float>(p[2]);
  return i;
}

std::optional<std::vector<MissionItem>> mission_items(const Json& mission, std::string* error) {
  const auto items = mission.find("items");
  if (items == mission.end() || !items->is_array()) return *error = "mission.items: an array", std::nullopt;
  std::vector<MissionItem> out;
  for (size_t k = 0; k < items->size(); ++k) {
    const Json& j = (*items)[k];
    const std::string where = fmt::format("mission.items[{}]", k);
    if (!j.is_object()) return *error = where + ": an object", std::nullopt;
    const std::string type = j.value("type", "");
    if (type != "SimpleItem")
      return *error = where + ": a " + (type.empty() ? std::string("item without a type") : type) +
                      "; only SimpleItem is uploaded (QGroundControl turns complex items into simple ones)",
             std::nullopt;
    MissionItem i;
    const auto command = j.find("command"), frame = j.find("frame"), params = j.find("params");
    if (command == j.end() || !command->is_number_unsigned() || command->get<uint64_t>() > 0xFFFF)
      return *error = where + ".command: a MAV_CMD number", std::nullopt;
    if (frame == j.end() || !frame->is_number_unsigned() || frame->get<uint64_t>() > 0xFF)
      return *error = where + ".frame: a MAV_FRAME number", std::nullopt;
    if (params == j.end() || !params->is_array() || params->size() != 7)
      return *error = where + ".params: seven numbers (or null)", std::nullopt;
    i.command = command->get<uint16_t>(), i.frame = frame->get<uint8_t>();
    i.autocontinue = j.value("autoContinue", true);
    std::array<double, 7> p{};
    for (size_t n = 0; n < 7; ++n)
      if (!read_number((*params)[n], &p[n])) return *error = where + ".params: seven numbers (or null)", std::nullopt;
    for (size_t n = 0; n < 4; ++n) i.params[n] = static_cast<float>(p[n]);
    i.x = std::isfinite(p[4]) ? scaled(p[4], i.frame) : 0;
    i.y = std::isfinite(p[5]) ? scaled(p[5], i.frame) : 0;
    i.z = static_cast<float>(p[6]);
    out.push_back(i);
  }
  return out;
}

std::optional<std::vector<MissionItem>> fence_items(const Json& fence, std::string* error) {
  std::vector<MissionItem> out;
  constexpr uint8_t kGlobal = 0;  // MAV_FRAME_GLOBAL: QGroundControl's frame for fence items
  if (const auto polygons = fence.find("polygons"); polygons != fence.end()) {
    if (!polygons->is_array()) return *error = "geoFence.polygons: an array", std::nullopt;
    for (const Json& p : *polygons) {
      const auto vertices = p.find("polygon");
      if (!p.is_object() || vertices == p.end() || !vertices->is_array() || vertices->size() < 3)
        return *error = "geoFence.polygons: each {\"polygon\": [[lat, lon], ...] (three or more), \"inclusion\"}",
               std::nullopt;
      const uint16_t command = p.value("inclusion", true) ? kPolygonInclusion : kPolygonExclusion;
      for (const Json& v : *vertices) {
        std::array<double, 3> at{};
        if (!read_point(v, 2, &at)) return *error = "geoFence.polygons: a vertex is [lat, lon]", std::nullopt;
        out.push_back(global_item(command, at, kGlobal, static_cast<float>(vertices->size())));
      }
    }
  }
  if (const auto circles = fence.find("circles"); circles != fence.end()) {
    if (!circles->is_array()) return *error = "geoFence.circles: an array", std::nullopt;
    for (const Json& c : *circles) {
      std::array<double, 3> center{};
      const Json* circle = c.is_object() && c.contains("circle") ? &c["circle"] : nullptr;
      if (circle == nullptr || !circle->is_object() || !read_point(circle->value("center", Json()), 2, &center) ||
          !circle->value("radius", Json()).is_number())
        return *error = "geoFence.circles: each {\"circle\": {\"center\": [lat, lon], \"radius\": m}, \"inclusion\"}",
               std::nullopt;
      out.push_back(global_item(c.value("inclusion", true) ? kCircleInclusion : kCircleExclusion, center, kGlobal,
                                (*circle)["radius"].get<float>()));
    }
  }
  if (const auto ret = fence.find("breachReturn"); ret != fence.end() && !ret->is_null()) {
    std::array<double, 3> at{};
    if (!read_point(*ret, 2, &at)) return *error = "geoFence.breachReturn: [lat, lon, alt]", std::nullopt;
    out.push_back(global_item(kFenceReturn, at, kGlobal));
  }
  return out;
}

std::optional<std::vector<MissionItem>> rally_items(const Json& rally, std::string* error) {
  std::vector<MissionItem> out;
  const auto points = rally.find("points");
  if (points == rally.end()) return out;
  if (!points->is_array()) return *error = "rallyPoints.points: an array", std::nullopt;
  for (const Json& p : *points) {
    std::array<double, 3> at{};
    if (!read_point(p, 3, &at)) return *error = "rallyPoints.points: each [lat, lon, alt]", std::nullopt;
    out.push_back(global_item(kRallyPoint, at, 3));  // MAV_FRAME_GLOBAL_RELATIVE_ALT
  }
  return out;
}

}  // namespace

std::string plan_json(const Plan& plan, const PlanVehicle& vehicle) {
  Json items = Json::array();
  std::vector<MissionItem> mission = plan.mission.value_or(std::vector<MissionItem>{});
  Json home = Json::array({0, 0, 0});
  if (plan.home) home = Json::array({(*plan.home)[0], (*plan.home)[1], (*plan.home)[2]});
  if (vehicle.home_first() && !mission.empty()) {
    const MissionItem& h = mission.front();
    home = Json::array({unscaled(h.x, h.frame), unscaled(h.y, h.frame), h.z});
    mission.erase(mission.begin());
  }
  for (size_t k = 0; k < mission.size(); ++k) items.push_back(simple_item(mission[k], k));
  Json rally = Json::array();
  for (const MissionItem& i : plan.rally.value_or(std::vector<MissionItem>{}))
    rally.push_back(Json::array({unscaled(i.x, i.frame), unscaled(i.y, i.frame), i.z}));
  // cruiseSpeed and hoverSpeed are QGroundControl's planning speeds, which it needs to open a
  // .plan: the vehicle does not say them, so its defaults are written.
  const Json j = {{"fileType", "Plan"},
                  {"geoFence", fence_json(plan.fence.value_or(std::vector<MissionItem>{}))},
                  {"groundStation", "mavswitch"},
                  {"mission",
                   {{"cruiseSpeed", 15},
                    {"firmwareType", vehicle.autopilot},
                    {"hoverSpeed", 5},
                    {"items", std::move(items)},
                    {"plannedHomePosition", std::move(home)},
                    {"vehicleType", vehicle.type},
                    {"version", 2}}},
                  {"rallyPoints", {{"points", std::move(rally)}, {"version", 2}}},
                  {"version", 1}};
  return json_text(j, 4);
}

std::optional<Plan> parse_plan(std::string_view text, const PlanVehicle& vehicle, std::string* error) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return *error = "not JSON: a .plan is a JSON object", std::nullopt;
  if (j.value("fileType", "") != "Plan") return *error = "\"fileType\": \"Plan\" missing: not a .plan", std::nullopt;
  Plan plan;
  if (const auto m = j.find("mission"); m != j.end()) {
    if (!m->is_object()) return *error = "mission: an object", std::nullopt;
    plan.mission = mission_items(*m, error);
    if (!plan.mission) return std::nullopt;
    std::array<double, 3> home{};
    if (const auto h = m->find("plannedHomePosition"); h != m->end() && read_point(*h, 3, &home)) plan.home = home;
    if (vehicle.home_first()) {  // ArduPilot's item 0: home
      MissionItem h = global_item(kWaypoint, plan.home.value_or(std::array<double, 3>{0, 0, 0}), 0);
      plan.mission->insert(plan.mission->begin(), h);
    }
  }
  if (const auto f = j.find("geoFence"); f != j.end()) {
    if (!f->is_object()) return *error = "geoFence: an object", std::nullopt;
    plan.fence = fence_items(*f, error);
    if (!plan.fence) return std::nullopt;
  }
  if (const auto r = j.find("rallyPoints"); r != j.end()) {
    if (!r->is_object()) return *error = "rallyPoints: an object", std::nullopt;
    plan.rally = rally_items(*r, error);
    if (!plan.rally) return std::nullopt;
  }
  for (const auto* list : {&plan.mission, &plan.fence, &plan.rally})
    if (*list && (*list)->size() > kMaxItems) return *error = "more than 65,535 items in a list", std::nullopt;
  return plan;
}

std::string wpl_text(const std::vector<MissionItem>& items) {
  std::string out = "QGC WPL 110\n";
  for (size_t k = 0; k < items.size(); ++k) {
    const MissionItem& i = items[k];
    fmt::format_to(std::back_inserter(out),
                   "{}\t{}\t{}\t{}\t{:.8g}\t{:.8g}\t{:.8g}\t{:.8g}\t{:.8f}\t{:.8f}\t{:.6f}\t{}\n", k, i.current ? 1 : 0,
                   i.frame, i.command, i.params[0], i.params[1], i.params[2], i.params[3], unscaled(i.x, i.frame),
                   unscaled(i.y, i.frame), i.z, i.autocontinue ? 1 : 0);
  }
  return out;
}

std::optional<std::vector<MissionItem>> parse_wpl(std::string_view text, std::string* error) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line) || line.rfind("QGC WPL 110", 0) != 0)
    return *error = "the first line is not \"QGC WPL 110\"", std::nullopt;
  std::vector<MissionItem> items;
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::istringstream fields(line);
    double f[12];
    size_t n = 0;
    for (std::string field; n < 12 && fields >> field; ++n) {
      const char* end = field.data() + field.size();
      if (std::from_chars(field.data(), end, f[n]).ptr != end) n = 99;
    }
    std::string extra;
    if (n != 12 || (fields >> extra))
      return *error = fmt::format("line {}: twelve numbers, tab-separated", number), std::nullopt;
    if (f[0] != double(items.size()))
      return *error = fmt::format("line {}: index {} where {} was next", number, f[0], items.size()), std::nullopt;
    if (f[2] < 0 || f[2] > 255 || f[3] < 0 || f[3] > 65535)
      return *error = fmt::format("line {}: a frame (0-255) and a command (0-65535)", number), std::nullopt;
    MissionItem i;
    i.current = f[1] != 0;
    i.frame = static_cast<uint8_t>(f[2]);
    i.command = static_cast<uint16_t>(f[3]);
    for (size_t p = 0; p < 4; ++p) i.params[p] = static_cast<float>(f[4 + p]);
    i.x = scaled(f[8], i.frame), i.y = scaled(f[9], i.frame), i.z = static_cast<float>(f[10]);
    i.autocontinue = f[11] != 0;
    items.push_back(i);
    if (items.size() > kMaxItems) return *error = "more than 65,535 items", std::nullopt;
  }
  return items;
}

}  // namespace mavswitch::services
