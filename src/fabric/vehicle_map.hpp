// A ground router's vehicles (`Vehicles = v1:11, v2:12, boat-*`): which of the fleet's named
// vehicles it takes, and the system id each appears under in its own MAVLink network. Vehicles
// that all say "system 1" at home thus become 11, 12, 13 here (fabric_link.hpp renumbers their
// frames). A name listed with an id gets it; one listed without, the first free id at start;
// a pattern's matches the first free ids as they are first heard. Never more than 255.
//
// One name, one vehicle: the first router heard sending as a name holds it (its origin, the
// reply subject of everything a router publishes); frames another router sends in that name are
// refused, counted and said (an error line and a metric naming both) until the holder is silent
// for VehicleTimeout. A message with no reply subject names no router: it holds no name, and
// is refused. A pattern's vehicle silent that long gives its system id back when ids run short.
// Names heard are held to the configuration's rule for them.
//
// Chose not to build: renumbering a vehicle's other systems (a vehicle is one system here: the
// one its first HEARTBEAT that is not a ground station's names), and patterns as NATS wildcards
// (a pattern's vehicles are found by their heartbeats, then subscribed to one by one).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/log.hpp"
#include "config/config.hpp"

namespace mavswitch::fabric {

class VehicleMap {
 public:
  struct Vehicle {
    std::string name;
    std::string root;           // PREFIX.NAME: where its subjects start
    uint8_t system = 0;         // its id in this router's network
    int own = -1;               // its id in its own network; -1: not heard yet
    bool refused = false;       // signed frames this link has no key to sign again after renumbering
    bool bad_key_said = false;  // its signatures do not match the link's key: said once
    bool by_pattern = false;    // numbered as heard (its id may be reclaimed), not listed
    std::string holder;         // the origin of the router that holds the name ("" : none yet)
    int64_t heard_at = 0;       // when the holder last sent (ms, the loop's clock)
  };
  // A second router sending in a held name: both named, for the log and /metrics.
  struct Conflict {
    std::string vehicle, holder, refused;
    uint64_t frames = 0;
  };
  static constexpr size_t kMaxNames = 1024;    // names a pattern takes, ever (each keeps a subscription)
  static constexpr size_t kMaxConflicts = 64;  // kept for /metrics

  // Whether the router `origin` may send as `v` at `now`: the holder, or the first, or one
  // after the holder was silent `timeout` ms (then it holds the name). A refusal is counted.
  // An empty origin (a message with no reply subject) names no router: always refused.
  bool hold(Vehicle& v, std::string_view origin, int64_t now, int64_t timeout);

  // Numbers the names listed (with their id, or the first free one): they are known at once.
  VehicleMap(const std::string& prefix, const std::vector<config::NatsSettings::VehicleChoice>& choices);

  // The vehicle called `name`. A name a pattern takes is numbered now (`numbered` set), with the
  // first id that is free and not `in_use` here. Null: not one of this router's, or no id left
  // (said once, as an error line).
  // A pattern's vehicle silent for `timeout` ms at `now` gives its id up when none is left.
  // `now` also spaces the lines it says (a few a second): a caller that logs passes its clock.
  Vehicle* find(std::string_view name, const std::function<bool(uint8_t)>& in_use, bool* numbered, int64_t now = 0,
                int64_t timeout = INT64_MAX);

  Vehicle* by_system(uint8_t system) noexcept { return by_system_[system]; }
  bool has_patterns() const noexcept { return !patterns_.empty(); }
  const std::deque<Vehicle>& vehicles() const noexcept { return vehicles_; }
  std::string summary() const;  // "v1=11 v2=12 boat-7=1"

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  Vehicle& add(std::string_view name, uint8_t system);
  int first_free(const std::function<bool(uint8_t)>& in_use) const;
  int reclaim(int64_t now, int64_t timeout);  // a silent pattern vehicle's id, now free; -1: none

  std::string prefix_;
  std::vector<std::string> patterns_;
  std::deque<Vehicle> vehicles_;  // a deque: a Vehicle stays where it is as others are added
  std::unordered_map<std::string, Vehicle*, NameHash, std::equal_to<>> by_name_;
  std::array<Vehicle*, 256> by_system_{};
  std::array<bool, 256> listed_{};  // ids given in Vehicles: never a pattern's
  bool none_left_said_ = false;
  bool bad_name_said_ = false;
  log::Repeats conflict_lines_;      // a conflict said once, then once a minute with its count
  log::Throttle conflict_throttle_;  // and conflicts' lines a few a second at most, in all
  // Names a pattern takes, numbered and freed: a publisher can make them up, so a few a second.
  log::Throttle numbering_lines_;
};

// Every name conflict any fabric link of this process saw (at most VehicleMap::kMaxConflicts),
// as Prometheus text: mavswitch_fleet_name_conflict_frames_total{vehicle, holder, refused}.
// Any thread.
std::string fleet_conflict_metrics();

// The names the fabric gives this process's systems: a ground router's vehicles by the id each
// has here (a pattern's reclaimed id named anew), and a vehicle router's own (Vehicle = NAME,
// the first system it publishes an autopilot's HEARTBEAT from). Shown wherever a system is.
// Any thread.
std::map<uint8_t, std::string> fleet_names();
void name_system(uint8_t system, std::string_view name);

// Whether `name` matches `pattern`, where '*' stands for any run of characters (none too).
bool name_matches(std::string_view pattern, std::string_view name) noexcept;

}  // namespace mavswitch::fabric
