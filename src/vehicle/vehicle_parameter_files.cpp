// VehicleData's parameter files: GET .../parameters?format=param|qgc writes the component's
// parameters as Mission Planner or QGroundControl saves them; PUT .../parameters with such a
// file sets each one whose value differs, at most kInFlight at once, and answers which took
// (the component's PARAM_VALUE says the new value), which were as they were, and which failed.
#include <fmt/format.h>

#include <deque>

#include "vehicle/parameter_file.hpp"
#include "vehicle/vehicle_answer.hpp"

namespace mavswitch::vehicle {
namespace {

constexpr size_t kInFlight = 8;  // PARAM_SETs under way at once: a burst the component's queue takes
using Ordered = nlohmann::ordered_json;

bool same(double a, double b) { return static_cast<float>(a) == static_cast<float>(b); }  // as MAVLink carries them

}  // namespace

void VehicleData::parameter_file(uint8_t system, uint8_t component, bool qgc, std::function<void(Answer)> answer) {
  auto once = std::make_shared<OnceAnswer>(std::move(answer));
  router_.event_loop().post(guarded(once, [this, system, component, qgc, once] {
    parameters_.fetch(
        system, component, guarded(once, [system, component, qgc, once](const auto& table) {
          if (!table.answered)
            return (*once)(error_answer(504, fmt::format("no PARAM_VALUE from {}/{}", system, component)));
          Answer a{200, vehicle::parameter_file(
                            table.parameters, qgc ? ParameterFormat::kQGroundControl : ParameterFormat::kMissionPlanner,
                            system, component)};
          a.content_type = "text/plain; charset=utf-8";
          (*once)(std::move(a));
        }));
  }));
}

struct VehicleData::ParameterLoad {
  uint8_t system = 0, component = 0;
  std::deque<std::pair<ParameterLine, uint8_t>> to_set;  // and its type
  size_t in_flight = 0, unchanged = 0;
  Ordered set = Ordered::array(), failed = Ordered::array();
  std::shared_ptr<OnceAnswer> answer;
};

void VehicleData::load_parameters(uint8_t system, uint8_t component, std::string_view body,
                                  std::function<void(Answer)> answer) {
  std::string error;
  auto lines = parse_parameter_file(body, &error);
  if (!lines) return answer(error_answer(400, "a parameter file: " + error));
  auto load = std::make_shared<ParameterLoad>();
  load->system = system, load->component = component;
  load->answer = std::make_shared<OnceAnswer>(std::move(answer));
  router_.event_loop().post(guarded(load->answer, [this, load, lines = std::move(*lines)] {
    parameters_.fetch(load->system, load->component, guarded(load->answer, [this, load, lines](const auto& table) {
                        if (!table.answered)
                          return (*load->answer)(error_answer(
                              504, fmt::format("no PARAM_VALUE from {}/{}", load->system, load->component)));
                        for (const ParameterLine& l : lines) {
                          const auto it = std::find_if(table.parameters.begin(), table.parameters.end(),
                                                       [&](const auto& p) { return p.known && p.name == l.name; });
                          if (it == table.parameters.end())
                            load->failed.push_back({{"name", l.name}, {"error", "no such parameter"}});
                          else if (same(it->value, l.value))
                            ++load->unchanged;
                          else
                            load->to_set.emplace_back(l, it->type);
                        }
                        next_parameter(load);
                      }));
  }));
}

void VehicleData::next_parameter(std::shared_ptr<ParameterLoad> load) {
  while (load->in_flight < kInFlight && !load->to_set.empty()) {
    const ParameterLine line = load->to_set.front().first;  // not a structured binding: lambdas capture it
    const uint8_t type = load->to_set.front().second;
    load->to_set.pop_front();
    ++load->in_flight;
    parameters_.access(
        load->system, load->component, line.name, line.value, type,
        guarded(load->answer, [this, load, line](const auto& p) {
          --load->in_flight;
          if (!p)
            load->failed.push_back({{"name", line.name}, {"error", "no PARAM_VALUE came back"}});
          else if (!same(p->value, line.value))
            load->failed.push_back({{"name", line.name}, {"error", fmt::format("the component kept {}", p->value)}});
          else
            load->set.push_back({{"name", line.name}, {"value", p->value}});
          next_parameter(load);
        }));
  }
  if (load->in_flight != 0 || !load->to_set.empty()) return;
  const bool all = load->failed.empty();
  (*load->answer)(
      {all ? 200 : 422,
       json_text(Ordered{{"set", load->set}, {"unchanged", load->unchanged}, {"failed", load->failed}}, 2)});
}

}  // namespace mavswitch::vehicle
