#include "vehicle/vehicle_parameters.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/param_request_list.hpp"
#include "mavswitch/msg/param_request_read.hpp"
#include "mavswitch/msg/param_set.hpp"
#include "mavswitch/msg/param_value.hpp"

namespace mavswitch::vehicle {
namespace {

constexpr uint8_t kAutopilotPx4 = 12;      // MAV_AUTOPILOT_PX4
constexpr uint8_t kAutopilotInvalid = 8;   // MAV_AUTOPILOT_INVALID: not a flight controller
constexpr uint8_t kReal32 = 9;             // MAV_PARAM_TYPE_REAL32
constexpr routing::Millis kCheckMs = 250;  // how often a fetch looks whether the list went quiet

uint16_t key_of(uint8_t system, uint8_t component) { return uint16_t(system << 8 | component); }

bool is_integer(uint8_t type) { return type >= 1 && type <= 8; }

void copy_name(const std::string& name, std::array<char, 16>& out) {
  out.fill(0);
  std::memcpy(out.data(), name.data(), std::min(name.size(), out.size()));
}

}  // namespace

VehicleParameters::VehicleParameters(Router& router, Component& component) : router_(router), component_(component) {
  subscriptions_.push_back(component_.subscribe<msg::ParamValue>(
      [this](const msg::ParamValue& v, const protocol::FrameView& f) {
        value(f, std::string(v.param_id.data(), strnlen(v.param_id.data(), v.param_id.size())), v.param_value,
              v.param_type, v.param_count, v.param_index);
      },
      {.from_home = true}));
  subscriptions_.push_back(component_.subscribe<msg::Heartbeat>(
      [this](const msg::Heartbeat& hb, const protocol::FrameView& f) {
        if (hb.autopilot != kAutopilotInvalid) bytewise_[f.sysid()] = hb.autopilot == kAutopilotPx4;
      },
      {.source_component = 1}));
}

VehicleParameters::~VehicleParameters() {
  router_.run_on_loop([&] {
    subscriptions_.clear();
    for (auto& [key, s] : states_) {
      router_.event_loop().cancel(s.timer);
      for (Access& a : s.accesses) router_.event_loop().cancel(a.timer);
    }
    states_.clear();
  });
}

VehicleParameters::State* VehicleParameters::state(uint8_t system, uint8_t component) {
  const uint16_t key = key_of(system, component);
  if (!states_.contains(key) && states_.size() == kMaxComponents) return nullptr;
  return &states_[key];
}

float VehicleParameters::to_wire(uint8_t system, double value, uint8_t type) const {
  if (!bytewise_[system] || !is_integer(type)) return static_cast<float>(value);
  // Bytewise: the integer's bytes in the float's (little-endian, the low ones).
  float wire = 0;
  const int64_t integer = std::llround(value);
  std::memcpy(&wire, &integer, sizeof wire);
  return wire;
}

double VehicleParameters::from_wire(uint8_t system, float wire, uint8_t type) const {
  if (!is_integer(type)) return wire;
  if (!bytewise_[system]) return std::round(double(wire));
  uint32_t bits = 0;
  std::memcpy(&bits, &wire, sizeof bits);
  switch (type) {
    case 1: return uint8_t(bits);
    case 2: return int8_t(uint8_t(bits));
    case 3: return uint16_t(bits);
    case 4: return int16_t(uint16_t(bits));
    case 6: return int32_t(bits);
    default: return bits;
  }
}

void VehicleParameters::value(const protocol::FrameView& f, std::string name, float wire, uint8_t type, uint16_t count,
                              uint16_t index) {
  const auto it = states_.find(key_of(f.sysid(), f.compid()));
  if (it == states_.end()) return;  // a component nobody asked about
  State& s = it->second;
  const Parameter p{name, from_wire(f.sysid(), wire, type), type, index, true};
  const bool first = !s.answered;
  s.answered = true;
  count = std::min<uint16_t>(count, kMaxParameters);  // a peer's count: no list is longer
  if (count != s.count) forget(s, count);             // the first, or a list that changed
  if (index < s.count) {
    Parameter& slot = s.slots[index];
    if (!slot.known) s.known_at.push_back(index);
    if (slot.known && slot.name != name) s.index_of.erase(slot.name);  // renamed: the old name goes
    slot = p;
    s.index_of[name] = index;
  } else if (const auto known = s.index_of.find(name); known != s.index_of.end()) {
    s.slots[known->second].value = p.value;  // an answer to a set, without its index
  }
  // A fetch's progress is the first answer, then more of the list known than ever before in
  // it: a component that says one value again and again, or flips its count, does not keep
  // the fetch from asking for what is missing (at most kMaxParameters steps of progress).
  if (first || s.known_at.size() > s.most_known) {
    s.most_known = std::max(s.most_known, s.known_at.size());
    s.last_value = router_.event_loop().now();
  }
  for (size_t i = 0; i < s.accesses.size();) {
    if (s.accesses[i].name != name) {
      ++i;
      continue;
    }
    Access a = std::move(s.accesses[i]);
    s.accesses.erase(s.accesses.begin() + static_cast<std::ptrdiff_t>(i));
    router_.event_loop().cancel(a.timer);
    a.done(p);
  }
  if (s.fetching && s.known_at.size() == s.count) answer_fetch(s);
}

// A changed count is a changed list, whose indices may have moved (ArduPilot's and PX4's do
// as parameters come and go): nothing known of the old one is kept, and a finished fetch is
// finished no more.
void VehicleParameters::forget(State& s, uint16_t count) {
  for (const uint16_t i : s.known_at) s.slots[i] = Parameter{};
  s.known_at.clear();
  s.index_of.clear();
  s.count = count;
  if (s.slots.size() < count) s.slots.resize(count);
  s.complete = false;
}

VehicleParameters::Table VehicleParameters::table_of(const State& s) {
  return {s.answered, s.count, {s.slots.begin(), s.slots.begin() + s.count}};
}

void VehicleParameters::fetch(uint8_t system, uint8_t component, std::function<void(const Table&)> done) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleParameters::fetch");
  State* s = state(system, component);
  if (s == nullptr) {
    done(Table{});
    return;
  }
  if (s->complete) {
    done(table_of(*s));
    return;
  }
  s->waiting.push_back(std::move(done));
  if (s->fetching) return;
  s->fetching = true;
  s->quiet_rounds = 0;
  s->last_value = router_.event_loop().now();
  s->most_known = s->known_at.size();
  msg::ParamRequestList list;
  list.target_system = system;
  list.target_component = component;
  component_.send(list);
  const uint16_t key = key_of(system, component);
  s->timer = router_.event_loop().every(kCheckMs, [this, key] { check(key); });
}

