// A component's parameters, for GET and PUT /v1/vehicles/{sys}/{comp}/parameters: fetched once
// with PARAM_REQUEST_LIST, the ones that did not come asked again by index (PARAM_REQUEST_READ)
// when the list goes quiet, and kept current from every PARAM_VALUE the component sends after
// (whoever asked); a PARAM_VALUE with another count is a new list, fetched again. A set is a
// PARAM_SET answered by the component's PARAM_VALUE, sent again until it comes. Values travel
// as MAVLink's float: PX4 packs integers bytewise, ArduPilot and the rest convert them; which
// one is read from the component's HEARTBEAT. Only components the API was asked about are kept
// (at most kMaxComponents). The router's thread only.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "library/component.hpp"
#include "routing/types.hpp"

namespace mavswitch::vehicle {

class VehicleParameters {
 public:
  static constexpr size_t kMaxComponents = 64;
  // Parameters kept of one component: ArduPilot and PX4 have 1,000 to 2,000; a count beyond
  // this from a peer is cut to it, so names kept are bounded whatever it sends.
  static constexpr uint16_t kMaxParameters = 4096;
  static constexpr routing::Millis kQuietMs = 1000;  // a fetch with no PARAM_VALUE this long asks again
  static constexpr int kQuietRounds = 10;            // then it answers with what it has
  static constexpr size_t kReadsPerRound = 64;       // missing ones asked for at once
  static constexpr int kTries = 3;                   // of a set or a read by name, kRetryMs apart
  static constexpr routing::Millis kRetryMs = 1000;

  struct Parameter {
    std::string name;
    double value = 0;  // as the component means it (an integer type's integer)
    uint8_t type = 0;  // MAV_PARAM_TYPE
    uint16_t index = 0;
    bool known = false;
  };
  struct Table {
    bool answered = false;  // the component sent anything at all
    uint16_t count = 0;
    std::vector<Parameter> parameters;  // by index; `known` false for one still missing
  };

  VehicleParameters(Router& router, Component& component);
  ~VehicleParameters();
  // The router's thread. All of them (from the cache once complete); `done` on the router's thread.
  void fetch(uint8_t system, uint8_t component, std::function<void(const Table&)> done);
  // One by name: set to `value` (read when nullopt); `done` with what the component answered,
  // or nothing when it did not. `type` is used when the component's list was not fetched.
  void access(uint8_t system, uint8_t component, const std::string& name, std::optional<double> value,
              std::optional<uint8_t> type, std::function<void(std::optional<Parameter>)> done);

 private:
  struct Access {
    std::string name;
    std::optional<double> value;
    uint8_t type = 9;  // MAV_PARAM_TYPE_REAL32
    std::function<void(std::optional<Parameter>)> done;
    int tries = 0;
    transport::EventLoop::TimerId timer = 0;
    // Its own, for its timer: two reads of one name are two accesses, each with its tries and
    // its one timer, which the destructor cancels.
    uint64_t id = 0;
  };
  struct State {
    bool answered = false;  // the component sent anything at all
    uint16_t count = 0;     // its list's length, as it last said
    // By index, as long as the longest list it said: a changed count moves no memory. Only the
    // first `count` are its list.
    std::vector<Parameter> slots;
    // The indices known, in the order they came: forgetting them costs what learning them did,
    // so a count changed on every frame costs no scan of the list.
    std::vector<uint16_t> known_at;
    std::map<std::string, uint16_t> index_of;
    bool complete = false, fetching = false;
    int quiet_rounds = 0;
    routing::Millis last_value = 0;  // when the fetch last made progress
    size_t most_known = 0;           // the most of the list known at once during the fetch
    transport::EventLoop::TimerId timer = 0;
    std::vector<std::function<void(const Table&)>> waiting;
    std::vector<Access> accesses;
  };
  State* state(uint8_t system, uint8_t component);  // null past kMaxComponents
  void value(const protocol::FrameView& f, std::string name, float wire, uint8_t type, uint16_t count, uint16_t index);
  void check(uint16_t key);                     // a fetch's timer
  void send_access(uint16_t key, uint64_t id);  // access `id` sent (again), or given up
  void answer_fetch(State& s);
  static void forget(State& s, uint16_t count);  // a new list: what was known of the old one goes
  static Table table_of(const State& s);         // its list as callers see it
  float to_wire(uint8_t system, double value, uint8_t type) const;
  double from_wire(uint8_t system, float wire, uint8_t type) const;

  Router& router_;
  Component& component_;
  std::map<uint16_t, State> states_;  // system << 8 | component
  uint64_t accesses_made_ = 0;        // the last Access::id given
  std::array<bool, 256> bytewise_{};  // by system: its autopilot packs integers bytewise (PX4)
  std::vector<Subscription> subscriptions_;
};

}  // namespace mavswitch::vehicle
