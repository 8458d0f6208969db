// A component's parameters as the files ground stations save and load: Mission Planner's .param
// ("NAME,VALUE" a line; "#" comments; a space or tab also separates) and QGroundControl's
// tab-separated file ("SYS COMP NAME VALUE TYPE" a line, after its "#" header). Values are
// written as the component means them: integers as integers, floats in their shortest form.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vehicle/vehicle_parameters.hpp"

namespace mavswitch::vehicle {

enum class ParameterFormat { kMissionPlanner, kQGroundControl };

std::string parameter_file(const std::vector<VehicleParameters::Parameter>& parameters, ParameterFormat format,
                           uint8_t system, uint8_t component);

struct ParameterLine {
  std::string name;
  double value = 0;
  std::optional<uint8_t> type;  // QGroundControl's files say it
};
// Either format, told apart by its lines; nothing, with *error naming the line, for text that
// is neither. At most kMaxParameters lines.
std::optional<std::vector<ParameterLine>> parse_parameter_file(std::string_view text, std::string* error);

}  // namespace mavswitch::vehicle