void VehicleParameters::check(uint16_t key) {
  State& s = states_.at(key);
  const routing::Millis now = router_.event_loop().now();
  if (now - s.last_value < kQuietMs) return;
  s.last_value = now;
  if (++s.quiet_rounds > kQuietRounds) {
    answer_fetch(s);  // what came: the rest is said missing
    return;
  }
  if (!s.answered) {  // the list request itself was lost
    msg::ParamRequestList list;
    list.target_system = uint8_t(key >> 8);
    list.target_component = uint8_t(key & 0xFF);
    component_.send(list);
    return;
  }
  size_t asked = 0;
  for (size_t i = 0; i < s.count && asked < kReadsPerRound; ++i) {
    if (s.slots[i].known) continue;
    msg::ParamRequestRead read;
    read.target_system = uint8_t(key >> 8);
    read.target_component = uint8_t(key & 0xFF);
    read.param_index = static_cast<int16_t>(i);
    component_.send(read);
    ++asked;
  }
}

void VehicleParameters::answer_fetch(State& s) {
  router_.event_loop().cancel(s.timer);
  s.timer = 0;
  s.fetching = false;
  s.complete = s.answered && s.known_at.size() == s.count;
  auto waiting = std::move(s.waiting);
  s.waiting.clear();
  const Table table = table_of(s);
  for (auto& done : waiting) done(table);
}

void VehicleParameters::access(uint8_t system, uint8_t component, const std::string& name, std::optional<double> value,
                               std::optional<uint8_t> type, std::function<void(std::optional<Parameter>)> done) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleParameters::access");
  State* s = state(system, component);
  if (s == nullptr || name.empty() || name.size() > 16) {
    done(std::nullopt);
    return;
  }
  Access a{name, value, type.value_or(kReal32), std::move(done)};
  a.id = ++accesses_made_;
  if (const auto known = s->index_of.find(name); known != s->index_of.end() && !type)
    a.type = s->slots[known->second].type;
  const uint64_t id = a.id;
  s->accesses.push_back(std::move(a));
  send_access(key_of(system, component), id);
}

void VehicleParameters::send_access(uint16_t key, uint64_t id) {
  State& s = states_.at(key);
  const auto it = std::find_if(s.accesses.begin(), s.accesses.end(), [&](const Access& a) { return a.id == id; });
  if (it == s.accesses.end()) return;
  Access& a = *it;
  if (a.tries == kTries) {
    Access gone = std::move(a);
    s.accesses.erase(it);
    gone.done(std::nullopt);
    return;
  }
  ++a.tries;
  const uint8_t system = uint8_t(key >> 8), component = uint8_t(key & 0xFF);
  if (a.value) {
    msg::ParamSet set;
    set.target_system = system;
    set.target_component = component;
    copy_name(a.name, set.param_id);
    set.param_value = to_wire(system, *a.value, a.type);
    set.param_type = a.type;
    component_.send(set);
  } else {
    msg::ParamRequestRead read;
    read.target_system = system;
    read.target_component = component;
    copy_name(a.name, read.param_id);
    read.param_index = -1;  // by name
    component_.send(read);
  }
  a.timer = router_.event_loop().after(kRetryMs, [this, key, id] { send_access(key, id); });
}

}  // namespace mavswitch::vehicle
