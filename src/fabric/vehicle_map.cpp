#include "fabric/vehicle_map.hpp"

#include <fmt/format.h>

#include "base/log.hpp"

namespace mavswitch::daemon {

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

VehicleMap::VehicleMap(const std::string& prefix, const std::vector<NatsSettings::VehicleChoice>& choices)
    : prefix_(prefix) {
  for (const auto& c : choices) {
    if (c.system != 0) listed_[c.system] = true;
  }
  for (const auto& c : choices) {
    if (c.name.find('*') != std::string::npos) {
      patterns_.push_back(c.name);
    } else if (c.system != 0) {
      add(c.name, c.system);
    }
  }
  for (const auto& c : choices) {  // names without an id: the first free, in the order listed
    if (c.system != 0 || c.name.find('*') != std::string::npos) continue;
    const int id = first_free([](uint8_t) { return false; });
    if (id < 0) {
      log::error("nats: vehicle {}: no system id left (all 255 in use): not taken", c.name);
      continue;
    }
    add(c.name, static_cast<uint8_t>(id));
  }
}

VehicleMap::Vehicle& VehicleMap::add(std::string_view name, uint8_t system) {
  Vehicle& v = vehicles_.emplace_back();
  v.name = std::string(name);
  v.root = prefix_ + "." + v.name;
  v.system = system;
  by_name_.emplace(v.name, &v);
  by_system_[system] = &v;
  log::info("nats: vehicle {} is system {} here", v.name, system);
  return v;
}

int VehicleMap::first_free(const std::function<bool(uint8_t)>& in_use) const {
  for (int id = 1; id <= 255; ++id) {
    const auto s = static_cast<uint8_t>(id);
    if (!listed_[s] && by_system_[s] == nullptr && !in_use(s)) return id;
  }
  return -1;
}

VehicleMap::Vehicle* VehicleMap::find(std::string_view name, const std::function<bool(uint8_t)>& in_use,
                                      bool* numbered) {
  *numbered = false;
  if (const auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  bool matched = false;
  for (const auto& p : patterns_) matched = matched || name_matches(p, name);
  if (!matched) return nullptr;
  const int id = first_free(in_use);
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
  return &add(name, static_cast<uint8_t>(id));
}

std::string VehicleMap::summary() const {
  std::string s;
  for (const Vehicle& v : vehicles_)
    fmt::format_to(std::back_inserter(s), "{}{}={}", s.empty() ? "" : " ", v.name, v.system);
  return s;
}

}  // namespace mavswitch::daemon
