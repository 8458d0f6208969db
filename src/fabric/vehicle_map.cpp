#include "fabric/vehicle_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "base/log.hpp"
#include "config/config_keys.hpp"

namespace mavswitch::fabric {
namespace {

// The process's conflicts, for /metrics (a fabric link's worker adds, the window reads).
std::mutex conflicts_mutex;
std::vector<VehicleMap::Conflict> conflicts;  // under conflicts_mutex

// The names of the process's systems (fleet_names): fabric links' workers write, the window reads.
std::mutex names_mutex;
std::map<uint8_t, std::string> names;  // under names_mutex

// A label value as Prometheus reads it: an origin is a peer's bytes.
std::string label_value(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 128)) {
    if (c == '\\' || c == '"')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// Said for every name numbered: configured ones once at start, a pattern's through a Throttle.
constexpr char kNumbered[] = "nats: vehicle {} is system {} here";

}  // namespace

bool name_matches(std::string_view pattern, std::string_view name) noexcept {
  // Greedy with one backtrack point (the last '*'): linear for names a few dozen long.
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p, ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

VehicleMap::VehicleMap(const std::string& prefix, const std::vector<config::NatsSettings::VehicleChoice>& choices)
    : prefix_(prefix) {
  for (const auto& c : choices) {
    if (c.system != 0) listed_[c.system] = true;
  }
  for (const auto& c : choices) {
    if (c.name.find('*') != std::string::npos) {
      patterns_.push_back(c.name);
    } else if (c.system != 0) {
      log::info(kNumbered, add(c.name, c.system).name, c.system);
    }
  }
  for (const auto& c : choices) {  // names without an id: the first free, in the order listed
    if (c.system != 0 || c.name.find('*') != std::string::npos) continue;
    const int id = first_free([](uint8_t) { return false; });
    if (id < 0) {
      log::error("nats: vehicle {}: no system id left (all 255 in use): not taken", c.name);
      continue;
    }
    log::info(kNumbered, add(c.name, static_cast<uint8_t>(id)).name, id);
  }
}

VehicleMap::Vehicle& VehicleMap::add(std::string_view name, uint8_t system) {
  Vehicle& v = vehicles_.emplace_back();
  v.name = std::string(name);
  v.root = prefix_ + "." + v.name;
  v.system = system;
  by_name_.emplace(v.name, &v);
  by_system_[system] = &v;
  name_system(system, v.name);
  return v;
}

int VehicleMap::first_free(const std::function<bool(uint8_t)>& in_use) const {
  for (int id = 1; id <= 255; ++id) {
    const auto s = static_cast<uint8_t>(id);
    if (!listed_[s] && by_system_[s] == nullptr && !in_use(s)) return id;
  }
  return -1;
}

VehicleMap::Vehicle* VehicleMap::find(std::string_view name, const std::function<bool(uint8_t)>& in_use, bool* numbered,
                                      int64_t now, int64_t timeout) {
  *numbered = false;
  Vehicle* known = nullptr;
  if (const auto it = by_name_.find(name); it != by_name_.end()) {
    known = it->second;
    if (known->system != 0) return known;  // else its id was reclaimed: it gets one again below
  } else {
    bool matched = false;
    for (const auto& p : patterns_) matched = matched || name_matches(p, name);
    if (!matched) return nullptr;
    // A name from the fabric is a peer's bytes: held to the rule a configured name follows.
    if (!config::keys::vehicle_name_error(name, false).empty() || by_name_.size() >= kMaxNames) {
      if (!bad_name_said_) {
        log::error("nats: a vehicle named {} is not taken: {}", name,
                   by_name_.size() >= kMaxNames ? "a router takes at most 1,024 names"
                                                : config::keys::vehicle_name_error(name, false));
        bad_name_said_ = true;
      }
      return nullptr;
    }
  }
  int id = first_free(in_use);
  if (id < 0) id = reclaim(now, timeout);
  if (id < 0) {
    if (!none_left_said_) {
      log::error(
          "nats: vehicle {} matches Vehicles but no system id is left (255 in use): not taken, nor any other "
          "from now on (counted as unmapped)",
          name);
      none_left_said_ = true;
    }
    return nullptr;
  }
  *numbered = true;
  Vehicle* v = known;
  if (v != nullptr) {
    v->system = static_cast<uint8_t>(id);
    by_system_[v->system] = v;
    name_system(v->system, v->name);
  } else {
    v = &add(name, static_cast<uint8_t>(id));
    v->by_pattern = true;
  }
  numbering_lines_.line_at(now, log::Level::kInfo, kNumbered, v->name, id);
  return v;
}

int VehicleMap::reclaim(int64_t now, int64_t timeout) {
  for (Vehicle& v : vehicles_) {
    if (!v.by_pattern || v.system == 0 || now - v.heard_at < timeout) continue;
    const int id = v.system;
    numbering_lines_.line_at(now, log::Level::kInfo, "nats: vehicle {} silent {} s: system {} is free for another",
                             v.name, (now - v.heard_at) / 1000, id);
    by_system_[v.system] = nullptr;
    v.system = 0;
    v.own = -1;
    return id;
  }
  return -1;
}

bool VehicleMap::hold(Vehicle& v, std::string_view origin, int64_t now, int64_t timeout) {
  // Lines a publisher causes: each once a minute, and at most a few a second in all, however
  // many origins it makes up.
  const auto say = [&](const std::string& cause, const std::string& line) {
    conflict_lines_.say_at(log::Level::kError, cause, line, now, &conflict_throttle_);
  };
  if (origin.empty()) {  // no reply subject: no router said it, so none can hold the name by it
    say(v.name, fmt::format("nats: vehicle {}: a message with no reply subject (not a router's) is refused", v.name));
    return false;
  }
  if (v.holder == origin || v.heard_at == 0 || now - v.heard_at >= timeout) {
    if (v.heard_at != 0 && v.holder != origin)
      conflict_throttle_.line_at(now, log::Level::kWarning,
                                 "nats: vehicle {}: router {} silent {} s: the name passes to router {}", v.name,
                                 v.holder, (now - v.heard_at) / 1000, origin);
    v.holder = std::string(origin);
    v.heard_at = now;
    return true;
  }
  {
    std::lock_guard lock(conflicts_mutex);
    auto it = std::find_if(conflicts.begin(), conflicts.end(), [&](const Conflict& c) {
      return c.vehicle == v.name && c.holder == v.holder && c.refused == origin;
    });
    if (it == conflicts.end() && conflicts.size() < kMaxConflicts) {
      conflicts.push_back({v.name, v.holder, std::string(origin), 0});
      it = conflicts.end() - 1;
    }
    if (it != conflicts.end()) ++it->frames;
  }
  say(v.name + " " + std::string(origin),
      fmt::format("nats: vehicle {}: router {} sends as {} while router {} holds the name: its frames "
                  "are refused until {} is silent {} s (two routers configured with one Vehicle name?)",
                  v.name, origin, v.name, v.holder, v.holder, timeout / 1000));
  return false;
}

void name_system(uint8_t system, std::string_view name) {
  std::lock_guard lock(names_mutex);
  names[system] = std::string(name);
}

std::map<uint8_t, std::string> fleet_names() {
  std::lock_guard lock(names_mutex);
  return names;
}

std::string fleet_conflict_metrics() {
  std::lock_guard lock(conflicts_mutex);
  if (conflicts.empty()) return "";
  std::string text =
      "# HELP mavswitch_fleet_name_conflict_frames_total Frames refused from a second router sending in a vehicle "
      "name another holds.\n# TYPE mavswitch_fleet_name_conflict_frames_total counter\n";
  for (const auto& c : conflicts)
    fmt::format_to(std::back_inserter(text),
                   "mavswitch_fleet_name_conflict_frames_total{{vehicle=\"{}\",holder=\"{}\",refused=\"{}\"}} {}\n",
                   label_value(c.vehicle), label_value(c.holder), label_value(c.refused), c.frames);
  return text;
}

std::string VehicleMap::summary() const {
  std::string s;
  for (const Vehicle& v : vehicles_)
    fmt::format_to(std::back_inserter(s), "{}{}={}", s.empty() ? "" : " ", v.name, v.system);
  return s;
}

}  // namespace mavswitch::fabric
